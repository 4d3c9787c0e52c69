//! The scan alone on every device of a host: one local ORC or Parquet
//! file read into host Arrow by each backend on its own, then by all of
//! them at once, each reading one byte range of the file (its row groups
//! or stripes, as a distributed scan splits a file). Reports each
//! device's GB/s alone, their sum, and the aggregate GB/s of the
//! concurrent read, whose output is checked against the first backend's
//! whole-file read.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow::array::RecordBatch;
use serde::Serialize;

use crate::cli::input::Input;
use crate::error::{Error, Result};
use crate::exec::Backend;
use crate::orc::{OrcFile, ReadOptions, ReadTuning};
use crate::parquet::ParquetFile;

/// One file's result.
#[derive(Debug, Clone, Serialize)]
pub struct DevicesReadRow {
    /// The file.
    pub file: PathBuf,
    /// Each backend, described.
    pub backends: Vec<String>,
    /// Rows read.
    pub rows: u64,
    /// Bytes of Arrow buffers produced.
    pub arrow_bytes: u64,
    /// Median seconds of each backend reading the whole file alone.
    pub alone_s: Vec<f64>,
    /// Arrow GB/s of each backend alone.
    pub alone_gbps: Vec<f64>,
    /// The byte range of the file each part read (part `i` on backend
    /// `i % backends`).
    pub parts: Vec<Range<u64>>,
    /// Median wall seconds of every part read at once.
    pub together_s: f64,
    /// Arrow GB/s of the concurrent read.
    pub together_gbps: f64,
}

impl DevicesReadRow {
    /// The concurrent read against the sum of the backends alone.
    pub fn efficiency(&self) -> f64 {
        self.together_gbps / self.alone_gbps.iter().sum::<f64>()
    }
}

/// `0..len` cut into `n` (at least 1) ranges of nearly equal length that
/// tile it.
pub fn byte_ranges(len: u64, n: usize) -> Vec<Range<u64>> {
    let n = n.max(1) as u64;
    (0..n).map(|i| len * i / n..len * (i + 1) / n).collect()
}

fn read_file(
    path: &Path,
    options: &ReadOptions,
    backend: &dyn Backend,
) -> Result<Vec<RecordBatch>> {
    let kind = Input::local_kind(path)?;
    let (batches, _) = match kind {
        crate::cli::input::Kind::Parquet => {
            ParquetFile::open(path)?.read_with_stats(options, backend)?
        }
        crate::cli::input::Kind::Orc => OrcFile::open(path)?.read_with_stats(options, backend)?,
        crate::cli::input::Kind::Arrow => {
            return Err(Error::Unsupported(format!(
                "{}: bench read-devices takes ORC and Parquet files",
                path.display()
            )));
        }
    };
    Ok(batches)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times `read` `warmup + runs` times (at least one timed run), dropping
/// each run's output before the next; gives the median and the last
/// output.
fn timed<T>(warmup: usize, runs: usize, read: impl Fn() -> Result<T>) -> Result<(f64, T)> {
    let mut times = Vec::new();
    let mut last = None;
    for r in 0..warmup + runs.max(1) {
        // Held through the next read, an output would keep its pinned
        // blocks from the pool.
        drop(last.take());
        let t = Instant::now();
        last = Some(read()?);
        if r >= warmup {
            times.push(t.elapsed().as_secs_f64());
        }
    }
    Ok((median(times), last.expect("at least one run")))
}

/// Reads each local file with every backend alone, then in `parts` byte
/// ranges (default: one per backend) all at once, part `i` on backend
/// `i % backends.len()`.
pub fn run(
    files: &[String],
    backends: &[Arc<dyn Backend>],
    tuning: &ReadTuning,
    parts: Option<usize>,
    warmup: usize,
    runs: usize,
) -> Result<Vec<DevicesReadRow>> {
    if backends.is_empty() {
        return Err(Error::Unsupported("bench read-devices: no backend".into()));
    }
    let options = ReadOptions::default()
        .with_batch_size(usize::MAX)
        .with_tuning(tuning.clone());
    let mut rows = Vec::new();
    for name in files {
        let path = match Input::parse(name)? {
            Input::Local(p) => p,
            Input::Object(_) => {
                return Err(Error::Unsupported(format!(
                    "{name}: bench read-devices reads local files"
                )));
            }
        };
        let len = std::fs::metadata(&path)
            .map_err(|e| Error::io(&path, e))?
            .len();
        let mut alone_s = Vec::with_capacity(backends.len());
        let mut whole = Vec::new();
        for (i, b) in backends.iter().enumerate() {
            let (s, out) = timed(warmup, runs, || read_file(&path, &options, b.as_ref()))?;
            alone_s.push(s);
            if i == 0 {
                whole = out;
            }
        }
        let ranges = byte_ranges(len, parts.unwrap_or(backends.len()));
        let read_parts = || -> Result<Vec<Vec<RecordBatch>>> {
            std::thread::scope(|s| {
                let handles: Vec<_> = ranges
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let b = &backends[i % backends.len()];
                        let options = options.clone().with_byte_range(Some(r.clone()));
                        let path = &path;
                        s.spawn(move || read_file(path, &options, b.as_ref()))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(Error::Unsupported("a part's read panicked".into()))
                        })
                    })
                    .collect()
            })
        };
        let (together_s, got) = timed(warmup, runs, read_parts)?;
        let got: Vec<RecordBatch> = got.into_iter().flatten().collect();
        check_same(&path, &whole, &got)?;
        let arrow_bytes: u64 = whole
            .iter()
            .flat_map(|b| b.columns())
            .map(|c| super::read::arrow_bytes(&c.to_data()))
            .sum();
        let gbps = |s: f64| arrow_bytes as f64 / s / 1e9;
        rows.push(DevicesReadRow {
            file: path.clone(),
            backends: backends.iter().map(|b| b.describe()).collect(),
            rows: whole.iter().map(|b| b.num_rows() as u64).sum(),
            arrow_bytes,
            alone_gbps: alone_s.iter().map(|&s| gbps(s)).collect(),
            alone_s,
            parts: ranges,
            together_s,
            together_gbps: gbps(together_s),
        });
    }
    Ok(rows)
}

/// That the parts, in file order, hold the rows of the whole-file read:
/// both concatenated, compared column by column.
fn check_same(path: &Path, whole: &[RecordBatch], parts: &[RecordBatch]) -> Result<()> {
    let mismatch = |detail: String| Error::Mismatch {
        what: format!("{} read in parts", path.display()),
        detail,
    };
    let (Some(first), Some(schema)) = (whole.first(), parts.first().map(|b| b.schema())) else {
        return if whole.iter().chain(parts).all(|b| b.num_rows() == 0) {
            Ok(())
        } else {
            Err(mismatch("one read is empty, the other is not".into()))
        };
    };
    if first.schema() != schema {
        return Err(mismatch("schemas differ".into()));
    }
    let concat = |b: &[RecordBatch]| {
        arrow::compute::concat_batches(&schema, b)
            .map_err(|e| mismatch(format!("cannot concatenate batches: {e}")))
    };
    let (a, b) = (concat(whole)?, concat(parts)?);
    if a.num_rows() != b.num_rows() {
        return Err(mismatch(format!(
            "{} rows in parts, {} in the whole file",
            b.num_rows(),
            a.num_rows()
        )));
    }
    if let Some(c) = (0..a.num_columns()).find(|&c| a.column(c) != b.column(c)) {
        return Err(mismatch(format!(
            "column {} differs",
            schema.field(c).name()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_ranges_tile_the_file() {
        for (len, n) in [
            (0u64, 3usize),
            (10, 1),
            (10, 3),
            (7, 7),
            (5, 8),
            (1 << 40, 4),
        ] {
            let r = byte_ranges(len, n);
            assert_eq!(r.len(), n);
            assert_eq!(r[0].start, 0);
            assert_eq!(r[n - 1].end, len);
            assert!(r.windows(2).all(|w| w[0].end == w[1].start));
            let (lo, hi) = r.iter().fold((u64::MAX, 0), |(lo, hi), r| {
                (lo.min(r.end - r.start), hi.max(r.end - r.start))
            });
            assert!(hi - lo <= 1, "{len} in {n}: {r:?}");
        }
        assert_eq!(byte_ranges(9, 0), vec![0..9]);
    }
}
