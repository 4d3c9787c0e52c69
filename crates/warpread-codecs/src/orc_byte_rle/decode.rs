//! CPU reference decoders for ORC byte RLE and boolean RLE.

use crate::plan::{ChunkStatus, StatusCode};

/// Decodes byte RLE into `out`, which must be filled exactly; input after
/// the last wanted byte's run is not examined, and that run may hold more
/// bytes than are wanted (ORC readers take what they need of a run).
pub fn decode(input: &[u8], out: &mut [u8]) -> ChunkStatus {
    let count = out.len();
    let mut pos = 0usize;
    let mut produced = 0usize;
    let fail =
        |code, at: usize, produced: usize| ChunkStatus::failed(code, at as u64, produced as u64);
    while produced < count {
        let run_at = pos;
        let Some(&header) = input.get(pos) else {
            return fail(StatusCode::OutputShort, run_at, produced);
        };
        let h = header as i8;
        if h >= 0 {
            let n = (h as usize + 3).min(count - produced);
            let Some(&byte) = input.get(pos + 1) else {
                return fail(StatusCode::InputTruncated, run_at, produced);
            };
            out[produced..produced + n].fill(byte);
            produced += n;
            pos += 2;
        } else {
            let n = (-(h as i16)) as usize;
            if input.len() - pos - 1 < n {
                return fail(StatusCode::InputTruncated, run_at, produced);
            }
            let take = n.min(count - produced);
            out[produced..produced + take].copy_from_slice(&input[pos + 1..pos + 1 + take]);
            produced += take;
            pos += 1 + n;
        }
    }
    ChunkStatus::ok(produced as u64)
}

/// Decodes boolean RLE into one byte (0 or 1) per boolean; `out.len()`
/// booleans are wanted. The last byte's unused low bits are ignored.
///
/// Statuses count booleans in `produced` and are those of [`decode`] over
/// `ceil(n / 8)` bytes.
pub fn decode_bools(input: &[u8], out: &mut [u8]) -> ChunkStatus {
    let nbytes = out.len().div_ceil(8);
    let mut bytes = vec![0u8; nbytes];
    let st = decode(input, &mut bytes);
    let n = out.len() as u64;
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = (bytes[i / 8] >> (7 - (i % 8))) & 1;
    }
    if st.is_ok() {
        ChunkStatus::ok(out.len() as u64)
    } else {
        ChunkStatus {
            produced: (st.produced * 8).min(n),
            ..st
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        // ORC spec: [0x61, 0x00] is 100 zeros; [0xfe, 0x44, 0x45] is 0x44, 0x45.
        let mut out = vec![9u8; 100];
        assert!(decode(&[0x61, 0x00], &mut out).is_ok());
        assert!(out.iter().all(|&b| b == 0));
        let mut out = [0u8; 2];
        assert!(decode(&[0xfe, 0x44, 0x45], &mut out).is_ok());
        assert_eq!(out, [0x44, 0x45]);
        // Booleans: [0xff, 0x80] is true followed by seven falses.
        let mut out = [9u8; 8];
        assert!(decode_bools(&[0xff, 0x80], &mut out).is_ok());
        assert_eq!(out, [1, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn errors() {
        let mut out = [0u8; 4];
        assert_eq!(
            decode(&[0x00], &mut out),
            ChunkStatus::failed(StatusCode::InputTruncated, 0, 0)
        );
        assert_eq!(
            decode(&[0xfe, 1], &mut out),
            ChunkStatus::failed(StatusCode::InputTruncated, 0, 0)
        );
        // A run longer than wanted is cut short.
        assert_eq!(decode(&[0x01, 7], &mut out[..3]), ChunkStatus::ok(3));
        assert_eq!(out[..3], [7, 7, 7]);
        assert_eq!(
            decode(&[0xff, 7], &mut out),
            ChunkStatus::failed(StatusCode::OutputShort, 2, 1)
        );
        let mut bools = [0u8; 20];
        assert_eq!(
            decode_bools(&[0xff, 0xaa], &mut bools),
            ChunkStatus::failed(StatusCode::OutputShort, 2, 8)
        );
    }
}
