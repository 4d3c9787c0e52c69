//! Row-group pruning by the row index. A stripe with a row index
//! (`rowIndexStride` > 0 in the footer) has one ROW_INDEX stream per
//! column, holding one entry per row group of `stride` rows (the last one
//! shorter): the group's column statistics and, per stream of the column,
//! where the group starts (the `seek` module uses those). Here the
//! statistics of the predicates' columns decide which row groups may hold
//! matching rows, with the same comparisons as stripe pruning
//! ([`Predicate::may_match`]). A row group is dropped only when one
//! predicate's statistics prove no row can match; a column without a row
//! index, an entry without statistics or an index whose entry count is not
//! the stripe's row-group count keeps every row group.
//!
//! A ROW_INDEX stream that cannot be read, decompressed or parsed is an
//! error naming file, stripe, column and stream: the file is damaged where
//! this read needs it.

use std::collections::HashMap;
use std::ops::Range;

use arrow::array::{Array, AsArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type, Int64Type};
use prost::Message;

use super::compression::{self, Compression};
use super::predicate::Predicate;
use super::proto::{ColumnStatistics, RowIndex, RowIndexEntry};
use super::schema::{Column, Kind};
use super::stripe::{StreamKind, StripeLayout};
use super::tail::Source;
use crate::error::{Error, Location, Result};

/// The row indexes of some columns of one stripe.
#[derive(Debug, Default)]
pub struct StripeIndex {
    /// Rows per row group.
    pub stride: u64,
    /// Row groups in the stripe.
    pub groups: usize,
    /// Entries of each column whose index has one entry per row group.
    entries: HashMap<u32, Vec<RowIndexEntry>>,
    /// Columns whose index has another number of entries (unusable).
    pub mismatched: Vec<u32>,
}

impl StripeIndex {
    /// A column's entries, one per row group, if its index is usable.
    pub fn entries(&self, column: u32) -> Option<&[RowIndexEntry]> {
        self.entries.get(&column).map(Vec::as_slice)
    }

    /// The stripe rows of row groups `groups` (the last group may be short).
    pub fn rows(&self, groups: Range<usize>, stripe_rows: u64) -> Range<u64> {
        let at = |g: usize| (g as u64).saturating_mul(self.stride).min(stripe_rows);
        at(groups.start)..at(groups.end)
    }
}

/// A column's location in errors, as the decode rounds name it.
pub fn column_location(file: &Location, layout: &StripeLayout, col: &Column) -> Location {
    file.clone()
        .with_stripe(layout.info.index as u64)
        .with_column(format!("{} (id {})", col.name, col.id))
}

impl StripeIndex {
    /// An index of no columns yet for a stripe of `rows` rows with the
    /// footer's row index `stride` (> 0).
    pub fn new(rows: u64, stride: u64) -> Self {
        Self {
            stride,
            groups: usize::try_from(rows.div_ceil(stride.max(1))).unwrap_or(usize::MAX),
            ..Default::default()
        }
    }

    /// Reads the ROW_INDEX streams of `columns` that the stripe has and
    /// that are not read yet. `layout` is the whole stripe.
    pub fn load(
        &mut self,
        src: &Source,
        layout: &StripeLayout,
        compression: &Compression,
        columns: &[&Column],
    ) -> Result<()> {
        let file = Location::file(src.path());
        for col in columns {
            if self.entries.contains_key(&col.id) || self.mismatched.contains(&col.id) {
                continue;
            }
            let Some(s) = layout.stream(col.id, StreamKind::RowIndex) else {
                continue;
            };
            let at = column_location(&file, layout, col).with_stream(StreamKind::RowIndex.name());
            let raw = src.read(s.range.start, s.range.end - s.range.start, &at)?;
            let bytes = compression::decompress_on_cpu(&raw, compression, &at)?;
            let index = RowIndex::decode(bytes.as_slice())
                .map_err(|e| Error::orc(&at, format!("cannot parse the row index: {e}")))?;
            if index.entry.len() == self.groups {
                self.entries.insert(col.id, index.entry);
            } else {
                tracing::warn!(
                    "{at}: {} row index entries for {} row groups; not used",
                    index.entry.len(),
                    self.groups
                );
                self.mismatched.push(col.id);
            }
        }
        Ok(())
    }
}

/// Which row groups of the stripe may hold rows matching every predicate;
/// `None` when no predicate column has a usable index (nothing to prune).
/// The answer is only as long as a parsed index (whose entry count is the
/// row-group count), never as long as a hostile row count claims.
pub fn keep(index: &StripeIndex, predicates: &[(&Predicate, &Column)]) -> Option<Vec<bool>> {
    if !predicates
        .iter()
        .any(|(_, c)| index.entries(c.id).is_some())
    {
        return None;
    }
    let mut keep = vec![true; index.groups];
    for (p, col) in predicates {
        let Some(entries) = index.entries(col.id) else {
            continue;
        };
        for (k, e) in keep.iter_mut().zip(entries) {
            if let Some(stats) = &e.statistics {
                *k = *k && p.may_match(col, stats);
            }
        }
    }
    Some(keep)
}

/// Maximal runs of kept row groups.
pub fn runs(keep: &[bool]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (g, &k) in keep.iter().enumerate() {
        match out.last_mut() {
            Some(r) if k && r.end == g => r.end = g + 1,
            _ if k => out.push(g..g + 1),
            _ => {}
        }
    }
    out
}

/// Whether `values` (one row group of a column, as assembled) agree with
/// the group's `stats`: as many non-null values, none outside the minimum
/// and maximum (integers, dates, floats ignoring NaN, strings). A window
/// whose positions led elsewhere in its streams almost never passes; the
/// answer says what differs.
pub fn check(values: &dyn Array, col: &Column, stats: &ColumnStatistics) -> Result<(), String> {
    let nonnull = (values.len() - values.null_count()) as u64;
    if let Some(n) = stats.number_of_values.filter(|&n| n != nonnull) {
        return Err(format!("{nonnull} non-null values, the row index says {n}"));
    }
    if nonnull == 0 {
        return Ok(());
    }
    let outside = |what: &str| Err(format!("a value outside the row index's {what}"));
    match col.kind {
        Kind::Byte | Kind::Short | Kind::Int | Kind::Long | Kind::Date => {
            let (lo, hi) = match (col.kind, &stats.int_statistics, &stats.date_statistics) {
                (Kind::Date, _, Some(d)) => (d.minimum.map(i64::from), d.maximum.map(i64::from)),
                (Kind::Date, _, None) | (_, None, _) => return Ok(()),
                (_, Some(i), _) => (i.minimum, i.maximum),
            };
            let Ok(v) = cast(values, &DataType::Int64) else {
                return Ok(());
            };
            let v = v.as_primitive::<Int64Type>();
            let (min, max) = (arrow::compute::min(v), arrow::compute::max(v));
            if lo.zip(min).is_some_and(|(lo, m)| m < lo)
                || hi.zip(max).is_some_and(|(hi, m)| m > hi)
            {
                return outside("integer range");
            }
        }
        Kind::Float | Kind::Double => {
            let Some(d) = &stats.double_statistics else {
                return Ok(());
            };
            let Ok(v) = cast(values, &DataType::Float64) else {
                return Ok(());
            };
            let v = v.as_primitive::<Float64Type>();
            let (lo, hi) = (
                d.minimum.unwrap_or(f64::NEG_INFINITY),
                d.maximum.unwrap_or(f64::INFINITY),
            );
            // NaN compares false either way: writers leave it out of the range.
            if v.iter().flatten().any(|x| x < lo || x > hi) {
                return outside("floating-point range");
            }
        }
        Kind::String | Kind::Varchar => {
            let Some(st) = &stats.string_statistics else {
                return Ok(());
            };
            let Some(v) = values.as_string_opt::<i32>() else {
                return Ok(());
            };
            let (min, max) = (arrow::compute::min_string(v), arrow::compute::max_string(v));
            let below = st.minimum.as_deref().zip(min).is_some_and(|(lo, m)| m < lo);
            let above = st.maximum.as_deref().zip(max).is_some_and(|(hi, m)| m > hi);
            if below || above {
                return outside("string range");
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orc::proto::IntegerStatistics;
    use arrow::array::{Int64Array, StringArray};

    fn entry(min: i64, max: i64) -> RowIndexEntry {
        RowIndexEntry {
            positions: vec![],
            statistics: Some(ColumnStatistics {
                number_of_values: Some(10),
                int_statistics: Some(IntegerStatistics {
                    minimum: Some(min),
                    maximum: Some(max),
                    sum: None,
                }),
                ..Default::default()
            }),
        }
    }

    fn column() -> Column {
        crate::orc::predicate::tests::long_column()
    }

    #[test]
    fn keeps_what_statistics_allow() {
        let col = column();
        let mut index = StripeIndex {
            stride: 10,
            groups: 4,
            ..Default::default()
        };
        let mut no_stats = entry(0, 0);
        no_stats.statistics = None;
        index
            .entries
            .insert(1, vec![entry(0, 9), entry(10, 19), no_stats, entry(30, 39)]);
        let p: Predicate = "x >= 15".parse().unwrap();
        assert_eq!(
            keep(&index, &[(&p, &col)]).unwrap(),
            [false, true, true, true]
        );
        let q: Predicate = "x < 12".parse().unwrap();
        assert_eq!(
            keep(&index, &[(&p, &col), (&q, &col)]).unwrap(),
            [false, true, true, false]
        );
        // A column without a usable index prunes nothing.
        let other = Column { id: 2, ..column() };
        assert_eq!(keep(&index, &[(&p, &other)]), None);
        assert_eq!(index.rows(1..4, 35), 10..35);
        assert_eq!(index.rows(3..4, 35), 30..35);
    }

    #[test]
    fn runs_of_kept_groups() {
        assert_eq!(runs(&[true, true, false, true]), vec![0..2, 3..4]);
        assert_eq!(runs(&[false, false]), Vec::<Range<usize>>::new());
        assert_eq!(runs(&[false, true, true]), vec![1..3]);
    }

    #[test]
    fn checks_values_against_statistics() {
        let col = column();
        let stats = entry(3, 9).statistics.unwrap();
        let ten = |v: [Option<i64>; 10]| Int64Array::from(v.to_vec());
        let mut v = [Some(5); 10];
        assert!(check(&ten(v), &col, &stats).is_ok());
        v[3] = Some(10);
        assert!(
            check(&ten(v), &col, &stats)
                .unwrap_err()
                .contains("outside")
        );
        v[3] = None;
        assert!(
            check(&ten(v), &col, &stats)
                .unwrap_err()
                .contains("non-null")
        );
        let s = Column {
            kind: Kind::String,
            ..column()
        };
        let stats = ColumnStatistics {
            number_of_values: Some(2),
            string_statistics: Some(crate::orc::proto::StringStatistics {
                minimum: Some("b".into()),
                maximum: Some("d".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(check(&StringArray::from(vec!["b", "d"]), &s, &stats).is_ok());
        assert!(check(&StringArray::from(vec!["a", "d"]), &s, &stats).is_err());
    }
}
