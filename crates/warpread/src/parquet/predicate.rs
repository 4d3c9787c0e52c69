//! Pruning by statistics, with the same simple predicates as ORC stripe
//! pruning ([`crate::orc::Predicate`]): row groups by their column chunk
//! statistics, pages by the ColumnIndex of the page index. A row group or
//! page is skipped only when its statistics prove no row can match;
//! statistics whose order does not match the literal's (unsigned integers,
//! decimals, binary without a string type) keep it.

use parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::statistics::Statistics;
use parquet::schema::types::ColumnDescriptor;

use crate::read::may_match_range as cmp;
use crate::read::{Predicate, Scalar};

/// A column's minimum and maximum over some rows (a chunk or a page), as
/// the file states them; `None` where absent.
enum Bounds<'a> {
    /// INT32 and INT64, widened.
    Int(Option<i64>, Option<i64>),
    /// FLOAT and DOUBLE, widened.
    Float(Option<f64>, Option<f64>),
    /// BYTE_ARRAY.
    Bytes(Option<&'a [u8]>, Option<&'a [u8]>),
}

/// Whether `p` may hold for some value within `bounds` of column `descr`:
/// the one comparison behind row-group and page pruning.
fn may_match_bounds(p: &Predicate, descr: &ColumnDescriptor, bounds: Bounds<'_>) -> bool {
    let logical = descr.logical_type_ref();
    let signed_int = match logical {
        None | Some(LogicalType::Date) => true,
        Some(LogicalType::Integer(t)) => t.is_signed,
        _ => false,
    } && descr.converted_type() != ConvertedType::DECIMAL;
    let string = descr.physical_type() == PhysicalType::BYTE_ARRAY
        && matches!(logical, Some(LogicalType::String | LogicalType::Enum))
        || descr.converted_type() == ConvertedType::UTF8;
    match (&p.value, bounds) {
        (Scalar::Int(v), Bounds::Int(min, max)) if signed_int => {
            cmp(min.map(|m| m.cmp(v)), max.map(|m| m.cmp(v)), p.op)
        }
        (Scalar::Int(_) | Scalar::Float(_), Bounds::Float(min, max)) => {
            let v = match p.value {
                Scalar::Int(i) => i as f64,
                Scalar::Float(f) => f,
                Scalar::Str(_) => return true,
            };
            cmp(
                min.and_then(|m| m.partial_cmp(&v)),
                max.and_then(|m| m.partial_cmp(&v)),
                p.op,
            )
        }
        (Scalar::Str(v), Bounds::Bytes(min, max)) if string => cmp(
            min.map(|m| m.cmp(v.as_bytes())),
            max.map(|m| m.cmp(v.as_bytes())),
            p.op,
        ),
        _ => true,
    }
}

/// Whether `p` may hold for some row of a column chunk with these
/// statistics (`rows`: the row group's row count).
pub fn may_match_chunk(p: &Predicate, cc: &ColumnChunkMetaData, rows: i64) -> bool {
    let Some(stats) = cc.statistics() else {
        return true;
    };
    if stats.null_count_opt() == Some(rows as u64) && rows > 0 {
        // Only nulls: no comparison is true.
        return false;
    }
    let bounds = match stats {
        Statistics::Int32(s) => Bounds::Int(
            s.min_opt().map(|&m| m.into()),
            s.max_opt().map(|&m| m.into()),
        ),
        Statistics::Int64(s) => Bounds::Int(s.min_opt().copied(), s.max_opt().copied()),
        Statistics::Float(s) => Bounds::Float(
            s.min_opt().map(|&m| m.into()),
            s.max_opt().map(|&m| m.into()),
        ),
        Statistics::Double(s) => Bounds::Float(s.min_opt().copied(), s.max_opt().copied()),
        Statistics::ByteArray(s) => {
            Bounds::Bytes(s.min_opt().map(|m| m.data()), s.max_opt().map(|m| m.data()))
        }
        _ => return true,
    };
    may_match_bounds(p, cc.column_descr(), bounds)
}

/// Whether `p` may hold for some row of page `page` of a column chunk
/// whose ColumnIndex is `index` (`page` below its page count: the caller
/// checked it). A page of nulls only never matches.
pub fn may_match_page(
    p: &Predicate,
    descr: &ColumnDescriptor,
    index: &ColumnIndexMetaData,
    page: usize,
) -> bool {
    use ColumnIndexMetaData as C;
    if matches!(index, C::NONE) {
        return true;
    }
    // The null flag is believed only where the column can hold nulls and
    // the null count, if given, agrees: parquet-mr flags every page as
    // nulls only (null count -1) when it collected no page statistics,
    // even for required columns.
    if index.is_null_page(page)
        && descr.max_def_level() > 0
        && index.null_count(page).is_none_or(|n| n > 0)
    {
        return false;
    }
    let bounds = match index {
        C::INT32(i) => Bounds::Int(
            i.min_value(page).map(|&m| m.into()),
            i.max_value(page).map(|&m| m.into()),
        ),
        C::INT64(i) => Bounds::Int(i.min_value(page).copied(), i.max_value(page).copied()),
        C::FLOAT(i) => Bounds::Float(
            i.min_value(page).map(|&m| m.into()),
            i.max_value(page).map(|&m| m.into()),
        ),
        C::DOUBLE(i) => Bounds::Float(i.min_value(page).copied(), i.max_value(page).copied()),
        C::BYTE_ARRAY(i) => Bounds::Bytes(i.min_value(page), i.max_value(page)),
        _ => return true,
    };
    may_match_bounds(p, descr, bounds)
}
