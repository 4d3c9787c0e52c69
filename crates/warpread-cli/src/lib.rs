//! The `warpread` command line and what only it needs: the benchmark
//! suites behind `warpread bench`, and TPC-H and taxi data generation.
//! The library crates (`warpread`, `warpread-datafusion`) depend on none
//! of it.

#![warn(missing_docs)]

pub mod bench;
pub mod cli;
pub mod datagen;

use warpread::{codecs, error, exec, gpu, gsst, orc, parquet, plan, read, trace};
