//! The `warpread.huffman` Arrow extension type that marks a Huffman column
//! of the file container (docs/gsst-format.md, "Huffman columns"): its
//! JSON metadata, the stored field a source field becomes, and the checks
//! a reader makes before it trusts a marked field.
//!
//! The storage is a run-end encoded LargeBinary column of one or two runs
//! (row 0: the column container; rows 1..n: one empty value), not a plain
//! LargeBinary column as GSST's: a LargeBinary column costs 8 bytes of
//! offsets a row, more than most fixed-width values take compressed.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field};
use serde::{Deserialize, Serialize};

use crate::codecs::huffman::{HuffmanParams, SymbolWidth};
use crate::error::{Error, Location, Result};

/// The Arrow extension name of Huffman columns.
pub const HUFFMAN_EXTENSION_NAME: &str = "warpread.huffman";
/// The extension version written and accepted.
pub const HUFFMAN_EXTENSION_VERSION: u32 = 1;
const KEY_NAME: &str = "ARROW:extension:name";
const KEY_METADATA: &str = "ARROW:extension:metadata";

/// The extension metadata (JSON in `ARROW:extension:metadata`); every key
/// is required and no other is accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HuffmanExtension {
    /// Extension version.
    pub version: u32,
    /// Bits of a Huffman symbol in every frame of the column: 8 or 16.
    pub symbol_bits: u32,
    /// The decoded Arrow type, as Arrow displays it (`Int32`,
    /// `Timestamp(µs, "UTC")`, `Decimal128(15, 2)`, `Utf8`, ...).
    pub value_type: String,
    /// What the frames decode to: `none` (the values themselves) or `gsst`
    /// (a GSST frame of them; string columns only).
    pub inner: String,
}

/// How a column is Huffman-coded: the symbol width, and whether the frame
/// holds the values or a GSST frame of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HuffmanEncoding {
    /// Symbol width of every frame.
    pub width: SymbolWidth,
    /// The frame decodes to a GSST frame of the values (strings only).
    pub gsst: bool,
}

impl HuffmanEncoding {
    /// Short name: `huffman8`, `huffman16`, `gsst+huffman8`, ...
    pub fn name(&self) -> String {
        format!(
            "{}huffman{}",
            if self.gsst { "gsst+" } else { "" },
            8 * self.width.bytes()
        )
    }

    /// The encoder settings: exact counts, 32 KiB blocks in 128 ways (the
    /// layout the GPU decodes fastest; readers take any layout).
    pub fn params(&self) -> HuffmanParams {
        match self.width {
            SymbolWidth::U8 => HuffmanParams::BYTES_IN_WAYS,
            SymbolWidth::U16 => HuffmanParams::PAIRS_IN_WAYS,
        }
    }

    /// Decode stages a batch of the column takes (one, or two after GSST).
    pub fn stages(&self) -> u32 {
        1 + u32::from(self.gsst)
    }
}

/// What the values of a type are to the column container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HuffmanValues {
    /// Fixed-width values of this many bytes (1..=32): integers, floats,
    /// dates, times, timestamps, durations, intervals, decimals.
    Fixed(usize),
    /// Utf8 (`large` false) or LargeUtf8 strings.
    Strings {
        /// LargeUtf8.
        large: bool,
    },
}

impl HuffmanValues {
    /// The values of `data_type`, if a Huffman column can hold it.
    pub fn of(data_type: &DataType) -> Option<Self> {
        match data_type {
            DataType::Utf8 => Some(Self::Strings { large: false }),
            DataType::LargeUtf8 => Some(Self::Strings { large: true }),
            t => t.primitive_width().map(Self::Fixed),
        }
    }
}

/// A checked Huffman field: its encoding and decoded type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HuffmanField {
    /// How the column is coded.
    pub encoding: HuffmanEncoding,
    /// The decoded type.
    pub value_type: DataType,
    /// What the values are to the column container.
    pub values: HuffmanValues,
}

/// The stored type of every Huffman column: run-end encoded LargeBinary
/// with 64-bit run ends, as `RunArray::try_new` names its children.
pub fn storage_type() -> DataType {
    DataType::RunEndEncoded(
        Arc::new(Field::new("run_ends", DataType::Int64, false)),
        Arc::new(Field::new("values", DataType::LargeBinary, true)),
    )
}

fn field_error(location: &Location, message: impl Into<String>) -> Error {
    Error::Format {
        format: "GSST container",
        location: Box::new(location.clone()),
        message: message.into(),
    }
}

/// The stored field of a source field coded with `encoding`: same name,
/// nullability and metadata, plus the extension's keys.
pub fn stored_field(field: &Field, encoding: HuffmanEncoding) -> Result<Field> {
    let values = HuffmanValues::of(field.data_type()).ok_or_else(|| {
        Error::Unsupported(format!(
            "column `{}`: Huffman columns hold integers, floats, temporal types, decimals \
             and strings, not {}",
            field.name(),
            field.data_type()
        ))
    })?;
    if encoding.gsst && !matches!(values, HuffmanValues::Strings { .. }) {
        return Err(Error::Unsupported(format!(
            "column `{}`: GSST before Huffman applies to strings only",
            field.name()
        )));
    }
    let ext = HuffmanExtension {
        version: HUFFMAN_EXTENSION_VERSION,
        symbol_bits: 8 * encoding.width.bytes() as u32,
        value_type: field.data_type().to_string(),
        inner: if encoding.gsst { "gsst" } else { "none" }.into(),
    };
    let json = serde_json::to_string(&ext)
        .map_err(|e| Error::Unsupported(format!("extension metadata: {e}")))?;
    let mut md = field.metadata().clone();
    md.insert(KEY_NAME.into(), HUFFMAN_EXTENSION_NAME.into());
    md.insert(KEY_METADATA.into(), json);
    Ok(Field::new(field.name(), storage_type(), field.is_nullable()).with_metadata(md))
}

/// The Huffman field a stored field is, if it is marked as one. A marked
/// field whose metadata is missing, malformed, of another version, names a
/// symbol width other than 8 or 16, a type a Huffman column cannot hold,
/// an unknown inner coding or GSST under a non-string type, or whose
/// storage is not [`storage_type`] is an error naming the column, never a
/// plain column: damage is not passed on silently.
pub fn huffman_field_of(field: &Field, location: &Location) -> Result<Option<HuffmanField>> {
    let md = field.metadata();
    if md.get(KEY_NAME).map(String::as_str) != Some(HUFFMAN_EXTENSION_NAME) {
        return Ok(None);
    }
    let location = location.clone().with_column(field.name());
    let bad = |m: String| field_error(&location, m);
    let json = md
        .get(KEY_METADATA)
        .ok_or_else(|| bad("Huffman extension metadata missing".into()))?;
    let ext: HuffmanExtension =
        serde_json::from_str(json).map_err(|e| bad(format!("Huffman extension metadata: {e}")))?;
    if ext.version != HUFFMAN_EXTENSION_VERSION {
        return Err(bad(format!("Huffman extension version {}", ext.version)));
    }
    let width = match ext.symbol_bits {
        8 => SymbolWidth::U8,
        16 => SymbolWidth::U16,
        b => return Err(bad(format!("Huffman symbols of {b} bits (8 or 16)"))),
    };
    let value_type: DataType = ext
        .value_type
        .parse()
        .map_err(|_| bad(format!("value type `{}`", ext.value_type)))?;
    let values = HuffmanValues::of(&value_type).ok_or_else(|| {
        bad(format!(
            "value type `{}` cannot be a Huffman column",
            ext.value_type
        ))
    })?;
    let gsst = match ext.inner.as_str() {
        "none" => false,
        "gsst" if matches!(values, HuffmanValues::Strings { .. }) => true,
        other => {
            return Err(bad(format!(
                "inner coding `{other}` for value type `{}`",
                ext.value_type
            )));
        }
    };
    if field.data_type() != &storage_type() {
        return Err(bad(format!(
            "storage type {} (expected {})",
            field.data_type(),
            storage_type()
        )));
    }
    Ok(Some(HuffmanField {
        encoding: HuffmanEncoding { width, gsst },
        value_type,
        values,
    }))
}

/// The decoded field of a checked Huffman field: the value type, with the
/// extension's keys removed from the metadata.
pub fn decoded_field(field: &Field, huffman: &HuffmanField) -> Field {
    let mut md: HashMap<String, String> = field.metadata().clone();
    md.remove(KEY_NAME);
    md.remove(KEY_METADATA);
    Field::new(
        field.name(),
        huffman.value_type.clone(),
        field.is_nullable(),
    )
    .with_metadata(md)
}

#[cfg(test)]
mod tests {
    use arrow::datatypes::{IntervalUnit, TimeUnit};

    use super::*;

    fn every_type() -> Vec<DataType> {
        use DataType::*;
        vec![
            Int8,
            Int16,
            Int32,
            Int64,
            UInt8,
            UInt16,
            UInt32,
            UInt64,
            Float16,
            Float32,
            Float64,
            Date32,
            Date64,
            Time32(TimeUnit::Second),
            Time64(TimeUnit::Nanosecond),
            Timestamp(TimeUnit::Microsecond, None),
            Timestamp(TimeUnit::Nanosecond, Some("Asia/Kolkata".into())),
            Timestamp(TimeUnit::Millisecond, Some("+05:30".into())),
            Duration(TimeUnit::Millisecond),
            Interval(IntervalUnit::YearMonth),
            Interval(IntervalUnit::DayTime),
            Interval(IntervalUnit::MonthDayNano),
            Decimal32(9, 2),
            Decimal64(18, -3),
            Decimal128(38, 10),
            Decimal256(76, 0),
            Utf8,
            LargeUtf8,
        ]
    }

    #[test]
    fn every_eligible_type_round_trips_through_the_metadata() {
        for t in every_type() {
            let f = Field::new("c", t.clone(), true)
                .with_metadata([("k".to_string(), "v".to_string())].into_iter().collect());
            for width in [SymbolWidth::U8, SymbolWidth::U16] {
                let gsst = matches!(t, DataType::Utf8 | DataType::LargeUtf8);
                let encoding = HuffmanEncoding { width, gsst };
                let stored = stored_field(&f, encoding).unwrap();
                assert_eq!(stored.data_type(), &storage_type());
                let h = huffman_field_of(&stored, &Location::default())
                    .unwrap()
                    .unwrap();
                assert_eq!(h.value_type, t, "{t}");
                assert_eq!(h.encoding, encoding);
                assert_eq!(decoded_field(&stored, &h), f);
            }
        }
    }

    #[test]
    fn ineligible_types_and_gsst_on_numbers_are_refused() {
        let u8 = HuffmanEncoding {
            width: SymbolWidth::U8,
            gsst: false,
        };
        for t in [DataType::Boolean, DataType::Binary, DataType::Null] {
            assert!(stored_field(&Field::new("c", t, true), u8).is_err());
        }
        let g = HuffmanEncoding { gsst: true, ..u8 };
        assert!(stored_field(&Field::new("c", DataType::Int32, true), g).is_err());
        assert_eq!(g.name(), "gsst+huffman8");
        assert_eq!(g.stages(), 2);
    }

    #[test]
    fn bad_metadata_is_an_error_naming_the_column() {
        let good = stored_field(
            &Field::new("price", DataType::Int64, true),
            HuffmanEncoding {
                width: SymbolWidth::U16,
                gsst: false,
            },
        )
        .unwrap();
        let with = |json: &str| {
            let mut md = good.metadata().clone();
            md.insert(KEY_METADATA.into(), json.into());
            good.clone().with_metadata(md)
        };
        let cases = [
            with("{"),
            with(r#"{"version":1,"symbol_bits":16,"value_type":"Int64"}"#),
            with(r#"{"version":1,"symbol_bits":16,"value_type":"Int64","inner":"none","x":1}"#),
            with(r#"{"version":2,"symbol_bits":16,"value_type":"Int64","inner":"none"}"#),
            with(r#"{"version":1,"symbol_bits":12,"value_type":"Int64","inner":"none"}"#),
            with(r#"{"version":1,"symbol_bits":8,"value_type":"Boolean","inner":"none"}"#),
            with(r#"{"version":1,"symbol_bits":8,"value_type":"Int65","inner":"none"}"#),
            with(r#"{"version":1,"symbol_bits":8,"value_type":"Int64","inner":"gsst"}"#),
            with(r#"{"version":1,"symbol_bits":8,"value_type":"Utf8","inner":"zstd"}"#),
            good.clone().with_data_type(DataType::LargeBinary),
            good.clone().with_metadata(
                [(KEY_NAME.to_string(), HUFFMAN_EXTENSION_NAME.to_string())]
                    .into_iter()
                    .collect(),
            ),
        ];
        for f in cases {
            let e = huffman_field_of(&f, &Location::file("t.arrow")).unwrap_err();
            let e = e.to_string();
            assert!(e.contains("t.arrow") && e.contains("price"), "{e}");
        }
        let plain = Field::new("price", DataType::Int64, true);
        assert_eq!(
            huffman_field_of(&plain, &Location::default()).unwrap(),
            None
        );
    }
}
