//! PLAIN encoders for tests.

/// Booleans as LSB-first bits.
pub fn encode_bool(vals: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; vals.len().div_ceil(8)];
    for (i, &v) in vals.iter().enumerate() {
        out[i / 8] |= u8::from(v) << (i % 8);
    }
    out
}

/// Byte arrays, each after its 4-byte little-endian length.
pub fn encode_byte_array(vals: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in vals {
        out.extend_from_slice(&(v.len() as u32).to_le_bytes());
        out.extend_from_slice(v);
    }
    out
}
