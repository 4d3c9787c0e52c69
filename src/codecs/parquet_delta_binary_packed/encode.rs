//! A DELTA_BINARY_PACKED encoder for tests (block 128, 4 miniblocks).

use crate::codecs::varint::{write, zigzag};

const BLOCK: usize = 128;
const MINI: usize = 4;

/// Encodes `vals` (the low `bits` bits of each, `bits` 32 or 64).
pub fn encode(vals: &[u64], bits: u32) -> Vec<u8> {
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
    write(&mut out, BLOCK as u64);
    write(&mut out, MINI as u64);
    write(&mut out, vals.len() as u64);
    write(&mut out, zigzag(vals.first().map_or(0, |&v| sext(v))));
    let deltas: Vec<u64> = vals
        .windows(2)
        .map(|w| w[1].wrapping_sub(w[0]) & mask)
        .collect();
    for block in deltas.chunks(BLOCK) {
        let min = block.iter().map(|&d| sext(d)).min().unwrap_or(0);
        write(&mut out, zigzag(min));
        let rel: Vec<u64> = block
            .iter()
            .map(|&d| (d.wrapping_sub(min as u64)) & mask)
            .collect();
        let per = BLOCK / MINI;
        let minis: Vec<&[u64]> = rel.chunks(per).collect();
        let widths: Vec<u32> = (0..MINI)
            .map(|k| {
                minis.get(k).map_or(0, |m| {
                    m.iter().map(|&d| 64 - d.leading_zeros()).max().unwrap_or(0)
                })
            })
            .collect();
        out.extend(widths.iter().map(|&w| w as u8));
        for (m, &w) in minis.iter().zip(&widths) {
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
