//! The `filter=` of a read: a conjunction of `(column, op, value)`
//! comparisons, as pyarrow's `filters=` writes one, checked against the
//! file's schema and turned into warpread predicates. They prune stripes,
//! row groups and pages by their statistics and then drop every other row
//! (the reader's exact row filter).
//!
//! The Python side hands each comparison over with its value's kind
//! (`bool`, `int`, `float`, `str`, or `date` as days since 1970), so that
//! this module needs no datetime API the stable ABI lacks.

use arrow::datatypes::{DataType, Schema};
use warpread::read::{CmpOp, Predicate, Scalar};
use warpread::{Error, Result};

/// A comparison's value, as the Python side classified it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `True` / `False`.
    Bool(bool),
    /// A Python `int` that fits 64 bits.
    Int(i64),
    /// A Python `float`.
    Float(f64),
    /// A Python `str`.
    Str(String),
    /// A `datetime.date`, in days since 1970-01-01.
    Date(i32),
}

fn op_of(op: &str) -> Result<CmpOp> {
    Ok(match op {
        "=" | "==" => CmpOp::Eq,
        "<" => CmpOp::Lt,
        "<=" => CmpOp::Le,
        ">" => CmpOp::Gt,
        ">=" => CmpOp::Ge,
        other => {
            return Err(Error::Unsupported(format!(
                "filter operator {other:?} (warpread filters with =, ==, <, <=, > and >=)"
            )));
        }
    })
}

/// The value type of `dt` where filters compare values (dictionaries
/// compare their values).
fn compared_type(dt: &DataType) -> &DataType {
    match dt {
        DataType::Dictionary(_, v) => v,
        other => other,
    }
}

/// The literal comparing `value` with a column of type `dt`, or why the
/// two do not compare.
fn scalar_for(column: &str, dt: &DataType, value: &Value) -> Result<Scalar> {
    let dt = compared_type(dt);
    let bad = |what: &str| {
        Err(Error::Unsupported(format!(
            "filter on column {column:?} of type {dt}: {what}"
        )))
    };
    match (dt, value) {
        (d, Value::Int(i)) if d.is_integer() => Ok(Scalar::Int(*i)),
        // An integral float compares with integers exactly; another would
        // be truncated by the cast to the column's type.
        (d, Value::Float(f)) if d.is_integer() => {
            if f.fract() == 0.0 && f.abs() < 9.0e15 {
                Ok(Scalar::Int(*f as i64))
            } else {
                bad(&format!("{f} is not an integer"))
            }
        }
        (d, Value::Int(i)) if d.is_floating() => Ok(Scalar::Int(*i)),
        (d, Value::Float(f)) if d.is_floating() => Ok(Scalar::Float(*f)),
        (DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View, Value::Str(s)) => {
            Ok(Scalar::Str(s.clone()))
        }
        (DataType::Boolean, Value::Bool(b)) => Ok(Scalar::Int(i64::from(*b))),
        (DataType::Date32, Value::Date(days)) => Ok(Scalar::Int(i64::from(*days))),
        (
            d @ (DataType::Date32
            | DataType::Boolean
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View),
            v,
        ) => bad(&format!(
            "a {} value does not compare with {d}",
            kind_name(v)
        )),
        (d, _) if d.is_integer() || d.is_floating() => bad("compare it with a number"),
        _ => bad("warpread filters integer, floating point, string, boolean and date columns"),
    }
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "bool",
        Value::Int(_) => "int",
        Value::Float(_) => "float",
        Value::Str(_) => "str",
        Value::Date(_) => "date",
    }
}

/// The predicates of a conjunction of `(column, op, value)` over a file of
/// `schema`; the first comparison that cannot be read is an error naming
/// it.
pub fn predicates(schema: &Schema, terms: &[(String, String, Value)]) -> Result<Vec<Predicate>> {
    terms
        .iter()
        .map(|(column, op, value)| {
            let field = schema.field_with_name(column).map_err(|_| {
                Error::Unsupported(format!(
                    "filter on column {column:?}, which the file has not (its columns: {})",
                    schema
                        .fields()
                        .iter()
                        .map(|f| f.name().as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            Ok(Predicate {
                column: column.clone(),
                op: op_of(op)?,
                value: scalar_for(column, field.data_type(), value)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::Field;

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("i", DataType::Int32, true),
            Field::new("f", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new(
                "d",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                true,
            ),
            Field::new("b", DataType::Boolean, true),
            Field::new("day", DataType::Date32, true),
            Field::new(
                "ts",
                DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, None),
                true,
            ),
        ])
    }

    fn one(column: &str, op: &str, value: Value) -> Result<Predicate> {
        predicates(&schema(), &[(column.into(), op.into(), value)]).map(|mut v| v.remove(0))
    }

    #[test]
    fn comparisons_map_to_predicates() {
        let p = one("i", "==", Value::Int(3)).unwrap();
        assert_eq!((p.op, p.value), (CmpOp::Eq, Scalar::Int(3)));
        assert_eq!(
            one("i", ">=", Value::Float(4.0)).unwrap().value,
            Scalar::Int(4)
        );
        assert_eq!(
            one("f", "<", Value::Float(0.5)).unwrap().value,
            Scalar::Float(0.5)
        );
        assert_eq!(one("f", "<", Value::Int(2)).unwrap().value, Scalar::Int(2));
        assert_eq!(
            one("s", "=", Value::Str("x".into())).unwrap().value,
            Scalar::Str("x".into())
        );
        assert_eq!(one("d", ">", Value::Str("x".into())).unwrap().op, CmpOp::Gt);
        assert_eq!(
            one("b", "=", Value::Bool(true)).unwrap().value,
            Scalar::Int(1)
        );
        assert_eq!(
            one("day", "<=", Value::Date(19000)).unwrap().value,
            Scalar::Int(19000)
        );
    }

    #[test]
    fn what_does_not_compare_is_named() {
        for (col, op, v, want) in [
            ("nope", "=", Value::Int(1), "which the file has not"),
            ("i", "!=", Value::Int(1), "operator \"!=\""),
            ("i", "in", Value::Int(1), "operator \"in\""),
            ("i", "<", Value::Float(1.5), "1.5 is not an integer"),
            ("i", "=", Value::Str("1".into()), "compare it with a number"),
            (
                "s",
                "=",
                Value::Int(1),
                "a int value does not compare with Utf8",
            ),
            ("day", "=", Value::Int(3), "does not compare with Date32"),
            ("ts", "=", Value::Int(3), "warpread filters integer"),
        ] {
            let e = one(col, op, v).unwrap_err().to_string();
            assert!(e.contains(want), "{col} {op}: {e}");
        }
    }
}
