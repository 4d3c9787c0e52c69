//! Row ranges within a row group: the rows page pruning keeps, the rows a
//! column's decoded pages hold, and the cut of a decoded column down to
//! the kept rows.

use std::ops::Range;

use arrow::array::ArrayRef;

/// Sorted, disjoint, non-adjacent, non-empty ranges of row numbers within
/// one row group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowRanges(Vec<Range<u64>>);

impl RowRanges {
    /// Rows `0..rows`.
    pub fn all(rows: u64) -> Self {
        Self::one(0..rows)
    }

    /// The rows of one range.
    pub fn one(r: Range<u64>) -> Self {
        Self::from_sorted(std::iter::once(r))
    }

    /// From ranges in increasing order (they may touch or be empty, not
    /// overlap out of order): touching ranges are merged, empty ones
    /// dropped.
    pub fn from_sorted(ranges: impl IntoIterator<Item = Range<u64>>) -> Self {
        let mut out: Vec<Range<u64>> = Vec::new();
        for r in ranges.into_iter().filter(|r| r.start < r.end) {
            match out.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => out.push(r),
            }
        }
        Self(out)
    }

    /// Rows covered.
    pub fn rows(&self) -> u64 {
        self.0.iter().map(|r| r.end - r.start).sum()
    }

    /// The ranges, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Range<u64>> {
        self.0.iter()
    }

    /// True when no row is covered.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether some row of `r` is covered.
    pub fn overlaps(&self, r: &Range<u64>) -> bool {
        // Few ranges per row group: a scan is enough.
        self.0.iter().any(|k| k.start < r.end && r.start < k.end)
    }

    /// Rows covered by both.
    pub fn intersect(&self, other: &Self) -> Self {
        let (mut i, mut j, mut out) = (0, 0, Vec::new());
        while i < self.0.len() && j < other.0.len() {
            let (a, b) = (&self.0[i], &other.0[j]);
            let r = a.start.max(b.start)..a.end.min(b.end);
            if r.start < r.end {
                out.push(r);
            }
            if a.end <= b.end {
                i += 1;
            } else {
                j += 1;
            }
        }
        Self::from_sorted(out)
    }

    /// Where the rows of `kept` lie in a column holding the rows of `self`
    /// end to end: `(position, length)` pieces in order, touching pieces
    /// merged. `None` when `kept` has a row `self` does not hold.
    pub fn positions(&self, kept: &Self) -> Option<Vec<(usize, usize)>> {
        let mut out: Vec<(usize, usize)> = Vec::new();
        let (mut span, mut base) = (0usize, 0u64);
        for k in &kept.0 {
            // Spans ending before this kept range are passed for good:
            // kept ranges come in increasing order.
            while span < self.0.len() && self.0[span].end <= k.start {
                base += self.0[span].end - self.0[span].start;
                span += 1;
            }
            let s = self.0.get(span)?;
            if k.start < s.start || k.end > s.end {
                return None;
            }
            let at = (base + (k.start - s.start)) as usize;
            let len = (k.end - k.start) as usize;
            match out.last_mut() {
                Some(last) if last.0 + last.1 == at => last.1 += len,
                _ => out.push((at, len)),
            }
        }
        Some(out)
    }
}

/// `array`, which holds the rows of `held` end to end, cut down to the
/// rows of `kept` (a subset of `held`), in order. Zero-copy when the kept
/// rows are one piece.
pub fn cut(array: &ArrayRef, held: &RowRanges, kept: &RowRanges) -> Result<ArrayRef, String> {
    let pieces = held
        .positions(kept)
        .ok_or_else(|| format!("kept rows {kept:?} are not all among the decoded rows {held:?}"))?;
    if array.len() as u64 != held.rows() {
        return Err(format!(
            "{} rows decoded, the pages read hold {}",
            array.len(),
            held.rows()
        ));
    }
    match pieces.as_slice() {
        [(0, len)] if *len == array.len() => Ok(array.clone()),
        [] => Ok(array.slice(0, 0)),
        [(at, len)] => Ok(array.slice(*at, *len)),
        _ => {
            let slices: Vec<ArrayRef> = pieces
                .iter()
                .map(|&(at, len)| array.slice(at, len))
                .collect();
            let refs: Vec<&dyn arrow::array::Array> = slices.iter().map(|a| a.as_ref()).collect();
            arrow::compute::concat(&refs).map_err(|e| e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, Int64Array};
    use std::sync::Arc;

    fn rr(v: &[(u64, u64)]) -> RowRanges {
        RowRanges::from_sorted(v.iter().map(|&(a, b)| a..b))
    }

    #[test]
    fn from_sorted_merges_touching_and_drops_empty() {
        assert_eq!(
            rr(&[(0, 5), (5, 9), (9, 9), (12, 14)]),
            rr(&[(0, 9), (12, 14)])
        );
        assert_eq!(rr(&[(0, 5), (3, 4)]), rr(&[(0, 5)]));
        assert!(rr(&[(3, 3)]).is_empty());
        assert_eq!(rr(&[(0, 9), (12, 14)]).rows(), 11);
    }

    #[test]
    fn intersect_and_overlap() {
        let a = rr(&[(0, 10), (20, 30), (40, 50)]);
        let b = rr(&[(5, 25), (28, 45)]);
        assert_eq!(
            a.intersect(&b),
            rr(&[(5, 10), (20, 25), (28, 30), (40, 45)])
        );
        assert_eq!(a.intersect(&RowRanges::default()), RowRanges::default());
        assert_eq!(a.intersect(&RowRanges::all(100)), a);
        assert!(a.overlaps(&(9..11)));
        assert!(!a.overlaps(&(10..20)));
        assert!(!a.overlaps(&(50..60)));
    }

    #[test]
    fn positions_map_kept_rows_into_held_pages() {
        // Pages holding rows 100..200 and 300..400, decoded end to end.
        let held = rr(&[(100, 200), (300, 400)]);
        assert_eq!(
            held.positions(&rr(&[(150, 200), (300, 310), (390, 400)])),
            Some(vec![(50, 60), (190, 10)])
        );
        assert_eq!(held.positions(&rr(&[(100, 400)])), None);
        assert_eq!(held.positions(&rr(&[(50, 120)])), None);
        assert_eq!(held.positions(&RowRanges::default()), Some(vec![]));
    }

    #[test]
    fn cut_keeps_exactly_the_kept_rows() {
        let held = rr(&[(10, 20), (30, 40)]);
        let a: ArrayRef = Arc::new(Int64Array::from_iter_values(
            (10..20).chain(30..40).collect::<Vec<i64>>(),
        ));
        let got = cut(&a, &held, &rr(&[(12, 14), (18, 20), (30, 31), (39, 40)])).unwrap();
        let got = got.as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(got.values().to_vec(), vec![12, 13, 18, 19, 30, 39]);
        assert_eq!(cut(&a, &held, &held).unwrap().len(), 20);
        assert!(cut(&a, &held, &rr(&[(25, 26)])).is_err());
        assert!(cut(&a.slice(0, 5), &held, &rr(&[(10, 11)])).is_err());
    }
}
