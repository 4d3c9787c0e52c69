//! File statistics for DataFusion's planner: row counts, and each column's
//! null count, bounds and in-memory size where the footer records them.
//! Join selection sizes hash-join build sides and chooses between a
//! collected and a partitioned join from these, so a table read by warpread
//! must report what DataFusion's own Parquet reader reports for the same
//! file, or the same SQL runs as a different (often single-threaded) plan.

use arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, ScalarValue, Statistics};
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;

use crate::error::{Error, Result};
use crate::orc::OrcFile;
use crate::orc::proto;
use crate::orc::schema::{Column, Kind};
use crate::parquet::ParquetFile;

/// A Parquet file's statistics exactly as DataFusion's Parquet reader
/// derives them from the same footer.
pub fn parquet(file: &ParquetFile, table_schema: &SchemaRef) -> Result<Statistics> {
    DFParquetMetadata::statistics_from_parquet_metadata(file.metadata(), table_schema).map_err(
        |e| {
            Error::Unsupported(format!(
                "{}: statistics of the footer: {e}",
                file.path().display()
            ))
        },
    )
}

/// An ORC file's statistics from its footer's file-level column statistics.
///
/// Bounds are `Inexact`: DataFusion answers `min`/`max` from exact bounds
/// without reading, and ORC writers have truncated string bounds and
/// written unreliable ones in some versions; join estimates use inexact
/// bounds as well. Floating-point bounds are left out (ORC leaves NaN out of
/// them). Null counts and sizes of top-level columns are exact counts.
pub fn orc(file: &OrcFile, table_schema: &Schema) -> Statistics {
    let rows = file.rows();
    let stats = &file.tail().footer.statistics;
    let columns = table_schema
        .fields()
        .iter()
        .map(|field| {
            let col = file
                .root()
                .children
                .iter()
                .find(|c| &c.name == field.name());
            match col.and_then(|c| stats.get(c.id as usize).map(|s| (c, s))) {
                Some((c, s)) => orc_column(c, s, field.data_type(), rows),
                None => ColumnStatistics::new_unknown(),
            }
        })
        .collect();
    Statistics {
        num_rows: usize::try_from(rows).map_or(Precision::Absent, Precision::Exact),
        total_byte_size: Precision::Absent,
        column_statistics: columns,
    }
}

fn orc_column(
    col: &Column,
    s: &proto::ColumnStatistics,
    table_type: &DataType,
    rows: u64,
) -> ColumnStatistics {
    let mut out = ColumnStatistics::new_unknown();
    // Bounds and sizes only where the table reads the column as the file
    // types it (tables over several files may merge schemas).
    if &col.arrow_type() != table_type {
        return out;
    }
    if let Some(values) = s.number_of_values.filter(|&v| v <= rows) {
        out.null_count = Precision::Exact((rows - values) as usize);
    }
    if let Some((min, max)) = orc_bounds(col, s) {
        out.min_value = Precision::Inexact(min);
        out.max_value = Precision::Inexact(max);
    }
    // Footer numbers, hostile ones included: no size rather than a wrap.
    let rows = usize::try_from(rows).ok();
    out.byte_size = match (table_type.primitive_width(), &s.string_statistics) {
        (Some(w), _) => rows
            .and_then(|r| r.checked_mul(w))
            .map_or(Precision::Absent, Precision::Exact),
        // Arrow strings: the values plus one offset a row.
        (None, Some(st)) if col.kind != Kind::Char => st
            .sum
            .and_then(|b| usize::try_from(b).ok())
            .and_then(|b| b.checked_add(rows?.checked_mul(4)?))
            .map_or(Precision::Absent, Precision::Inexact),
        _ => Precision::Absent,
    };
    out
}

fn orc_bounds(col: &Column, s: &proto::ColumnStatistics) -> Option<(ScalarValue, ScalarValue)> {
    use ScalarValue as V;
    let pair = |a, b| Some((a, b));
    match col.kind {
        Kind::Byte | Kind::Short | Kind::Int | Kind::Long => {
            let i = s.int_statistics.as_ref()?;
            let (lo, hi) = (i.minimum?, i.maximum?);
            match col.kind {
                Kind::Byte => pair(
                    V::Int8(Some(lo.try_into().ok()?)),
                    V::Int8(Some(hi.try_into().ok()?)),
                ),
                Kind::Short => pair(
                    V::Int16(Some(lo.try_into().ok()?)),
                    V::Int16(Some(hi.try_into().ok()?)),
                ),
                Kind::Int => pair(
                    V::Int32(Some(lo.try_into().ok()?)),
                    V::Int32(Some(hi.try_into().ok()?)),
                ),
                _ => pair(V::Int64(Some(lo)), V::Int64(Some(hi))),
            }
        }
        Kind::Date => {
            let d = s.date_statistics.as_ref()?;
            pair(V::Date32(d.minimum), V::Date32(d.maximum))
                .filter(|_| d.minimum.is_some() && d.maximum.is_some())
        }
        Kind::String | Kind::Varchar => {
            let st = s.string_statistics.as_ref()?;
            pair(
                V::Utf8(st.minimum.clone()?.into()),
                V::Utf8(st.maximum.clone()?.into()),
            )
        }
        Kind::Decimal if col.precision > 0 => {
            let d = s.decimal_statistics.as_ref()?;
            let (p, sc) = (col.precision as u8, col.scale as i8);
            let lo = decimal_units(d.minimum.as_deref()?, col.scale)?;
            let hi = decimal_units(d.maximum.as_deref()?, col.scale)?;
            pair(
                V::Decimal128(Some(lo), p, sc),
                V::Decimal128(Some(hi), p, sc),
            )
        }
        _ => None,
    }
}

/// `text` (ORC's decimal statistics: `-12.5`, `3`, `1E+2`) in units of
/// `10^-scale`, or `None` unless it is a plain decimal exactly representable
/// at that scale.
fn decimal_units(text: &str, scale: u32) -> Option<i128> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    // Trailing zeros past the scale change nothing; other digits there do.
    let frac = frac.trim_end_matches('0');
    if frac.len() > scale as usize {
        return None;
    }
    let mut v: i128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        v = v.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
    }
    v = v.checked_mul(10i128.checked_pow(scale - frac.len() as u32)?)?;
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_units_scale_and_reject() {
        assert_eq!(decimal_units("12.5", 2), Some(1250));
        assert_eq!(decimal_units("-0.07", 2), Some(-7));
        assert_eq!(decimal_units("3", 0), Some(3));
        assert_eq!(decimal_units("1.500", 1), Some(15));
        assert_eq!(decimal_units(".5", 1), Some(5));
        assert_eq!(decimal_units("1.25", 1), None);
        assert_eq!(decimal_units("1E+2", 0), None);
        assert_eq!(decimal_units("", 0), None);
        assert_eq!(decimal_units("-", 0), None);
        assert_eq!(
            decimal_units("99999999999999999999999999999999999999999", 0),
            None
        );
    }
}
