//! Cutting one long run-length stream into independent chunk jobs at run
//! boundaries, so the runs of a single ORC stripe stream decode in parallel
//! whether or not the file has a row index (cuDF splits only at row-index
//! entries). A CPU pass reads run headers only — a few bytes per run — and
//! the expensive expansion is left to the backend, one job per piece.

use crate::plan::ChunkJob;

/// Input bytes after which a piece is closed.
pub const PIECE_BYTES: usize = 4096;
/// Output values after which a piece is closed.
pub const PIECE_VALUES: u64 = 32 * 1024;

/// Walks `input` run by run with `next_run(input, at, left) -> (bytes,
/// values)` (`left`: the values still to produce, for formats whose last run
/// may hold more than asked) and cuts pieces of about [`PIECE_BYTES`] /
/// [`PIECE_VALUES`]. Returns
/// `None` — decode the stream as one job — when the stream is short, a run
/// is malformed, or the runs do not add up to exactly `values` (the single
/// job then reports the error at its exact place).
pub fn split_runs(
    input: &[u8],
    values: u64,
    next_run: impl Fn(&[u8], usize, u64) -> Option<(usize, u64)>,
) -> Option<Vec<ChunkJob>> {
    if input.len() < 2 * PIECE_BYTES && values < 2 * PIECE_VALUES {
        return None;
    }
    let mut jobs = Vec::new();
    let (mut at, mut produced) = (0usize, 0u64);
    let (mut piece_at, mut piece_values) = (0usize, 0u64);
    while produced < values {
        let (bytes, n) = next_run(input, at, values - produced)?;
        if bytes == 0 || n == 0 || n > values - produced {
            return None;
        }
        at += bytes;
        produced += n;
        piece_values += n;
        if at - piece_at >= PIECE_BYTES || piece_values >= PIECE_VALUES {
            jobs.push(ChunkJob {
                input: piece_at as u64..at as u64,
                output_offset: produced - piece_values,
                values: piece_values,
                aux: 0,
            });
            piece_at = at;
            piece_values = 0;
        }
    }
    if piece_values > 0 {
        jobs.push(ChunkJob {
            input: piece_at as u64..at as u64,
            output_offset: produced - piece_values,
            values: piece_values,
            aux: 0,
        });
    }
    (jobs.len() > 1).then_some(jobs)
}

/// Bytes of the varint at `input[at..]`, if it ends within 10 bytes.
#[inline]
pub fn varint_len(input: &[u8], at: usize) -> Option<usize> {
    let tail = input.get(at..)?;
    tail.iter().take(10).position(|&b| b < 0x80).map(|i| i + 1)
}

/// The position after `n` consecutive varints from `at`, each at most 10
/// bytes (as [`varint_len`] requires), or `None`. Reads eight bytes at a
/// time: the terminators (bytes below 0x80) of a word are counted at once,
/// and literal runs of RLE v1 are most of what a run-boundary walk reads.
pub fn skip_varints(input: &[u8], mut at: usize, mut n: usize) -> Option<usize> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Continuation bytes of the varint in progress.
    let mut open = 0usize;
    while n > 0 {
        let Some(word) = input.get(at..at + 8) else {
            let b = *input.get(at)?;
            at += 1;
            if b < 0x80 {
                n -= 1;
                open = 0;
            } else {
                open += 1;
                if open > 9 {
                    return None;
                }
            }
            continue;
        };
        let mut term = !u64::from_le_bytes(word.try_into().expect("eight bytes")) & HIGH;
        if term == 0 {
            open += 8;
            if open > 9 {
                return None;
            }
            at += 8;
            continue;
        }
        // Gaps between terminators inside a word are at most 7 bytes: only
        // the first can make a varint too long.
        if open + term.trailing_zeros() as usize / 8 > 9 {
            return None;
        }
        let count = term.count_ones() as usize;
        if count < n {
            n -= count;
            open = term.leading_zeros() as usize / 8;
            at += 8;
            continue;
        }
        for _ in 1..n {
            term &= term - 1;
        }
        return Some(at + term.trailing_zeros() as usize / 8 + 1);
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_varints_matches_one_at_a_time() {
        let one_at_a_time = |input: &[u8], mut at: usize, n: usize| {
            for _ in 0..n {
                at += varint_len(input, at)?;
            }
            Some(at)
        };
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1d);
        for round in 0..400 {
            // Varints of 1 to 12 bytes, long ones rare.
            let mut input = Vec::new();
            for _ in 0..(next() % 60) {
                let r = next();
                let len = if r.is_multiple_of(50) {
                    10 + (r / 50) % 3
                } else {
                    1 + r % 5
                } as usize;
                input.extend(std::iter::repeat_n(0x80 | (r as u8), len - 1));
                input.push(r as u8 & 0x7f);
            }
            if round % 7 == 0 {
                input.truncate(input.len().saturating_sub((next() % 4) as usize));
            }
            for at in 0..input.len().min(5) {
                for n in 0..70 {
                    assert_eq!(
                        skip_varints(&input, at, n),
                        one_at_a_time(&input, at, n),
                        "round {round} at {at} n {n}"
                    );
                }
            }
        }
    }

    #[test]
    fn pieces_cover_the_stream_exactly() {
        // Runs of 3 bytes and 100 values each.
        let input = vec![0u8; 3 * 1000];
        let jobs = split_runs(&input, 100_000, |inp, at, _| {
            (at + 3 <= inp.len()).then_some((3, 100))
        })
        .unwrap();
        assert!(jobs.len() > 1);
        let mut at = 0;
        let mut out = 0;
        for j in &jobs {
            assert_eq!(j.input.start, at);
            assert_eq!(j.output_offset, out);
            at = j.input.end;
            out += j.values;
        }
        assert_eq!((at, out), (3000, 100_000));
        // A count the runs do not reach, or overshoot, falls back to one job.
        assert!(
            split_runs(&input, 100_050, |inp, at, _| (at + 3 <= inp.len())
                .then_some((3, 100)))
            .is_none()
        );
        assert!(
            split_runs(&input, 99_950, |inp, at, _| (at + 3 <= inp.len())
                .then_some((3, 100)))
            .is_none()
        );
    }
}
