//! The layer every warpread crate builds on: the decode plan that format
//! readers produce and backends run, the error type with the location of
//! every failure, and wall-clock tracing of a read.
//!
//! ```text
//! file bytes ─► format readers (warpread) ─► DecodePlan (here) ─► backend (warpread-exec) ─► Arrow
//! ```

#![warn(missing_docs)]

pub mod error;
pub mod plan;
pub mod trace;

pub use error::{Error, Location, Result};
