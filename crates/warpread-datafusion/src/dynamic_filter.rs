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

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow::array::{RecordBatch, UInt32Array};
use datafusion::error::Result as DfResult;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::{DynamicFilterPhysicalExpr, Literal};
use datafusion::physical_expr::utils::reassign_expr_columns;
use datafusion::physical_expr_common::physical_expr::{
    snapshot_generation, snapshot_physical_expr,
};
use datafusion::physical_plan::metrics::Count;
use datafusion::scalar::ScalarValue;

#[cfg(test)]
use super::filter_ids::is_dynamic;
use super::key_set::{BuildKeys, KeySlot};
use super::options::WarpreadOptions;
use super::routed_filter::{Node, compile_keys, compile_narrowed, take_rows};

/// Rows a filter is tried on before the stream decides whether it is worth
/// its cost: a hash-table lookup per row costs about what the join's own
/// probe does, so a filter that removes few rows only adds work.
const SAMPLE_ROWS: usize = 32 * 1024;

/// A filter compiled for a batch of the columns it names.
struct Compiled {
    /// Those columns' indices in the stream's batches.
    columns: Vec<usize>,
    node: Node,
}

/// One dynamic filter of a stream: its expression compiled for the
/// batches' columns as of a generation, and how many rows it kept since.
struct Slot {
    /// Its place among the pushed filters (slots are reordered).
    id: usize,
    filter: Arc<dyn PhysicalExpr>,
    generation: Option<u64>,
    /// The batch columns it names and the filter compiled for them;
    /// `None`: nothing to apply (still `true`, a column not read, a filter
    /// that failed or one that keeps too many rows).
    node: Option<Arc<Compiled>>,
    seen: usize,
    kept: usize,
    /// Time spent evaluating it on those rows.
    nanos: u64,
    /// Its join's build keys, where the join hands them to the scan
    /// (`join_keys`), and the probe key they are tested against (over the
    /// table's columns).
    keys: Option<JoinKeys>,
    /// Published, and to be tested against the build keys once they are
    /// ready.
    awaiting_keys: bool,
    /// `node` tests the build keys.
    on_keys: bool,
}

/// A join's build keys and its probe key's parts (over the table's columns).
type JoinKeys = (Arc<BuildKeys>, Vec<Arc<dyn PhysicalExpr>>);

/// The build keys of the join that publishes `filter` and the probe key,
/// where the join hands them to the scan (`key_slots`, by filter id).
fn join_keys_of(
    filter: &Arc<dyn PhysicalExpr>,
    key_slots: &[(u64, Arc<KeySlot>)],
) -> Option<JoinKeys> {
    let d = filter
        .as_ref()
        .downcast_ref::<DynamicFilterPhysicalExpr>()?;
    let id = d.expression_id()?;
    let keys = key_slots.iter().find(|(i, _)| *i == id)?.1.keys();
    // The join's probe keys, in the order of its build keys.
    Some((keys, d.children().into_iter().cloned().collect()))
}

impl Slot {
    /// Compiles the filter again when its operator published a new one;
    /// one that cannot be bound to the batches' columns is not applied.
    fn refresh(&mut self, schema: &arrow::datatypes::Schema) {
        let generation = snapshot_generation(&self.filter);
        if self.generation == Some(generation) {
            return;
        }
        self.node = snapshot_physical_expr(Arc::clone(&self.filter))
            .and_then(|now| reassign_expr_columns(now, schema))
            .ok()
            .filter(|bound| !is_true(bound))
            .and_then(|bound| compile_narrowed(&bound, schema).ok())
            .map(|(columns, node)| Arc::new(Compiled { columns, node }));
        (self.generation, self.seen, self.kept, self.nanos) = (Some(generation), 0, 0, 0);
        self.on_keys = false;
        // `apply` tries the keys right after.
        self.awaiting_keys = self.node.is_some() && self.keys.is_some();
    }

    /// Tests the build keys instead of the published expression once they
    /// are ready (every build partition ends before its join publishes,
    /// so they usually are at the first batch after).
    fn try_keys(&mut self, schema: &arrow::datatypes::Schema) {
        let Some((keys, probe)) = self.keys.as_ref().filter(|_| self.awaiting_keys) else {
            return;
        };
        let Some(set) = keys.ready() else {
            self.awaiting_keys = !keys.settled();
            return;
        };
        self.awaiting_keys = false;
        let compiled = probe
            .iter()
            .map(|k| reassign_expr_columns(Arc::clone(k), schema))
            .collect::<DfResult<Vec<_>>>()
            .and_then(|key| compile_keys(&key, schema, set));
        if let Ok((columns, node)) = compiled {
            self.node = Some(Arc::new(Compiled { columns, node }));
            self.on_keys = true;
            (self.seen, self.kept, self.nanos) = (0, 0, 0);
        }
    }

    /// The share of the rows tried that the filter kept (1 before any).
    fn kept_share(&self) -> f64 {
        if self.seen == 0 {
            1.0
        } else {
            self.kept as f64 / self.seen as f64
        }
    }

    /// The time it took to remove a row so far: filters that remove rows
    /// cheaply run first (0 before any try, so new filters are tried).
    fn cost_per_removed_row(&self) -> f64 {
        if self.seen == 0 {
            return 0.0;
        }
        let per_row = self.nanos as f64 / self.seen as f64;
        per_row / (1.0 - self.kept_share()).max(1e-3)
    }
}

/// One file stream's dynamic filters, with the scan's other pushed filters
/// tried first (a cheap comparison that removes half the rows spares the
/// dynamic filters' lookups those rows). Each is tried on the rows the
/// others left, the cheapest per row removed first; one that keeps a
/// quarter of its sample or more is dropped.
///
/// One per file stream, so every batch it sees has the same schema and a
/// filter is compiled again only when its operator publishes a new one.
/// Batches may be filtered side by side (the stream hands several to
/// tasks of their own), so the filters' state sits behind a lock taken
/// twice per batch.
pub struct RowFilter {
    slots: Mutex<Vec<Slot>>,
    /// Slots with an id below this hold the fixed filters.
    fixed: usize,
    removed: Count,
    /// `warpread.dynamic_filter_max_kept`.
    max_kept: f64,
    /// `warpread.key_set_max_kept`.
    max_kept_keys: f64,
    /// Rows the fixed filters saw and kept while they ran alone (no
    /// dynamic filter in force), and whether they stopped.
    alone_seen: AtomicUsize,
    alone_kept: AtomicUsize,
    alone_off: AtomicBool,
}

/// The fixed filters run on their own (no dynamic filter in force) while
/// together they keep less than this share of the rows: a conjunction of
/// cheap comparisons that keeps few rows then spares the operators above
/// the rest, and its costly conjuncts (TPC-H Q12's `l_shipmode IN (...)`
/// over strings) see only the rows the cheap ones kept, where DataFusion's
/// `FilterExec` evaluates every conjunct on every row.
/// `warpread.fixed_row_filters = false` keeps them to dynamic filters'
/// company.
const FIXED_MAX_KEPT: f64 = 0.25;

impl RowFilter {
    /// Applies `fixed` (filters that never change, tried first) and
    /// `dynamic`, counting the rows removed in `removed`; a dynamic filter
    /// whose join hands its build keys to the scan (in `key_slots`, by the
    /// filter's id) is tested against them once they are ready. `options`
    /// gives the shares of their sample past which filters stop.
    pub fn new(
        fixed: Vec<Arc<dyn PhysicalExpr>>,
        dynamic: Vec<Arc<dyn PhysicalExpr>>,
        removed: Count,
        key_slots: &[(u64, Arc<KeySlot>)],
        options: &WarpreadOptions,
    ) -> Self {
        let fixed_count = fixed.len();
        let slots = fixed
            .into_iter()
            .chain(dynamic)
            .enumerate()
            .map(|(id, filter)| Slot {
                id,
                keys: (id >= fixed_count)
                    .then(|| join_keys_of(&filter, key_slots))
                    .flatten(),
                filter,
                generation: None,
                node: None,
                seen: 0,
                kept: 0,
                nanos: 0,
                awaiting_keys: false,
                on_keys: false,
            })
            .collect();
        Self {
            slots: Mutex::new(slots),
            fixed: fixed_count,
            removed,
            max_kept: options.dynamic_filter_max_kept,
            max_kept_keys: options.key_set_max_kept,
            alone_seen: AtomicUsize::new(0),
            alone_kept: AtomicUsize::new(0),
            alone_off: AtomicBool::new(false),
        }
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `batch` without the rows that fail the filters as they stand now;
    /// `None` when no row is left.
    pub fn apply(&self, batch: RecordBatch) -> DfResult<Option<RecordBatch>> {
        let schema = batch.schema();
        let active: Vec<(usize, Option<u64>, Arc<Compiled>)> = {
            let mut slots = self.slots();
            for slot in slots.iter_mut() {
                slot.refresh(&schema);
                slot.try_keys(&schema);
            }
            // Stable: filters not tried yet keep the order they were
            // pushed in.
            slots.sort_by(|a, b| {
                a.cost_per_removed_row()
                    .total_cmp(&b.cost_per_removed_row())
            });
            slots
                .iter()
                .filter_map(|s| Some((s.id, s.generation, Arc::clone(s.node.as_ref()?))))
                .collect()
        };
        // With no dynamic filter in force (not published yet, or dropped),
        // the fixed filters run on their own only while together they keep
        // few rows (the operators above apply them anyway).
        let alone = !active.iter().any(|(id, ..)| *id >= self.fixed);
        if alone && (active.is_empty() || self.alone_off.load(Ordering::Relaxed)) {
            return Ok(Some(batch));
        }
        // Each filter sees only its own columns of the rows still kept; the
        // batch itself is cut once, at the end.
        let rows = batch.num_rows();
        let mut survivors: Option<UInt32Array> = None;
        let mut tried = Vec::new();
        for (id, generation, compiled) in active {
            let live = survivors.as_ref().map_or(rows, |s| s.len());
            if live == 0 {
                break;
            }
            let started = std::time::Instant::now();
            let Compiled { columns, node } = compiled.as_ref();
            let view = batch.project(columns)?;
            let view = match &survivors {
                Some(s) => take_rows(&view, s)?,
                None => view,
            };
            // The operators above apply every filter themselves, so one
            // that fails here (a division by zero on a row another conjunct
            // excludes) is dropped rather than failing the query.
            let Ok(mask) = node.keep(&view) else {
                tried.push((id, generation, live, None));
                continue;
            };
            let kept = mask.true_count();
            let nanos = started.elapsed().as_nanos() as u64;
            tried.push((id, generation, live, Some((kept, nanos))));
            if kept < live {
                // Masks carry no nulls (`Node::keep`), so set bits are
                // the rows kept.
                let kept_rows = mask.values().set_indices();
                survivors = Some(match &survivors {
                    Some(s) => kept_rows.map(|j| s.values()[j]).collect(),
                    None => kept_rows.map(|i| i as u32).collect(),
                });
            }
        }
        if !tried.is_empty() {
            let mut slots = self.slots();
            for (id, generation, seen, outcome) in tried {
                let Some(slot) = slots.iter_mut().find(|s| s.id == id) else {
                    continue;
                };
                if slot.generation != generation {
                    continue; // republished meanwhile: its count restarted
                }
                let Some((kept, nanos)) = outcome else {
                    slot.node = None;
                    continue;
                };
                slot.seen += seen;
                slot.kept += kept;
                slot.nanos += nanos;
                let max_kept = if slot.on_keys {
                    self.max_kept_keys
                } else {
                    self.max_kept
                };
                // Alone, the fixed filters are judged together (below):
                // one conjunct of a selective conjunction may keep most
                // of the rows the others left.
                if !alone && slot.seen >= SAMPLE_ROWS && slot.kept_share() >= max_kept {
                    slot.node = None;
                    slot.awaiting_keys = false;
                }
            }
        }
        if alone {
            let out_rows = survivors.as_ref().map_or(rows, |s| s.len());
            let seen = self.alone_seen.fetch_add(rows, Ordering::Relaxed) + rows;
            let kept = self.alone_kept.fetch_add(out_rows, Ordering::Relaxed) + out_rows;
            if seen >= SAMPLE_ROWS && kept as f64 >= FIXED_MAX_KEPT * seen as f64 {
                self.alone_off.store(true, Ordering::Relaxed);
            }
        }
        let out = match survivors {
            None => batch,
            Some(s) if s.is_empty() => {
                self.removed.add(rows);
                return Ok(None);
            }
            Some(s) => take_rows(&batch, &s)?,
        };
        self.removed.add(rows - out.num_rows());
        Ok(Some(out))
    }
}

/// The pruning predicates (`column op literal` conjuncts) of the filters
/// as they stand now, for the columns of `schema`: a join's bounds, once
/// published, skip the stripes and row groups outside them when a file is
/// opened after its build side is done.
pub fn pruning_predicates(
    filters: &[Arc<dyn PhysicalExpr>],
    schema: &arrow::datatypes::Schema,
) -> Vec<crate::orc::Predicate> {
    filters
        .iter()
        .filter_map(|f| snapshot_physical_expr(Arc::clone(f)).ok())
        .flat_map(|now| super::predicate::translate(&now, schema))
        .collect()
}

fn is_true(expr: &Arc<dyn PhysicalExpr>) -> bool {
    expr.as_ref()
        .downcast_ref::<Literal>()
        .is_some_and(|l| l.value() == &ScalarValue::Boolean(Some(true)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, ArrayRef, Int64Array};
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

    fn filter(
        fixed: Vec<Arc<dyn PhysicalExpr>>,
        dynamic: Vec<Arc<dyn PhysicalExpr>>,
        removed: Count,
    ) -> RowFilter {
        RowFilter::new(fixed, dynamic, removed, &[], &WarpreadOptions::default())
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
        let rows = filter(Vec::new(), vec![expr], removed.clone());
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
        let rows = filter(Vec::new(), vec![Arc::clone(&f) as _], removed.clone());
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
        let rows = filter(Vec::new(), vec![wide_expr, narrow_expr], removed.clone());
        wide.update(gt("a", 3, 0)).unwrap(); // keeps all but one row
        narrow.update(gt("a", 3, n - n / 8 - 1)).unwrap(); // keeps an eighth
        let out = rows.apply(big.clone()).unwrap().unwrap();
        assert_eq!(out.num_rows(), SAMPLE_ROWS / 8);
        let slots = rows.slots();
        let wide_slot = slots.iter().find(|s| s.seen == SAMPLE_ROWS).unwrap();
        assert!(
            wide_slot.node.is_none(),
            "tried on every row, kept them all"
        );
        drop(slots);
        // The selective filter stays, and now runs first.
        let out = rows.apply(big.clone()).unwrap().unwrap();
        assert_eq!(out.num_rows(), SAMPLE_ROWS / 8);
        let slots = rows.slots();
        assert!(slots[0].node.is_some());
        // First it saw the rows the wide one left (all but one), now all.
        assert_eq!(slots[0].seen, 2 * SAMPLE_ROWS - 1);
        drop(slots);
        // A newly published filter is tried again.
        wide.update(gt("a", 3, n - 2)).unwrap();
        assert_eq!(rows.apply(big).unwrap().unwrap().num_rows(), 1);
    }

    #[test]
    fn a_filter_that_fails_is_dropped_and_the_rows_pass() {
        let removed = count();
        // Integer division by zero errs in DataFusion.
        let div: Arc<dyn PhysicalExpr> = Arc::new(BinaryExpr::new(
            Arc::new(Column::new("a", 1)),
            Operator::Divide,
            lit(0i64),
        ));
        let failing: Arc<dyn PhysicalExpr> =
            Arc::new(BinaryExpr::new(div, Operator::Gt, lit(1i64)));
        let (f, expr) = dynamic();
        let rows = filter(vec![failing], vec![expr], removed.clone());
        f.update(gt("a", 3, 15)).unwrap();
        assert_eq!(rows.apply(batch()).unwrap().unwrap().num_rows(), 3);
        assert!(rows.slots().iter().any(|s| s.id == 0 && s.node.is_none()));
        assert_eq!(rows.apply(batch()).unwrap().unwrap().num_rows(), 3);
    }

    #[test]
    fn fixed_filters_alone_run_while_together_they_keep_few_rows() {
        let n = SAMPLE_ROWS as i64;
        let a: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n));
        let big = RecordBatch::try_from_iter([("a", a)]).unwrap();
        // Each conjunct keeps half of what reaches it; together a quarter
        // less one row: under FIXED_MAX_KEPT, so they keep running.
        let removed = count();
        let low = gt("a", 0, n / 2);
        let high: Arc<dyn PhysicalExpr> = Arc::new(BinaryExpr::new(
            Arc::new(Column::new("a", 0)),
            Operator::Lt,
            lit(n - n / 4),
        ));
        let (_, expr) = dynamic();
        let rows = filter(vec![low, high], vec![expr], removed.clone());
        for _ in 0..3 {
            let out = rows.apply(big.clone()).unwrap().unwrap();
            assert_eq!(out.num_rows() as i64, n / 4 - 1);
        }
        assert!(!rows.alone_off.load(Ordering::Relaxed));
        // One that keeps most rows runs for its sample, then stops: the
        // operators above apply it anyway.
        let (f, expr) = dynamic();
        let rows = filter(vec![gt("a", 0, 0)], vec![expr], count());
        assert_eq!(
            rows.apply(big.clone()).unwrap().unwrap().num_rows(),
            SAMPLE_ROWS - 1
        );
        assert!(rows.alone_off.load(Ordering::Relaxed));
        assert_eq!(
            rows.apply(big.clone()).unwrap().unwrap().num_rows(),
            SAMPLE_ROWS
        );
        // With a dynamic filter in force it runs again, before it.
        f.update(gt("a", 0, n - 3)).unwrap();
        assert_eq!(rows.apply(big).unwrap().unwrap().num_rows(), 2);
    }
}
