//! Hybrid streams of bit width 1 straight into a bitmap: the definition
//! levels of a column whose highest level is 1 (every optional column
//! outside lists) are its Arrow validity bits, LSB first as a bit-packed
//! run stores them. Decoded this way on the host a page's levels cost a
//! copy of an eighth of a byte per entry, where the `u32` stage output
//! cost four bytes of download and a host pass per entry (the NYC taxi
//! table's nullable columns).

use arrow::array::BooleanBufferBuilder;

use super::decode::read_header;
use crate::plan::{ChunkStatus, StatusCode};

/// Appends the first `count` values of a bit-width-1 hybrid stream to
/// `out` and returns how many are 1. The statuses are [`super::decode`]'s
/// for bit width 1 (the stream is accepted or refused exactly as there),
/// with the values appended so far left in `out`.
pub fn decode_bits(
    input: &[u8],
    count: usize,
    out: &mut BooleanBufferBuilder,
) -> Result<usize, ChunkStatus> {
    let fail = |c, at: usize, n: usize| ChunkStatus::failed(c, at as u64, n as u64);
    let (mut pos, mut produced, mut ones) = (0usize, 0usize, 0usize);
    while produced < count {
        let run_at = pos;
        if pos >= input.len() {
            return Err(fail(StatusCode::OutputShort, pos, produced));
        }
        let (h, n) = read_header(input, pos).map_err(|c| fail(c, run_at, produced))?;
        pos += n;
        let len = (h >> 1) as usize;
        if h & 1 == 0 {
            let Some(&v) = input.get(pos) else {
                return Err(fail(StatusCode::InputTruncated, run_at, produced));
            };
            if v > 1 {
                return Err(fail(StatusCode::ValueOutOfRange, run_at, produced));
            }
            pos += 1;
            let take = len.min(count - produced);
            out.append_n(take, v == 1);
            ones += take * usize::from(v);
            produced += take;
        } else {
            // One byte per group of eight values.
            let avail = len.min(input.len() - pos);
            let want = len.saturating_mul(8).min(count - produced);
            if avail * 8 < want {
                return Err(fail(StatusCode::InputTruncated, run_at, produced));
            }
            let bytes = &input[pos..pos + want.div_ceil(8)];
            out.append_packed_range(0..want, bytes);
            ones += ones_in(bytes, want);
            produced += want;
            pos += avail;
        }
    }
    Ok(ones)
}

/// Set bits among the first `bits` of `bytes` (LSB first).
fn ones_in(bytes: &[u8], bits: usize) -> usize {
    let full = bits / 8;
    let head: usize = bytes[..full].iter().map(|b| b.count_ones() as usize).sum();
    let tail = match bits % 8 {
        0 => 0,
        r => (bytes[full] & ((1u8 << r) - 1)).count_ones() as usize,
    };
    head + tail
}

#[cfg(test)]
mod tests {
    use super::super::{decode, encode};
    use super::*;

    fn bits(input: &[u8], count: usize) -> Result<(Vec<bool>, usize), ChunkStatus> {
        let mut b = BooleanBufferBuilder::new(count);
        let ones = decode_bits(input, count, &mut b)?;
        Ok((b.finish().iter().collect(), ones))
    }

    #[test]
    fn agrees_with_the_reference_decoder() {
        let mut next = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15);
        for n in [0usize, 1, 7, 8, 9, 63, 64, 65, 1000, 4099] {
            for density in [0u64, 1, 50, 99, 100] {
                let vals: Vec<u32> = (0..n)
                    .map(|i| {
                        // Runs now and then, so both run kinds occur.
                        if (i / 40) % 3 == 0 {
                            u32::from(density >= 50)
                        } else {
                            u32::from(next() % 100 < density)
                        }
                    })
                    .collect();
                let stream = encode(&vals, 1);
                for count in [n, n.saturating_sub(3)] {
                    let (got, ones) = bits(&stream, count).expect("decodes");
                    let mut want = vec![0u32; count];
                    assert!(decode(1, &stream, &mut want).is_ok());
                    let want: Vec<bool> = want.iter().map(|&v| v == 1).collect();
                    assert_eq!(got, want, "n {n} density {density} count {count}");
                    assert_eq!(ones, want.iter().filter(|&&v| v).count());
                }
            }
        }
    }

    #[test]
    fn bad_streams_fail_as_the_reference_does() {
        let cases: [(&[u8], usize); 8] = [
            (&[], 4),
            (&[0x80], 4),
            (&[0x80, 0x80, 0x80, 0x80, 0x80, 1], 4),
            (&[8, 2], 4),
            (&[8], 4),
            (&[4, 1], 4),
            (&[0x05, 0xff], 24),
            (&[0x03], 1),
        ];
        for (input, count) in cases {
            let mut want = vec![0u32; count];
            let st = decode(1, input, &mut want);
            assert!(!st.is_ok(), "{input:?}");
            let got = bits(input, count).expect_err("fails");
            assert_eq!(got, st, "{input:?}");
        }
        // A bit-packed run cut short still covers the values asked for.
        assert_eq!(bits(&[0x05, 0b101], 3), Ok((vec![true, false, true], 2)));
    }
}
