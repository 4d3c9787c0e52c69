//! CPU reference decoder for the RLE/bit-packed hybrid.

use super::MAX_BIT_WIDTH;
use crate::plan::{ChunkStatus, StatusCode};

/// Reads a ULEB128 run header of at most 5 bytes (a 32-bit count).
pub(crate) fn read_header(input: &[u8], at: usize) -> Result<(u32, usize), StatusCode> {
    let mut v = 0u64;
    for i in 0..5 {
        let Some(&b) = input.get(at + i) else {
            return Err(StatusCode::InputTruncated);
        };
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return u32::try_from(v)
                .map(|v| (v, i + 1))
                .map_err(|_| StatusCode::ValueOutOfRange);
        }
    }
    Err(StatusCode::VarintOverlong)
}

/// The value every one of the first `count` entries has when the stream
/// opens with an RLE run covering them all (a page without nulls has one
/// such definition-level run): what [`decode`] would fill `count` slots
/// with, found from the first header alone. `None` otherwise, or when the
/// run is malformed (the full decoder then reports it).
#[inline]
pub fn uniform(bit_width: u8, input: &[u8], count: usize) -> Option<u32> {
    if count == 0 || bit_width > MAX_BIT_WIDTH {
        return None;
    }
    let (h, n) = read_header(input, 0).ok()?;
    if h & 1 != 0 || ((h >> 1) as usize) < count {
        return None;
    }
    let bw = u32::from(bit_width);
    let v = le_u64(input.get(n..n + bw.div_ceil(8) as usize)?);
    (bw == 32 || v >> bw == 0).then_some(v as u32)
}

/// The little-endian value of `bytes` (at most 8).
fn le_u64(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |v, &b| (v << 8) | u64::from(b))
}

/// Value `i` of a bit-packed run starting at byte `base` (LSB first).
fn unpack(input: &[u8], base: usize, bit_width: u32, i: usize) -> u32 {
    let bit = i * bit_width as usize;
    let first = base + bit / 8;
    // One 8-byte load covers any value (at most 7 + 32 bits) wherever the
    // input has 8 bytes left; byte by byte only near its end, reading no
    // byte past the value's last.
    let v = match input.get(first..first + 8) {
        Some(w) => u64::from_le_bytes(w.try_into().expect("8 bytes")),
        None => le_u64(&input[first..][..(bit % 8 + bit_width as usize).div_ceil(8)]),
    };
    ((v >> (bit % 8)) & ((1u64 << bit_width) - 1)) as u32
}

/// Where a walk's values go: a run of one repeated value, or a block of
/// bit-packed values (consecutive). `at` is the index of the first value,
/// `run_at` the byte offset of the run's header. Returning a status stops
/// the walk with it (a value the sink refuses).
pub(crate) trait Sink {
    /// `take` copies of `v` from value `at`.
    fn repeat(&mut self, at: usize, v: u32, take: usize, run_at: usize) -> Option<ChunkStatus>;
    /// `values` from value `at`.
    fn block(&mut self, at: usize, values: &[u32], run_at: usize) -> Option<ChunkStatus>;
}

/// Bit-packed values a walk hands over at a time.
const BLOCK: usize = 256;

/// Walks the runs of `count` values of `bit_width` bits from `input`,
/// handing them to `sink`; the statuses of [`decode`].
pub(crate) fn walk(bit_width: u8, input: &[u8], count: usize, sink: &mut impl Sink) -> ChunkStatus {
    let fail = |c, at: usize, n: usize| ChunkStatus::failed(c, at as u64, n as u64);
    if bit_width > MAX_BIT_WIDTH {
        return fail(StatusCode::InputCorrupt, 0, 0);
    }
    let bw = u32::from(bit_width);
    let value_bytes = bw.div_ceil(8) as usize;
    let (mut pos, mut produced) = (0usize, 0usize);
    let mut block = [0u32; BLOCK];
    while produced < count {
        let run_at = pos;
        if pos >= input.len() {
            return fail(StatusCode::OutputShort, pos, produced);
        }
        let (h, n) = match read_header(input, pos) {
            Ok(x) => x,
            Err(c) => return fail(c, run_at, produced),
        };
        pos += n;
        let len = (h >> 1) as usize;
        if h & 1 == 0 {
            if input.len() - pos < value_bytes {
                return fail(StatusCode::InputTruncated, run_at, produced);
            }
            let v = le_u64(&input[pos..pos + value_bytes]);
            if bw < 32 && v >> bw != 0 {
                return fail(StatusCode::ValueOutOfRange, run_at, produced);
            }
            pos += value_bytes;
            let take = len.min(count - produced);
            if let Some(st) = sink.repeat(produced, v as u32, take, run_at) {
                return st;
            }
            produced += take;
        } else {
            let run_bytes = len * bw as usize;
            let avail_bytes = run_bytes.min(input.len() - pos);
            let avail_values = if bw == 0 {
                len * 8
            } else {
                avail_bytes * 8 / bw as usize
            };
            let want = (len * 8).min(count - produced);
            if avail_values < want {
                return fail(StatusCode::InputTruncated, run_at, produced);
            }
            if bw == 0 {
                if let Some(st) = sink.repeat(produced, 0, want, run_at) {
                    return st;
                }
            } else {
                for first in (0..want).step_by(BLOCK) {
                    let n = BLOCK.min(want - first);
                    for (i, slot) in block[..n].iter_mut().enumerate() {
                        *slot = unpack(input, pos, bw, first + i);
                    }
                    if let Some(st) = sink.block(produced + first, &block[..n], run_at) {
                        return st;
                    }
                }
            }
            produced += want;
            pos += avail_bytes;
        }
    }
    ChunkStatus::ok(produced as u64)
}

/// Decodes `out.len()` values of `bit_width` bits from `input`.
///
/// Statuses: `InputCorrupt` for a bit width over 32; `OutputShort` when the
/// input ends between runs; `InputTruncated` inside a run header or an RLE
/// value, or when a bit-packed run lacks bytes for values still needed;
/// `VarintOverlong` for a header over 5 bytes; `ValueOutOfRange` for an RLE
/// value wider than `bit_width` or a header over 32 bits.
pub fn decode(bit_width: u8, input: &[u8], out: &mut [u32]) -> ChunkStatus {
    struct Fill<'a>(&'a mut [u32]);
    impl Sink for Fill<'_> {
        fn repeat(&mut self, at: usize, v: u32, take: usize, _: usize) -> Option<ChunkStatus> {
            self.0[at..at + take].fill(v);
            None
        }
        fn block(&mut self, at: usize, values: &[u32], _: usize) -> Option<ChunkStatus> {
            self.0[at..at + values.len()].copy_from_slice(values);
            None
        }
    }
    let count = out.len();
    walk(bit_width, input, count, &mut Fill(out))
}

#[cfg(test)]
mod tests {
    use super::super::encode;
    use super::*;

    #[test]
    fn uniform_matches_decode() {
        // One RLE run of 10 copies of 1 (bit width 1) covers up to 10.
        let input = [10 << 1, 1];
        assert_eq!(uniform(1, &input, 10), Some(1));
        assert_eq!(uniform(1, &input, 11), None);
        assert_eq!(uniform(1, &input, 0), None);
        let mut out = [7u32; 10];
        assert!(decode(1, &input, &mut out).is_ok());
        assert!(out.iter().all(|&v| v == 1));
        // A value wider than the bit width, a bit-packed start, a cut value.
        assert_eq!(uniform(1, &[4 << 1, 2], 4), None);
        assert_eq!(uniform(3, &[0x03, 0x88, 0xc6, 0xfa], 8), None);
        assert_eq!(uniform(9, &[4 << 1, 0xff], 4), None);
        assert_eq!(uniform(9, &[4 << 1, 0xff, 0x01], 4), Some(511));
        assert_eq!(uniform(32, &[4 << 1, 1, 2, 3, 0x84], 4), Some(0x8403_0201));
        for (bw, input, n) in [
            (9u8, &[4u8 << 1, 0xff, 0x01][..], 4usize),
            (2, &[200, 1, 2], 99),
        ] {
            let mut out = vec![0u32; n];
            assert!(decode(bw, input, &mut out).is_ok());
            assert_eq!(uniform(bw, input, n), Some(out[0]));
        }
    }

    #[test]
    fn spec_example_bit_packed() {
        // Parquet spec: values 0..7 at bit width 3, one group of eight.
        let input = [0x03, 0b1000_1000, 0b1100_0110, 0b1111_1010];
        let mut out = [0u32; 8];
        assert!(decode(3, &input, &mut out).is_ok());
        assert_eq!(out, [0, 1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn rle_run_and_padding() {
        let input = [8 << 1, 5, 0x03, 0xff];
        let mut out = [0u32; 10];
        let st = decode(3, &input, &mut out);
        assert!(st.is_ok(), "{st}");
        assert_eq!(&out[..8], &[5; 8]);
        assert_eq!(&out[8..], &[7, 7]);
    }

    #[test]
    fn round_trips() {
        for bw in [0u8, 1, 2, 3, 7, 8, 9, 13, 16, 17, 24, 31, 32] {
            let max = if bw == 32 { u32::MAX } else { (1u32 << bw) - 1 };
            let vals: Vec<u32> = (0..1000u32)
                .map(|i| {
                    if (i / 50) % 2 == 0 {
                        (i / 50).wrapping_mul(2_654_435_761) & max
                    } else {
                        i.wrapping_mul(2_654_435_761) & max
                    }
                })
                .collect();
            let bytes = encode(&vals, bw);
            let mut out = vec![0u32; vals.len()];
            let st = decode(bw, &bytes, &mut out);
            assert!(st.is_ok(), "bw {bw}: {st}");
            assert_eq!(out, vals, "bw {bw}");
        }
    }

    #[test]
    fn errors_are_statuses() {
        let mut out = [0u32; 4];
        assert_eq!(
            decode(33, &[0], &mut out).status(),
            StatusCode::InputCorrupt
        );
        assert_eq!(decode(3, &[], &mut out).status(), StatusCode::OutputShort);
        assert_eq!(
            decode(3, &[0x80], &mut out).status(),
            StatusCode::InputTruncated
        );
        assert_eq!(
            decode(3, &[0x80, 0x80, 0x80, 0x80, 0x80, 1], &mut out).status(),
            StatusCode::VarintOverlong
        );
        assert_eq!(
            decode(3, &[8, 9], &mut out).status(),
            StatusCode::ValueOutOfRange
        );
        assert_eq!(
            decode(16, &[8, 1], &mut out).status(),
            StatusCode::InputTruncated
        );
        let st = decode(3, &[4, 1], &mut out);
        assert_eq!(st.status(), StatusCode::OutputShort);
        assert_eq!((st.detail, st.produced), (2, 2));
        // A bit-packed run without bytes for the values still needed.
        assert_eq!(
            decode(8, &[0x03, 1, 2], &mut out).status(),
            StatusCode::InputTruncated
        );
        // ... but enough bytes for the values needed is fine.
        let mut two = [0u32; 2];
        assert!(decode(8, &[0x03, 1, 2], &mut two).is_ok());
        assert_eq!(two, [1, 2]);
    }
}
