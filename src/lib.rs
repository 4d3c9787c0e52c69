//! warpread reads compressed columnar data with the GPU doing the heavy work.
//!
//! Data flows one way:
//!
//! ```text
//! file bytes ─► format readers (CPU) ─► DecodePlan ─► backend ─► Arrow
//!               orc/, parquet/          plan/          exec/cpu.rs | exec/cuda.rs + kernels/
//! ```
//!
//! - [`plan`]: independent chunk jobs with a status each;
//! - [`codecs`]: stream formats, CPU reference decoders and encoders;
//! - [`exec`]: the CPU reference and CUDA backends, same plan in, same bytes out;
//! - [`gpu`]: CUDA probing, NVRTC compilation with a disk cache, launch constants;
//! - [`gsst`]: GSST string compression (format, compressor, CPU reference decoder);
//! - [`bench`](mod@bench): the benchmark suites behind `warpread bench`;
//! - `datafusion` (default feature `sql`): SQL over ORC, Parquet and GSST
//!   files through DataFusion, decoded by warpread.
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

pub mod bench;
pub mod cli;
pub mod codecs;
#[cfg(feature = "sql")]
pub mod datafusion;
pub mod datagen;
mod env;
pub mod error;
pub mod exec;
pub mod gpu;
pub mod gsst;
pub mod orc;
pub mod parquet;
pub mod plan;
pub mod query;
pub mod source;
#[cfg(test)]
mod testing;
pub mod trace;

pub use error::{Error, Location, Result};

pub use arrow;
