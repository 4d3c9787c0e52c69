//! Integration tests: one binary, one module per concern.

// The harness finds its corpora, seeds and kernel cache through the
// environment (the library under test takes options instead).
#![allow(clippy::disallowed_methods)]

mod cancellation;
mod column_sets;
mod concurrent_reads;
// Shared with the other crates' test binaries, which use different parts.
#[allow(dead_code)]
mod common;
mod corrupt_inputs;
mod crc32_differential;
mod deflate_differential;
mod device_faults;
mod device_memory;
mod device_output;
mod examples;
mod host_memory;
mod huffman_container;
mod huffman_differential;
mod int_rle_differential;
mod orc_corrupt;
pub mod orc_differential;
mod orc_rust_differential;
mod parquet_arrow_schema;
mod parquet_corrupt;
mod parquet_decimal_dict;
mod parquet_dictionary_bomb;
pub mod parquet_differential;
mod parquet_gzip_trailer;
mod parquet_kernels_differential;
pub mod parquet_page_index;
mod parquet_page_index_corpus;
mod parquet_page_index_damage;
mod pinned_pool;
mod reader_builders;
mod span_inflate_differential;
mod stage_counting;
mod tuning;
