//! The embedded Arrow schema (`ARROW:schema`), checked before the parquet
//! crate decodes it.
//!
//! arrow-ipc's flatbuffer-to-schema conversion unwraps and panics on
//! flatbuffers that pass verification but break its expectations: a type
//! table missing for its type tag, a list without exactly one child, an
//! integer of 24 bits, an unknown time unit, a decimal precision above 255,
//! an unknown type. Catching the panic still prints it, so the schema is
//! walked here first, through the verified accessors only, and accepted
//! only when every field is one that conversion handles without panicking.
//! A schema that fails is skipped with a warning: the Parquet schema alone
//! then gives the Arrow types, as `ArrowReaderOptions::with_skip_arrow_metadata`
//! does.

use arrow::ipc::{self, Field, Type};
use base64::Engine;
use base64::prelude::BASE64_STANDARD;

/// The metadata key of the embedded schema.
pub const KEY: &str = "ARROW:schema";

/// Deepest nesting accepted (the flatbuffer verifier's own limit is 64).
const MAX_DEPTH: usize = 64;

/// Why the embedded schema `value` cannot be used, or `None` when the
/// parquet crate can decode it without panicking.
pub fn problem(value: &str) -> Option<String> {
    // Exactly the parquet crate's steps: base64, an optional continuation
    // marker and length, then a verified flatbuffer message.
    let bytes = match BASE64_STANDARD.decode(value) {
        Ok(b) => b,
        Err(e) => return Some(format!("not base64: {e}")),
    };
    let slice = if bytes.len() > 8 && bytes[0..4] == [255u8; 4] {
        &bytes[8..]
    } else {
        bytes.as_slice()
    };
    let message = match ipc::root_as_message(slice) {
        Ok(m) => m,
        Err(e) => return Some(format!("not an IPC message: {e}")),
    };
    let Some(schema) = message.header_as_schema() else {
        return Some("the IPC message is not a schema".into());
    };
    schema_problem(schema)
}

/// Why arrow-ipc's conversion of the verified schema flatbuffer `schema`
/// would panic, or `None` when it would not (also for an IPC file's
/// footer schema, `gsst::container_file`).
pub(crate) fn schema_problem(schema: ipc::Schema<'_>) -> Option<String> {
    if schema.endianness() == ipc::Endianness::Big {
        return Some("big-endian schema".into());
    }
    let Some(fields) = schema.fields() else {
        return Some("schema without fields".into());
    };
    fields.iter().find_map(|f| field_problem(f, 0))
}

/// Checks what arrow-ipc's `get_data_type` unwraps or matches
/// exhaustively, for `field` and its children.
fn field_problem(field: Field<'_>, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return Some("fields nested too deep".into());
    }
    let name = field.name().unwrap_or_default();
    let bad = |what: &str| Some(format!("field {name:?}: {what}"));
    let int_ok = |w: i32| matches!(w, 8 | 16 | 32 | 64);
    if let Some(d) = field.dictionary() {
        match d.indexType() {
            Some(i) if int_ok(i.bitWidth()) => {}
            _ => return bad("dictionary without a valid index type"),
        }
    }
    let units = [
        ipc::TimeUnit::SECOND,
        ipc::TimeUnit::MILLISECOND,
        ipc::TimeUnit::MICROSECOND,
        ipc::TimeUnit::NANOSECOND,
    ];
    let children = field.children();
    // The number of children a type requires, where it requires some.
    let mut need_children = None;
    let ok = match field.type_type() {
        Type::Null
        | Type::Bool
        | Type::Binary
        | Type::BinaryView
        | Type::LargeBinary
        | Type::Utf8
        | Type::Utf8View
        | Type::LargeUtf8
        | Type::Struct_ => true,
        Type::Int => field.type_as_int().is_some_and(|i| int_ok(i.bitWidth())),
        Type::FixedSizeBinary => field
            .type_as_fixed_size_binary()
            .is_some_and(|f| f.byteWidth() >= 0),
        Type::FloatingPoint => field.type_as_floating_point().is_some_and(|f| {
            matches!(
                f.precision(),
                ipc::Precision::HALF | ipc::Precision::SINGLE | ipc::Precision::DOUBLE
            )
        }),
        Type::Date => field
            .type_as_date()
            .is_some_and(|d| matches!(d.unit(), ipc::DateUnit::DAY | ipc::DateUnit::MILLISECOND)),
        Type::Time => field.type_as_time().is_some_and(|t| {
            matches!(
                (t.bitWidth(), t.unit()),
                (32, ipc::TimeUnit::SECOND)
                    | (32, ipc::TimeUnit::MILLISECOND)
                    | (64, ipc::TimeUnit::MICROSECOND)
                    | (64, ipc::TimeUnit::NANOSECOND)
            )
        }),
        Type::Timestamp => field
            .type_as_timestamp()
            .is_some_and(|t| units.contains(&t.unit())),
        Type::Duration => field
            .type_as_duration()
            .is_some_and(|t| units.contains(&t.unit())),
        Type::Interval => field.type_as_interval().is_some_and(|i| {
            matches!(
                i.unit(),
                ipc::IntervalUnit::YEAR_MONTH
                    | ipc::IntervalUnit::DAY_TIME
                    | ipc::IntervalUnit::MONTH_DAY_NANO
            )
        }),
        Type::List | Type::LargeList | Type::ListView | Type::LargeListView => {
            need_children = Some(1);
            true
        }
        Type::FixedSizeList => {
            need_children = Some(1);
            field
                .type_as_fixed_size_list()
                .is_some_and(|f| f.listSize() >= 0)
        }
        Type::Map => {
            need_children = Some(1);
            field.type_as_map().is_some()
        }
        Type::RunEndEncoded => {
            need_children = Some(2);
            true
        }
        Type::Decimal => field.type_as_decimal().is_some_and(|d| {
            matches!(d.bitWidth(), 32 | 64 | 128 | 256)
                && u8::try_from(d.precision()).is_ok()
                && i8::try_from(d.scale()).is_ok()
        }),
        // Parquet stores no unions, and a union's type ids must agree with
        // its children; an unknown tag has no conversion at all.
        _ => false,
    };
    if !ok {
        return bad(&format!("unusable {:?} type", field.type_type()));
    }
    if let Some(n) = need_children
        && children.is_none_or(|c| c.len() != n)
    {
        return bad(&format!("{:?} without {n} children", field.type_type()));
    }
    children
        .into_iter()
        .flatten()
        .find_map(|c| field_problem(c, depth + 1))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::{DataType, Field as ArrowField, Schema, TimeUnit};

    use super::*;

    fn encoded(schema: &Schema) -> String {
        parquet::arrow::encode_arrow_schema(schema)
    }

    #[test]
    fn schemas_arrow_writes_are_accepted() {
        let schema = Schema::new(vec![
            ArrowField::new("a", DataType::Int32, true),
            ArrowField::new("s", DataType::LargeUtf8, false),
            ArrowField::new(
                "t",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            ArrowField::new("d", DataType::Decimal128(38, 9), true),
            ArrowField::new(
                "l",
                DataType::List(Arc::new(ArrowField::new("item", DataType::Utf8, true))),
                true,
            ),
            ArrowField::new(
                "k",
                DataType::Dictionary(Box::new(DataType::Int16), Box::new(DataType::Utf8)),
                true,
            ),
            ArrowField::new_map(
                "m",
                "entries",
                ArrowField::new("key", DataType::Utf8, false),
                ArrowField::new("value", DataType::Float64, true),
                false,
                true,
            ),
        ]);
        assert_eq!(problem(&encoded(&schema)), None);
    }

    #[test]
    fn damaged_schemas_are_rejected() {
        assert!(problem("not base64!").unwrap().contains("base64"));
        assert!(problem("AAAA").is_some());
        let schema = Schema::new(vec![ArrowField::new("a", DataType::Int32, true)]);
        let bytes = BASE64_STANDARD.decode(encoded(&schema)).unwrap();
        let half = BASE64_STANDARD.encode(&bytes[..bytes.len() / 2]);
        assert!(problem(&half).is_some());
    }
}
