//! Huffman column containers: one batch of one column, its values as one
//! Huffman frame (docs/huffman-format.md) beside what the frame does not
//! hold, the validity bitmap and, for strings, each row's length. The byte
//! layout is in docs/gsst-format.md ("Huffman column container").
//!
//! Decoding runs the frame as one `StageOp::Huffman` stage on the caller's
//! backend (the CPU reference or the CUDA kernels), then, for strings coded
//! after GSST, the frame that gives as one GSST stage. Every size the frame
//! claims is checked against the column before the stage allocates its
//! output.

use arrow::array::{Array, ArrayRef, AsArray, OffsetSizeTrait, make_array};
use arrow::array::{ArrayData, GenericStringArray};

use super::column_parts::{lengths_total, null_buffer, string_array, validity_bits, value_lengths};
use super::huffman_extension::{HuffmanEncoding, HuffmanField, HuffmanValues};
use super::{GsstParams, decompress_with};
use crate::codecs::huffman::{self, Frame, SymbolWidth};
use crate::error::{Error, Location, Result};
use crate::exec::{Backend, HostBuffer};
use crate::plan::HuffmanDecoder;

/// The container's first four bytes.
pub const HUFFMAN_COLUMN_MAGIC: [u8; 4] = *b"WRHC";
/// The container version.
pub const HUFFMAN_COLUMN_VERSION: u16 = 1;
/// Bytes of the container header.
pub const HUFFMAN_COLUMN_HEADER_BYTES: usize = 40;
const FLAG_VALIDITY: u8 = 1;
const FLAG_LARGE: u8 = 2;
const FLAG_GSST: u8 = 4;
/// Most decoded bytes per frame byte: a code is at least one bit, so a
/// Huffman block gives at most 8 symbols of at most 2 bytes a byte, and a
/// raw block one byte a byte. A claim above it is damage, refused before
/// the stage sizes its output from it.
const MAX_EXPANSION: u64 = 16;

/// A parsed column container; its sections borrow the container's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HuffmanColumn<'a> {
    /// Rows.
    pub rows: usize,
    /// What the frame decodes to.
    pub values: HuffmanValues,
    /// The frame decodes to a GSST frame of the values (strings only).
    pub gsst: bool,
    /// Each row's value length as a varint (strings; empty otherwise).
    pub lengths: &'a [u8],
    /// The validity bitmap (LSB first, one bit a row), when a row is null.
    pub validity: Option<&'a [u8]>,
    /// The Huffman frame.
    pub frame: &'a [u8],
}

fn malformed(location: &Location, detail: impl Into<String>) -> Error {
    Error::Format {
        format: "Huffman column",
        location: Box::new(location.clone()),
        message: detail.into(),
    }
}

impl<'a> HuffmanColumn<'a> {
    /// The container bytes: header, lengths, validity, frame.
    pub fn to_bytes(&self) -> Vec<u8> {
        let (large, width) = match self.values {
            HuffmanValues::Fixed(w) => (false, w as u8),
            HuffmanValues::Strings { large } => (large, 0),
        };
        let flag = |on: bool, bit: u8| if on { bit } else { 0 };
        let flags = flag(self.validity.is_some(), FLAG_VALIDITY)
            | flag(large, FLAG_LARGE)
            | flag(self.gsst, FLAG_GSST);
        super::column_parts::container_bytes(
            &HUFFMAN_COLUMN_MAGIC,
            HUFFMAN_COLUMN_VERSION,
            (flags, width),
            self.rows,
            [self.lengths, self.validity.unwrap_or(&[]), self.frame],
        )
    }

    /// Parses container bytes: the header's flags and width must be
    /// consistent and the sections must fill the container exactly. Errors
    /// name `location`.
    pub fn from_bytes(bytes: &'a [u8], location: &Location) -> Result<Self> {
        let bad = |m: &str| malformed(location, m);
        if bytes.len() < HUFFMAN_COLUMN_HEADER_BYTES || bytes[..4] != HUFFMAN_COLUMN_MAGIC {
            return Err(bad("not a Huffman column container"));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != HUFFMAN_COLUMN_VERSION {
            return Err(malformed(location, format!("version {version}")));
        }
        let (flags, width) = (bytes[6], bytes[7]);
        if flags & !(FLAG_VALIDITY | FLAG_LARGE | FLAG_GSST) != 0 {
            return Err(bad("unknown flags"));
        }
        let strings = width == 0;
        if !strings && flags & (FLAG_LARGE | FLAG_GSST) != 0 {
            return Err(bad("string flags on fixed-width values"));
        }
        if width > 32 {
            return Err(malformed(location, format!("values of {width} bytes")));
        }
        let field = |i: usize| {
            let at = 8 + 8 * i;
            let mut le = [0u8; 8];
            le.copy_from_slice(&bytes[at..at + 8]);
            usize::try_from(u64::from_le_bytes(le)).map_err(|_| bad("section size overflows"))
        };
        let (rows, nlen, nval, nframe) = (field(0)?, field(1)?, field(2)?, field(3)?);
        [nlen, nval, nframe]
            .into_iter()
            .try_fold(HUFFMAN_COLUMN_HEADER_BYTES, |a, n| a.checked_add(n))
            .filter(|&e| e == bytes.len())
            .ok_or_else(|| bad("section sizes disagree with the container size"))?;
        let has_validity = flags & FLAG_VALIDITY != 0;
        if !has_validity && nval != 0 {
            return Err(bad("validity bytes without the validity flag"));
        }
        if !strings && nlen != 0 {
            return Err(bad("value lengths in a fixed-width column"));
        }
        let l0 = HUFFMAN_COLUMN_HEADER_BYTES;
        let v0 = l0 + nlen;
        let f0 = v0 + nval;
        Ok(Self {
            rows,
            values: if strings {
                HuffmanValues::Strings {
                    large: flags & FLAG_LARGE != 0,
                }
            } else {
                HuffmanValues::Fixed(usize::from(width))
            },
            gsst: flags & FLAG_GSST != 0,
            lengths: &bytes[l0..v0],
            validity: has_validity.then(|| &bytes[v0..f0]),
            frame: &bytes[f0..],
        })
    }
}

/// Compresses an array (sliced arrays too) into column container bytes:
/// fixed-width values as they lie, strings' concatenated bytes, GSST-coded
/// first with `gsst_params(value bytes)` when `encoding.gsst`.
pub fn compress_column(
    array: &dyn Array,
    encoding: HuffmanEncoding,
    gsst_params: &dyn Fn(usize) -> GsstParams,
) -> Result<Vec<u8>> {
    let rows = array.len();
    let validity = validity_bits(array.nulls(), rows);
    let values = HuffmanValues::of(array.data_type())
        .ok_or_else(|| Error::Unsupported(format!("a Huffman column of {}", array.data_type())))?;
    let (lengths, frame) = match values {
        HuffmanValues::Fixed(w) => {
            let data = array.to_data();
            let start = data.offset() * w;
            let bytes = data
                .buffers()
                .first()
                .and_then(|b| b.as_slice().get(start..start + rows * w))
                .ok_or_else(|| {
                    Error::Unsupported(format!(
                        "a {} array without its values buffer",
                        array.data_type()
                    ))
                })?;
            (Vec::new(), huffman::encode(bytes, &encoding.params())?)
        }
        HuffmanValues::Strings { large: false } => {
            string_frame(array.as_string::<i32>(), encoding, gsst_params)?
        }
        HuffmanValues::Strings { large: true } => {
            string_frame(array.as_string::<i64>(), encoding, gsst_params)?
        }
    };
    let column = HuffmanColumn {
        rows,
        values,
        gsst: encoding.gsst,
        lengths: &lengths,
        validity: validity.as_deref(),
        frame: &frame,
    };
    Ok(column.to_bytes())
}

/// A string array's varint lengths and the Huffman frame of its values.
fn string_frame<O: OffsetSizeTrait>(
    a: &GenericStringArray<O>,
    encoding: HuffmanEncoding,
    gsst_params: &dyn Fn(usize) -> GsstParams,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let offsets = a.value_offsets();
    let values = &a.value_data()[offsets[0].as_usize()..offsets[a.len()].as_usize()];
    let frame = if encoding.gsst {
        let inner = super::compress(values, &gsst_params(values.len()));
        huffman::encode(&inner, &encoding.params())?
    } else {
        huffman::encode(values, &encoding.params())?
    };
    Ok((value_lengths(a), frame))
}

/// Decodes a Huffman frame that must decode to `expect` bytes (when known)
/// with `width` symbols, as one stage on `backend`: the gap-array decoder
/// where the frame has gap arrays, else the self-synchronizing one.
fn run_frame(
    frame: &[u8],
    width: SymbolWidth,
    expect: Option<u64>,
    backend: &dyn Backend,
    location: &Location,
) -> Result<HostBuffer> {
    let parsed = Frame::parse(frame, location)?;
    if parsed.code.width != width {
        return Err(malformed(
            location,
            format!(
                "frame of {}-bit symbols in a column of {}-bit symbols",
                8 * parsed.code.width.bytes(),
                8 * width.bytes()
            ),
        ));
    }
    let most = (frame.len() as u64).saturating_mul(MAX_EXPANSION);
    if parsed.total > most {
        return Err(malformed(
            location,
            format!(
                "a {}-byte frame claims {} decoded bytes",
                frame.len(),
                parsed.total
            ),
        ));
    }
    if let Some(want) = expect
        && parsed.total != want
    {
        return Err(malformed(
            location,
            format!(
                "frame decodes to {} bytes, the column's values take {want}",
                parsed.total
            ),
        ));
    }
    if parsed.total == 0 {
        // No blocks, so no jobs: nothing for a backend to run.
        return Ok(HostBuffer::zeroed(0));
    }
    // Both kernels decode a frame in ways alike; without ways the gap
    // decoder needs gap arrays.
    let decoder = if parsed.code.sub_log2 != 0 || parsed.code.ways_log2 != 0 {
        HuffmanDecoder::Gap
    } else {
        HuffmanDecoder::SelfSync
    };
    let stage = parsed.stage(decoder, location.clone());
    let out = backend.run_stage(&stage, frame)?;
    out.check(&stage)?;
    Ok(out.data)
}

/// Decodes column container bytes of a batch of `rows` rows into an array
/// of `field`'s type on `backend`. The container must agree with the field
/// (value width or string kind, GSST or not) and the batch; errors name
/// `location` (file, batch and column).
pub fn decompress_column(
    bytes: &[u8],
    rows: usize,
    field: &HuffmanField,
    backend: &dyn Backend,
    location: &Location,
) -> Result<ArrayRef> {
    let col = HuffmanColumn::from_bytes(bytes, location)?;
    if col.rows != rows || col.values != field.values || col.gsst != field.encoding.gsst {
        return Err(malformed(
            location,
            format!(
                "container holds {} rows of {:?}{}, the batch {rows} rows of {:?}{}",
                col.rows,
                col.values,
                if col.gsst { " after GSST" } else { "" },
                field.values,
                if field.encoding.gsst {
                    " after GSST"
                } else {
                    ""
                },
            ),
        ));
    }
    let nulls = null_buffer(col.validity, rows).map_err(|m| malformed(location, m))?;
    let width = field.encoding.width;
    match field.values {
        HuffmanValues::Fixed(w) => {
            let want = (rows as u64)
                .checked_mul(w as u64)
                .ok_or_else(|| malformed(location, format!("{rows} rows of {w} bytes")))?;
            let values = run_frame(col.frame, width, Some(want), backend, location)?;
            // Decoded bytes are 8-byte aligned; wider types (i128, i256)
            // are realigned by a copy when they are not.
            let data = ArrayData::builder(field.value_type.clone())
                .len(rows)
                .add_buffer(values.into_arrow())
                .nulls(nulls)
                .align_buffers(true)
                .build()
                .map_err(|e| malformed(location, e.to_string()))?;
            Ok(make_array(data))
        }
        HuffmanValues::Strings { large } => {
            let total = lengths_total(col.lengths, rows).map_err(|m| malformed(location, m))?;
            let values = if col.gsst {
                let inner = run_frame(col.frame, width, None, backend, location)?;
                let values = decompress_with(backend, inner.as_bytes(), location)?;
                if values.len() as u64 != total {
                    return Err(malformed(
                        location,
                        format!(
                            "GSST frame decodes to {} bytes, the value lengths add up to {total}",
                            values.len()
                        ),
                    ));
                }
                values
            } else {
                run_frame(col.frame, width, Some(total), backend, location)?
            };
            let values = values.into_arrow();
            if large {
                string_array::<i64>(rows, col.lengths, values, nulls)
            } else {
                string_array::<i32>(rows, col.lengths, values, nulls)
            }
            .map_err(|m| malformed(location, m))
        }
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{
        Decimal128Array, Float64Array, Int8Array, Int64Array, LargeStringArray, StringArray,
        TimestampMicrosecondArray,
    };
    use arrow::datatypes::Field;

    use super::*;
    use crate::exec::CpuBackend;
    use crate::gsst::huffman_extension::{huffman_field_of, stored_field};
    use crate::gsst::{GsstLayout, TargetDevice};

    fn gsst(len: usize) -> GsstParams {
        GsstParams::for_device(&TargetDevice::H100, len, GsstLayout::Splits)
    }

    fn field_for(a: &dyn Array, encoding: HuffmanEncoding) -> HuffmanField {
        let stored = stored_field(&Field::new("c", a.data_type().clone(), true), encoding).unwrap();
        huffman_field_of(&stored, &Location::default())
            .unwrap()
            .unwrap()
    }

    fn round_trip(a: &dyn Array, encoding: HuffmanEncoding) -> Vec<u8> {
        let bytes = compress_column(a, encoding, &gsst).unwrap();
        let field = field_for(a, encoding);
        let back = decompress_column(
            &bytes,
            a.len(),
            &field,
            &CpuBackend::new(),
            &Location::default(),
        )
        .unwrap();
        assert_eq!(back.as_ref(), a, "{}", encoding.name());
        back.to_data().validate_full().unwrap();
        bytes
    }

    fn encodings(strings: bool) -> Vec<HuffmanEncoding> {
        let mut v = Vec::new();
        for width in [SymbolWidth::U8, SymbolWidth::U16] {
            v.push(HuffmanEncoding { width, gsst: false });
            if strings {
                v.push(HuffmanEncoding { width, gsst: true });
            }
        }
        v
    }

    #[test]
    fn fixed_width_and_string_arrays_round_trip() {
        let ints = Int64Array::from_iter((0..5000).map(|i| (i % 9 != 4).then_some(i % 37 * 1000)));
        let floats = Float64Array::from_iter_values((0..3000).map(|i| (i % 100) as f64 * 0.25));
        let bytes = Int8Array::from_iter_values((0..1001).map(|i| (i % 5) as i8));
        let decimals = Decimal128Array::from_iter((0..2000).map(|i| (i % 3 != 0).then_some(i * 7)))
            .with_precision_and_scale(20, 2)
            .unwrap();
        let ts = TimestampMicrosecondArray::from_iter_values((0..700).map(|i| 1_700_000_000 + i))
            .with_timezone("UTC");
        let strings = StringArray::from_iter(
            (0..4000).map(|i| (i % 11 != 0).then(|| format!("carefully final {} ü", i % 17))),
        );
        let large = LargeStringArray::from_iter_values((0..300).map(|i| "x".repeat(i % 40)));
        let sliced = ints.slice(123, 2000);
        let all_null = Int64Array::from(vec![None::<i64>; 100]);
        let one = Int64Array::from(vec![42]);
        let empty = Int64Array::from(Vec::<i64>::new());
        let empty_strings = StringArray::from(vec![Some(""), None, Some("")]);
        let fixed: [&dyn Array; 8] = [
            &ints, &floats, &bytes, &decimals, &ts, &sliced, &all_null, &one,
        ];
        for a in fixed.into_iter().chain([&empty as &dyn Array]) {
            for e in encodings(false) {
                round_trip(a, e);
            }
        }
        for a in [&strings as &dyn Array, &large, &empty_strings] {
            for e in encodings(true) {
                round_trip(a, e);
            }
        }
        // A skewed column compresses.
        let n = round_trip(&ints, encodings(false)[0]).len();
        assert!(n * 2 < 5000 * 8, "{n}");
    }

    #[test]
    fn disagreements_with_the_field_or_batch_are_errors() {
        let a = Int64Array::from_iter_values(0..1000);
        let u8 = HuffmanEncoding {
            width: SymbolWidth::U8,
            gsst: false,
        };
        let u16 = HuffmanEncoding {
            width: SymbolWidth::U16,
            gsst: false,
        };
        let bytes = compress_column(&a, u8, &gsst).unwrap();
        let cpu = CpuBackend::new();
        let at = Location::file("t.arrow").with_column("c");
        let decode = |bytes: &[u8], rows: usize, field: &HuffmanField| {
            decompress_column(bytes, rows, field, &cpu, &at)
                .unwrap_err()
                .to_string()
        };
        // Wrong symbol width, wrong row count, wrong value type.
        let e = decode(&bytes, 1000, &field_for(&a, u16));
        assert!(e.contains("8-bit symbols in a column of 16-bit"), "{e}");
        assert!(decode(&bytes, 999, &field_for(&a, u8)).contains("rows"));
        let ints32 = arrow::array::Int32Array::from(vec![1]);
        assert!(decode(&bytes, 1000, &field_for(&ints32, u8)).contains("rows"));
        // Every cut is an error naming the column, never a panic.
        for cut in (0..bytes.len()).step_by(7) {
            let e = decode(&bytes[..cut], 1000, &field_for(&a, u8));
            assert!(
                e.contains("t.arrow") && e.contains("column c"),
                "{cut}: {e}"
            );
        }
        // A frame claiming more bytes than the column takes.
        let col = HuffmanColumn::from_bytes(&bytes, &at).unwrap();
        let mut frame = col.frame.to_vec();
        frame[8..16].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let long = HuffmanColumn {
            frame: &frame,
            ..col
        }
        .to_bytes();
        let e = decode(&long, 1000, &field_for(&a, u8));
        assert!(e.contains("t.arrow"), "{e}");
        // Flipped payload bits: a corrupt block, located.
        let mut flipped = bytes.clone();
        let n = flipped.len();
        for b in &mut flipped[n - 64..] {
            *b ^= 0x5a;
        }
        let e = decode(&flipped, 1000, &field_for(&a, u8));
        assert!(e.contains("column c"), "{e}");
    }

    #[test]
    fn header_rules() {
        let a = StringArray::from(vec!["a", "b"]);
        let e = HuffmanEncoding {
            width: SymbolWidth::U8,
            gsst: false,
        };
        let bytes = compress_column(&a, e, &gsst).unwrap();
        let at = Location::default();
        assert!(HuffmanColumn::from_bytes(&bytes, &at).is_ok());
        for (i, v) in [(4, 9u8), (6, 0x80), (7, 4), (7, 33)] {
            let mut b = bytes.clone();
            b[i] = v;
            assert!(
                HuffmanColumn::from_bytes(&b, &at).is_err(),
                "byte {i} = {v}"
            );
        }
        let mut b = bytes.clone();
        b.push(0);
        assert!(HuffmanColumn::from_bytes(&b, &at).is_err());
    }
}
