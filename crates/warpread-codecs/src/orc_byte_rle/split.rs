//! Run boundaries of byte RLE and boolean RLE streams, for
//! [`crate::split`].

use crate::plan::ChunkJob;
use crate::split::split_runs;

/// Bytes of input and of output of the run at `input[at..]`.
fn run_extent(input: &[u8], at: usize) -> Option<(usize, u64)> {
    let h = *input.get(at)? as i8;
    let (bytes, n) = if h >= 0 {
        (2, h as u64 + 3)
    } else {
        let n = -(h as i16) as usize;
        (1 + n, n as u64)
    };
    (at + bytes <= input.len()).then_some((bytes, n))
}

/// Cuts a byte RLE stream of `values` bytes into independent pieces at run
/// boundaries, or `None` to decode it as one job.
#[inline]
pub fn split(input: &[u8], values: u64) -> Option<Vec<ChunkJob>> {
    split_runs(input, values, |i, at, _| run_extent(i, at))
}

/// Cuts a boolean RLE stream of `values` booleans: pieces of whole bytes
/// (8 booleans each), the last one holding the remainder.
#[inline]
pub fn split_bools(input: &[u8], values: u64) -> Option<Vec<ChunkJob>> {
    let mut jobs = split_runs(input, values.div_ceil(8), |i, at, _| run_extent(i, at))?;
    for j in &mut jobs {
        j.output_offset *= 8;
        j.values = (j.values * 8).min(values - j.output_offset);
    }
    Some(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orc_byte_rle::{decode_bools, encode_bools};

    #[test]
    fn bool_pieces_decode_to_the_whole() {
        let vals: Vec<u8> = (0..1_000_003u32)
            .map(|i| u8::from(i % 7 == 0 || (i / 1000) % 3 == 0))
            .collect();
        let enc = encode_bools(&vals);
        let jobs = split_bools(&enc, vals.len() as u64).expect("long stream splits");
        assert!(jobs.len() > 2);
        let mut total = 0;
        for j in &jobs {
            let mut out = vec![0u8; j.values as usize];
            let st = decode_bools(&enc[j.input.start as usize..j.input.end as usize], &mut out);
            assert!(st.is_ok(), "{st}");
            let o = j.output_offset as usize;
            assert_eq!(out, vals[o..o + out.len()]);
            total += j.values;
        }
        assert_eq!(total, vals.len() as u64);
    }
}
