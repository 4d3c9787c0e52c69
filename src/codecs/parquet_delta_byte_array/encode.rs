//! A DELTA_BYTE_ARRAY encoder for tests.

use crate::codecs::{parquet_delta_binary_packed, parquet_delta_length_byte_array};

/// Prefix lengths shared with the previous value, then the suffixes.
pub fn encode(vals: &[&[u8]]) -> Vec<u8> {
    let mut prefixes = Vec::with_capacity(vals.len());
    let mut suffixes: Vec<&[u8]> = Vec::with_capacity(vals.len());
    let mut prev: &[u8] = &[];
    for v in vals {
        let p = prev
            .iter()
            .zip(v.iter())
            .take_while(|(a, b)| a == b)
            .count();
        prefixes.push(p as u64);
        suffixes.push(&v[p..]);
        prev = v;
    }
    let mut out = parquet_delta_binary_packed::encode(&prefixes, 32);
    out.extend(parquet_delta_length_byte_array::encode(&suffixes));
    out
}
