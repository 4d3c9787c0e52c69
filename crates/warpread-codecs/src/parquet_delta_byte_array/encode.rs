//! A DELTA_BYTE_ARRAY encoder for tests.

use crate::{parquet_delta_binary_packed, parquet_delta_length_byte_array};

/// Prefix lengths shared with the previous value, then the suffixes.
pub fn encode(vals: &[&[u8]]) -> Vec<u8> {
    let shape = parquet_delta_binary_packed::DEFAULT_SHAPE;
    encode_shaped(vals, shape, shape)
}

/// [`encode`] with the prefix-length and suffix-length streams in blocks of
/// the given shapes (values per block, miniblocks per block).
pub fn encode_shaped(
    vals: &[&[u8]],
    prefix_shape: (usize, usize),
    suffix_shape: (usize, usize),
) -> Vec<u8> {
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
    let mut out =
        parquet_delta_binary_packed::encode_shaped(&prefixes, 32, prefix_shape.0, prefix_shape.1);
    out.extend(parquet_delta_length_byte_array::encode_shaped(
        &suffixes,
        suffix_shape,
    ));
    out
}
