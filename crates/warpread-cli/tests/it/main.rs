//! Integration tests of the command line, the data generators and SQL
//! over generated TPC-H and taxi data.

mod aggregate_differential;
mod cli;
#[path = "../../../warpread/tests/it/common.rs"]
#[allow(dead_code)]
mod common;
mod distributed;
mod gsst;
mod gsst_container;
mod huffman_container;
mod lying_sizes;
mod object_store_http;
mod object_store_s3;
mod sql_cli;
mod sql_taxi;
mod sql_tpch;
