//! CPU reference decoder for BYTE_STREAM_SPLIT.

use crate::plan::{ChunkStatus, StatusCode};

/// Reassembles the first `out.len() / width` values of the page `input`.
/// `InputCorrupt` when the page is not a whole number of values,
/// `OutputShort` when it holds fewer values than asked.
pub fn decode(width: usize, input: &[u8], out: &mut [u8]) -> ChunkStatus {
    if width == 0 || !input.len().is_multiple_of(width) {
        return ChunkStatus::failed(StatusCode::InputCorrupt, 0, 0);
    }
    let stride = input.len() / width;
    let n = out.len() / width;
    if n > stride {
        return ChunkStatus::failed(StatusCode::OutputShort, input.len() as u64, 0);
    }
    for b in 0..width {
        let stream = &input[b * stride..b * stride + n];
        for (i, &byte) in stream.iter().enumerate() {
            out[i * width + b] = byte;
        }
    }
    ChunkStatus::ok(n as u64)
}

#[cfg(test)]
mod tests {
    use super::super::encode;
    use super::*;

    #[test]
    fn round_trips_and_rejects() {
        let vals: Vec<u8> = (0..60u8).collect();
        for width in [2usize, 3, 4, 8, 12] {
            let vals = &vals[..vals.len() / width * width];
            let bytes = encode(vals, width);
            let mut out = vec![0u8; vals.len()];
            assert!(decode(width, &bytes, &mut out).is_ok());
            assert_eq!(out, vals);
        }
        let mut out = [0u8; 8];
        assert_eq!(
            decode(4, &[0; 7], &mut out).status(),
            StatusCode::InputCorrupt
        );
        assert_eq!(
            decode(4, &[0; 4], &mut out).status(),
            StatusCode::OutputShort
        );
    }
}
