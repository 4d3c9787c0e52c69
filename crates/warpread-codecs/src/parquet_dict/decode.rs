//! CPU reference gather.

use crate::plan::{ChunkStatus, StatusCode};

/// Gathers `out.len() / width` values. `InputTruncated` when the input is
/// shorter than its header says; `ValueOutOfRange` (at the index's byte
/// offset) for an index past the dictionary.
pub fn decode(width: usize, input: &[u8], out: &mut [u8]) -> ChunkStatus {
    let (n, dict_end) = match dictionary(input, width) {
        Ok(d) => d,
        Err(st) => return st,
    };
    let count = out.len() / width.max(1);
    if input.len() < dict_end || (input.len() - dict_end) / 4 < count {
        return ChunkStatus::failed(StatusCode::InputTruncated, 0, 0);
    }
    let dict = &input[4..dict_end];
    for i in 0..count {
        let at = dict_end + 4 * i;
        let k = u32::from_le_bytes(input[at..at + 4].try_into().expect("4 bytes")) as usize;
        if k >= n {
            return ChunkStatus::failed(StatusCode::ValueOutOfRange, at as u64, i as u64);
        }
        out[i * width..(i + 1) * width].copy_from_slice(&dict[k * width..(k + 1) * width]);
    }
    ChunkStatus::ok(count as u64)
}

/// A job's dictionary header: the entry count `n` and where the `n *
/// width` dictionary bytes after it end. `InputTruncated` without the
/// count, `InputCorrupt` when the size overflows.
pub(super) fn dictionary(input: &[u8], width: usize) -> Result<(usize, usize), ChunkStatus> {
    let Some(head) = input.get(..4) else {
        return Err(ChunkStatus::failed(StatusCode::InputTruncated, 0, 0));
    };
    let n = u32::from_le_bytes(head.try_into().expect("4 bytes")) as usize;
    let end = n.checked_mul(width).and_then(|b| b.checked_add(4));
    end.map(|e| (n, e))
        .ok_or_else(|| ChunkStatus::failed(StatusCode::InputCorrupt, 0, 0))
}

/// Bytes of the job input [`write_input`] writes.
#[inline]
pub fn input_len(dict: &[u8], indices: usize) -> usize {
    4 + dict.len() + 4 * indices
}

/// Writes a job input from a dictionary of `width`-byte values and indices
/// into `out`, which is [`input_len`] bytes long.
pub fn write_input(dict: &[u8], width: usize, indices: &[u32], out: &mut [u8]) {
    assert_eq!(
        out.len(),
        input_len(dict, indices.len()),
        "gather input size"
    );
    let (head, rest) = out.split_at_mut(4);
    head.copy_from_slice(&((dict.len() / width.max(1)) as u32).to_le_bytes());
    let (d, idx) = rest.split_at_mut(dict.len());
    d.copy_from_slice(dict);
    if cfg!(target_endian = "little") {
        // SAFETY: u32 has no padding; on a little-endian target its memory
        // is the wire form, so the indices go over in one copy (this runs
        // over hundreds of MiB of indices).
        idx.copy_from_slice(unsafe {
            std::slice::from_raw_parts(indices.as_ptr().cast::<u8>(), 4 * indices.len())
        });
    } else {
        for (o, i) in idx.chunks_exact_mut(4).zip(indices) {
            o.copy_from_slice(&i.to_le_bytes());
        }
    }
}

/// Builds a job input from a dictionary of `width`-byte values and indices.
#[inline]
pub fn encode_input(dict: &[u8], width: usize, indices: &[u32], out: &mut Vec<u8>) {
    let at = out.len();
    out.resize(at + input_len(dict, indices.len()), 0);
    write_input(dict, width, indices, &mut out[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_and_rejects_bad_indices() {
        let mut input = Vec::new();
        encode_input(&[1, 0, 2, 0, 3, 0], 2, &[2, 0, 1, 2], &mut input);
        let mut out = [0u8; 8];
        assert!(decode(2, &input, &mut out).is_ok());
        assert_eq!(out, [3, 0, 1, 0, 2, 0, 3, 0]);
        let mut bad = Vec::new();
        encode_input(&[1, 0], 2, &[0, 1], &mut bad);
        let mut out = [0u8; 4];
        let st = decode(2, &bad, &mut out);
        assert_eq!((st.status(), st.produced), (StatusCode::ValueOutOfRange, 1));
        assert_eq!(
            decode(2, &bad[..7], &mut out).status(),
            StatusCode::InputTruncated
        );
    }
}
