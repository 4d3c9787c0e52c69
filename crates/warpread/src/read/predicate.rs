//! Simple predicates (`column op literal`, combined with AND) that readers
//! use to skip stripes, row groups and pages by their statistics.

use std::cmp::Ordering;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// A literal.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// Integers, dates (days since 1970) and booleans (0/1).
    Int(i64),
    /// Floating point.
    Float(f64),
    /// Strings.
    Str(String),
}

/// `column op value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Predicate {
    /// Top-level column name.
    pub column: String,
    /// The comparison.
    pub op: CmpOp,
    /// The literal.
    pub value: Scalar,
}

impl FromStr for Predicate {
    type Err = Error;

    /// Parses `name<=42`, `name = 'abc'`, `x>1.5`.
    fn from_str(s: &str) -> Result<Self> {
        let ops = [
            ("<=", CmpOp::Le),
            (">=", CmpOp::Ge),
            ("=", CmpOp::Eq),
            ("<", CmpOp::Lt),
            (">", CmpOp::Gt),
        ];
        for (tok, op) in ops {
            if let Some((l, r)) = s.split_once(tok) {
                let column = l.trim().to_string();
                let r = r.trim();
                let value = if let Some(q) = r.strip_prefix('\'').and_then(|r| r.strip_suffix('\''))
                {
                    Scalar::Str(q.to_string())
                } else if let Ok(i) = r.parse::<i64>() {
                    Scalar::Int(i)
                } else if let Ok(f) = r.parse::<f64>() {
                    Scalar::Float(f)
                } else {
                    Scalar::Str(r.to_string())
                };
                if column.is_empty() {
                    break;
                }
                return Ok(Self { column, op, value });
            }
        }
        Err(Error::Unsupported(format!(
            "predicate {s:?} (expected `column op literal` with op one of = < <= > >=)"
        )))
    }
}

/// Whether values in `[min, max]` may satisfy `op value`, given how the
/// statistics' `min` and `max` compare with the literal; an unknown bound
/// (absent, or incomparable like NaN) may. Shared by the ORC and Parquet
/// pruning.
pub(crate) fn may_match_range(min: Option<Ordering>, max: Option<Ordering>, op: CmpOp) -> bool {
    let (Some(min), Some(max)) = (min, max) else {
        return true;
    };
    match op {
        CmpOp::Eq => min != Ordering::Greater && max != Ordering::Less,
        CmpOp::Lt => min == Ordering::Less,
        CmpOp::Le => min != Ordering::Greater,
        CmpOp::Gt => max == Ordering::Greater,
        CmpOp::Ge => max != Ordering::Less,
    }
}
