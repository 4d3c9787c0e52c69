//! What a column container keeps beside its compressed values: each row's
//! value length as a varint (string columns) and the validity bitmap, LSB
//! first. Shared by the GSST and the Huffman column containers so that both
//! write and check them alike; errors are plain messages that each
//! container wraps in its own `Error::Format`.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, GenericStringArray, OffsetSizeTrait};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};

use crate::codecs::varint;
use crate::plan::IntType;

/// Each row's value length in bytes, as unsigned LEB128 varints (one or two
/// bytes for typical strings instead of four or eight of offsets).
pub(super) fn value_lengths<O: OffsetSizeTrait>(a: &GenericStringArray<O>) -> Vec<u8> {
    let mut lengths = Vec::with_capacity(a.len() * 2);
    for w in a.value_offsets().windows(2) {
        varint::write(&mut lengths, (w[1] - w[0]).as_usize() as u64);
    }
    lengths
}

/// The validity bitmap of `rows` rows (bit set = valid), or `None` when no
/// row is null: a column without nulls stores no bitmap.
pub(super) fn validity_bits(nulls: Option<&NullBuffer>, rows: usize) -> Option<Vec<u8>> {
    nulls.filter(|n| n.null_count() > 0).map(|n| {
        let mut bits = vec![0u8; rows.div_ceil(8)];
        for (i, valid) in n.iter().enumerate() {
            if valid {
                bits[i / 8] |= 1 << (i % 8);
            }
        }
        bits
    })
}

/// The null buffer of a stored bitmap, which must be exactly
/// `ceil(rows / 8)` bytes.
pub(super) fn null_buffer(bits: Option<&[u8]>, rows: usize) -> Result<Option<NullBuffer>, String> {
    let Some(bits) = bits else {
        return Ok(None);
    };
    if bits.len() != rows.div_ceil(8) {
        return Err("validity bitmap size disagrees with the rows".into());
    }
    Ok(Some(NullBuffer::new(BooleanBuffer::new(
        Buffer::from(bits),
        0,
        rows,
    ))))
}

/// Reads `rows` varint lengths, checking that they fill `lengths` exactly;
/// returns each row's length.
fn read_lengths(lengths: &[u8], rows: usize) -> Result<Vec<u64>, String> {
    // A varint takes at least one byte: a row count the lengths cannot
    // back is refused before anything is sized from it.
    if rows > lengths.len() {
        return Err(format!(
            "{rows} rows but {} bytes of value lengths (at least one a row)",
            lengths.len()
        ));
    }
    let mut out = Vec::with_capacity(rows);
    let mut at = 0usize;
    for _ in 0..rows {
        let (len, n) = varint::read(lengths, at, IntType::U64)
            .map_err(|s| format!("length varint at byte {at}: {s:?}"))?;
        at += n;
        out.push(len);
    }
    if at != lengths.len() {
        return Err("value lengths disagree with the row count or the values".into());
    }
    Ok(out)
}

/// The sum of `rows` varint lengths (what the values must decode to), so
/// that a frame's size is checked before it is decoded.
pub(super) fn lengths_total(lengths: &[u8], rows: usize) -> Result<u64, String> {
    read_lengths(lengths, rows)?
        .into_iter()
        .try_fold(0u64, u64::checked_add)
        .ok_or_else(|| "value lengths overflow".into())
}

/// A string array of `rows` rows from their varint `lengths` and the
/// concatenated `values`, which the lengths must fill exactly; checks that
/// offsets fit `O` and that the values are UTF-8.
pub(super) fn string_array<O: OffsetSizeTrait>(
    rows: usize,
    lengths: &[u8],
    values: Buffer,
    nulls: Option<NullBuffer>,
) -> Result<ArrayRef, String> {
    let mut offsets = Vec::with_capacity(rows + 1);
    let mut total = 0usize;
    offsets.push(O::usize_as(0));
    for len in read_lengths(lengths, rows)? {
        total = usize::try_from(len)
            .ok()
            .and_then(|l| total.checked_add(l))
            .filter(|&t| t <= values.len())
            .ok_or("value lengths exceed the decompressed values")?;
        offsets.push(O::from_usize(total).ok_or("values too long for 32-bit offsets")?);
    }
    if total != values.len() {
        return Err("value lengths disagree with the row count or the values".into());
    }
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    let array =
        GenericStringArray::<O>::try_new(offsets, values, nulls).map_err(|e| e.to_string())?;
    Ok(Arc::new(array))
}

/// A column container's bytes, as the GSST and Huffman containers lay
/// them out: `magic`, the little-endian `version`, a flags byte and a
/// width byte, the row count and the three section sizes as u64, then the
/// sections (varint lengths, validity bits, frame).
pub(super) fn container_bytes(
    magic: &[u8; 4],
    version: u16,
    (flags, width): (u8, u8),
    rows: usize,
    [lengths, validity, frame]: [&[u8]; 3],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + 2 + 2 + 32 + lengths.len() + validity.len() + frame.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(&version.to_le_bytes());
    out.push(flags);
    out.push(width);
    for n in [rows, lengths.len(), validity.len(), frame.len()] {
        out.extend_from_slice(&(n as u64).to_le_bytes());
    }
    out.extend_from_slice(lengths);
    out.extend_from_slice(validity);
    out.extend_from_slice(frame);
    out
}

#[cfg(test)]
mod tests {
    use arrow::array::StringArray;

    use super::*;

    #[test]
    fn lengths_and_validity_round_trip() {
        let a = StringArray::from(vec![Some("ab"), None, Some(""), Some("çé")]);
        let lengths = value_lengths(&a);
        assert_eq!(lengths, [2, 0, 0, 4]);
        assert_eq!(lengths_total(&lengths, 4), Ok(6));
        let bits = validity_bits(a.nulls(), 4).unwrap();
        assert_eq!(bits, [0b1101]);
        let nulls = null_buffer(Some(&bits), 4).unwrap();
        let values = Buffer::from(a.value_data());
        let back = string_array::<i32>(4, &lengths, values, nulls).unwrap();
        assert_eq!(back.as_ref(), &a as &dyn Array);
        assert_eq!(validity_bits(None, 4), None);
    }

    #[test]
    fn inconsistent_parts_are_errors() {
        assert!(lengths_total(&[2, 0], 3).unwrap_err().contains("3 rows"));
        assert!(lengths_total(&[2, 0, 1], 2).is_err());
        assert!(lengths_total(&[0x80], 1).is_err());
        assert!(null_buffer(Some(&[1, 2]), 8).is_err());
        let values = Buffer::from(&b"abc"[..]);
        assert!(string_array::<i32>(2, &[1, 1], values.clone(), None).is_err());
        assert!(string_array::<i32>(2, &[1, 5], values.clone(), None).is_err());
        let bad_utf8 = Buffer::from(&[0xffu8][..]);
        assert!(string_array::<i64>(1, &[1], bad_utf8, None).is_err());
    }
}
