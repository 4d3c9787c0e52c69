//! A DELTA_LENGTH_BYTE_ARRAY encoder for tests.

use crate::parquet_delta_binary_packed;

/// Lengths as a delta stream, then the bytes.
pub fn encode(vals: &[&[u8]]) -> Vec<u8> {
    encode_shaped(vals, parquet_delta_binary_packed::DEFAULT_SHAPE)
}

/// [`encode`] with the length stream in blocks of `shape` (values per
/// block, miniblocks per block), shapes other writers may choose.
pub fn encode_shaped(vals: &[&[u8]], shape: (usize, usize)) -> Vec<u8> {
    let lens: Vec<u64> = vals.iter().map(|v| v.len() as u64).collect();
    let mut out = parquet_delta_binary_packed::encode_shaped(&lens, 32, shape.0, shape.1);
    for v in vals {
        out.extend_from_slice(v);
    }
    out
}
