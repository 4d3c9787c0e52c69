//! What the reader builders do to a read group's rows after decoding:
//! keep the [`RowSelection`], filter by the predicates when asked, stop at
//! the limit, and cut batches to the batch size.

use std::ops::Range;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow::buffer::BooleanBuffer;
use arrow::compute::kernels::cmp;
use arrow::compute::{cast, filter_record_batch};
use arrow::datatypes::{DataType, SchemaRef};

use super::{CmpOp, Predicate, Scalar, split_batch};
use crate::error::{Error, Result};

/// Rows of a file to read, by file row number (0 is the file's first
/// row): sorted, disjoint ranges. Stripes and row groups outside every
/// range are not read; rows outside them are dropped from those that are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowSelection {
    ranges: Vec<Range<u64>>,
}

impl RowSelection {
    /// The rows of `ranges`, in any order, overlapping or not.
    pub fn from_ranges(ranges: impl IntoIterator<Item = Range<u64>>) -> Self {
        let mut v: Vec<Range<u64>> = ranges.into_iter().filter(|r| r.start < r.end).collect();
        v.sort_by_key(|r| r.start);
        let mut ranges: Vec<Range<u64>> = Vec::with_capacity(v.len());
        for r in v {
            match ranges.last_mut() {
                Some(l) if r.start <= l.end => l.end = l.end.max(r.end),
                _ => ranges.push(r),
            }
        }
        Self { ranges }
    }

    /// The selected ranges, sorted and disjoint.
    pub fn ranges(&self) -> &[Range<u64>] {
        &self.ranges
    }

    /// Rows selected.
    pub fn row_count(&self) -> u64 {
        self.ranges.iter().map(|r| r.end - r.start).sum()
    }

    /// Whether some row of `r` is selected.
    pub fn intersects(&self, r: &Range<u64>) -> bool {
        let i = self.ranges.partition_point(|s| s.end <= r.start);
        self.ranges.get(i).is_some_and(|s| s.start < r.end)
    }

    /// Marks in `mask` (rows `first..first + mask.len()`) those selected.
    fn mark(&self, first: u64, mask: &mut [bool]) {
        let end = first + mask.len() as u64;
        let i = self.ranges.partition_point(|s| s.end <= first);
        for s in self.ranges[i..].iter().take_while(|s| s.start < end) {
            let a = (s.start.max(first) - first) as usize;
            let b = (s.end.min(end) - first) as usize;
            mask[a..b].fill(true);
        }
    }
}

/// The row-level steps of a streaming read, applied group by group in
/// file order.
#[derive(Debug)]
pub(crate) struct Shaper {
    /// The schema handed out (the predicate columns read only for the
    /// filter dropped).
    pub schema: SchemaRef,
    pub selection: Option<RowSelection>,
    /// Predicates filtering rows exactly (empty: rows are not filtered).
    pub filters: Vec<Predicate>,
    /// Rows still to hand out.
    pub remaining: Option<u64>,
    pub batch_size: usize,
}

impl Shaper {
    /// Whether the limit has been reached: no further group is read.
    pub fn done(&self) -> bool {
        self.remaining == Some(0)
    }

    /// Whether a group spanning file rows `span` may hand out a row.
    pub fn wants(&self, span: &Range<u64>) -> bool {
        !self.done() && self.selection.as_ref().is_none_or(|s| s.intersects(span))
    }

    /// One group's batches, holding file rows `rows` in order, shaped.
    pub fn shape(
        &mut self,
        batches: Vec<RecordBatch>,
        rows: &[Range<u64>],
    ) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        // File row of each output position, walked batch by batch.
        let mut runs = rows.iter().cloned();
        let mut run = runs.next().unwrap_or(0..0);
        for batch in batches {
            if self.done() {
                break;
            }
            let n = batch.num_rows();
            let mut keep: Option<Vec<bool>> = None;
            if let Some(sel) = &self.selection {
                let mut mask = vec![false; n];
                let mut at = 0usize;
                while at < n {
                    if run.start >= run.end {
                        run = runs.next().ok_or_else(|| {
                            Error::InvalidPlan(
                                "a read group's rows do not cover its batches".into(),
                            )
                        })?;
                        continue;
                    }
                    let take = ((run.end - run.start) as usize).min(n - at);
                    sel.mark(run.start, &mut mask[at..at + take]);
                    run.start += take as u64;
                    at += take;
                }
                keep = Some(mask);
            }
            for p in &self.filters {
                let m = evaluate(p, &batch)?;
                let keep = keep.get_or_insert_with(|| vec![true; n]);
                for (k, i) in keep.iter_mut().zip(0..n) {
                    *k &= m.is_valid(i) && m.value(i);
                }
            }
            let batch = match keep {
                Some(mask) => {
                    let mask = BooleanArray::new(BooleanBuffer::from(mask), None);
                    filter_record_batch(&batch, &mask)
                        .map_err(|e| Error::arrow("filtering rows", e))?
                }
                None => batch,
            };
            let batch = if batch.schema().fields().len() != self.schema.fields().len() {
                let cols = self
                    .schema
                    .fields()
                    .iter()
                    .map(|f| batch.schema().index_of(f.name()))
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(|e| Error::arrow("dropping the filter's columns", e))?;
                batch
                    .project(&cols)
                    .map_err(|e| Error::arrow("dropping the filter's columns", e))?
            } else {
                batch
            };
            let rows = match &mut self.remaining {
                Some(r) => {
                    let take = (*r).min(batch.num_rows() as u64);
                    *r -= take;
                    take as usize
                }
                None => batch.num_rows(),
            };
            let batch = batch.slice(0, rows);
            out.extend(split_batch(&batch, self.batch_size).filter(|b| b.num_rows() > 0));
        }
        Ok(out)
    }
}

/// `p` over `batch`'s column: true where the row matches, null where the
/// value is null.
pub(crate) fn evaluate(p: &Predicate, batch: &RecordBatch) -> Result<BooleanArray> {
    let col = batch.column_by_name(&p.column).ok_or_else(|| {
        Error::Unsupported(format!(
            "row filter on column {:?}, which the read has not",
            p.column
        ))
    })?;
    let col: ArrayRef = match col.data_type() {
        DataType::Dictionary(_, v) => {
            cast(col, v).map_err(|e| Error::arrow(format!("filtering on {}", p.column), e))?
        }
        _ => col.clone(),
    };
    let dt = col.data_type();
    let literal: ArrayRef = match (&p.value, dt) {
        (Scalar::Int(i), DataType::Date32) => {
            Arc::new(Int32Array::from(vec![i32::try_from(*i).map_err(|_| {
                Error::Unsupported(format!("date literal {i} out of range"))
            })?]))
        }
        (Scalar::Int(i), _) => Arc::new(Int64Array::from(vec![*i])),
        (Scalar::Float(f), _) => Arc::new(Float64Array::from(vec![*f])),
        (Scalar::Str(s), _) => Arc::new(StringArray::from(vec![s.as_str()])),
    };
    let literal = cast(&literal, dt).map_err(|e| {
        Error::Unsupported(format!(
            "row filter {p:?}: the literal does not convert to the column's type {dt}: {e}"
        ))
    })?;
    if literal.is_null(0) {
        return Err(Error::Unsupported(format!(
            "row filter {p:?}: the literal does not fit the column's type {dt}"
        )));
    }
    let lit = arrow::array::Scalar::new(literal);
    let r = match p.op {
        CmpOp::Eq => cmp::eq(&col, &lit),
        CmpOp::Lt => cmp::lt(&col, &lit),
        CmpOp::Le => cmp::lt_eq(&col, &lit),
        CmpOp::Gt => cmp::gt(&col, &lit),
        CmpOp::Ge => cmp::gt_eq(&col, &lit),
    };
    r.map_err(|e| Error::arrow(format!("filtering on {}", p.column), e))
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)] // ranges of rows, not vectors
mod tests {
    use super::*;
    use arrow::datatypes::{Field, Schema};

    fn batch(values: &[i64]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
        RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(values.to_vec()))]).unwrap()
    }

    fn values(batches: &[RecordBatch]) -> Vec<i64> {
        batches
            .iter()
            .flat_map(|b| {
                let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                a.values().to_vec()
            })
            .collect()
    }

    #[test]
    fn selection_merges_and_intersects() {
        let s = RowSelection::from_ranges([10..20, 0..5, 15..30, 40..40]);
        assert_eq!(s.ranges(), &[0..5, 10..30]);
        assert_eq!(s.row_count(), 25);
        assert!(s.intersects(&(4..8)) && s.intersects(&(29..100)));
        assert!(!s.intersects(&(5..10)) && !s.intersects(&(30..40)));
    }

    #[test]
    fn shape_selects_filters_limits_and_cuts() {
        let b = batch(&(0..10).collect::<Vec<_>>());
        // The batch holds file rows 100..103 and 200..207.
        let rows = [100..103, 200..207];
        let mut shaper = Shaper {
            schema: b.schema(),
            selection: Some(RowSelection::from_ranges([101..102, 203..300])),
            filters: vec!["x>=6".parse().unwrap()],
            remaining: Some(3),
            batch_size: 2,
        };
        let out = shaper.shape(vec![b.clone()], &rows).unwrap();
        // Selected positions 1, 6..10; x >= 6 keeps 6..10; limit 3.
        assert_eq!(values(&out), vec![6, 7, 8]);
        assert_eq!(
            out.iter().map(|b| b.num_rows()).collect::<Vec<_>>(),
            vec![2, 1]
        );
        assert!(shaper.done());
        // Rows that do not cover the batch are an error, not a wrong answer.
        let mut shaper = Shaper {
            schema: b.schema(),
            selection: Some(RowSelection::from_ranges([0..1])),
            filters: vec![],
            remaining: None,
            batch_size: 100,
        };
        assert!(shaper.shape(vec![b], &[0..4]).is_err());
    }

    #[test]
    fn evaluate_casts_literals_and_keeps_nulls_out() {
        let schema = Arc::new(Schema::new(vec![Field::new("d", DataType::Date32, true)]));
        let d = arrow::array::Date32Array::from(vec![Some(1), None, Some(3)]);
        let b = RecordBatch::try_new(schema, vec![Arc::new(d)]).unwrap();
        let m = evaluate(&"d>=2".parse().unwrap(), &b).unwrap();
        assert_eq!(
            m.iter().collect::<Vec<_>>(),
            vec![Some(false), None, Some(true)]
        );
        assert!(evaluate(&"nope=1".parse().unwrap(), &b).is_err());
        assert!(evaluate(&"d='abc'".parse().unwrap(), &b).is_err());
    }
}
