//! A DELTA_LENGTH_BYTE_ARRAY encoder for tests.

use crate::codecs::parquet_delta_binary_packed;

/// Lengths as a delta stream, then the bytes.
pub fn encode(vals: &[&[u8]]) -> Vec<u8> {
    let lens: Vec<u64> = vals.iter().map(|v| v.len() as u64).collect();
    let mut out = parquet_delta_binary_packed::encode(&lens, 32);
    for v in vals {
        out.extend_from_slice(v);
    }
    out
}
