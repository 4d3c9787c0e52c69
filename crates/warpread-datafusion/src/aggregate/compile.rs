//! DataFusion physical expressions → an [`AggProgram`]: the filter, group
//! keys and aggregate arguments of a partial `AggregateExec`, resolved
//! through the projections, filters and batch coalescing between it and
//! the scan down to the scan's columns. Anything outside the program's
//! vocabulary (other functions, floats, string predicates, divisions,
//! casts that could fail, result types other than DataFusion's own) makes
//! the compilation fail, and the plan keeps DataFusion's operators.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::common::ScalarValue;
use datafusion::functions_aggregate::average::Avg;
use datafusion::functions_aggregate::count::Count;
use datafusion::functions_aggregate::sum::Sum;
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::{
    BinaryExpr, CastExpr, Column, IsNotNullExpr, IsNullExpr, Literal, NotExpr, TryCastExpr,
};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::InputOrderMode;
use datafusion::physical_plan::aggregates::AggregateExec;
#[allow(deprecated)]
use datafusion::physical_plan::coalesce_batches::CoalesceBatchesExec;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;

use crate::query::{Agg, AggFn, AggProgram, ArithOp, CmpOp, Expr, Input, Load};

/// Why a plan keeps DataFusion's operators.
pub type Why = String;

/// A compiled value's type.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ty {
    /// A scaled integer: decimals at their scale, integers and dates at 0.
    Num {
        scale: i8,
    },
    Bool,
    /// Bytes (strings): keys and null tests only.
    Bytes,
}

/// One operator between the aggregate and the scan.
enum Level<'a> {
    Projection(&'a ProjectionExec),
    Filter(&'a FilterExec),
    /// Batch coalescing (and round-robin repartitioning): rows unchanged.
    Pass,
}

/// Builds programs over one scan.
pub struct Compiler<'a> {
    /// Top-down, each with its output's schema.
    levels: Vec<(Level<'a>, SchemaRef)>,
    scan_schema: SchemaRef,
    inputs: Vec<Input>,
}

/// A physical plan node.
pub type Plan = Arc<dyn ExecutionPlan>;

/// The operators below a partial aggregate down to the scan: `Some` when
/// every one is a projection, a filter or a pass-through, with the scan.
#[allow(deprecated)]
pub fn chain(agg: &AggregateExec) -> Option<(Vec<Plan>, Plan)> {
    let mut node = Arc::clone(agg.input());
    let mut levels: Vec<Arc<dyn ExecutionPlan>> = Vec::new();
    loop {
        let any: &dyn ExecutionPlan = node.as_ref();
        // A fetch (a limit inside the operator) is not the program's.
        let next = if (any.is::<ProjectionExec>()
            || any.is::<FilterExec>()
            || any.is::<CoalesceBatchesExec>())
            && any.fetch().is_none()
        {
            Arc::clone(*node.children().first()?)
        } else if let Some(r) =
            any.downcast_ref::<datafusion::physical_plan::repartition::RepartitionExec>()
        {
            if !matches!(
                r.partitioning(),
                datafusion::physical_plan::Partitioning::RoundRobinBatch(_)
            ) || r.preserve_order()
            {
                return None;
            }
            Arc::clone(r.input())
        } else {
            return Some((levels, node));
        };
        levels.push(node);
        node = next;
    }
}

fn load_of(dt: &DataType) -> Option<(Load, Ty)> {
    let int = |bytes, signed| Load::Int { bytes, signed };
    Some(match dt {
        DataType::Int8 => (int(1, true), Ty::Num { scale: 0 }),
        DataType::Int16 => (int(2, true), Ty::Num { scale: 0 }),
        DataType::Int32 | DataType::Date32 => (int(4, true), Ty::Num { scale: 0 }),
        DataType::Int64 => (int(8, true), Ty::Num { scale: 0 }),
        DataType::UInt8 => (int(1, false), Ty::Num { scale: 0 }),
        DataType::UInt16 => (int(2, false), Ty::Num { scale: 0 }),
        DataType::UInt32 => (int(4, false), Ty::Num { scale: 0 }),
        DataType::UInt64 => (int(8, false), Ty::Num { scale: 0 }),
        DataType::Decimal128(_, s) => (Load::Decimal128, Ty::Num { scale: *s }),
        DataType::Boolean => (Load::Bool, Ty::Bool),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => (Load::Bytes, Ty::Bytes),
        _ => return None,
    })
}

/// Width in bits at which arithmetic producing `dt` wraps.
fn wrap_bits(dt: &DataType) -> Option<u8> {
    Some(match dt {
        DataType::Int8 => 8,
        DataType::Int16 => 16,
        DataType::Int32 => 32,
        DataType::Int64 => 64,
        DataType::Decimal128(..) => 128,
        _ => return None,
    })
}

/// Decimal digits before the point a value of `dt` may have.
fn integral_digits(dt: &DataType) -> Option<i32> {
    Some(match dt {
        DataType::Int8 | DataType::UInt8 => 3,
        DataType::Int16 | DataType::UInt16 => 5,
        DataType::Int32 | DataType::UInt32 => 10,
        DataType::Int64 => 19,
        DataType::UInt64 => 20,
        DataType::Decimal128(p, s) => i32::from(*p) - i32::from(*s),
        _ => return None,
    })
}

fn pow10(k: i32) -> Option<i128> {
    10i128.checked_pow(u32::try_from(k).ok()?)
}

/// `e` at scale `from` brought to scale `to` (≥ `from`).
fn rescale(e: Expr, from: i8, to: i8) -> Option<Expr> {
    let k = i32::from(to) - i32::from(from);
    match k {
        0 => Some(e),
        k if k > 0 => Some(Expr::Scale {
            e: Box::new(e),
            factor: pow10(k)?,
        }),
        _ => None,
    }
}

impl<'a> Compiler<'a> {
    /// A compiler over `levels` (from [`chain`]) and the scan.
    pub fn new(levels: &'a [Arc<dyn ExecutionPlan>], scan: &Arc<dyn ExecutionPlan>) -> Self {
        let levels = levels
            .iter()
            .map(|l| {
                let any: &dyn ExecutionPlan = l.as_ref();
                let level = if let Some(p) = any.downcast_ref::<ProjectionExec>() {
                    Level::Projection(p)
                } else if let Some(f) = any.downcast_ref::<FilterExec>() {
                    Level::Filter(f)
                } else {
                    Level::Pass
                };
                (level, l.schema())
            })
            .collect();
        Self {
            levels,
            scan_schema: scan.schema(),
            inputs: Vec::new(),
        }
    }

    fn schema_at(&self, level: usize) -> &Schema {
        match self.levels.get(level) {
            Some((_, s)) => s,
            None => &self.scan_schema,
        }
    }

    /// Program input for scan column `c`.
    fn input(&mut self, c: usize) -> Result<(usize, Ty), Why> {
        let dt = self
            .scan_schema
            .fields()
            .get(c)
            .ok_or("a column past the scan's")?
            .data_type()
            .clone();
        let (load, ty) = load_of(&dt).ok_or_else(|| format!("a scan column of type {dt}"))?;
        if let Some(i) = self.inputs.iter().position(|x| x.column == c) {
            return Ok((i, ty));
        }
        self.inputs.push(Input { column: c, load });
        Ok((self.inputs.len() - 1, ty))
    }

    /// Column `i` of the output of level `level` (`levels.len()`: the
    /// scan).
    fn column(&mut self, i: usize, level: usize) -> Result<(Expr, Ty), Why> {
        if level >= self.levels.len() {
            let (k, ty) = self.input(i)?;
            return Ok((Expr::Input(k), ty));
        }
        match &self.levels[level].0 {
            Level::Projection(p) => {
                let e = Arc::clone(&p.expr().get(i).ok_or("a projection column")?.expr);
                self.expr(&e, level + 1)
            }
            Level::Filter(f) => {
                let j = match f.projection() {
                    Some(p) => *p.get(i).ok_or("a filter column")?,
                    None => i,
                };
                self.column(j, level + 1)
            }
            Level::Pass => self.column(i, level + 1),
        }
    }

    /// `e`, evaluated over the output of level `level`.
    fn expr(&mut self, e: &Arc<dyn PhysicalExpr>, level: usize) -> Result<(Expr, Ty), Why> {
        let any: &dyn PhysicalExpr = e.as_ref();
        let dt = e
            .data_type(self.schema_at(level))
            .map_err(|x| x.to_string())?;
        if let Some(c) = any.downcast_ref::<Column>() {
            return self.column(c.index(), level);
        }
        if let Some(l) = any.downcast_ref::<Literal>() {
            return literal(l.value());
        }
        if let Some(b) = any.downcast_ref::<BinaryExpr>() {
            return self.binary(b, &dt, level);
        }
        if let Some(c) = any.downcast_ref::<CastExpr>() {
            return self.cast(c.expr(), &dt, level);
        }
        if let Some(c) = any.downcast_ref::<TryCastExpr>() {
            return self.cast(c.expr(), &dt, level);
        }
        if let Some(n) = any.downcast_ref::<NotExpr>() {
            let (x, t) = self.expr(n.arg(), level)?;
            return (t == Ty::Bool)
                .then(|| (Expr::Not(Box::new(x)), Ty::Bool))
                .ok_or_else(|| "NOT of a non-boolean".into());
        }
        if let Some(n) = any.downcast_ref::<IsNullExpr>() {
            let (x, _) = self.expr(n.arg(), level)?;
            return Ok((Expr::IsNull(Box::new(x)), Ty::Bool));
        }
        if let Some(n) = any.downcast_ref::<IsNotNullExpr>() {
            let (x, _) = self.expr(n.arg(), level)?;
            return Ok((Expr::IsNotNull(Box::new(x)), Ty::Bool));
        }
        Err(format!("the expression {e}"))
    }

    fn binary(&mut self, b: &BinaryExpr, dt: &DataType, level: usize) -> Result<(Expr, Ty), Why> {
        // An expression that fails on integer overflow (no getter: equal
        // to the default one or not) errs where the program would wrap.
        if *b != BinaryExpr::new(Arc::clone(b.left()), *b.op(), Arc::clone(b.right())) {
            return Err("arithmetic that fails on overflow".into());
        }
        let (l, lt) = self.expr(b.left(), level)?;
        let (r, rt) = self.expr(b.right(), level)?;
        let op = *b.op();
        match op {
            Operator::And | Operator::Or => {
                if lt != Ty::Bool || rt != Ty::Bool {
                    return Err("AND/OR of non-booleans".into());
                }
                let (l, r) = (Box::new(l), Box::new(r));
                Ok((
                    if op == Operator::And {
                        Expr::And(l, r)
                    } else {
                        Expr::Or(l, r)
                    },
                    Ty::Bool,
                ))
            }
            Operator::Plus | Operator::Minus | Operator::Multiply => {
                let (Ty::Num { scale: ls }, Ty::Num { scale: rs }) = (lt, rt) else {
                    return Err("arithmetic on non-numbers".into());
                };
                let bits = wrap_bits(dt).ok_or_else(|| format!("arithmetic giving {dt}"))?;
                let want = match dt {
                    DataType::Decimal128(_, s) => *s,
                    _ => 0,
                };
                let (l, r, scale, aop) = if op == Operator::Multiply {
                    let s = ls.checked_add(rs).ok_or("a scale overflow")?;
                    (l, r, s, ArithOp::Mul)
                } else {
                    let s = ls.max(rs);
                    let l = rescale(l, ls, s).ok_or("a rescale")?;
                    let r = rescale(r, rs, s).ok_or("a rescale")?;
                    let aop = if op == Operator::Plus {
                        ArithOp::Add
                    } else {
                        ArithOp::Sub
                    };
                    (l, r, s, aop)
                };
                if scale != want {
                    return Err(format!("{op} at scale {scale} where {dt} is asked"));
                }
                Ok((
                    Expr::Arith {
                        op: aop,
                        bits,
                        l: Box::new(l),
                        r: Box::new(r),
                    },
                    Ty::Num { scale },
                ))
            }
            Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq => {
                let (Ty::Num { scale: ls }, Ty::Num { scale: rs }) = (lt, rt) else {
                    return Err("a comparison of non-numbers".into());
                };
                let s = ls.max(rs);
                let l = rescale(l, ls, s).ok_or("a rescale")?;
                let r = rescale(r, rs, s).ok_or("a rescale")?;
                let cop = match op {
                    Operator::Eq => CmpOp::Eq,
                    Operator::NotEq => CmpOp::Ne,
                    Operator::Lt => CmpOp::Lt,
                    Operator::LtEq => CmpOp::Le,
                    Operator::Gt => CmpOp::Gt,
                    _ => CmpOp::Ge,
                };
                Ok((
                    Expr::Cmp {
                        op: cop,
                        l: Box::new(l),
                        r: Box::new(r),
                    },
                    Ty::Bool,
                ))
            }
            _ => Err(format!("the operator {op}")),
        }
    }

    /// Casts that cannot fail or round: to a decimal of at least the
    /// source's scale and integral digits, or to a wider signed integer.
    fn cast(
        &mut self,
        inner: &Arc<dyn PhysicalExpr>,
        to: &DataType,
        level: usize,
    ) -> Result<(Expr, Ty), Why> {
        let from = inner
            .data_type(self.schema_at(level))
            .map_err(|x| x.to_string())?;
        let (x, t) = self.expr(inner, level)?;
        if &from == to {
            return Ok((x, t));
        }
        let Ty::Num { scale } = t else {
            return Err(format!("a cast from {from}"));
        };
        match to {
            DataType::Decimal128(p, s) => {
                let digits = integral_digits(&from).ok_or_else(|| format!("a cast from {from}"))?;
                if *s < scale || i32::from(*p) - i32::from(*s) < digits {
                    return Err(format!("a cast from {from} to {to}"));
                }
                let e = rescale(x, scale, *s).ok_or("a rescale")?;
                Ok((e, Ty::Num { scale: *s }))
            }
            DataType::Int16 | DataType::Int32 | DataType::Int64 => {
                let fits = match (&from, to) {
                    (DataType::Int8, _) => true,
                    (DataType::Int16 | DataType::UInt8, t) => t != &DataType::Int16,
                    (DataType::Int32 | DataType::UInt16, t) => t == &DataType::Int64,
                    (DataType::UInt32, t) => t == &DataType::Int64,
                    _ => false,
                };
                fits.then_some((x, t))
                    .ok_or_else(|| format!("a cast from {from} to {to}"))
            }
            _ => Err(format!("a cast from {from} to {to}")),
        }
    }

    /// A group key: a scan column (through projections of columns).
    fn key(&mut self, e: &Arc<dyn PhysicalExpr>, level: usize) -> Result<usize, Why> {
        match self.expr(e, level)? {
            (Expr::Input(i), _) => Ok(i),
            _ => Err(format!("the group key {e}")),
        }
    }

    /// The filters of every level, each over its own input.
    fn filters(&mut self) -> Result<Option<Expr>, Why> {
        let mut all: Option<Expr> = None;
        for level in 0..self.levels.len() {
            let pred = match &self.levels[level].0 {
                Level::Filter(f) => Arc::clone(f.predicate()),
                _ => continue,
            };
            let (p, t) = self.expr(&pred, level + 1)?;
            if t != Ty::Bool {
                return Err("a non-boolean filter".into());
            }
            all = Some(match all {
                None => p,
                Some(a) => Expr::And(Box::new(a), Box::new(p)),
            });
        }
        Ok(all)
    }
}

fn literal(v: &ScalarValue) -> Result<(Expr, Ty), Why> {
    let num = |x: i128| Ok((Expr::Int(x), Ty::Num { scale: 0 }));
    match v {
        ScalarValue::Int8(Some(x)) => num((*x).into()),
        ScalarValue::Int16(Some(x)) => num((*x).into()),
        ScalarValue::Int32(Some(x)) | ScalarValue::Date32(Some(x)) => num((*x).into()),
        ScalarValue::Int64(Some(x)) => num((*x).into()),
        ScalarValue::UInt8(Some(x)) => num((*x).into()),
        ScalarValue::UInt16(Some(x)) => num((*x).into()),
        ScalarValue::UInt32(Some(x)) => num((*x).into()),
        ScalarValue::UInt64(Some(x)) => num((*x).into()),
        ScalarValue::Decimal128(Some(x), _, s) => Ok((Expr::Int(*x), Ty::Num { scale: *s })),
        ScalarValue::Boolean(Some(b)) => Ok((Expr::Bool(*b), Ty::Bool)),
        _ => Err(format!("the literal {v}")),
    }
}

/// Compiles a partial `agg` over the operators `levels` and `scan` (from
/// [`chain`]).
pub fn program(
    agg: &AggregateExec,
    levels: &[Arc<dyn ExecutionPlan>],
    scan: &Arc<dyn ExecutionPlan>,
) -> Result<AggProgram, Why> {
    let mut c = Compiler::new(levels, scan);
    let group = agg.group_expr();
    if !group.is_single() {
        return Err("grouping sets".into());
    }
    // Ordered input lets the final aggregate emit groups early; the
    // program's output has no order.
    if *agg.input_order_mode() != InputOrderMode::Linear {
        return Err("an ordered aggregate".into());
    }
    let filter = c.filters()?;
    let mut keys = Vec::new();
    for (e, _) in group.expr() {
        keys.push(c.key(e, 0)?);
    }
    let mut aggs = Vec::new();
    for (i, a) in agg.aggr_expr().iter().enumerate() {
        if a.is_distinct() || !a.order_bys().is_empty() || agg.filter_expr()[i].is_some() {
            return Err(format!("the aggregate {}", a.name()));
        }
        let args = a.expressions();
        let [arg] = args.as_slice() else {
            return Err(format!("the aggregate {}", a.name()));
        };
        let (arg, ty) = c.expr(arg, 0)?;
        let states = a.state_fields().map_err(|e| e.to_string())?;
        let types: Vec<&DataType> = states.iter().map(|f| f.data_type()).collect();
        // The built-in functions, not user functions of the same name.
        let f = a.fun().inner();
        let name = if f.is::<Sum>() {
            "sum"
        } else if f.is::<Avg>() {
            "avg"
        } else if f.is::<Count>() {
            "count"
        } else {
            return Err(format!("the aggregate {}", a.name()));
        };
        let func = match (name, ty, types.as_slice()) {
            ("count", _, [DataType::Int64]) => AggFn::Count,
            ("sum", Ty::Num { scale }, [DataType::Decimal128(_, s)]) if *s == scale => {
                AggFn::Sum { bits: 128 }
            }
            ("sum", Ty::Num { scale: 0 }, [DataType::Int64]) if !unsigned(&arg, &c.inputs) => {
                AggFn::Sum { bits: 64 }
            }
            ("avg", Ty::Num { scale }, [DataType::UInt64, DataType::Decimal128(_, s)])
                if *s == scale =>
            {
                AggFn::Avg
            }
            (name, _, _) => return Err(format!("the aggregate {name} with states {types:?}")),
        };
        aggs.push(Agg { func, arg });
    }
    let schema = agg.schema();
    let states: usize = aggs.iter().map(|a| a.func.state_columns()).sum();
    if schema.fields().len() != keys.len() + states {
        return Err("an unexpected partial aggregate schema".into());
    }
    Ok(AggProgram {
        inputs: c.inputs,
        filter,
        keys,
        aggs,
        schema,
    })
}

/// Whether `e` reads an unsigned input (sums of those are not wrapped at
/// 64 signed bits by DataFusion; they stay on its operators).
fn unsigned(e: &Expr, inputs: &[Input]) -> bool {
    let mut any = false;
    e.inputs(&mut |i| {
        any |= matches!(inputs[i].load, Load::Int { signed: false, .. });
    });
    any
}
