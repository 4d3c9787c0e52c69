//! Bit widths and MSB-first bit packing as RLE v2 defines them.

/// The bit width a 5-bit header code stands for (DIRECT, PATCHED_BASE data
/// and patches, DELTA when the code is not 0).
#[inline]
pub fn decode_width(code: u8) -> u32 {
    match code & 0x1f {
        c @ 0..=23 => u32::from(c) + 1,
        24 => 26,
        25 => 28,
        26 => 30,
        27 => 32,
        28 => 40,
        29 => 48,
        30 => 56,
        _ => 64,
    }
}

/// The 5-bit code of an encodable width (inverse of [`decode_width`]).
pub fn encode_width(width: u32) -> u8 {
    match width {
        1..=24 => (width - 1) as u8,
        26 => 24,
        28 => 25,
        30 => 26,
        32 => 27,
        40 => 28,
        48 => 29,
        56 => 30,
        64 => 31,
        _ => panic!("width {width} is not encodable"),
    }
}

/// The smallest encodable width holding `bits` bits (the Java and C++
/// writers' "closest fixed bits"); readers size patch list entries with it.
pub fn closest_fixed(bits: u32) -> u32 {
    match bits {
        0 => 1,
        1..=24 => bits,
        25..=26 => 26,
        27..=28 => 28,
        29..=30 => 30,
        31..=32 => 32,
        33..=40 => 40,
        41..=48 => 48,
        49..=56 => 56,
        _ => 64,
    }
}

/// Bytes that `count` values of `width` bits occupy (packing ends on a byte).
#[inline]
pub fn packed_len(count: usize, width: u32) -> usize {
    (count * width as usize).div_ceil(8)
}

/// The `i`-th `width`-bit value (1..=64) of MSB-first packed `data`, which
/// must hold it.
#[inline]
pub fn unpack(data: &[u8], i: usize, width: u32) -> u64 {
    let start = i * width as usize;
    let first = start / 8;
    let skip = (start % 8) as u32;
    let nbytes = (skip + width).div_ceil(8) as usize;
    let mut acc = 0u128;
    for &b in &data[first..first + nbytes] {
        acc = acc << 8 | u128::from(b);
    }
    let total = nbytes as u32 * 8;
    let v = acc >> (total - skip - width);
    (v & ((1u128 << width) - 1)) as u64
}

/// Appends `values` packed MSB first at `width` bits (1..=64).
pub fn pack(out: &mut Vec<u8>, values: impl IntoIterator<Item = u64>, width: u32) {
    let mut acc = 0u128;
    let mut held = 0u32;
    for v in values {
        let v = if width == 64 {
            v
        } else {
            v & ((1u64 << width) - 1)
        };
        acc = acc << width | u128::from(v);
        held += width;
        while held >= 8 {
            out.push((acc >> (held - 8)) as u8);
            held -= 8;
        }
        acc &= (1u128 << held) - 1;
    }
    if held > 0 {
        out.push((acc << (8 - held)) as u8);
    }
}

/// Bits needed for `v` (0 for 0).
#[inline]
pub fn bits_of(v: u64) -> u32 {
    64 - v.leading_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_round_trip() {
        for code in 0..32u8 {
            assert_eq!(encode_width(decode_width(code)), code);
            assert_eq!(closest_fixed(decode_width(code)), decode_width(code));
        }
        assert_eq!(closest_fixed(25), 26);
        assert_eq!(closest_fixed(33), 40);
    }

    #[test]
    fn pack_and_unpack_every_width() {
        for width in 1..=64u32 {
            let vals: Vec<u64> = (0..37u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - width))
                .collect();
            let mut buf = Vec::new();
            pack(&mut buf, vals.iter().copied(), width);
            assert_eq!(buf.len(), packed_len(vals.len(), width));
            for (i, &v) in vals.iter().enumerate() {
                assert_eq!(unpack(&buf, i, width), v, "width {width} value {i}");
            }
        }
    }

    #[test]
    fn spec_direct_example_packs_msb_first() {
        // ORC spec: 23713, 43806, 57005, 48879 at 16 bits.
        let mut buf = Vec::new();
        pack(&mut buf, [23713, 43806, 57005, 48879], 16);
        assert_eq!(buf, [0x5c, 0xa1, 0xab, 0x1e, 0xde, 0xad, 0xbe, 0xef]);
    }
}
