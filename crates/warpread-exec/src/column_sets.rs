//! A read's columns split into sets that decode concurrently, each set on its
//! own thread, and their record batches joined column by column afterwards.
//!
//! One read group runs its stages one after another: read, decompress,
//! decode, assemble. On the CUDA backend each stage is an upload, a kernel
//! and a download with host copies on either side, so while one stage's
//! bytes cross the bus the cores wait, and while the cores copy the bus
//! waits. Sets of columns are independent reads of the same rows: run side
//! by side they take separate CUDA lanes, and one set's transfers overlap
//! another's kernels and host work.
//!
//! The sets run on scoped threads rather than rayon tasks on purpose: a
//! rayon worker waiting inside a parallel copy may steal another set's task,
//! which would then wait for a CUDA lane while the worker's own lane is held
//! beneath it. Plain threads only ever wait for their own work.

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{Schema, SchemaRef};

use crate::error::{Error, Result};

/// Most sets one read group is split into: enough to overlap transfers,
/// kernels and host work, at most one per CUDA lane
/// ([`super::cuda::MAX_LANES`]). On the H100 host 8 sets read TPC-H SF 10
/// lineitem faster than 4 (12.41 and 12.41 GB/s against 9.49 and 10.11 in
/// one call; 10.03 and 9.55 against 8.70 and 9.18 in another, where 6 was
/// alike and 12 slower). DataFusion scans, which read many partitions at
/// once, do not split (`Split::NONE`).
pub const MAX_SETS: usize = 8;

/// How a read splits its columns: at most `max_sets` sets of at least
/// `min_bytes` each (as the reader weighs columns: [`partition`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// Most sets (1: no split).
    pub max_sets: usize,
    /// Least bytes per set, as the reader weighs columns.
    pub min_bytes: u64,
}

impl Default for Split {
    /// [`MAX_SETS`] and [`MIN_SET_BYTES`].
    fn default() -> Self {
        Self {
            max_sets: MAX_SETS,
            min_bytes: MIN_SET_BYTES,
        }
    }
}

impl Split {
    /// No split: one set of every column.
    pub const NONE: Split = Split {
        max_sets: 1,
        min_bytes: u64::MAX,
    };

    /// At most `max_sets` sets (at least 1; 1 turns the split off) of the
    /// default least size.
    pub fn max_sets(max_sets: usize) -> Split {
        Split {
            max_sets: max_sets.max(1),
            ..Split::default()
        }
    }

    /// [`partition`] with these bounds.
    pub fn partition(&self, bytes: &[u64]) -> Vec<Vec<usize>> {
        partition(bytes, self.max_sets, self.min_bytes)
    }
}

/// Least bytes (as the reader weighs its columns: see [`partition`]) worth
/// a set of its own: below this the thread and the extra stages cost more
/// than the overlap gains.
pub const MIN_SET_BYTES: u64 = 8 << 20;

/// Splits columns of the given sizes (the ORC reader's are compressed
/// bytes, the Parquet reader's compressed plus Arrow bytes) into at most
/// `max_sets` sets of at least `min_bytes` each (where the total allows),
/// balanced by size: the largest column goes to the lightest set first. Each set lists
/// column positions in ascending order; every column is in exactly one
/// set; no set is empty.
pub fn partition(bytes: &[u64], max_sets: usize, min_bytes: u64) -> Vec<Vec<usize>> {
    let total = bytes.iter().fold(0u64, |a, &b| a.saturating_add(b));
    let n = (total / min_bytes.max(1))
        .clamp(1, max_sets.max(1) as u64)
        .min(bytes.len().max(1) as u64) as usize;
    let mut order: Vec<usize> = (0..bytes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(bytes[i]));
    let mut sets: Vec<(u64, Vec<usize>)> = vec![(0, Vec::new()); n];
    for i in order {
        let lightest = (0..n).min_by_key(|&s| sets[s].0).expect("n >= 1");
        sets[lightest].0 = sets[lightest].0.saturating_add(bytes[i]);
        sets[lightest].1.push(i);
    }
    let mut sets: Vec<Vec<usize>> = sets
        .into_iter()
        .map(|(_, mut s)| {
            s.sort_unstable();
            s
        })
        .filter(|s| !s.is_empty())
        .collect();
    if sets.is_empty() {
        sets.push(Vec::new());
    }
    sets.sort_by_key(|s| s.first().copied());
    sets
}

/// Runs `read` once per set, each on its own thread (the first on the
/// calling one), and returns the results in set order; the first error in
/// set order wins.
pub fn run<T, F>(sets: &[Vec<usize>], read: F) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(&[usize]) -> Result<T> + Sync,
{
    let Some((first, rest)) = sets.split_first() else {
        return Ok(Vec::new());
    };
    let read = &read;
    std::thread::scope(|s| {
        let handles: Vec<_> = rest.iter().map(|set| s.spawn(move || read(set))).collect();
        let mut out = vec![read(first)];
        out.extend(
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
        );
        out.into_iter().collect()
    })
}

/// Reads every set side by side (`read` gets the set and its projected
/// schema, and returns its batches and a per-set result such as its
/// stats), then joins the batches into batches of `schema`; the per-set
/// results come back in set order.
pub fn read_joined<S, F>(
    schema: &SchemaRef,
    sets: &[Vec<usize>],
    read: F,
) -> Result<(Vec<RecordBatch>, Vec<S>)>
where
    S: Send,
    F: Fn(&[usize], &SchemaRef) -> Result<(Vec<RecordBatch>, S)> + Sync,
{
    let per_set = run(sets, |set| read(set, &project(schema, set)))?;
    let (mut batches, extra): (Vec<_>, Vec<_>) = per_set.into_iter().unzip();
    let joined = if sets.len() == 1 {
        batches.pop().unwrap_or_default()
    } else {
        join(schema, sets, batches)?
    };
    Ok((joined, extra))
}

/// The schema of the columns at `set` (positions in `schema`).
pub fn project(schema: &SchemaRef, set: &[usize]) -> SchemaRef {
    std::sync::Arc::new(Schema::new_with_metadata(
        set.iter()
            .map(|&i| schema.field(i).clone())
            .collect::<Vec<_>>(),
        schema.metadata().clone(),
    ))
}

/// Joins the batches of each set (same count, same rows per batch) into
/// batches of `schema`, whose column `i` is in the set listing `i`.
pub fn join(
    schema: &SchemaRef,
    sets: &[Vec<usize>],
    per_set: Vec<Vec<RecordBatch>>,
) -> Result<Vec<RecordBatch>> {
    let mismatch = |detail: String| Error::Mismatch {
        what: "column sets of one read".into(),
        detail,
    };
    let count = per_set.first().map_or(0, Vec::len);
    if let Some(n) = per_set.iter().map(Vec::len).find(|&n| n != count) {
        return Err(mismatch(format!("{n} batches against {count}")));
    }
    let mut where_: Vec<Option<(usize, usize)>> = vec![None; schema.fields().len()];
    for (s, set) in sets.iter().enumerate() {
        for (k, &i) in set.iter().enumerate() {
            *where_
                .get_mut(i)
                .ok_or_else(|| mismatch(format!("column {i} outside the schema")))? = Some((s, k));
        }
    }
    (0..count)
        .map(|b| {
            let rows = per_set[0][b].num_rows();
            if let Some(other) = per_set.iter().map(|v| v[b].num_rows()).find(|&r| r != rows) {
                return Err(mismatch(format!("batch {b}: {other} rows against {rows}")));
            }
            let columns = where_
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let (s, k) = w.ok_or_else(|| mismatch(format!("column {i} in no set")))?;
                    Ok(per_set[s][b].column(k).clone())
                })
                .collect::<Result<Vec<ArrayRef>>>()?;
            RecordBatch::try_new_with_options(
                schema.clone(),
                columns,
                &RecordBatchOptions::new().with_row_count(Some(rows)),
            )
            .map_err(|e| Error::arrow("joining column sets", e))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int32Array;
    use arrow::datatypes::{DataType, Field};
    use std::sync::Arc;

    #[test]
    fn the_default_split_is_the_measured_one() {
        assert_eq!(
            Split::default(),
            Split {
                max_sets: 8,
                min_bytes: 8 << 20
            }
        );
        assert_eq!(Split::max_sets(0).max_sets, 1);
        assert_eq!(Split::max_sets(3).min_bytes, MIN_SET_BYTES);
    }

    #[test]
    fn partition_balances_and_covers() {
        let mib = 1u64 << 20;
        let bytes = [40 * mib, 5 * mib, 30 * mib, 10 * mib, 1, 20 * mib];
        let sets = partition(&bytes, 4, 8 * mib);
        assert_eq!(sets.len(), 4);
        let mut all: Vec<usize> = sets.concat();
        all.sort_unstable();
        assert_eq!(all, (0..bytes.len()).collect::<Vec<_>>());
        assert!(sets.iter().all(|s| !s.is_empty() && s.is_sorted()));
        let loads: Vec<u64> = sets
            .iter()
            .map(|s| s.iter().map(|&i| bytes[i]).sum())
            .collect();
        assert_eq!(*loads.iter().max().unwrap(), 40 * mib);
        // Small totals stay one set; never more sets than columns.
        assert_eq!(partition(&bytes[..2], 4, 1 << 40).len(), 1);
        assert_eq!(partition(&[mib; 2], 4, 1).len(), 2);
        assert_eq!(partition(&[], 4, 1), vec![Vec::<usize>::new()]);
    }

    #[test]
    fn run_and_join_restore_column_order() {
        let schema: SchemaRef = Arc::new(Schema::new(
            (0..3)
                .map(|i| Field::new(format!("c{i}"), DataType::Int32, false))
                .collect::<Vec<_>>(),
        ));
        let sets = vec![vec![0, 2], vec![1]];
        let per_set = run(&sets, |set| {
            let sub = project(&schema, set);
            let cols: Vec<ArrayRef> = set
                .iter()
                .map(|&i| Arc::new(Int32Array::from(vec![i as i32; 5])) as ArrayRef)
                .collect();
            Ok(vec![RecordBatch::try_new(sub, cols).unwrap()])
        })
        .unwrap();
        let joined = join(&schema, &sets, per_set).unwrap();
        assert_eq!(joined.len(), 1);
        for i in 0..3 {
            let c = joined[0]
                .column(i)
                .as_any()
                .downcast_ref::<Int32Array>()
                .unwrap();
            assert_eq!(c.value(0), i as i32);
        }
        // A set whose batches disagree is an error, not a wrong batch.
        let bad = vec![vec![], vec![RecordBatch::new_empty(project(&schema, &[1]))]];
        assert!(join(&schema, &sets, bad).is_err());
        // Errors come back in set order.
        let e = run(&sets, |set| -> Result<()> {
            Err(Error::Unsupported(format!("set {}", set[0])))
        });
        assert!(e.unwrap_err().to_string().contains("set 0"));
    }
}
