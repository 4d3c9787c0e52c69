//! DataFusion filters → warpread [`Predicate`]s for pruning by statistics.
//! Only conjuncts of the form `column op literal` (or `literal op column`)
//! on file columns translate; everything else is left to DataFusion, which
//! applies every filter exactly in any case.

use std::sync::Arc;

use datafusion::logical_expr::Operator;
use datafusion::physical_expr::expressions::{BinaryExpr, Column, Literal};
use datafusion::physical_expr::{PhysicalExpr, split_conjunction};
use datafusion::scalar::ScalarValue;

use arrow::datatypes::Schema;

use crate::orc::{CmpOp, Predicate, Scalar};

/// The prunable conjuncts of `filter` whose column is in `file_schema`.
pub fn translate(filter: &Arc<dyn PhysicalExpr>, file_schema: &Schema) -> Vec<Predicate> {
    split_conjunction(filter)
        .into_iter()
        .filter_map(|e| conjunct(e.as_ref(), file_schema))
        .collect()
}

fn conjunct(expr: &dyn PhysicalExpr, file_schema: &Schema) -> Option<Predicate> {
    let bin = expr.downcast_ref::<BinaryExpr>()?;
    let op = cmp_op(bin.op())?;
    let (l, r) = (bin.left().as_ref(), bin.right().as_ref());
    let (col, lit, op) = match (l.downcast_ref::<Column>(), r.downcast_ref::<Literal>()) {
        (Some(c), Some(v)) => (c, v, op),
        _ => (
            r.downcast_ref::<Column>()?,
            l.downcast_ref::<Literal>()?,
            flip(op),
        ),
    };
    // Partition columns and columns some files lack are not prunable here.
    let field = file_schema.field_with_name(col.name()).ok()?;
    let value = scalar(lit.value())?;
    let op = if field.data_type().is_floating() {
        float_op(op, &value)?
    } else {
        op
    };
    Some(Predicate {
        column: col.name().to_string(),
        op,
        value,
    })
}

/// The comparison that prunes a floating-point column safely under
/// DataFusion's order, where NaN is greater than every number and -0.0 is
/// less than 0.0, while ORC and Parquet writers leave NaN out of their
/// minimum and maximum and compare zeros as equal: `>` and `>=` cannot
/// prune (a group with NaN matches whatever its maximum), nor can a NaN
/// literal; `<` prunes as `<=` (a group whose minimum is 0.0 may hold a
/// -0.0 that is `< 0.0`).
fn float_op(op: CmpOp, value: &Scalar) -> Option<CmpOp> {
    if matches!(value, Scalar::Float(f) if f.is_nan()) {
        return None;
    }
    match op {
        CmpOp::Gt | CmpOp::Ge => None,
        CmpOp::Lt => Some(CmpOp::Le),
        CmpOp::Le | CmpOp::Eq => Some(op),
    }
}

fn cmp_op(op: &Operator) -> Option<CmpOp> {
    Some(match op {
        Operator::Eq => CmpOp::Eq,
        Operator::Lt => CmpOp::Lt,
        Operator::LtEq => CmpOp::Le,
        Operator::Gt => CmpOp::Gt,
        Operator::GtEq => CmpOp::Ge,
        _ => return None,
    })
}

/// `lit op col` is `col flip(op) lit`.
fn flip(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::Eq,
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
    }
}

fn scalar(v: &ScalarValue) -> Option<Scalar> {
    Some(match v {
        ScalarValue::Int8(Some(x)) => Scalar::Int((*x).into()),
        ScalarValue::Int16(Some(x)) => Scalar::Int((*x).into()),
        ScalarValue::Int32(Some(x)) => Scalar::Int((*x).into()),
        ScalarValue::Int64(Some(x)) => Scalar::Int(*x),
        ScalarValue::UInt8(Some(x)) => Scalar::Int((*x).into()),
        ScalarValue::UInt16(Some(x)) => Scalar::Int((*x).into()),
        ScalarValue::UInt32(Some(x)) => Scalar::Int((*x).into()),
        ScalarValue::UInt64(Some(x)) => Scalar::Int(i64::try_from(*x).ok()?),
        ScalarValue::Date32(Some(d)) => Scalar::Int((*d).into()),
        ScalarValue::Float32(Some(x)) => Scalar::Float((*x).into()),
        ScalarValue::Float64(Some(x)) => Scalar::Float(*x),
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Scalar::Str(s.clone()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{DataType, Field};
    use datafusion::physical_expr::expressions::{binary, col, lit};

    #[test]
    fn translates_simple_conjuncts_only() {
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("s", DataType::Utf8, false),
        ]);
        let a = col("a", &schema).unwrap();
        let s = col("s", &schema).unwrap();
        let ge = binary(a.clone(), Operator::GtEq, lit(5i64), &schema).unwrap();
        let lt = binary(lit("m"), Operator::Lt, s.clone(), &schema).unwrap();
        let ne = binary(a.clone(), Operator::NotEq, lit(1i64), &schema).unwrap();
        let both = binary(ge, Operator::And, lt, &schema).unwrap();
        let all = binary(both, Operator::And, ne, &schema).unwrap();
        let got = translate(&all, &schema);
        assert_eq!(
            got,
            vec![
                Predicate {
                    column: "a".into(),
                    op: CmpOp::Ge,
                    value: Scalar::Int(5)
                },
                Predicate {
                    column: "s".into(),
                    op: CmpOp::Gt,
                    value: Scalar::Str("m".into())
                },
            ]
        );
        let other = Schema::new(vec![Field::new("b", DataType::Int64, false)]);
        assert!(translate(&all, &other).is_empty());
    }

    #[test]
    fn float_comparisons_prune_only_where_nan_and_zeros_allow() {
        let schema = Schema::new(vec![Field::new("f", DataType::Float64, true)]);
        let f = col("f", &schema).unwrap();
        let one = |op, v: f64| {
            let e = binary(f.clone(), op, lit(v), &schema).unwrap();
            translate(&e, &schema)
                .into_iter()
                .map(|p| (p.op, p.value))
                .collect::<Vec<_>>()
        };
        assert!(one(Operator::Gt, 5.0).is_empty());
        assert!(one(Operator::GtEq, 5.0).is_empty());
        assert!(one(Operator::Eq, f64::NAN).is_empty());
        assert_eq!(
            one(Operator::Lt, 0.0),
            vec![(CmpOp::Le, Scalar::Float(0.0))]
        );
        assert_eq!(
            one(Operator::Eq, 2.5),
            vec![(CmpOp::Eq, Scalar::Float(2.5))]
        );
        // `5 > f` is `f < 5`: prunable (as `<=`).
        let flipped = binary(lit(5.0), Operator::Gt, f.clone(), &schema).unwrap();
        assert_eq!(translate(&flipped, &schema)[0].op, CmpOp::Le);
    }
}
