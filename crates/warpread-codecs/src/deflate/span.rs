//! Decoding one span of a deflate stream from a block start, before the
//! bytes that precede it are known: a back-reference into the unknown
//! 32 KiB before the span becomes a marker symbol naming the byte it copies,
//! resolved once the previous span's output is known
//! ([`super::speculative`]). The CUDA kernel `kernels/inflate_span.cu`
//! decodes spans by the same rules into the same symbols.

use super::bits::BitReader;
use super::block_start::block_key;
use super::code::{Code, CodeKind, fixed_litlen_lens};
use super::header::{DynamicCodes, read_dynamic};
use super::symbols::{DIST_BASE, DIST_EXTRA, LEN_BASE, LEN_EXTRA};

/// The bytes a deflate back-reference may reach back.
pub const WINDOW: u64 = 32 * 1024;

/// First marker symbol: symbol `MARKER + i` stands for byte `i` of the
/// [`WINDOW`] bytes before the span (`WINDOW - i` bytes before its start).
/// Symbols below it are bytes.
pub const MARKER: u16 = 256;

/// No stop position ([`SpanTask::stop_bit`], [`SpanTask::stop_key`]).
pub const NO_STOP: u64 = u64::MAX;

/// One span to decode. The layout is shared with the CUDA kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct SpanTask {
    /// Bit offset of the block the span starts with.
    pub start_bit: u64,
    /// The span stops at the first block boundary at or past this bit
    /// (the next span's start), or [`NO_STOP`].
    pub stop_bit: u64,
    /// ... or at a boundary whose [`block_key`] is this one.
    pub stop_key: u64,
    /// Which output slot the span's symbols go to.
    pub slot: u32,
    /// 1 if the span starts the stream (a reference before it is an
    /// error, not a marker), else 0.
    pub first: u32,
}

/// How a span's decoding ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum SpanEnd {
    /// At a block boundary: the stop position, or the last boundary before
    /// the slot filled up (`capped`).
    Stopped = 0,
    /// After the stream's final block.
    Final = 1,
    /// The bits violate the format.
    Corrupt = 2,
    /// The input ended inside a block.
    Truncated = 3,
    /// A block's output alone is larger than a slot.
    BlockTooLarge = 4,
}

impl SpanEnd {
    /// Maps the raw value a kernel wrote; unknown values read as corrupt.
    pub fn from_raw(raw: u32) -> Self {
        match raw {
            0 => Self::Stopped,
            1 => Self::Final,
            3 => Self::Truncated,
            4 => Self::BlockTooLarge,
            _ => Self::Corrupt,
        }
    }
}

/// What decoding one span gave. The layout is shared with the CUDA kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct SpanResult {
    /// Bit offset where decoding ended (the next block's start when
    /// stopped, the first bit after the final block, or the failing
    /// symbol's position).
    pub end_bit: u64,
    /// [`block_key`] of `end_bit` when stopped.
    pub end_key: u64,
    /// Symbols written to the slot (up to the stop position).
    pub produced: u64,
    /// A [`SpanEnd`] as its raw value.
    pub end: u32,
    /// 1 if the span stopped early because its slot was full.
    pub capped: u32,
}

impl SpanResult {
    /// How decoding ended.
    pub fn end(&self) -> SpanEnd {
        SpanEnd::from_raw(self.end)
    }
}

/// Why a block ended early.
enum Stop {
    Corrupt,
    Truncated,
    Full,
}

/// Decodes `task` into `out` (its slot; its length is the slot's capacity).
pub fn decode_span(input: &[u8], task: &SpanTask, out: &mut [u16]) -> SpanResult {
    let mut r = BitReader::new(input, task.start_bit);
    let mut n = 0usize;
    let mut blocks = 0u32;
    let mut fixed: Option<DynamicCodes> = None;
    let result = |end: SpanEnd, end_bit: u64, produced: usize| SpanResult {
        end_bit,
        end_key: if end == SpanEnd::Stopped {
            block_key(input, end_bit)
        } else {
            0
        },
        produced: produced as u64,
        end: end as u32,
        capped: 0,
    };
    loop {
        let bit = r.pos;
        if blocks > 0 && (bit >= task.stop_bit || block_key(input, bit) == task.stop_key) {
            return result(SpanEnd::Stopped, bit, n);
        }
        let block_n = n;
        let head = r.take(3);
        let stop = match head >> 1 {
            0 => stored(&mut r, out, &mut n),
            1 => {
                let codes = fixed.get_or_insert_with(fixed_codes);
                compressed(&mut r, codes, task.first != 0, out, &mut n)
            }
            2 => match read_dynamic(&mut r) {
                Some(codes) => compressed(&mut r, &codes, task.first != 0, out, &mut n),
                None if r.past_end() => Err(Stop::Truncated),
                None => Err(Stop::Corrupt),
            },
            _ => Err(Stop::Corrupt),
        };
        match stop {
            Ok(()) => {}
            Err(Stop::Full) if blocks == 0 => {
                return result(SpanEnd::BlockTooLarge, bit, block_n);
            }
            Err(Stop::Full) => {
                return SpanResult {
                    capped: 1,
                    ..result(SpanEnd::Stopped, bit, block_n)
                };
            }
            Err(Stop::Corrupt) => return result(SpanEnd::Corrupt, r.pos, n),
            Err(Stop::Truncated) => return result(SpanEnd::Truncated, r.pos, n),
        }
        blocks += 1;
        if head & 1 == 1 {
            return result(SpanEnd::Final, r.pos, n);
        }
    }
}

fn fixed_codes() -> DynamicCodes {
    let lit = Code::build(&fixed_litlen_lens(), CodeKind::LitLen);
    let dist = Code::build(&[5u8; 32], CodeKind::Dist);
    match (lit, dist) {
        (Ok(lit), Ok(dist)) => DynamicCodes { lit, dist },
        _ => unreachable!("the fixed codes are complete"),
    }
}

fn stored(r: &mut BitReader<'_>, out: &mut [u16], n: &mut usize) -> Result<(), Stop> {
    r.align();
    let len = r.take(16);
    let nlen = r.take(16);
    if r.past_end() {
        return Err(Stop::Truncated);
    }
    if len != !nlen & 0xffff {
        return Err(Stop::Corrupt);
    }
    let at = r.pos / 8;
    if at + u64::from(len) > r.len_bits() / 8 {
        return Err(Stop::Truncated);
    }
    let len = len as usize;
    if *n + len > out.len() {
        return Err(Stop::Full);
    }
    for (i, o) in out[*n..*n + len].iter_mut().enumerate() {
        *o = u16::from(r.byte(at + i as u64));
    }
    *n += len;
    r.pos += 8 * len as u64;
    Ok(())
}

fn compressed(
    r: &mut BitReader<'_>,
    codes: &DynamicCodes,
    first: bool,
    out: &mut [u16],
    n: &mut usize,
) -> Result<(), Stop> {
    let bad = |r: &BitReader<'_>| {
        if r.past_end() {
            Stop::Truncated
        } else {
            Stop::Corrupt
        }
    };
    loop {
        let Some(sym) = codes.lit.decode(r) else {
            return Err(bad(r));
        };
        if r.past_end() {
            return Err(Stop::Truncated);
        }
        if sym < 256 {
            if *n == out.len() {
                return Err(Stop::Full);
            }
            out[*n] = sym;
            *n += 1;
            continue;
        }
        if sym == 256 {
            return Ok(());
        }
        let li = usize::from(sym - 257);
        if li >= LEN_BASE.len() {
            return Err(Stop::Corrupt);
        }
        let len = usize::from(LEN_BASE[li]) + r.take(u32::from(LEN_EXTRA[li])) as usize;
        let Some(dsym) = codes.dist.decode(r) else {
            return Err(bad(r));
        };
        let di = usize::from(dsym);
        if di >= DIST_BASE.len() {
            return Err(bad(r));
        }
        let dist = usize::from(DIST_BASE[di]) + r.take(u32::from(DIST_EXTRA[di])) as usize;
        if r.past_end() {
            return Err(Stop::Truncated);
        }
        if first && dist > *n {
            return Err(Stop::Corrupt);
        }
        if *n + len > out.len() {
            return Err(Stop::Full);
        }
        if dist <= *n && dist >= len {
            // Source wholly inside the span and not overlapping the copy.
            out.copy_within(*n - dist..*n - dist + len, *n);
            *n += len;
            continue;
        }
        for _ in 0..len {
            let src = *n as i64 - dist as i64;
            out[*n] = if src < 0 {
                MARKER + (WINDOW as i64 + src) as u16
            } else {
                out[src as usize]
            };
            *n += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deflate::deflate;

    fn whole(input: &[u8], cap: usize) -> (SpanResult, Vec<u16>) {
        let task = SpanTask {
            start_bit: 0,
            stop_bit: NO_STOP,
            stop_key: NO_STOP,
            slot: 0,
            first: 1,
        };
        let mut out = vec![0u16; cap];
        let r = decode_span(input, &task, &mut out);
        out.truncate(r.produced as usize);
        (r, out)
    }

    #[test]
    fn a_whole_stream_from_its_start_is_its_bytes() {
        let mut data = b"span decoding, span decoding, and more span decoding ".repeat(300);
        data.extend((0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8));
        for level in [0, 1, 6, 9] {
            let z = deflate(&data, level);
            let (r, out) = whole(&z, data.len() + 10);
            assert_eq!(r.end(), SpanEnd::Final, "level {level}");
            let bytes: Vec<u8> = out.iter().map(|&s| s as u8).collect();
            assert!(out.iter().all(|&s| s < 256));
            assert_eq!(bytes, data, "level {level}");
        }
    }

    #[test]
    fn references_before_the_span_become_markers() {
        // A final fixed block holding one copy (length 3, distance 1) and
        // the end of block: from a span inside a stream, three markers of
        // the byte just before the span; from the stream's start, an error.
        let z = [0x03, 0x02, 0x00];
        let task = SpanTask {
            start_bit: 0,
            stop_bit: NO_STOP,
            stop_key: NO_STOP,
            slot: 0,
            first: 0,
        };
        let mut out = vec![0u16; 16];
        let r = decode_span(&z, &task, &mut out);
        assert_eq!(r.end(), SpanEnd::Final);
        assert_eq!(r.produced, 3);
        assert_eq!(&out[..3], &[MARKER + WINDOW as u16 - 1; 3]);
        let (r, _) = whole(&z, 16);
        assert_eq!(r.end(), SpanEnd::Corrupt);
    }

    #[test]
    fn a_full_slot_stops_at_the_last_block_boundary() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 31 % 253) as u8).collect();
        let z = deflate(&data, 0); // stored blocks of at most 65535 bytes
        let (r, out) = whole(&z, 150_000);
        assert_eq!(r.end(), SpanEnd::Stopped);
        assert_eq!(r.capped, 1);
        assert!(r.produced > 65_535 && r.produced <= 150_000);
        assert!(out.iter().zip(&data).all(|(&s, &b)| s == u16::from(b)));
        // The rest decodes from where it stopped.
        let rest = SpanTask {
            start_bit: r.end_bit,
            stop_bit: NO_STOP,
            stop_key: NO_STOP,
            slot: 0,
            first: 0,
        };
        let mut more = vec![0u16; data.len()];
        let r2 = decode_span(&z, &rest, &mut more);
        assert_eq!(r2.end(), SpanEnd::Final);
        assert_eq!(r.produced + r2.produced, data.len() as u64);
        let (r, _) = whole(&z, 1000);
        assert_eq!(r.end(), SpanEnd::BlockTooLarge);
    }

    #[test]
    fn truncated_and_corrupt_spans() {
        let data = b"truncate me, truncate me, truncate me please ".repeat(100);
        let z = deflate(&data, 9);
        let (r, _) = whole(&z[..z.len() / 2], data.len());
        assert_eq!(r.end(), SpanEnd::Truncated);
        let (r, _) = whole(&[0x07], 10);
        assert_eq!(r.end(), SpanEnd::Corrupt);
    }
}
