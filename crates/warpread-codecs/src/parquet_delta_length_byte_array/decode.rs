//! CPU reference decoder for DELTA_LENGTH_BYTE_ARRAY.

use crate::parquet_delta_binary_packed::{Failure, Reader};
use crate::plan::{ChunkStatus, StatusCode};

fn status((code, at, produced): Failure) -> ChunkStatus {
    ChunkStatus::failed(code, at as u64, produced as u64)
}

/// Where the bytes start: the end of the length stream.
#[inline]
pub fn suffix_start(input: &[u8]) -> Result<usize, Failure> {
    Reader::new(input, 32)?.end()
}

/// Decodes the first `out.len()` lengths and checks the bytes they need
/// are present.
pub fn lengths(input: &[u8], out: &mut [u32]) -> ChunkStatus {
    let mut r = match Reader::new(input, 32) {
        Ok(r) => r,
        Err(f) => return status(f),
    };
    let mut sum = 0u64;
    for (i, slot) in out.iter_mut().enumerate() {
        match r.next_value() {
            Ok(Some(v)) => {
                let v = v as u32 as i32;
                if v < 0 {
                    return ChunkStatus::failed(StatusCode::ValueOutOfRange, 0, i as u64);
                }
                *slot = v as u32;
                sum += v as u64;
            }
            Ok(None) => return ChunkStatus::failed(StatusCode::OutputShort, 0, i as u64),
            Err(f) => return status(f),
        }
    }
    match r.end() {
        Ok(end) if (input.len() - end) as u64 >= sum => ChunkStatus::ok(out.len() as u64),
        Ok(end) => ChunkStatus::failed(StatusCode::InputTruncated, end as u64, 0),
        Err(f) => status(f),
    }
}

/// Copies `out.len()` bytes of values (the sum of the lengths wanted).
#[inline]
pub fn data(input: &[u8], out: &mut [u8]) -> ChunkStatus {
    match suffix_start(input) {
        Ok(start) if input.len() - start >= out.len() => {
            out.copy_from_slice(&input[start..start + out.len()]);
            ChunkStatus::ok(out.len() as u64)
        }
        Ok(start) => ChunkStatus::failed(StatusCode::InputTruncated, start as u64, 0),
        Err(f) => status(f),
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode;
    use super::*;

    #[test]
    fn round_trips() {
        let vals: Vec<&[u8]> = vec![b"Hello", b"World", b"Foobar", b"ABCDEF", b""];
        let bytes = encode(&vals);
        let mut lens = [0u32; 5];
        assert!(lengths(&bytes, &mut lens).is_ok());
        assert_eq!(lens, [5, 5, 6, 6, 0]);
        let mut out = vec![0u8; 22];
        assert!(data(&bytes, &mut out).is_ok());
        assert_eq!(&out, b"HelloWorldFoobarABCDEF");
        assert!(!lengths(&bytes[..bytes.len() - 1], &mut lens).is_ok());
        let mut six = [0u32; 6];
        assert_eq!(lengths(&bytes, &mut six).status(), StatusCode::OutputShort);
    }
}
