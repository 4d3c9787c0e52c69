//! A BYTE_STREAM_SPLIT encoder for tests.

/// Splits `values` (a whole number of `width`-byte values) into streams.
pub fn encode(values: &[u8], width: usize) -> Vec<u8> {
    let n = values.len() / width;
    let mut out = vec![0u8; n * width];
    for i in 0..n {
        for b in 0..width {
            out[b * n + i] = values[i * width + b];
        }
    }
    out
}
