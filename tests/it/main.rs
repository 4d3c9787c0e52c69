//! Integration tests: one binary, one module per concern.

mod aggregate_differential;
mod cli;
mod column_sets;
mod common;
mod corrupt_inputs;
mod crc32_differential;
mod deflate_differential;
mod gsst;
mod gsst_container;
mod int_rle_differential;
mod orc_corrupt;
pub mod orc_differential;
mod orc_row_groups;
mod parquet_corrupt;
mod parquet_decimal_dict;
pub mod parquet_differential;
mod parquet_gzip_trailer;
mod parquet_kernels_differential;
pub mod parquet_page_index;
mod parquet_page_index_corpus;
mod parquet_page_index_damage;
mod pinned_pool;
#[cfg(feature = "sql")]
mod sql_cli;
#[cfg(feature = "sql")]
mod sql_page_index;
#[cfg(feature = "sql")]
mod sql_taxi;
#[cfg(feature = "sql")]
mod sql_tpch;
