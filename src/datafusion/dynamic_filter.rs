//! Dynamic filters applied to a scan's rows. DataFusion's operators publish
//! filters while a query runs: a hash join, once its build side is
//! collected, the bounds and the set of its build keys (an `IN` list, or a
//! lookup into its hash table); a `TopK` its current cut-off. A scan that
//! drops the rows failing them hands the operators above it only rows they
//! can use. In TPC-H's joins most probe rows find no partner (Q17 keeps one
//! `lineitem` row in a thousand), and everything above the scan (hash
//! repartitioning, the probe, the aggregates past it) then runs on the
//! survivors only: with the decode on the device, that host work is what
//! the join queries spend their time on.
//!
//! The filters only ever remove rows their operator would discard itself,
//! so a batch the filter cannot be evaluated on (a column the scan does not
//! read) passes whole, and before a join's build side is done the filter
//! is `true` and every row passes.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::compute::filter_record_batch;
use datafusion::common::cast::as_boolean_array;
use datafusion::error::Result as DfResult;
use datafusion::physical_expr::expressions::Literal;
use datafusion::physical_expr::utils::reassign_expr_columns;
use datafusion::physical_expr::{DynamicFilterTracking, PhysicalExpr};
use datafusion::physical_expr_common::physical_expr::{
    snapshot_generation, snapshot_physical_expr,
};
use datafusion::physical_plan::metrics::Count;
use datafusion::scalar::ScalarValue;

/// Whether `expr` holds a filter that operators update while the query
/// runs (and so is worth applying row by row in the scan).
pub fn is_dynamic(expr: &Arc<dyn PhysicalExpr>) -> bool {
    DynamicFilterTracking::classify(expr).contains_dynamic_filter()
}

/// Whether scans apply dynamic filters to their rows:
/// `WARPREAD_DYNAMIC_FILTERS=0` turns it off (for comparisons).
pub fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("WARPREAD_DYNAMIC_FILTERS").as_deref() != Ok("0"))
}

/// Rows a filter is tried on before the stream decides whether it is worth
/// its cost: a hash-table lookup per row costs about what the join's own
/// probe does, so a filter that keeps most rows only adds work.
const SAMPLE_ROWS: usize = 32 * 1024;

/// A filter keeping at least this share of the sampled rows is no longer
/// applied (until its operator publishes a new one).
const MAX_KEPT: f64 = 0.75;

/// One dynamic filter of a stream: its expression bound to the batches'
/// columns as of a generation, and how many rows it kept since.
struct Slot {
    filter: Arc<dyn PhysicalExpr>,
    generation: Option<u64>,
    /// `None`: nothing to apply (still `true`, a column not read, or a
    /// filter that keeps most rows).
    bound: Option<Arc<dyn PhysicalExpr>>,
    seen: usize,
    kept: usize,
}

impl Slot {
    /// Rebinds the filter when its operator published a new one.
    fn refresh(&mut self, schema: &arrow::datatypes::Schema) -> DfResult<()> {
        let generation = snapshot_generation(&self.filter);
        if self.generation == Some(generation) {
            return Ok(());
        }
        let now = snapshot_physical_expr(Arc::clone(&self.filter))?;
        self.bound = if is_true(&now) {
            None
        } else {
            reassign_expr_columns(now, schema).ok()
        };
        (self.generation, self.seen, self.kept) = (Some(generation), 0, 0);
        Ok(())
    }

    /// The share of the rows tried that the filter kept (1 before any).
    fn kept_share(&self) -> f64 {
        if self.seen == 0 {
            1.0
        } else {
            self.kept as f64 / self.seen as f64
        }
    }
}

/// One file stream's dynamic filters, each tried on the rows the others
/// left, the most selective first; one that keeps most rows is dropped.
pub struct RowFilter {
    slots: Vec<Slot>,
    removed: Count,
}

impl RowFilter {
    /// Applies `filters`, counting the rows removed in `removed`.
    pub fn new(filters: Vec<Arc<dyn PhysicalExpr>>, removed: Count) -> Self {
        let slots = filters
            .into_iter()
            .map(|filter| Slot {
                filter,
                generation: None,
                bound: None,
                seen: 0,
                kept: 0,
            })
            .collect();
        Self { slots, removed }
    }

    /// `batch` without the rows that fail the filters as they stand now;
    /// `None` when no row is left.
    pub fn apply(&mut self, batch: RecordBatch) -> DfResult<Option<RecordBatch>> {
        let schema = batch.schema();
        for slot in &mut self.slots {
            slot.refresh(&schema)?;
        }
        // Stable: filters not tried yet keep the order they were pushed in.
        self.slots
            .sort_by(|a, b| a.kept_share().total_cmp(&b.kept_share()));
        let rows = batch.num_rows();
        let mut batch = batch;
        for slot in &mut self.slots {
            let Some(expr) = &slot.bound else { continue };
            if batch.num_rows() == 0 {
                break;
            }
            let values = expr.evaluate(&batch)?.into_array(batch.num_rows())?;
            let mask = as_boolean_array(&values)?;
            let kept = mask.true_count();
            (slot.seen, slot.kept) = (slot.seen + batch.num_rows(), slot.kept + kept);
            if kept < batch.num_rows() {
                batch = filter_record_batch(&batch, mask)?;
            }
            if slot.seen >= SAMPLE_ROWS && slot.kept_share() >= MAX_KEPT {
                slot.bound = None;
            }
        }
        self.removed.add(rows - batch.num_rows());
        Ok((batch.num_rows() > 0).then_some(batch))
    }
}

fn is_true(expr: &Arc<dyn PhysicalExpr>) -> bool {
    expr.as_ref()
        .downcast_ref::<Literal>()
        .is_some_and(|l| l.value() == &ScalarValue::Boolean(Some(true)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, Int64Array};
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::{
        BinaryExpr, Column, DynamicFilterPhysicalExpr, lit,
    };
    use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder};

    fn batch() -> RecordBatch {
        let b: ArrayRef = Arc::new(Int64Array::from(vec![1, 5, 9, 12]));
        let a: ArrayRef = Arc::new(Int64Array::from(vec![10, 20, 30, 40]));
        RecordBatch::try_from_iter([("b", b), ("a", a)]).unwrap()
    }

    /// A dynamic filter on table column `a` (index 3 of the table, so the
    /// batch's `a`, at 1, is found by name).
    fn dynamic() -> (Arc<DynamicFilterPhysicalExpr>, Arc<dyn PhysicalExpr>) {
        let col: Arc<dyn PhysicalExpr> = Arc::new(Column::new("a", 3));
        let f = Arc::new(DynamicFilterPhysicalExpr::new(vec![col], lit(true)));
        let as_expr: Arc<dyn PhysicalExpr> = Arc::clone(&f) as _;
        (f, as_expr)
    }

    fn gt(name: &str, index: usize, v: i64) -> Arc<dyn PhysicalExpr> {
        Arc::new(BinaryExpr::new(
            Arc::new(Column::new(name, index)),
            Operator::Gt,
            lit(v),
        ))
    }

    fn count() -> Count {
        MetricBuilder::new(&ExecutionPlanMetricsSet::new()).counter("removed", 0)
    }

    #[test]
    fn rows_pass_until_the_filter_is_published_then_fail_it() {
        let (f, expr) = dynamic();
        assert!(is_dynamic(&expr));
        assert!(!is_dynamic(&gt("a", 3, 1)));
        let removed = count();
        let mut rows = RowFilter::new(vec![expr], removed.clone());
        assert_eq!(rows.apply(batch()).unwrap().unwrap().num_rows(), 4);
        f.update(gt("a", 3, 25)).unwrap();
        let out = rows.apply(batch()).unwrap().unwrap();
        let a = out.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(a.values(), &[30, 40]);
        assert_eq!(out.column(0).len(), 2, "every column is filtered");
        assert_eq!(removed.value(), 2);
        f.update(gt("a", 3, 100)).unwrap();
        assert!(rows.apply(batch()).unwrap().is_none(), "no row left");
        assert_eq!(removed.value(), 6);
    }

    #[test]
    fn a_filter_on_a_column_not_read_lets_rows_pass() {
        let c: Arc<dyn PhysicalExpr> = Arc::new(Column::new("c", 7));
        let f = Arc::new(DynamicFilterPhysicalExpr::new(vec![c], lit(true)));
        let removed = count();
        let mut rows = RowFilter::new(vec![Arc::clone(&f) as _], removed.clone());
        f.update(gt("c", 7, 0)).unwrap();
        assert_eq!(rows.apply(batch()).unwrap().unwrap().num_rows(), 4);
        assert_eq!(removed.value(), 0);
    }

    #[test]
    fn a_filter_that_keeps_most_rows_is_dropped_after_its_sample() {
        let n = SAMPLE_ROWS as i64;
        let a: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n));
        let big = RecordBatch::try_from_iter([("a", a)]).unwrap();
        let (wide, wide_expr) = dynamic();
        let (narrow, narrow_expr) = dynamic();
        let removed = count();
        let mut rows = RowFilter::new(vec![wide_expr, narrow_expr], removed.clone());
        wide.update(gt("a", 3, 0)).unwrap(); // keeps all but one row
        narrow.update(gt("a", 3, n / 2 - 1)).unwrap(); // keeps half
        let out = rows.apply(big.clone()).unwrap().unwrap();
        assert_eq!(out.num_rows(), SAMPLE_ROWS / 2);
        let wide_slot = rows.slots.iter().find(|s| s.seen == SAMPLE_ROWS).unwrap();
        assert!(wide_slot.bound.is_none(), "tried on every row, kept them all");
        // The half-keeping filter stays, and now runs first.
        let out = rows.apply(big.clone()).unwrap().unwrap();
        assert_eq!(out.num_rows(), SAMPLE_ROWS / 2);
        assert!(rows.slots[0].bound.is_some());
        // First it saw the rows the wide one left (all but one), now all.
        assert_eq!(rows.slots[0].seen, 2 * SAMPLE_ROWS - 1);
        // A newly published filter is tried again.
        wide.update(gt("a", 3, n - 2)).unwrap();
        assert_eq!(rows.apply(big).unwrap().unwrap().num_rows(), 1);
    }
}
