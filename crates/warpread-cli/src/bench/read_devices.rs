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

use crate::cli::input::{Input, Kind};
use crate::error::{Error, Result};
use crate::exec::Backend;
use crate::orc::{ReadOptions, ReadTuning};

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
        let sum: f64 = self.alone_gbps.iter().sum();
        if sum > 0.0 {
            self.together_gbps / sum
        } else {
            0.0
        }
    }
}

/// `0..len` cut into `n` (at least 1) ranges of nearly equal length that
/// tile it.
pub fn byte_ranges(len: u64, n: usize) -> Vec<Range<u64>> {
    let n = n.max(1) as u128;
    // In u128: `len * n` overflows u64 for large files cut many ways.
    let at = |i: u128| (u128::from(len) * i / n) as u64;
    (0..n).map(|i| at(i)..at(i + 1)).collect()
}

fn read_file(
    path: &Path,
    kind: Kind,
    options: &ReadOptions,
    backend: &dyn Backend,
) -> Result<Vec<RecordBatch>> {
    Ok(super::read::read_local(path, kind, options, backend)?.0)
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
    Ok((
        super::codecs::median(&times),
        last.expect("at least one run"),
    ))
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
        // Sniffed once: every run and part reads the same file.
        let kind = Input::local_kind(&path)?;
        let len = std::fs::metadata(&path)
            .map_err(|e| Error::io(&path, e))?
            .len();
        // No run's output outlives it: held, it would keep its pinned
        // blocks from the pool of the runs after it.
        let mut alone_s = Vec::with_capacity(backends.len());
        for b in backends {
            let (s, _) = timed(warmup, runs, || {
                read_file(&path, kind, &options, b.as_ref())
            })?;
            alone_s.push(s);
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
                        s.spawn(move || read_file(path, kind, &options, b.as_ref()))
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
        let whole = read_file(&path, kind, &options, backends[0].as_ref())?;
        check_same(&path, &whole, &got)?;
        let arrow_bytes = super::read::batches_bytes(&whole);
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
/// the same schema, then both walked side by side, slice against slice
/// where their batches overlap (nothing is concatenated).
fn check_same(path: &Path, whole: &[RecordBatch], parts: &[RecordBatch]) -> Result<()> {
    let mismatch = |detail: String| Error::Mismatch {
        what: format!("{} read in parts", path.display()),
        detail,
    };
    let rows = |b: &[RecordBatch]| b.iter().map(|b| b.num_rows()).sum::<usize>();
    let (n, m) = (rows(whole), rows(parts));
    if n != m {
        return Err(mismatch(format!(
            "{m} rows in parts, {n} in the whole file"
        )));
    }
    let nonempty = |b: &[RecordBatch]| {
        b.iter()
            .filter(|b| b.num_rows() > 0)
            .cloned()
            .collect::<Vec<_>>()
    };
    let (a, b) = (nonempty(whole), nonempty(parts));
    let (mut i, mut j, mut ai, mut bj, mut row) = (0, 0, 0, 0, 0usize);
    while i < a.len() && j < b.len() {
        if a[i].schema() != b[j].schema() {
            return Err(mismatch("schemas differ".into()));
        }
        let len = (a[i].num_rows() - ai).min(b[j].num_rows() - bj);
        let (x, y) = (a[i].slice(ai, len), b[j].slice(bj, len));
        if let Some(c) = (0..x.num_columns()).find(|&c| x.column(c) != y.column(c)) {
            return Err(mismatch(format!(
                "column {} differs in rows {row}..{}",
                x.schema().field(c).name(),
                row + len
            )));
        }
        (ai, bj, row) = (ai + len, bj + len, row + len);
        if ai == a[i].num_rows() {
            (i, ai) = (i + 1, 0);
        }
        if bj == b[j].num_rows() {
            (j, bj) = (j + 1, 0);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(values: &[i32]) -> RecordBatch {
        let a: arrow::array::ArrayRef = Arc::new(arrow::array::Int32Array::from(values.to_vec()));
        RecordBatch::try_from_iter([("x", a)]).unwrap()
    }

    /// Parts cut differently from the whole (an empty part included) are
    /// the same rows; a changed value or a missing row is a mismatch.
    #[test]
    fn parts_are_compared_row_by_row_across_batch_edges() {
        let p = Path::new("f.parquet");
        let whole = [batch(&[1, 2, 3]), batch(&[4, 5])];
        let parts = [batch(&[1, 2]), batch(&[]), batch(&[3, 4, 5])];
        check_same(p, &whole, &parts).unwrap();
        check_same(p, &[], &[batch(&[])]).unwrap();
        let changed = [batch(&[1, 2]), batch(&[3, 9, 5])];
        let e = check_same(p, &whole, &changed).unwrap_err().to_string();
        assert!(e.contains("column x differs in rows 3..5"), "{e}");
        let short = [batch(&[1, 2, 3, 4])];
        assert!(check_same(p, &whole, &short).is_err());
    }

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
