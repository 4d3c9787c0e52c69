//! A DELTA_BINARY_PACKED encoder for tests: the parquet writers' shape
//! (blocks of 128 values in 4 miniblocks) or any other.

use crate::varint::{write, zigzag};

const BLOCK: usize = 128;
const MINI: usize = 4;

/// The (values per block, miniblocks per block) shape [`encode`] writes.
pub const DEFAULT_SHAPE: (usize, usize) = (BLOCK, MINI);

/// Encodes `vals` (the low `bits` bits of each, `bits` 32 or 64) in blocks
/// of 128 values of 4 miniblocks.
pub fn encode(vals: &[u64], bits: u32) -> Vec<u8> {
    encode_shaped(vals, bits, BLOCK, MINI)
}

/// Encodes `vals` in blocks of `block` values of `minis` miniblocks each
/// (`block / minis` a multiple of 8), shapes other writers may choose.
pub fn encode_shaped(vals: &[u64], bits: u32, block: usize, minis: usize) -> Vec<u8> {
    let sext = |v: u64| -> i64 {
        if bits == 32 {
            v as u32 as i32 as i64
        } else {
            v as i64
        }
    };
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let mut out = Vec::new();
    write(&mut out, block as u64);
    write(&mut out, minis as u64);
    write(&mut out, vals.len() as u64);
    write(&mut out, zigzag(vals.first().map_or(0, |&v| sext(v))));
    let deltas: Vec<u64> = vals
        .windows(2)
        .map(|w| w[1].wrapping_sub(w[0]) & mask)
        .collect();
    let per = block / minis;
    for chunk in deltas.chunks(block) {
        let min = chunk.iter().map(|&d| sext(d)).min().unwrap_or(0);
        write(&mut out, zigzag(min));
        let rel: Vec<u64> = chunk
            .iter()
            .map(|&d| d.wrapping_sub(min as u64) & mask)
            .collect();
        let parts: Vec<&[u64]> = rel.chunks(per).collect();
        let widths: Vec<u32> = (0..minis)
            .map(|k| {
                parts.get(k).map_or(0, |m| {
                    m.iter().map(|&d| 64 - d.leading_zeros()).max().unwrap_or(0)
                })
            })
            .collect();
        out.extend(widths.iter().map(|&w| w as u8));
        for (m, &w) in parts.iter().zip(&widths) {
            let mut bytes = vec![0u8; per * w as usize / 8];
            for (i, &d) in m.iter().enumerate() {
                for b in 0..w as usize {
                    if (d >> b) & 1 == 1 {
                        let at = i * w as usize + b;
                        bytes[at / 8] |= 1 << (at % 8);
                    }
                }
            }
            out.extend_from_slice(&bytes);
        }
    }
    out
}
