//! CPU reference decoders for PLAIN.

use crate::plan::{ChunkStatus, StatusCode};

fn fail(code: StatusCode, at: usize, produced: usize) -> ChunkStatus {
    ChunkStatus::failed(code, at as u64, produced as u64)
}

/// Copies `out.len() / width` values of `width` bytes.
#[inline]
pub fn decode_fixed(width: usize, input: &[u8], out: &mut [u8]) -> ChunkStatus {
    let n = out.len() / width.max(1);
    if input.len() < out.len() {
        let whole = input.len() / width.max(1);
        return fail(StatusCode::InputTruncated, whole * width, whole);
    }
    out.copy_from_slice(&input[..out.len()]);
    ChunkStatus::ok(n as u64)
}

/// Unpacks `out.len()` booleans into bytes 0 or 1.
#[inline]
pub fn decode_bool(input: &[u8], out: &mut [u8]) -> ChunkStatus {
    let need = out.len().div_ceil(8);
    if input.len() < need {
        return fail(StatusCode::InputTruncated, input.len(), input.len() * 8);
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = (input[i / 8] >> (i % 8)) & 1;
    }
    ChunkStatus::ok(out.len() as u64)
}

/// Walks `out.len()` length-prefixed values and records their lengths.
pub fn byte_array_lengths(input: &[u8], out: &mut [u32]) -> ChunkStatus {
    let mut pos = 0usize;
    for (i, o) in out.iter_mut().enumerate() {
        let Some(len) = input.get(pos..pos + 4) else {
            return fail(
                if pos >= input.len() {
                    StatusCode::OutputShort
                } else {
                    StatusCode::InputTruncated
                },
                pos,
                i,
            );
        };
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes"));
        if (input.len() - pos - 4) < len as usize {
            return fail(StatusCode::InputTruncated, pos, i);
        }
        *o = len;
        pos += 4 + len as usize;
    }
    ChunkStatus::ok(out.len() as u64)
}

/// Copies the bytes of length-prefixed values until `out` is full; `out`
/// must end exactly at a value's end.
pub fn byte_array_data(input: &[u8], out: &mut [u8]) -> ChunkStatus {
    let (mut pos, mut written) = (0usize, 0usize);
    while written < out.len() {
        let Some(len) = input.get(pos..pos + 4) else {
            return fail(StatusCode::OutputShort, pos, written);
        };
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        if input.len() - pos - 4 < len {
            return fail(StatusCode::InputTruncated, pos, written);
        }
        if out.len() - written < len {
            return fail(StatusCode::OutputOverflow, pos, written);
        }
        out[written..written + len].copy_from_slice(&input[pos + 4..pos + 4 + len]);
        written += len;
        pos += 4 + len;
    }
    ChunkStatus::ok(written as u64)
}

#[cfg(test)]
mod tests {
    use super::super::{encode_bool, encode_byte_array};
    use super::*;

    #[test]
    fn fixed_and_bool() {
        let mut out = [0u8; 8];
        assert!(decode_fixed(4, &[1, 0, 0, 0, 2, 0, 0, 0, 9], &mut out).is_ok());
        assert_eq!(out, [1, 0, 0, 0, 2, 0, 0, 0]);
        let st = decode_fixed(4, &[1, 0, 0, 0, 2], &mut out);
        assert_eq!((st.status(), st.produced), (StatusCode::InputTruncated, 1));
        let bools = [
            true, false, true, true, false, false, false, true, true, false,
        ];
        let bytes = encode_bool(&bools);
        let mut out = [0u8; 10];
        assert!(decode_bool(&bytes, &mut out).is_ok());
        assert_eq!(out.map(|b| b == 1), bools);
        assert!(!decode_bool(&bytes[..1], &mut out).is_ok());
    }

    #[test]
    fn byte_arrays_in_two_passes() {
        let vals: Vec<&[u8]> = vec![b"ab", b"", b"cde", b"f"];
        let bytes = encode_byte_array(&vals);
        let mut lens = [0u32; 4];
        assert!(byte_array_lengths(&bytes, &mut lens).is_ok());
        assert_eq!(lens, [2, 0, 3, 1]);
        let mut data = [0u8; 6];
        assert!(byte_array_data(&bytes, &mut data).is_ok());
        assert_eq!(&data, b"abcdef");
        let mut lens5 = [0u32; 5];
        assert_eq!(
            byte_array_lengths(&bytes, &mut lens5).status(),
            StatusCode::OutputShort
        );
        assert_eq!(
            byte_array_lengths(&bytes[..bytes.len() - 1], &mut lens).status(),
            StatusCode::InputTruncated
        );
        let mut data4 = [0u8; 4];
        assert_eq!(
            byte_array_data(&bytes, &mut data4).status(),
            StatusCode::OutputOverflow
        );
        let mut hostile = 0xffff_fff0u32.to_le_bytes().to_vec();
        hostile.push(1);
        assert_eq!(
            byte_array_lengths(&hostile, &mut lens).status(),
            StatusCode::InputTruncated
        );
    }
}
