//! End-to-end read benchmark: file on disk to Arrow record batches in host
//! memory, wall-clock, median of several runs. With the CUDA backend the
//! result is also compared with the CPU backend's, array by array.

use std::path::PathBuf;
use std::time::Instant;

use arrow::array::{Array, ArrayData, RecordBatch};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::exec::{Backend, CpuBackend};
use crate::orc::{OrcFile, Predicate, ReadOptions, ReadStats};
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
    /// Kernel time per operation per timed run (name, stages, seconds),
    /// most time first (empty on the CPU backend).
    pub kernels: Vec<(String, f64, f64)>,
}

/// `after - before` per operation, divided by `runs`, most time first.
fn kernel_delta(
    before: &[(String, u64, f64)],
    after: &[(String, u64, f64)],
    runs: usize,
) -> Vec<(String, f64, f64)> {
    let n = runs.max(1) as f64;
    let mut v: Vec<(String, f64, f64)> = after
        .iter()
        .map(|(name, stages, secs)| {
            let (s0, t0) = before
                .iter()
                .find(|b| &b.0 == name)
                .map_or((0, 0.0), |b| (b.1, b.2));
            (name.clone(), (stages - s0) as f64 / n, (secs - t0) / n)
        })
        .filter(|k| k.1 > 0.0)
        .collect();
    v.sort_by(|a, b| b.2.total_cmp(&a.2));
    v
}

/// Bytes of the buffers an array references.
pub fn arrow_bytes(d: &ArrayData) -> u64 {
    let own: usize = d.buffers().iter().map(|b| b.len()).sum::<usize>()
        + d.nulls().map_or(0, |n| n.buffer().len());
    own as u64 + d.child_data().iter().map(arrow_bytes).sum::<u64>()
}

fn batches_bytes(b: &[RecordBatch]) -> u64 {
    b.iter()
        .flat_map(|b| b.columns().iter())
        .map(|c| arrow_bytes(&c.to_data()))
        .sum()
}

/// Reads each file (ORC or Parquet, by magic bytes) `warmup + runs` times
/// on `backend`, pruning by `predicates` (which do not filter rows).
pub fn run(
    files: &[PathBuf],
    columns: &[String],
    predicates: &[Predicate],
    backend: &dyn Backend,
    warmup: usize,
    runs: usize,
) -> Result<Vec<ReadBenchRow>> {
    let mut options = ReadOptions::default().with_batch_size(usize::MAX);
    if !columns.is_empty() {
        options = options.with_columns(columns.to_vec());
    }
    options.predicates = predicates.to_vec();
    let mut rows = Vec::new();
    for path in files {
        let file_bytes = std::fs::metadata(path)
            .map_err(|e| Error::io(path, e))?
            .len();
        let mut times = Vec::with_capacity(runs);
        let mut last = Vec::new();
        let parquet = crate::parquet::is_parquet(path);
        let read = |backend: &dyn Backend| {
            if parquet {
                ParquetFile::open(path)?.read_with_stats(&options, backend)
            } else {
                OrcFile::open(path)?.read_with_stats(&options, backend)
            }
        };
        let mut before = crate::exec::cuda::profile();
        let mut ops_before = crate::exec::cuda::kernel_ops();
        for r in 0..warmup + runs.max(1) {
            if r == warmup {
                before = crate::exec::cuda::profile();
                ops_before = crate::exec::cuda::kernel_ops();
            }
            // The previous run's batches go first: held through this read,
            // they would keep its pinned output blocks from the pool.
            drop(std::mem::take(&mut last));
            let t = Instant::now();
            let (batches, stats) = read(backend)?;
            last = batches;
            let s = t.elapsed().as_secs_f64();
            if r >= warmup {
                times.push((s, stats));
            }
        }
        let cuda = crate::exec::cuda::profile().since(&before, runs.max(1));
        let kernels = kernel_delta(&ops_before, &crate::exec::cuda::kernel_ops(), runs);
        times.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (median_s, stages) = times[times.len() / 2];
        let verified = if backend.name() == "cpu" {
            true
        } else {
            let (cpu, _) = read(&CpuBackend::new())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, StringArray};

    #[test]
    fn kernel_delta_is_per_run_and_sorted() {
        let before = vec![
            ("inflate".to_string(), 2, 1.0),
            ("hybrid".to_string(), 4, 0.5),
        ];
        let after = vec![
            ("hybrid".to_string(), 8, 1.3),
            ("inflate".to_string(), 6, 2.0),
            ("plain".to_string(), 2, 0.2),
        ];
        let d = kernel_delta(&before, &after, 2);
        let names: Vec<&str> = d.iter().map(|k| k.0.as_str()).collect();
        assert_eq!(names, ["inflate", "hybrid", "plain"]);
        assert_eq!((d[0].1, d[0].2), (2.0, 0.5));
        assert!((d[1].2 - 0.4).abs() < 1e-12);
        assert_eq!((d[2].1, d[2].2), (1.0, 0.1));
        // An op that ran only before the window is left out.
        assert!(kernel_delta(&before, &before, 1).is_empty());
    }

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
