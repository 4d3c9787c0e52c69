//! Backends that run a [`DecodePlan`]: the CPU
//! reference and CUDA. Both take the same stages and must return identical
//! buffers and statuses.
//!
//! - [`cpu`] and [`cuda`]: the two backends;
//! - [`gpu`]: CUDA probing, NVRTC compilation with a disk cache, launch
//!   constants, the pinned host pool; the kernels are in `kernels/`;
//! - [`query`]: the aggregate programs that run over decoded columns (on
//!   the CPU or as generated CUDA);
//! - [`pipeline`], [`column_sets`], [`host_share`]: how a read overlaps
//!   its groups, splits their columns and shares work with the host;
//! - [`devices`]: one backend per device, and which scan partition takes
//!   which;
//! - [`memory`]: host memory budgets that stages draw on before they
//!   allocate.

#![warn(missing_docs)]

use warpread_codecs::{gsst, with_int_type};
use warpread_core::{error, plan, trace};

use warpread_codecs as codecs;

#[cfg(test)]
use warpread_codecs::testing;

pub mod gpu;
pub mod query;

pub mod batch;
mod buffer;
pub mod column_sets;
pub mod copy;
pub mod cpu;
pub mod cuda;
pub mod devices;
pub mod host_share;
mod input;
pub mod memory;
pub mod pipeline;
pub mod threads;

use std::fmt;
use std::str::FromStr;

pub use buffer::HostBuffer;
pub use cpu::CpuBackend;
pub use cuda::{CudaBackend, HuffmanEncodeTimes};
pub use devices::Devices;
pub use gpu::{CudaOptions, SyncMode};
pub use input::InputBuffer;

use crate::error::{Error, Result};
use crate::plan::{ChunkStatus, DecodePlan, Stage, StageOp};

/// What a backend returns for one stage.
#[derive(Debug, Clone)]
pub struct StageOutput {
    /// The decoded elements, `stage.output_values` of them, little-endian.
    pub data: HostBuffer,
    /// One status per job, in job order.
    pub statuses: Vec<ChunkStatus>,
}

impl StageOutput {
    /// Turns the first failed chunk into an error naming where it is.
    pub fn check(&self, stage: &Stage) -> Result<()> {
        for (i, (st, job)) in self.statuses.iter().zip(&stage.jobs).enumerate() {
            if !st.is_ok() {
                return Err(Error::Corrupt {
                    location: Box::new(
                        stage.location.clone().with_chunk(i as u64, job.input.start),
                    ),
                    status: *st,
                });
            }
        }
        Ok(())
    }
}

/// Which backend the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// The CPU reference.
    Cpu,
    /// CUDA; an error when no device is usable.
    Cuda,
    /// CUDA when a device is usable, otherwise the CPU.
    #[default]
    Auto,
}

impl FromStr for BackendChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "cpu" => Ok(Self::Cpu),
            "cuda" => Ok(Self::Cuda),
            "auto" => Ok(Self::Auto),
            other => Err(Error::Unsupported(format!(
                "backend `{other}` (expected cpu, cuda or auto)"
            ))),
        }
    }
}

impl fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Cpu => "cpu",
            Self::Cuda => "cuda",
            Self::Auto => "auto",
        })
    }
}

/// Compressed bytes of a read group in a streaming read unless the tuning
/// sets one (the default of [`Backend::stream_group_bytes`]): a group's
/// decoded batches are what a stream holds at once, so it is smaller than
/// a whole-file read's ([`Backend::group_bytes`]). 48 MiB of TPC-H
/// lineitem Parquet GZIP is about 280 MB of Arrow; `cat` of lineitem SF 10
/// on the CPU backend took as long as with 64 MiB at 1.45 GB peak instead
/// of 1.92 GB (benchmarks/streaming.md).
pub const STREAM_GROUP_BYTES: u64 = 48 << 20;

/// A decoder of plan stages.
pub trait Backend: Send + Sync {
    /// Short name: `cpu` or `cuda`.
    fn name(&self) -> &'static str;
    /// What runs, for users: e.g. `cuda (NVIDIA H100 80GB HBM3, sm_90)`.
    fn describe(&self) -> String;
    /// Runs every job of one stage over `input`. Per-chunk failures are in
    /// the statuses; `Err` is for failures of the backend itself or of the
    /// plan's consistency.
    fn run_stage(&self, stage: &Stage, input: &[u8]) -> Result<StageOutput>;
    /// [`run_stage`](Self::run_stage) for a caller that reads only the
    /// output bytes `host_reads` (sorted byte ranges; `None`: all) on the
    /// host. A backend that keeps the output on its device (then
    /// [`holds_on_device`](Self::holds_on_device) says so for it) may leave
    /// the other bytes of the host buffer unwritten; every other backend
    /// fills it whole, which the default does.
    fn run_stage_reading(
        &self,
        stage: &Stage,
        input: &[u8],
        host_reads: Option<&[std::ops::Range<usize>]>,
    ) -> Result<StageOutput> {
        let _ = host_reads;
        self.run_stage(stage, input)
    }
    /// Whether stages of `op` read their input where it lies in host
    /// memory. A batch then hands over its source buffer as it is, with
    /// each job pointing at its request's bytes, instead of first copying
    /// every request's bytes into one compact buffer (a full pass over
    /// hundreds of MiB of fresh memory). A device copies its input, so there
    /// compacting keeps the upload small; hence the default `false`.
    fn reads_host_input(&self, op: &StageOp) -> bool {
        let _ = op;
        false
    }
    /// Whether all of `source` is on the device already (a device mirror
    /// of a previous stage's output, such as decompressed pages). A batch
    /// over it then runs every stage in place over the whole of it: jobs
    /// address their bytes where they lie, nothing is gathered or uploaded.
    fn holds_on_device(&self, source: &[u8]) -> bool {
        let _ = source;
        false
    }
    /// A host buffer of `len` bytes for the caller to fill (every byte it
    /// hands to a stage) and then use as a stage input: on a device, one
    /// the upload reads without staging it first.
    fn input_buffer(&self, len: usize) -> Result<InputBuffer> {
        InputBuffer::zeroed(len)
    }
    /// Compressed bytes of stripes or row groups a reader decodes together:
    /// each of its stages is that group's work for one operation. The CPU
    /// splits any stage into tasks, so 256 MiB (bounded memory) is plenty.
    fn group_bytes(&self) -> u64 {
        256 << 20
    }
    /// Compressed bytes of a read group in a streaming read, whose memory
    /// holds a few groups' decoded batches at once: [`STREAM_GROUP_BYTES`].
    fn stream_group_bytes(&self) -> u64 {
        STREAM_GROUP_BYTES
    }
    /// Read groups a streaming read decodes side by side: 1, as any one
    /// group keeps the host's cores busy.
    fn stream_groups_in_flight(&self) -> usize {
        1
    }
    /// The device's ordinal for a backend of one device (CUDA); `None`
    /// for the CPU.
    fn device_ordinal(&self) -> Option<usize> {
        None
    }
    /// How many scan partitions of a query should read files side by side
    /// (`None`: as many as the query engine plans). A device decodes one
    /// large read faster than many small ones queued for its lanes, so it
    /// asks for few and leaves the query's parallelism to repartitioning
    /// after the scan.
    fn scan_partitions(&self) -> Option<usize> {
        None
    }
    /// Frees the device copy of `source`, if any, once no stage will read
    /// it: host buffers such as ORC's decompressed streams live on inside
    /// the Arrow arrays that slice them, and their device copies must not.
    fn release_on_device(&self, source: &[u8]) {
        let _ = source;
    }
    /// Runs an aggregate program over a batch, giving its partial groups
    /// (the CPU reference, [`crate::query::eval`], unless the backend has
    /// its own).
    fn aggregate(
        &self,
        program: &crate::query::AggProgram,
        batch: &arrow::record_batch::RecordBatch,
    ) -> Result<crate::query::Groups> {
        crate::query::eval::aggregate(program, batch)
    }
    /// [`aggregate`](Self::aggregate) of `batches` together on the
    /// backend's device only (one launch where it can: each has fixed
    /// costs): `None` when the device cannot take one of them (or there is
    /// none), so the caller may prefer another plan over the CPU reference.
    fn aggregate_on_device(
        &self,
        program: &crate::query::AggProgram,
        batches: &[arrow::record_batch::RecordBatch],
    ) -> Result<Option<crate::query::Groups>> {
        let _ = (program, batches);
        Ok(None)
    }
    /// Whether [`aggregate`](Self::aggregate) runs on a device of the
    /// backend's own (not the CPU reference): query engines then hand it
    /// their partial aggregates.
    fn aggregates_on_device(&self) -> bool {
        false
    }
    /// Counts a caller that will aggregate the decoded columns of the reads
    /// it starts (`true`) or is done (`false`): a device backend keeps decode
    /// stages' outputs on the device meanwhile, where
    /// [`aggregate`](Self::aggregate) reads them without an upload.
    fn retain_decoded(&self, on: bool) {
        let _ = on;
    }
    /// The CUDA backend this is, if it is one: for callers that read its
    /// counters ([`CudaBackend::profile`]) through a `dyn Backend`.
    fn as_cuda(&self) -> Option<&CudaBackend> {
        None
    }
}

/// Runs every stage of `plan` (stage `i` reads `inputs[i]`) and fails on the
/// first corrupt chunk.
pub fn execute(
    backend: &dyn Backend,
    plan: &DecodePlan,
    inputs: &[&[u8]],
) -> Result<Vec<StageOutput>> {
    if inputs.len() != plan.stages.len() {
        return Err(Error::InvalidPlan(format!(
            "{} stages but {} inputs",
            plan.stages.len(),
            inputs.len()
        )));
    }
    plan.stages
        .iter()
        .zip(inputs)
        .map(|(stage, input)| {
            let out = backend.run_stage(stage, input)?;
            out.check(stage)?;
            Ok(out)
        })
        .collect()
}

/// Builds the backend for a choice, a CUDA one with the default
/// [`CudaOptions`]. `Auto` probes for CUDA and falls back to the CPU,
/// logging why.
pub fn select(choice: BackendChoice) -> Result<Box<dyn Backend>> {
    select_with(choice, &CudaOptions::default())
}

/// [`select`] with the options a CUDA backend gets.
pub fn select_with(choice: BackendChoice, cuda: &CudaOptions) -> Result<Box<dyn Backend>> {
    Ok(match CudaBackend::for_choice(choice, cuda)? {
        Some(cuda) => Box::new(cuda),
        None => Box::new(CpuBackend::new()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_parses() {
        assert_eq!("cpu".parse::<BackendChoice>().unwrap(), BackendChoice::Cpu);
        assert_eq!(
            "auto".parse::<BackendChoice>().unwrap(),
            BackendChoice::Auto
        );
        assert!("gpu".parse::<BackendChoice>().is_err());
    }

    #[test]
    fn auto_always_gives_a_backend() {
        let b = select(BackendChoice::Auto).unwrap();
        assert!(["cpu", "cuda"].contains(&b.name()));
    }
}
