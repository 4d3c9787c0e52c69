//! End-to-end read benchmark: file on disk to Arrow record batches in host
//! memory, wall-clock, median of several runs. With the CUDA backend the
//! result is also compared with the CPU backend's, array by array.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{Array, ArrayData, RecordBatch};
use serde::Serialize;

use crate::cli::input::{Input, Kind, Object};
use crate::error::{Error, Result};
use crate::exec::{Backend, CpuBackend};
use crate::orc::{OrcFile, Predicate, ReadOptions, ReadStats, ReadTuning};
use crate::parquet::ParquetFile;

/// One file's result.
#[derive(Debug, Clone, Serialize)]
pub struct ReadBenchRow {
    /// The file.
    pub file: PathBuf,
    /// Backend description.
    pub backend: String,
    /// Rows read.
    pub rows: u64,
    /// Bytes of the file.
    pub file_bytes: u64,
    /// Bytes of Arrow buffers produced (values, offsets, validity).
    pub arrow_bytes: u64,
    /// Median wall-clock seconds.
    pub median_s: f64,
    /// Arrow output GB/s (10^9 bytes per second).
    pub gbps: f64,
    /// Where the median run spent its time.
    pub stages: ReadStats,
    /// Whether the output was checked against the CPU backend (always
    /// true for the CPU itself).
    pub verified: bool,
    /// The CUDA backend's transfers and copies per timed run (thread-seconds
    /// over all lanes; all zero on the CPU backend).
    pub cuda: crate::exec::cuda::Profile,
    /// Kernel time and uploads per operation per timed run, most kernel
    /// time first (empty on the CPU backend).
    pub kernels: Vec<crate::exec::cuda::OpProfile>,
}

/// Bytes of the buffers an array references.
pub fn arrow_bytes(d: &ArrayData) -> u64 {
    let own: usize = d.buffers().iter().map(|b| b.len()).sum::<usize>()
        + d.nulls().map_or(0, |n| n.buffer().len());
    own as u64 + d.child_data().iter().map(arrow_bytes).sum::<u64>()
}

/// Bytes of the buffers a read's batches reference.
pub(crate) fn batches_bytes(b: &[RecordBatch]) -> u64 {
    b.iter()
        .flat_map(|b| b.columns().iter())
        .map(|c| arrow_bytes(&c.to_data()))
        .sum()
}

/// Reads each file (ORC or Parquet, by magic bytes) `warmup + runs` times
/// on `backend` with `tuning`, pruning by `predicates` (which do not filter
/// rows).
pub fn run(
    files: &[String],
    columns: &[String],
    predicates: &[Predicate],
    backend: &Arc<dyn Backend>,
    tuning: &ReadTuning,
    warmup: usize,
    runs: usize,
) -> Result<Vec<ReadBenchRow>> {
    let mut options = ReadOptions::default()
        .with_batch_size(usize::MAX)
        .with_tuning(tuning.clone());
    if !columns.is_empty() {
        options = options.with_columns(columns.to_vec());
    }
    options.predicates = predicates.to_vec();
    let mut rows = Vec::new();
    for name in files {
        let input = Input::parse(name)?;
        let path = &PathBuf::from(input.name());
        let (file_bytes, kind, rt) = match &input {
            Input::Local(p) => (
                std::fs::metadata(p).map_err(|e| Error::io(p, e))?.len(),
                Input::local_kind(p)?,
                None,
            ),
            Input::Object(o) => {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| Error::io("tokio runtime", e))?;
                let (size, head) = rt.block_on(o.head())?;
                (size, Kind::of(&head, name)?, Some(rt))
            }
        };
        let mut times = Vec::with_capacity(runs);
        let mut last = Vec::new();
        let read = |backend: &Arc<dyn Backend>| match &input {
            Input::Local(p) => read_local(p, kind, &options, backend.as_ref()),
            Input::Object(o) if kind != Kind::Arrow => {
                let rt = rt.as_ref().expect("a runtime for object stores");
                read_object(rt, o, kind, &options, backend.clone())
            }
            Input::Object(_) => Err(not_orc_or_parquet(name)),
        };
        let cuda = backend.as_cuda();
        let profile = || cuda.map(|c| c.profile()).unwrap_or_default();
        let kernel_ops = || cuda.map(|c| c.kernel_ops()).unwrap_or_default();
        let mut before = profile();
        let mut ops_before = kernel_ops();
        for r in 0..warmup + runs.max(1) {
            if r == warmup {
                before = profile();
                ops_before = kernel_ops();
            }
            // The previous run's batches go first: held through this read,
            // they would keep its pinned output blocks from the pool.
            drop(std::mem::take(&mut last));
            let t = Instant::now();
            let span = crate::trace::span_with(|| format!("bench.run {}", path.display()));
            let (batches, stats) = read(backend)?;
            drop(span);
            last = batches;
            let s = t.elapsed().as_secs_f64();
            if r >= warmup {
                times.push((s, stats));
            }
        }
        let cuda = profile().since(&before, runs.max(1));
        let kernels = crate::exec::cuda::OpProfile::per_run(&ops_before, &kernel_ops(), runs);
        times.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (median_s, stages) = times[times.len() / 2];
        let verified = if backend.name() == "cpu" {
            true
        } else {
            let (cpu, _) = read(&(Arc::new(CpuBackend::new()) as Arc<dyn Backend>))?;
            if cpu != last {
                return Err(Error::Mismatch {
                    what: format!("{} read on {}", path.display(), backend.name()),
                    detail: "Arrow output differs from the CPU backend's".into(),
                });
            }
            true
        };
        let arrow_bytes = batches_bytes(&last);
        rows.push(ReadBenchRow {
            file: path.clone(),
            backend: backend.describe(),
            rows: last.iter().map(|b| b.num_rows() as u64).sum(),
            file_bytes,
            arrow_bytes,
            median_s,
            stages,
            gbps: arrow_bytes as f64 / median_s / 1e9,
            verified,
            cuda,
            kernels,
        });
    }
    Ok(rows)
}

/// One whole-file read of a local ORC or Parquet file (`kind`, by its
/// magic bytes) with its stage times.
pub(crate) fn read_local(
    path: &Path,
    kind: Kind,
    options: &ReadOptions,
    backend: &dyn Backend,
) -> Result<(Vec<RecordBatch>, ReadStats)> {
    match kind {
        Kind::Parquet => ParquetFile::open(path)?.read_with_stats(options, backend),
        Kind::Orc => OrcFile::open(path)?.read_with_stats(options, backend),
        Kind::Arrow => Err(not_orc_or_parquet(&path.display().to_string())),
    }
}

fn not_orc_or_parquet(name: &str) -> Error {
    Error::Unsupported(format!(
        "{name}: the read benchmarks take ORC and Parquet files"
    ))
}

/// One read of an object through the async builder, as a whole-file read
/// does it (the backend's read groups, one batch per group): the fetches
/// are part of the time. Stage times are not split for these reads.
fn read_object(
    rt: &tokio::runtime::Runtime,
    o: &Object,
    kind: Kind,
    options: &ReadOptions,
    backend: Arc<dyn Backend>,
) -> Result<(Vec<RecordBatch>, ReadStats)> {
    use futures::TryStreamExt;
    let mut options = options.clone();
    if options.tuning.group_bytes.is_none() {
        options.tuning.group_bytes = Some(backend.group_bytes());
    }
    rt.block_on(async {
        let (store, location) = (o.store.clone(), o.location.clone());
        let stream = match kind {
            Kind::Parquet => {
                crate::parquet::ParquetStreamBuilder::new(store, location)
                    .await?
                    .with_options(options)
                    .with_backend(backend)
                    .build()
                    .await?
            }
            _ => {
                crate::orc::OrcStreamBuilder::new(store, location)
                    .await?
                    .with_options(options)
                    .with_backend(backend)
                    .build()
                    .await?
            }
        };
        let batches: Vec<RecordBatch> = stream.try_collect().await?;
        Ok((batches, ReadStats::default()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, StringArray};

    #[test]
    fn counts_referenced_buffers() {
        let a = Int32Array::from(vec![Some(1), None, Some(3)]);
        // 12 value bytes + 1 validity byte (rounded up to 64 by arrow? no:
        // the buffer length is what was allocated for 3 bits, 1 byte).
        assert_eq!(arrow_bytes(&a.to_data()), 12 + 1);
        let s = StringArray::from(vec!["ab", "c"]);
        assert_eq!(arrow_bytes(&s.to_data()), 12 + 3);
        assert!(s.len() == 2);
    }
}
