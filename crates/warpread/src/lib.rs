//! warpread reads compressed columnar data with the GPU doing the heavy work.
//!
//! Data flows one way:
//!
//! ```text
//! file bytes ─► format readers (CPU) ─► DecodePlan ─► backend ─► Arrow
//!               orc, parquet, gsst      plan           exec: cpu | cuda + kernels/
//!               (this crate)            (warpread-core) (warpread-exec)
//! ```
//!
//! This crate holds the format readers and re-exports the layers below it:
//!
//! - [`read`]: what a read asks for and how it runs ([`read::ReadOptions`],
//!   [`read::ReadTuning`]), shared by the readers;
//! - [`orc`], [`parquet`]: footers, statistics and indexes parsed on the
//!   CPU into decode plans, run on a backend, assembled into Arrow;
//! - [`device`]: reads whose batches stay on the GPU, exported through the
//!   Arrow C Device Data Interface and DLPack;
//! - [`gsst`]: GSST string compression and its Arrow IPC container;
//! - [`source`]: positional, bounds-checked reads of file bytes;
//! - [`plan`] (`warpread-core`): independent chunk jobs with a status each;
//! - [`codecs`] (`warpread-codecs`): stream formats, CPU reference decoders
//!   and encoders;
//! - [`exec`], [`gpu`], [`query`] (`warpread-exec`): the CPU reference and
//!   CUDA backends, same plan in, same bytes out.
//!
//! SQL through DataFusion is the `warpread-datafusion` crate; the command
//! line, benchmarks and data generators are `warpread-cli`.
//!
//! ```
//! use warpread::codecs::orc_rle_v1;
//! use warpread::exec::{self, BackendChoice};
//! use warpread::plan::{DecodePlan, IntType, Stage, StageOp};
//!
//! let values: Vec<i64> = (0..10_000).map(|i| i / 10 - 300).collect();
//! let (bytes, jobs) = orc_rle_v1::encode_chunks(&values, 4096);
//! let plan = DecodePlan {
//!     stages: vec![Stage {
//!         op: StageOp::OrcRleV1(IntType::I64),
//!         jobs,
//!         output_values: values.len() as u64,
//!         location: Default::default(),
//!     }],
//! };
//! let backend = exec::select(BackendChoice::Auto)?;
//! let out = exec::execute(backend.as_ref(), &plan, &[&bytes])?;
//! assert_eq!(out[0].data.typed::<i64>(), values.as_slice());
//! # Ok::<(), warpread::Error>(())
//! ```

#![warn(missing_docs)]

#[cfg(test)]
use warpread_codecs::testing;

pub mod device;
pub mod gsst;
pub mod orc;
pub mod parquet;
pub mod read;
pub mod source;

pub use warpread_codecs as codecs;
pub use warpread_codecs::with_int_type;
pub use warpread_core::{Error, Location, Result, error, plan, trace};
pub use warpread_exec as exec;
pub use warpread_exec::{gpu, query};

pub use arrow;

/// The README's library example, compiled as a doctest so it cannot drift
/// from the API.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
