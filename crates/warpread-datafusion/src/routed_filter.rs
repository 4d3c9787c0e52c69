//! A hash join's dynamic filter, evaluated for the rows it keeps at a cost
//! proportional to the rows. A partitioned join publishes
//! `CASE hash(keys) % N WHEN 0 THEN <partition 0's bounds and keys> ...
//! END`; DataFusion's own `CASE` evaluation copies the whole remaining batch
//! once per branch, so with 16 partitions a probe row costs about 16 copies
//! (TPC-H SF 10 Q3 on the device went from 0.34 s to 2.78 s with the filter
//! evaluated that way). Here the routing value is computed once, each
//! branch runs on the rows routed to it (only the columns it names), and
//! `AND` tries its right side only on the rows its left side kept.
//!
//! Only whether a row is kept matters, so a `NULL` result counts as not
//! kept throughout: under `AND`, `OR` and `CASE` that is the same answer
//! SQL's three-valued logic gives for "is the whole predicate true".

use std::sync::Arc;

use arrow::array::{
    Array, BooleanArray, BooleanBufferBuilder, RecordBatch, RecordBatchOptions, UInt32Array,
};
use arrow::compute::kernels::boolean::{and, or};
use arrow::compute::{prep_null_mask_filter, take_record_batch};
use arrow::datatypes::Schema;
use datafusion::common::cast::{as_boolean_array, as_uint64_array};
use datafusion::error::Result as DfResult;
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::{BinaryExpr, CaseExpr, Literal};
use datafusion::physical_expr::utils::{collect_columns, reassign_expr_columns};
use datafusion::scalar::ScalarValue;

use super::key_set::KeySet;

/// Routing values above this are not given a branch table (a join has as
/// many branches as partitions, far fewer).
const MAX_ROUTE: u64 = 1 << 16;

/// A predicate compiled against one batch schema.
pub enum Node {
    /// A constant answer.
    Constant(bool),
    /// `CASE base WHEN k THEN ...`: rows grouped by their routing value,
    /// each branch evaluated on its rows' `columns` only.
    Routed {
        /// The whole `CASE`, for a routing value that is not a `UInt64`.
        whole: Arc<dyn PhysicalExpr>,
        base: Routing,
        /// Branch of each routing value (`u32::MAX`: none, the `ELSE`).
        branch_of: Vec<u32>,
        branches: Vec<Node>,
        otherwise: Option<Box<Node>>,
        columns: Vec<usize>,
    },
    /// `left AND right`, the right side compiled for its own `columns`
    /// (tried on the left side's survivors only, when few).
    And {
        left: Box<Node>,
        right: Box<Node>,
        columns: Vec<usize>,
    },
    Or(Box<Node>, Box<Node>),
    /// Whether a join's probe key is among its build keys
    /// ([`super::join_keys`]); its parts are bound to a batch of exactly
    /// the columns they name (as [`compile_keys`] returns them).
    Keys {
        key: Vec<Arc<dyn PhysicalExpr>>,
        set: Arc<KeySet>,
    },
    /// Any other predicate, on the batch's `columns` it names.
    Leaf {
        expr: Arc<dyn PhysicalExpr>,
        columns: Vec<usize>,
    },
}

/// A `CASE`'s routing value.
pub enum Routing {
    /// `expr % modulus` with a positive `UInt64` literal: a join's
    /// `hash(keys) % partitions`, whose remainder is taken in the routing
    /// loop (arrow's checked `%` kernel was a tenth of a partitioned join
    /// filter's time).
    Modulo {
        expr: Arc<dyn PhysicalExpr>,
        modulus: u64,
    },
    /// Any other expression.
    Value(Arc<dyn PhysicalExpr>),
}

impl Routing {
    fn of(base: &Arc<dyn PhysicalExpr>) -> Self {
        if let Some(b) = base.as_ref().downcast_ref::<BinaryExpr>()
            && *b.op() == Operator::Modulo
            && let Some(l) = b.right().as_ref().downcast_ref::<Literal>()
            && let ScalarValue::UInt64(Some(modulus)) = l.value()
            && *modulus > 0
        {
            return Routing::Modulo {
                expr: Arc::clone(b.left()),
                modulus: *modulus,
            };
        }
        Routing::Value(Arc::clone(base))
    }

    /// Calls `to` with each row's routing value (`None`: null); false
    /// (and no call) when the value is not a `UInt64`.
    fn route(&self, batch: &RecordBatch, mut to: impl FnMut(usize, Option<u64>)) -> DfResult<bool> {
        let (expr, modulus) = match self {
            Routing::Modulo { expr, modulus } => (expr, Some(*modulus)),
            Routing::Value(expr) => (expr, None),
        };
        let values = expr.evaluate(batch)?.into_array(batch.num_rows())?;
        let Ok(values) = as_uint64_array(&values) else {
            return Ok(false);
        };
        let rows = values.iter().enumerate();
        match modulus {
            Some(m) if m.is_power_of_two() => rows.for_each(|(i, v)| to(i, v.map(|v| v & (m - 1)))),
            Some(m) => rows.for_each(|(i, v)| to(i, v.map(|v| v % m))),
            None => rows.for_each(|(i, v)| to(i, v)),
        }
        Ok(true)
    }
}

/// The indices of the columns `exprs` name, ascending.
fn columns_of<'a>(exprs: impl IntoIterator<Item = &'a Arc<dyn PhysicalExpr>>) -> Vec<usize> {
    let mut columns: Vec<usize> = exprs
        .into_iter()
        .flat_map(|e| collect_columns(e).into_iter().map(|c| c.index()))
        .collect();
    columns.sort_unstable();
    columns.dedup();
    columns
}

/// The indices of the columns `expr` names, ascending, and `expr` bound to
/// a batch of those columns only.
fn narrowed(
    expr: &Arc<dyn PhysicalExpr>,
    schema: &Schema,
) -> DfResult<(Vec<usize>, Arc<dyn PhysicalExpr>, Schema)> {
    let columns = columns_of([expr]);
    let narrow = schema.project(&columns)?;
    let bound = reassign_expr_columns(Arc::clone(expr), &narrow)?;
    Ok((columns, bound, narrow))
}

/// `expr` (whose columns index `schema`) compiled for a batch of only the
/// columns it names, and those columns' indices in `schema`.
pub fn compile_narrowed(
    expr: &Arc<dyn PhysicalExpr>,
    schema: &Schema,
) -> DfResult<(Vec<usize>, Node)> {
    let (columns, bound, narrow) = narrowed(expr, schema)?;
    Ok((columns, Node::compile(&bound, &narrow)?))
}

/// A test of `key`'s parts (whose columns index `schema`) against a join's
/// build keys, for a batch of only the columns they name, and those
/// columns' indices in `schema`.
pub fn compile_keys(
    key: &[Arc<dyn PhysicalExpr>],
    schema: &Schema,
    set: Arc<KeySet>,
) -> DfResult<(Vec<usize>, Node)> {
    let columns = columns_of(key);
    let narrow = schema.project(&columns)?;
    let key = key
        .iter()
        .map(|k| reassign_expr_columns(Arc::clone(k), &narrow))
        .collect::<DfResult<_>>()?;
    Ok((columns, Node::Keys { key, set }))
}

impl Node {
    /// Compiles `expr`, whose columns index `schema`.
    pub fn compile(expr: &Arc<dyn PhysicalExpr>, schema: &Schema) -> DfResult<Node> {
        if let Some(l) = expr.as_ref().downcast_ref::<Literal>()
            && let ScalarValue::Boolean(v) = l.value()
        {
            return Ok(Node::Constant(v.unwrap_or(false)));
        }
        if let Some(b) = expr.as_ref().downcast_ref::<BinaryExpr>() {
            match b.op() {
                Operator::And => {
                    let (columns, right, narrow) = narrowed(b.right(), schema)?;
                    return Ok(Node::And {
                        left: Box::new(Node::compile(b.left(), schema)?),
                        right: Box::new(Node::compile(&right, &narrow)?),
                        columns,
                    });
                }
                Operator::Or => {
                    return Ok(Node::Or(
                        Box::new(Node::compile(b.left(), schema)?),
                        Box::new(Node::compile(b.right(), schema)?),
                    ));
                }
                _ => {}
            }
        }
        if let Some(case) = expr.as_ref().downcast_ref::<CaseExpr>()
            && let Some(routed) = Self::routed(expr, case, schema)?
        {
            return Ok(routed);
        }
        let (columns, expr, _) = narrowed(expr, schema)?;
        Ok(Node::Leaf { expr, columns })
    }

    /// A `CASE` on a routing value with small `UInt64` literals as `WHEN`s.
    fn routed(
        whole: &Arc<dyn PhysicalExpr>,
        case: &CaseExpr,
        schema: &Schema,
    ) -> DfResult<Option<Node>> {
        let Some(base) = case.expr() else {
            return Ok(None);
        };
        let mut routes = Vec::new();
        for (when, _) in case.when_then_expr() {
            match when.as_ref().downcast_ref::<Literal>().map(|l| l.value()) {
                Some(ScalarValue::UInt64(Some(k))) if *k < MAX_ROUTE => routes.push(*k as usize),
                _ => return Ok(None),
            }
        }
        // The branches see the columns any of them names, nothing else.
        let columns = columns_of(
            case.when_then_expr()
                .iter()
                .map(|(_, then)| then)
                .chain(case.else_expr()),
        );
        let narrow = schema.project(&columns)?;
        let compile_narrow = |e: &Arc<dyn PhysicalExpr>| {
            Node::compile(&reassign_expr_columns(Arc::clone(e), &narrow)?, &narrow)
        };
        let mut branch_of = vec![u32::MAX; routes.iter().max().map_or(0, |m| m + 1)];
        let mut branches = Vec::new();
        for (i, (k, (_, then))) in routes.iter().zip(case.when_then_expr()).enumerate() {
            // The first `WHEN` matching a value wins, as in SQL.
            if branch_of[*k] == u32::MAX {
                branch_of[*k] = i as u32;
            }
            branches.push(compile_narrow(then)?);
        }
        let otherwise = case
            .else_expr()
            .map(compile_narrow)
            .transpose()?
            .map(Box::new);
        Ok(Some(Node::Routed {
            whole: Arc::clone(whole),
            base: Routing::of(base),
            branch_of,
            branches,
            otherwise,
            columns,
        }))
    }

    /// Which rows of `batch` the predicate holds for, as a mask without
    /// nulls (a `NULL` result: not kept).
    pub fn keep(&self, batch: &RecordBatch) -> DfResult<BooleanArray> {
        let n = batch.num_rows();
        match self {
            Node::Constant(v) => Ok(BooleanArray::from(vec![*v; n])),
            Node::Leaf { expr, columns } => evaluate(expr, &batch.project(columns)?),
            Node::Keys { key, set } => {
                let parts = key
                    .iter()
                    .map(|k| k.evaluate(batch)?.into_array(n))
                    .collect::<DfResult<Vec<_>>>()?;
                set.contains(&parts).ok_or_else(|| {
                    datafusion::error::DataFusionError::Internal(
                        "a join key's types have no key set".into(),
                    )
                })
            }
            Node::Or(l, r) => {
                let left = l.keep(batch)?;
                if left.true_count() == n {
                    return Ok(left);
                }
                Ok(or(&left, &r.keep(batch)?)?)
            }
            Node::And {
                left,
                right,
                columns,
            } => {
                let left = left.keep(batch)?;
                let kept = left.true_count();
                if kept == 0 {
                    return Ok(left);
                }
                let narrow = batch.project(columns)?;
                if kept == n {
                    return right.keep(&narrow);
                }
                if kept * 4 > n {
                    return Ok(and(&left, &right.keep(&narrow)?)?);
                }
                let rows: UInt32Array = left.values().set_indices().map(|i| i as u32).collect();
                let kept_right = right.keep(&take_rows(&narrow, &rows)?)?;
                Ok(scatter(n, [(&rows, &kept_right)]))
            }
            Node::Routed {
                whole,
                base,
                branch_of,
                branches,
                otherwise,
                columns,
            } => {
                let last = branches.len();
                let mut rows: Vec<Vec<u32>> = vec![Vec::new(); last + 1];
                let routed = base.route(batch, |i, v| {
                    let b = v
                        .and_then(|v| branch_of.get(usize::try_from(v).ok()?))
                        .map_or(last, |&b| if b == u32::MAX { last } else { b as usize });
                    rows[b].push(i as u32);
                })?;
                if !routed {
                    return evaluate(whole, batch);
                }
                let narrow = batch.project(columns)?;
                let mut parts = Vec::new();
                for (b, rows) in rows.into_iter().enumerate() {
                    let node = match branches.get(b) {
                        Some(node) => node,
                        None => match otherwise {
                            Some(node) => node,
                            None => continue,
                        },
                    };
                    if rows.is_empty() {
                        continue;
                    }
                    let rows = UInt32Array::from(rows);
                    let kept = node.keep(&take_rows(&narrow, &rows)?)?;
                    parts.push((rows, kept));
                }
                Ok(scatter(n, parts.iter().map(|(r, k)| (r, k))))
            }
        }
    }
}

/// `expr`'s value on `batch`, as rows kept.
fn evaluate(expr: &Arc<dyn PhysicalExpr>, batch: &RecordBatch) -> DfResult<BooleanArray> {
    let values = expr.evaluate(batch)?.into_array(batch.num_rows())?;
    let mask = as_boolean_array(&values)?;
    Ok(if mask.null_count() > 0 {
        prep_null_mask_filter(mask)
    } else {
        mask.clone()
    })
}

/// The rows `rows` of `batch` (which may have no columns).
pub(crate) fn take_rows(batch: &RecordBatch, rows: &UInt32Array) -> DfResult<RecordBatch> {
    if batch.num_columns() == 0 {
        let options = RecordBatchOptions::new().with_row_count(Some(rows.len()));
        return Ok(RecordBatch::try_new_with_options(
            batch.schema(),
            Vec::new(),
            &options,
        )?);
    }
    Ok(take_record_batch(batch, rows)?)
}

/// `n` rows, kept where a part's row is kept.
fn scatter<'a>(
    n: usize,
    parts: impl IntoIterator<Item = (&'a UInt32Array, &'a BooleanArray)>,
) -> BooleanArray {
    let mut out = BooleanBufferBuilder::new(n);
    out.append_n(n, false);
    for (rows, kept) in parts {
        for j in kept.values().set_indices() {
            out.set_bit(rows.values()[j] as usize, true);
        }
    }
    BooleanArray::new(out.finish(), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, Int64Array, UInt64Array};
    use datafusion::physical_expr::expressions::{IsNullExpr, col, lit};

    /// Rows with nulls in every column: `r` the routing value, `a` and `b`
    /// keys.
    fn batch(n: usize, seed: u64) -> RecordBatch {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut r = Vec::new();
        let mut a = Vec::new();
        let mut b = Vec::new();
        for _ in 0..n {
            let v = next();
            r.push((v % 11 != 0).then_some(v % 7));
            a.push((v % 13 != 0).then_some((v >> 8) as i64 % 100));
            b.push((v % 17 != 0).then_some((v >> 20) as i64 % 100));
        }
        let r: ArrayRef = Arc::new(UInt64Array::from(r));
        let a: ArrayRef = Arc::new(Int64Array::from(a));
        let b: ArrayRef = Arc::new(Int64Array::from(b));
        RecordBatch::try_from_iter([("r", r), ("a", a), ("b", b)]).unwrap()
    }

    fn cmp(
        l: Arc<dyn PhysicalExpr>,
        op: Operator,
        r: Arc<dyn PhysicalExpr>,
    ) -> Arc<dyn PhysicalExpr> {
        Arc::new(BinaryExpr::new(l, op, r))
    }

    fn column(name: &str, schema: &Schema) -> Arc<dyn PhysicalExpr> {
        col(name, schema).unwrap()
    }

    /// `r`, or `r % modulus` as a join routes rows to its partitions.
    fn routing(schema: &Schema, modulus: Option<u64>) -> Arc<dyn PhysicalExpr> {
        let r = column("r", schema);
        match modulus {
            Some(m) => cmp(r, Operator::Modulo, lit(ScalarValue::UInt64(Some(m)))),
            None => r,
        }
    }

    /// A join's filter shape: routed per partition, some partitions empty
    /// (`false`), bounds `AND` a key test, nulls kept by an `OR`.
    fn routed(schema: &Schema, with_else: bool, modulus: Option<u64>) -> Arc<dyn PhysicalExpr> {
        let (a, b) = (column("a", schema), column("b", schema));
        let branch = |k: i64| {
            let bounds = cmp(
                cmp(Arc::clone(&a), Operator::GtEq, lit(k)),
                Operator::And,
                cmp(Arc::clone(&a), Operator::LtEq, lit(k + 40)),
            );
            cmp(
                bounds,
                Operator::And,
                cmp(Arc::clone(&b), Operator::Lt, lit(50 - k)),
            )
        };
        let whens = vec![
            (lit(ScalarValue::UInt64(Some(0))), branch(0)),
            (lit(ScalarValue::UInt64(Some(1))), lit(false)),
            (lit(ScalarValue::UInt64(Some(3))), branch(30)),
            // A repeated value: the first WHEN wins.
            (lit(ScalarValue::UInt64(Some(3))), lit(true)),
            (
                lit(ScalarValue::UInt64(Some(5))),
                cmp(Arc::clone(&b), Operator::Eq, lit(7i64)),
            ),
        ];
        let else_expr = with_else.then(|| cmp(Arc::clone(&b), Operator::Gt, lit(90i64)));
        let case: Arc<dyn PhysicalExpr> =
            Arc::new(CaseExpr::try_new(Some(routing(schema, modulus)), whens, else_expr).unwrap());
        let nulls: Arc<dyn PhysicalExpr> = Arc::new(IsNullExpr::new(a));
        cmp(case, Operator::Or, nulls)
    }

    fn datafusion_keeps(expr: &Arc<dyn PhysicalExpr>, batch: &RecordBatch) -> BooleanArray {
        evaluate(expr, batch).unwrap()
    }

    #[test]
    fn keeps_the_rows_datafusion_keeps() {
        for seed in [1u64, 7, 99, 12345] {
            let batch = batch(5000, seed);
            let schema = batch.schema();
            let sparse = cmp(
                cmp(column("a", &schema), Operator::Lt, lit(5i64)),
                Operator::And,
                routed(&schema, true, None),
            );
            // Routing by a remainder: a power of two (masked) and not.
            let by_remainder = [Some(4), Some(6)].map(|m| {
                assert!(matches!(
                    Routing::of(&routing(&schema, m)),
                    Routing::Modulo { .. }
                ));
                routed(&schema, true, m)
            });
            let exprs = [
                routed(&schema, true, None),
                routed(&schema, false, None),
                sparse,
            ];
            for expr in exprs.into_iter().chain(by_remainder) {
                let node = Node::compile(&expr, &schema).unwrap();
                let got = node.keep(&batch).unwrap();
                let want = datafusion_keeps(&expr, &batch);
                assert_eq!(got, want, "seed {seed}: {expr}");
                assert!(want.true_count() > 0 && want.true_count() < batch.num_rows());
            }
        }
    }

    #[test]
    fn branches_see_only_the_columns_they_name() {
        let batch = batch(100, 3);
        let schema = batch.schema();
        let node = Node::compile(&routed(&schema, true, None), &schema).unwrap();
        let Node::Or(case, _) = &node else {
            panic!("an OR at the top")
        };
        let Node::Routed { columns, .. } = case.as_ref() else {
            panic!("the CASE is routed")
        };
        assert_eq!(columns, &[1, 2], "a and b, not the routing column");
    }

    #[test]
    fn routing_by_a_remainder_covers_the_whole_hash_range() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let hashes: Vec<Option<u64>> = (0..4096)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Values at and above 2^63, and nulls.
                (i % 97 != 0).then_some(if i % 5 == 0 { x | 1 << 63 } else { x })
            })
            .collect();
        let keys: Vec<i64> = (0..4096).map(|i| i * 7 % 100).collect();
        let h: ArrayRef = Arc::new(UInt64Array::from(hashes));
        let a: ArrayRef = Arc::new(Int64Array::from(keys));
        let batch = RecordBatch::try_from_iter([("h", h), ("a", a)]).unwrap();
        let schema = batch.schema();
        for m in [16u64, 12] {
            let base = cmp(
                column("h", &schema),
                Operator::Modulo,
                lit(ScalarValue::UInt64(Some(m))),
            );
            let whens = (0..m)
                .map(|k| {
                    let then = cmp(column("a", &schema), Operator::Lt, lit(k as i64 * 6));
                    (lit(ScalarValue::UInt64(Some(k))), then)
                })
                .collect();
            let expr: Arc<dyn PhysicalExpr> =
                Arc::new(CaseExpr::try_new(Some(base), whens, None).unwrap());
            let node = Node::compile(&expr, &schema).unwrap();
            assert_eq!(
                node.keep(&batch).unwrap(),
                datafusion_keeps(&expr, &batch),
                "% {m}"
            );
        }
    }
}
