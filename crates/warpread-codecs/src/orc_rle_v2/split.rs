//! Run boundaries of an RLE v2 stream, for [`crate::split`].

use super::bits::{closest_fixed, decode_width, packed_len};
use crate::plan::ChunkJob;
use crate::split::{split_runs, varint_len};

/// Bytes and values of the run at `input[at..]`, without decoding values.
fn run_extent(input: &[u8], at: usize) -> Option<(usize, u64)> {
    let h = input.get(at..)?;
    let h0 = *h.first()?;
    let long_len = || Some(((usize::from(h0) & 1) << 8 | usize::from(*h.get(1)?)) + 1);
    let (bytes, n) = match h0 >> 6 {
        0 => (1 + usize::from((h0 >> 3) & 7) + 1, usize::from(h0 & 7) + 3),
        1 => {
            let n = long_len()?;
            (2 + packed_len(n, decode_width(h0 >> 1)), n)
        }
        2 => {
            let n = long_len()?;
            let (h2, h3) = (*h.get(2)?, *h.get(3)?);
            let entry = closest_fixed(u32::from(h3 >> 5) + 1 + decode_width(h2));
            let list = packed_len(usize::from(h3 & 0x1f), entry);
            let base = usize::from(h2 >> 5) + 1;
            (4 + base + packed_len(n, decode_width(h0 >> 1)) + list, n)
        }
        _ => {
            let n = long_len()?;
            let code = (h0 >> 1) & 0x1f;
            let base = varint_len(input, at + 2)?;
            let step = varint_len(input, at + 2 + base)?;
            let deltas = if code == 0 {
                0
            } else {
                packed_len(n.checked_sub(2)?, decode_width(code))
            };
            (2 + base + step + deltas, n)
        }
    };
    (at + bytes <= input.len()).then_some((bytes, n as u64))
}

/// Cuts an RLE v2 stream of `values` values into independent pieces at run
/// boundaries, or `None` to decode it as one job.
#[inline]
pub fn split(input: &[u8], values: u64) -> Option<Vec<ChunkJob>> {
    split_runs(input, values, |i, at, _| run_extent(i, at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orc_rle_v2::{decode, encode};

    #[test]
    fn pieces_decode_to_the_whole() {
        let vals: Vec<i64> = (0..300_000i64)
            .map(|i| match i % 3000 {
                0..=999 => i / 50,
                1000..=1999 => (i * 7919) % 100_000,
                _ => {
                    if i % 97 == 0 {
                        1 << 40
                    } else {
                        i % 1000
                    }
                }
            })
            .collect();
        let enc = encode(&vals);
        let jobs = split(&enc, vals.len() as u64).expect("long stream splits");
        assert!(jobs.len() > 4);
        for j in &jobs {
            let mut out = vec![0i64; j.values as usize];
            let st = decode(&enc[j.input.start as usize..j.input.end as usize], &mut out);
            assert!(st.is_ok(), "{st}");
            let o = j.output_offset as usize;
            assert_eq!(out, vals[o..o + out.len()]);
        }
    }
}
