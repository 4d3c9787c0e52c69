//! Integration tests: one binary, one module per concern.

mod cli;
mod common;
mod corrupt_inputs;
mod deflate_differential;
mod gsst;
mod orc_corrupt;
pub mod orc_differential;
mod rle_v1_differential;
mod sql_cli;
mod sql_taxi;
mod sql_tpch;
