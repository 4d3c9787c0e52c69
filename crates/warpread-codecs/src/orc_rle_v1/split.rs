//! Run boundaries of an RLE v1 stream, for [`crate::split`].

use crate::plan::ChunkJob;
use crate::split::{skip_varints, split_runs, varint_len};

/// Bytes and values of the run at `input[at..]`, without decoding values.
fn run_extent(input: &[u8], at: usize) -> Option<(usize, u64)> {
    let h = *input.get(at)? as i8;
    if h >= 0 {
        let base = varint_len(input, at + 2)?;
        Some((2 + base, h as u64 + 3))
    } else {
        let n = -(h as i16) as usize;
        let end = skip_varints(input, at + 1, n)?;
        Some((end - at, n as u64))
    }
}

/// Cuts an RLE v1 stream of `values` values into independent pieces at run
/// boundaries, or `None` to decode it as one job.
#[inline]
pub fn split(input: &[u8], values: u64) -> Option<Vec<ChunkJob>> {
    split_runs(input, values, |i, at, _| run_extent(i, at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orc_rle_v1::{decode, encode};

    #[test]
    fn pieces_decode_to_the_whole() {
        let vals: Vec<u32> = (0..200_000u32)
            .map(|i| {
                if i % 500 < 250 {
                    i / 9
                } else {
                    i.wrapping_mul(2_654_435_761)
                }
            })
            .collect();
        let enc = encode(&vals);
        let jobs = split(&enc, vals.len() as u64).expect("long stream splits");
        assert!(jobs.len() > 4);
        for j in &jobs {
            let mut out = vec![0u32; j.values as usize];
            let st = decode(&enc[j.input.start as usize..j.input.end as usize], &mut out);
            assert!(st.is_ok(), "{st}");
            let o = j.output_offset as usize;
            assert_eq!(out, vals[o..o + out.len()]);
        }
    }
}
