//! Arrow string columns (Utf8, LargeUtf8) to and from GSST: the values
//! buffer is compressed into one GSST frame; offsets are kept as value
//! lengths in varints (one or two bytes for typical strings instead of four
//! or eight), the validity bitmap as it is. The container's byte layout is
//! in docs/gsst-format.md ("String column container").

use arrow::array::{
    Array, ArrayRef, GenericStringArray, LargeStringArray, OffsetSizeTrait, StringArray,
};
use arrow::datatypes::DataType;

use super::GsstParams;
use super::column_parts::{null_buffer, string_array, validity_bits, value_lengths};
use super::decompress_with;
use crate::error::{Error, Location, Result};
use crate::exec::Backend;

/// The container's first four bytes.
pub const COLUMN_MAGIC: [u8; 4] = *b"GSSC";
/// The container version.
pub const COLUMN_VERSION: u16 = 1;
/// Bytes of the container header.
pub const COLUMN_HEADER_BYTES: usize = 40;
const FLAG_LARGE: u8 = 1;
const FLAG_VALIDITY: u8 = 2;

/// A compressed string column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GsstColumn {
    /// Rows.
    pub rows: usize,
    /// True for LargeUtf8 (64-bit offsets), false for Utf8.
    pub large: bool,
    /// Each row's value length in bytes, as varints.
    pub lengths: Vec<u8>,
    /// The validity bitmap (LSB first, one bit a row), when any row is null.
    pub validity: Option<Vec<u8>>,
    /// The values, concatenated, as one GSST frame.
    pub frame: Vec<u8>,
}

fn malformed(detail: impl Into<String>) -> Error {
    Error::Format {
        format: "GSST column",
        location: Box::new(Location::default()),
        message: detail.into(),
    }
}

fn compress_generic<O: OffsetSizeTrait>(
    a: &GenericStringArray<O>,
    params: &GsstParams,
) -> GsstColumn {
    let offsets = a.value_offsets();
    let first = offsets[0].as_usize();
    let last = offsets[a.len()].as_usize();
    GsstColumn {
        rows: a.len(),
        large: O::IS_LARGE,
        lengths: value_lengths(a),
        validity: validity_bits(a.nulls(), a.len()),
        frame: super::compress(&a.value_data()[first..last], params),
    }
}

/// Compresses a Utf8 or LargeUtf8 array (sliced arrays too).
pub fn compress_strings(array: &dyn Array, params: &GsstParams) -> Result<GsstColumn> {
    match array.data_type() {
        DataType::Utf8 => Ok(compress_generic(
            array.as_any().downcast_ref::<StringArray>().expect("Utf8"),
            params,
        )),
        DataType::LargeUtf8 => Ok(compress_generic(
            array
                .as_any()
                .downcast_ref::<LargeStringArray>()
                .expect("LargeUtf8"),
            params,
        )),
        other => Err(Error::Unsupported(format!(
            "GSST compresses Utf8 and LargeUtf8 columns, not {other}"
        ))),
    }
}

/// Decompresses a column with a backend (the values frame runs as one GSST
/// stage) and rebuilds the Arrow array, checking lengths and UTF-8.
pub fn decompress_strings(col: &GsstColumn, backend: &dyn Backend) -> Result<ArrayRef> {
    // Offsets are sized from the row count: bound it by the lengths first.
    if col.rows > col.lengths.len() {
        return Err(malformed(format!(
            "{} rows but {} bytes of value lengths (at least one a row)",
            col.rows,
            col.lengths.len()
        )));
    }
    let values = decompress_with(backend, &col.frame, &Location::default())?;
    let values = values.into_arrow();
    let nulls = null_buffer(col.validity.as_deref(), col.rows).map_err(malformed)?;
    if col.large {
        string_array::<i64>(col.rows, &col.lengths, values, nulls)
    } else {
        string_array::<i32>(col.rows, &col.lengths, values, nulls)
    }
    .map_err(malformed)
}

impl GsstColumn {
    /// The container bytes: header, lengths, validity, frame.
    pub fn to_bytes(&self) -> Vec<u8> {
        let flag = |on: bool, bit: u8| if on { bit } else { 0 };
        let flags = flag(self.large, FLAG_LARGE) | flag(self.validity.is_some(), FLAG_VALIDITY);
        super::column_parts::container_bytes(
            &COLUMN_MAGIC,
            COLUMN_VERSION,
            (flags, 0),
            self.rows,
            [
                &self.lengths,
                self.validity.as_deref().unwrap_or(&[]),
                &self.frame,
            ],
        )
    }

    /// Parses container bytes; section sizes must add up exactly.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.len() < COLUMN_HEADER_BYTES || bytes[..4] != COLUMN_MAGIC {
            return Err(malformed("not a GSST string column"));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != COLUMN_VERSION {
            return Err(malformed(format!("version {version}")));
        }
        let (flags, reserved) = (bytes[6], bytes[7]);
        if flags & !(FLAG_LARGE | FLAG_VALIDITY) != 0 || reserved != 0 {
            return Err(malformed("unknown flags"));
        }
        let field = |i: usize| {
            let at = 8 + 8 * i;
            usize::try_from(u64::from_le_bytes(
                bytes[at..at + 8].try_into().expect("8 bytes"),
            ))
            .map_err(|_| malformed("section size overflows"))
        };
        let (rows, nlen, nval, nframe) = (field(0)?, field(1)?, field(2)?, field(3)?);
        let end = [nlen, nval, nframe]
            .into_iter()
            .try_fold(COLUMN_HEADER_BYTES, |a, n| a.checked_add(n))
            .filter(|&e| e == bytes.len())
            .ok_or_else(|| malformed("section sizes disagree with the container size"))?;
        debug_assert_eq!(end, bytes.len());
        let has_validity = flags & FLAG_VALIDITY != 0;
        if !has_validity && nval != 0 {
            return Err(malformed("validity bytes without the validity flag"));
        }
        if rows > nlen {
            return Err(malformed(format!(
                "{rows} rows but {nlen} bytes of value lengths (at least one a row)"
            )));
        }
        let l0 = COLUMN_HEADER_BYTES;
        let v0 = l0 + nlen;
        let f0 = v0 + nval;
        Ok(Self {
            rows,
            large: flags & FLAG_LARGE != 0,
            lengths: bytes[l0..v0].to_vec(),
            validity: has_validity.then(|| bytes[v0..f0].to_vec()),
            frame: bytes[f0..].to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::CpuBackend;
    use crate::gsst::{GsstLayout, TargetDevice};

    fn params() -> GsstParams {
        GsstParams::for_device(&TargetDevice::H100, 1 << 20, GsstLayout::Coalesced)
    }

    #[test]
    fn utf8_and_large_utf8_round_trip_with_nulls_and_slices() {
        let values: Vec<Option<String>> = (0..5000)
            .map(|i| (i % 7 != 3).then(|| format!("näive comment {} about {}", i % 13, i * 31)))
            .collect();
        let small = StringArray::from(values.clone());
        let large = LargeStringArray::from(values);
        let sliced = small.slice(100, 3000);
        for a in [&small as &dyn Array, &large, &sliced] {
            let col = compress_strings(a, &params()).unwrap();
            let col = GsstColumn::from_bytes(&col.to_bytes()).unwrap();
            let back = decompress_strings(&col, &CpuBackend::new()).unwrap();
            assert_eq!(back.data_type(), a.data_type());
            assert_eq!(back.len(), a.len());
            assert_eq!(
                back.to_data().nulls(),
                a.to_data().nulls().cloned().as_ref()
            );
            match a.data_type() {
                DataType::Utf8 => {
                    let (x, y) = (
                        back.as_any().downcast_ref::<StringArray>().unwrap(),
                        a.as_any().downcast_ref::<StringArray>().unwrap(),
                    );
                    assert!(x.iter().eq(y.iter()));
                }
                _ => {
                    let (x, y) = (
                        back.as_any().downcast_ref::<LargeStringArray>().unwrap(),
                        a.as_any().downcast_ref::<LargeStringArray>().unwrap(),
                    );
                    assert!(x.iter().eq(y.iter()));
                }
            }
        }
    }

    #[test]
    fn empty_and_non_string_columns() {
        let empty = StringArray::from(Vec::<&str>::new());
        let col = compress_strings(&empty, &params()).unwrap();
        let back = decompress_strings(&col, &CpuBackend::new()).unwrap();
        assert_eq!(back.len(), 0);
        let ints = arrow::array::Int32Array::from(vec![1, 2]);
        assert!(compress_strings(&ints, &params()).is_err());
    }

    #[test]
    fn damaged_containers_are_errors() {
        let a = StringArray::from(vec!["alpha", "beta", "gamma", "ü"]);
        let bytes = compress_strings(&a, &params()).unwrap().to_bytes();
        for cut in 0..bytes.len() {
            assert!(GsstColumn::from_bytes(&bytes[..cut]).is_err());
        }
        let mut col = GsstColumn::from_bytes(&bytes).unwrap();
        col.lengths[1] = 9; // "beta" now claims 9 bytes
        assert!(decompress_strings(&col, &CpuBackend::new()).is_err());
        let mut col = GsstColumn::from_bytes(&bytes).unwrap();
        col.rows = 5;
        assert!(decompress_strings(&col, &CpuBackend::new()).is_err());
        // A row count no lengths back: refused before offsets are sized.
        let mut col = GsstColumn::from_bytes(&bytes).unwrap();
        col.rows = 1 << 50;
        assert!(decompress_strings(&col, &CpuBackend::new()).is_err());
        let mut huge = bytes.clone();
        huge[8..16].copy_from_slice(&(1u64 << 50).to_le_bytes());
        let e = GsstColumn::from_bytes(&huge).unwrap_err().to_string();
        assert!(e.contains("rows"), "{e}");
    }
}
