//! Cutting one long hybrid stream into independent jobs at run boundaries.
//!
//! A writer may put a million dictionary indices or levels in one page
//! (pyarrow does for the taxi table's `store_and_fwd_flag`: one page per
//! row group), and one job per page gives such a page one warp: 13 ms of a
//! 65 ms read. Run headers say how many values and bytes each run holds, so
//! a walk over the headers alone (a few bytes per run) finds pieces that
//! decode on their own.

use super::decode::read_header;
use crate::plan::ChunkJob;
use crate::split::{PIECE_VALUES, split_runs};

/// Jobs cut after whole runs ([`split_runs`]'s pieces) that together decode
/// `values` values of `bit_width` bits from `input` exactly as one job
/// would. `None` — decode the stream as one job — for a stream of fewer
/// than twice [`PIECE_VALUES`] values, or one whose runs are malformed,
/// truncated, empty, or fewer than `values` (the single job then reports
/// the error at its place).
pub fn split(bit_width: u8, input: &[u8], values: u64) -> Option<Vec<ChunkJob>> {
    if values < 2 * PIECE_VALUES || bit_width > super::MAX_BIT_WIDTH {
        return None;
    }
    let bw = usize::from(bit_width);
    split_runs(input, values, |input, at, left| {
        let (h, n) = read_header(input, at).ok()?;
        let len = u64::from(h >> 1);
        let (bytes, count) = if h & 1 == 0 {
            (n + bw.div_ceil(8), len)
        } else {
            (
                n + usize::try_from(len).ok()?.checked_mul(bw)?,
                len.checked_mul(8)?,
            )
        };
        if at.checked_add(bytes)? > input.len() {
            return None;
        }
        // A last run may hold more than the values asked for (a padded
        // bit-packed group, a long RLE run): the job stops at its count.
        Some((bytes, count.min(left)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parquet_hybrid::{decode, encode};

    /// The pieces decode, one by one, to the single job's values.
    fn pieces_decode_alike(bit_width: u8, input: &[u8], values: u64) -> usize {
        let mut whole = vec![0u32; values as usize];
        assert!(decode(bit_width, input, &mut whole).is_ok());
        let Some(jobs) = split(bit_width, input, values) else {
            return 1;
        };
        let mut pieces = vec![u32::MAX; values as usize];
        let mut next = 0u64;
        for j in &jobs {
            assert_eq!(j.output_offset, next, "pieces are contiguous");
            next += j.values;
            let out = &mut pieces[j.output().start as usize..j.output().end as usize];
            let st = decode(
                bit_width,
                &input[j.input.start as usize..j.input.end as usize],
                out,
            );
            assert!(st.is_ok(), "{st:?}");
        }
        assert_eq!(next, values);
        assert_eq!(pieces, whole);
        jobs.len()
    }

    #[test]
    fn long_streams_split_into_pieces_that_decode_alike() {
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for bw in [1u8, 2, 3, 8, 13, 32] {
            let max = if bw == 32 { u32::MAX } else { (1u32 << bw) - 1 };
            // Long repeats between random stretches: both kinds of runs.
            let mut vals = Vec::new();
            while vals.len() < 300_000 {
                let v = rnd() & max;
                let n = if rnd() % 2 == 0 { 1 + rnd() % 5000 } else { 1 };
                vals.extend(std::iter::repeat_n(v, n as usize));
            }
            let input = encode(&vals, bw);
            let jobs = pieces_decode_alike(bw, &input, vals.len() as u64);
            assert!(jobs > 4, "bit width {bw}: {jobs} jobs");
            // Fewer values than the stream holds: the last piece stops short.
            pieces_decode_alike(bw, &input, vals.len() as u64 - 3);
        }
    }

    #[test]
    fn short_or_broken_streams_stay_whole() {
        let vals = vec![1u32; 1000];
        assert!(split(1, &encode(&vals, 1), 1000).is_none());
        let vals: Vec<u32> = (0..200_000u32).map(|i| i % 7).collect();
        let input = encode(&vals, 3);
        // Cut short, or asked for more than it holds.
        assert!(split(3, &input[..input.len() / 2], 200_000).is_none());
        assert!(split(3, &input, 300_000).is_none());
        // An empty run header (0 values) anywhere: one job reports it.
        let mut zero = vec![0u8, 0];
        zero.extend_from_slice(&input);
        assert!(split(3, &zero, 200_000).is_none());
        assert!(split(40, &input, 200_000).is_none());
    }
}
