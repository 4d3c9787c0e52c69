//! Row-group pruning by column chunk statistics, with the same simple
//! predicates as ORC stripe pruning ([`crate::orc::Predicate`]). A row group
//! is skipped only when its statistics prove no row can match; statistics
//! whose order does not match the literal's (unsigned integers, decimals,
//! binary without a string type) keep it.

use parquet::basic::{LogicalType, Type as PhysicalType};
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::statistics::Statistics;

use crate::orc::predicate::may_match_range as cmp;
use crate::orc::{Predicate, Scalar};

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
    let descr = cc.column_descr();
    let logical = descr.logical_type_ref();
    let signed_int = match logical {
        None | Some(LogicalType::Date) => true,
        Some(LogicalType::Integer(t)) => t.is_signed,
        _ => false,
    } && descr.converted_type() != parquet::basic::ConvertedType::DECIMAL;
    match (&p.value, stats) {
        (Scalar::Int(v), Statistics::Int32(s)) if signed_int => cmp(
            s.min_opt().map(|m| i64::from(*m).cmp(v)),
            s.max_opt().map(|m| i64::from(*m).cmp(v)),
            p.op,
        ),
        (Scalar::Int(v), Statistics::Int64(s)) if signed_int => cmp(
            s.min_opt().map(|m| m.cmp(v)),
            s.max_opt().map(|m| m.cmp(v)),
            p.op,
        ),
        (Scalar::Int(_) | Scalar::Float(_), Statistics::Float(_) | Statistics::Double(_)) => {
            let v = match p.value {
                Scalar::Int(i) => i as f64,
                Scalar::Float(f) => f,
                Scalar::Str(_) => return true,
            };
            let (min, max) = match stats {
                Statistics::Float(s) => (
                    s.min_opt().map(|&m| m as f64),
                    s.max_opt().map(|&m| m as f64),
                ),
                Statistics::Double(s) => (s.min_opt().copied(), s.max_opt().copied()),
                _ => return true,
            };
            cmp(
                min.and_then(|m| m.partial_cmp(&v)),
                max.and_then(|m| m.partial_cmp(&v)),
                p.op,
            )
        }
        (Scalar::Str(v), Statistics::ByteArray(s))
            if descr.physical_type() == PhysicalType::BYTE_ARRAY
                && matches!(logical, Some(LogicalType::String | LogicalType::Enum))
                || descr.converted_type() == parquet::basic::ConvertedType::UTF8 =>
        {
            cmp(
                s.min_opt().map(|m| m.data().cmp(v.as_bytes())),
                s.max_opt().map(|m| m.data().cmp(v.as_bytes())),
                p.op,
            )
        }
        _ => true,
    }
}
