//! Stripe pruning by the column statistics in the file's metadata. A
//! stripe is skipped only when its statistics prove no row can match;
//! missing or unreadable statistics keep it.

use super::proto::ColumnStatistics;
use super::schema::{Column, Kind};
use crate::read::may_match_range;
pub use crate::read::{CmpOp, Predicate, Scalar};

impl Predicate {
    /// False when `stats` (of the predicate's column) prove no value can
    /// match. Nulls never match a comparison.
    pub fn may_match(&self, col: &Column, stats: &ColumnStatistics) -> bool {
        if stats.number_of_values == Some(0) {
            // Only nulls (or no rows): no comparison can be true.
            return false;
        }
        let cmp = |a, b| may_match_range(a, b, self.op);
        match (&self.value, col.kind) {
            (Scalar::Int(v), Kind::Byte | Kind::Short | Kind::Int | Kind::Long) => stats
                .int_statistics
                .as_ref()
                .is_none_or(|s| cmp(s.minimum.map(|m| m.cmp(v)), s.maximum.map(|m| m.cmp(v)))),
            (Scalar::Int(v), Kind::Date) => stats.date_statistics.as_ref().is_none_or(|s| {
                cmp(
                    s.minimum.map(|m| i64::from(m).cmp(v)),
                    s.maximum.map(|m| i64::from(m).cmp(v)),
                )
            }),
            (Scalar::Int(_) | Scalar::Float(_), Kind::Float | Kind::Double) => {
                let v = match self.value {
                    Scalar::Int(i) => i as f64,
                    Scalar::Float(f) => f,
                    _ => unreachable!(),
                };
                stats.double_statistics.as_ref().is_none_or(|s| {
                    cmp(
                        s.minimum.and_then(|m| m.partial_cmp(&v)),
                        s.maximum.and_then(|m| m.partial_cmp(&v)),
                    )
                })
            }
            (Scalar::Str(v), Kind::String | Kind::Varchar | Kind::Char) => {
                stats.string_statistics.as_ref().is_none_or(|s| {
                    cmp(
                        s.minimum.as_ref().map(|m| m.as_str().cmp(v.as_str())),
                        s.maximum.as_ref().map(|m| m.as_str().cmp(v.as_str())),
                    )
                })
            }
            _ => true,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::orc::proto::IntegerStatistics;

    /// A top-level LONG column `x` (id 1), for statistics tests.
    pub(crate) fn long_column() -> Column {
        Column {
            id: 1,
            name: "x".into(),
            kind: Kind::Long,
            children: vec![],
            precision: 0,
            scale: 0,
            last_id: 1,
            attributes: Default::default(),
        }
    }

    #[test]
    fn parses_and_prunes() {
        let p: Predicate = "x >= 10".parse().unwrap();
        assert_eq!(p.op, CmpOp::Ge);
        assert_eq!(p.value, Scalar::Int(10));
        let p2: Predicate = "s='abc'".parse().unwrap();
        assert_eq!(p2.value, Scalar::Str("abc".into()));
        assert!("nonsense".parse::<Predicate>().is_err());
        let col = long_column();
        let stats = |min, max| ColumnStatistics {
            number_of_values: Some(5),
            int_statistics: Some(IntegerStatistics {
                minimum: Some(min),
                maximum: Some(max),
                sum: None,
            }),
            ..Default::default()
        };
        assert!(!p.may_match(&col, &stats(0, 9)));
        assert!(p.may_match(&col, &stats(0, 10)));
        let eq: Predicate = "x = 5".parse().unwrap();
        assert!(!eq.may_match(&col, &stats(6, 9)));
        assert!(eq.may_match(&col, &stats(5, 9)));
        assert!(eq.may_match(&col, &ColumnStatistics::default()));
    }
}
