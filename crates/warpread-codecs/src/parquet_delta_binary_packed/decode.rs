//! CPU reference decoder for DELTA_BINARY_PACKED.

use crate::int::IntElem;
use crate::plan::{ChunkStatus, IntType, StatusCode};
use crate::varint::{self, unzigzag};

/// A failure: status code, byte offset of the failing header or block, and
/// values produced before it.
pub type Failure = (StatusCode, usize, usize);

fn uleb(input: &[u8], at: usize, ty: IntType, produced: usize) -> Result<(u64, usize), Failure> {
    varint::read(input, at, ty).map_err(|c| (c, at, produced))
}

/// `width` bits (at most 64) at bit offset `bit` of `input[base..]`.
fn unpack(input: &[u8], base: usize, bit: usize, width: u32) -> u64 {
    if width == 0 {
        return 0;
    }
    let first = base + bit / 8;
    let nbytes = (bit % 8 + width as usize).div_ceil(8);
    let mut v = 0u128;
    for k in 0..nbytes {
        v |= u128::from(input[first + k]) << (8 * k);
    }
    let v = (v >> (bit % 8)) as u64;
    if width == 64 {
        v
    } else {
        v & ((1u64 << width) - 1)
    }
}

/// A streaming reader over one DELTA_BINARY_PACKED stream, so callers can
/// walk several streams in lockstep without buffering them.
pub struct Reader<'a> {
    input: &'a [u8],
    bits: u32,
    per_mini: usize,
    miniblocks: usize,
    total: usize,
    /// Values handed out so far.
    done: usize,
    value: u64,
    /// Where the next block header starts once the current block is done.
    pos: usize,
    have_block: bool,
    block_at: usize,
    min_delta: u64,
    widths_at: usize,
    /// The current miniblock: index, values consumed, body start, width.
    mini: usize,
    in_mini: usize,
    body_at: usize,
    width: u32,
}

impl<'a> Reader<'a> {
    /// Parses the header of a stream of `bits`-wide values (32 or 64).
    pub fn new(input: &'a [u8], bits: u32) -> Result<Self, Failure> {
        let (block_size, a) = uleb(input, 0, IntType::U32, 0)?;
        let (miniblocks, b) = uleb(input, a, IntType::U32, 0)?;
        let (total, c) = uleb(input, a + b, IntType::U32, 0)?;
        let (first, d) = uleb(input, a + b + c, IntType::U64, 0)?;
        if block_size == 0
            || block_size % 128 != 0
            || miniblocks == 0
            || block_size % miniblocks != 0
            || (block_size / miniblocks) % 32 != 0
        {
            return Err((StatusCode::InputCorrupt, 0, 0));
        }
        let per_mini = (block_size / miniblocks) as usize;
        let pos = a + b + c + d;
        Ok(Self {
            input,
            bits,
            per_mini,
            miniblocks: miniblocks as usize,
            total: total as usize,
            done: 0,
            value: unzigzag(first) as u64,
            pos,
            have_block: false,
            block_at: pos,
            min_delta: 0,
            widths_at: 0,
            mini: 0,
            in_mini: per_mini,
            body_at: pos,
            width: 0,
        })
    }

    /// Values the header announces.
    #[inline]
    pub fn total(&self) -> usize {
        self.total
    }

    fn body_len(&self) -> usize {
        self.per_mini * self.width as usize / 8
    }

    /// Steps into the next miniblock, reading a block header when needed.
    fn next_miniblock(&mut self) -> Result<(), Failure> {
        if self.have_block {
            self.pos = self.body_at + self.body_len();
            self.mini += 1;
            self.have_block = self.mini < self.miniblocks;
        }
        if !self.have_block {
            let at = self.pos;
            let (min, m) = uleb(self.input, at, IntType::U64, self.done)?;
            self.block_at = at;
            self.min_delta = unzigzag(min) as u64;
            self.widths_at = at + m;
            if self.input.len() - self.widths_at < self.miniblocks {
                return Err((StatusCode::InputTruncated, at, self.done));
            }
            self.pos = self.widths_at + self.miniblocks;
            self.mini = 0;
            self.have_block = true;
        }
        let width = u32::from(self.input[self.widths_at + self.mini]);
        if width > self.bits {
            return Err((StatusCode::InputCorrupt, self.block_at, self.done));
        }
        self.width = width;
        self.body_at = self.pos;
        self.in_mini = 0;
        Ok(())
    }

    /// The next value, or `None` after the last one.
    pub fn next_value(&mut self) -> Result<Option<u64>, Failure> {
        if self.done >= self.total {
            return Ok(None);
        }
        if self.done > 0 {
            if self.in_mini == self.per_mini {
                self.next_miniblock()?;
            }
            let bit = self.in_mini * self.width as usize;
            let need = (bit + self.width as usize).div_ceil(8);
            if self.input.len().saturating_sub(self.body_at) < need {
                return Err((StatusCode::InputTruncated, self.block_at, self.done));
            }
            let delta = unpack(self.input, self.body_at, bit, self.width);
            self.value = self.value.wrapping_add(self.min_delta).wrapping_add(delta);
            self.in_mini += 1;
        }
        self.done += 1;
        Ok(Some(self.value))
    }

    /// How many of the next values are 0 without a byte read: the rest of
    /// a miniblock of width 0 and minimum delta 0 after a value of 0.
    #[inline]
    pub fn zeros_ahead(&self) -> usize {
        if self.done == 0
            || self.in_mini >= self.per_mini
            || self.width != 0
            || self.min_delta != 0
            || self.value != 0
        {
            return 0;
        }
        (self.per_mini - self.in_mini).min(self.total - self.done)
    }

    /// Skips `n` values, at most [`zeros_ahead`](Self::zeros_ahead): what
    /// `n` calls of [`next_value`](Self::next_value) would do.
    #[inline]
    pub fn skip_zeros(&mut self, n: usize) {
        debug_assert!(n <= self.zeros_ahead());
        self.in_mini += n;
        self.done += n;
    }

    /// Skips the remaining values and returns the byte offset where the
    /// stream ends (after the padded last miniblock).
    pub fn end(mut self) -> Result<usize, Failure> {
        if self.total <= 1 {
            return Ok(self.pos);
        }
        if self.done == 0 {
            self.done = 1;
        }
        while self.done < self.total {
            if self.in_mini == self.per_mini {
                self.next_miniblock()?;
            }
            let take = (self.per_mini - self.in_mini).min(self.total - self.done);
            self.in_mini += take;
            self.done += take;
        }
        let end = self.body_at + self.body_len();
        if end > self.input.len() {
            return Err((StatusCode::InputTruncated, self.block_at, self.done));
        }
        Ok(end)
    }
}

/// Decodes the first `n` values of a stream of `bits`-wide values (32 or
/// 64), calling `emit(i, value)`; with `want_end` returns the byte offset
/// where the whole stream ends, otherwise where decoding stopped.
#[inline]
pub fn walk(
    input: &[u8],
    n: usize,
    bits: u32,
    want_end: bool,
    mut emit: impl FnMut(usize, u64),
) -> Result<usize, Failure> {
    let mut r = Reader::new(input, bits)?;
    if n > r.total() {
        return Err((StatusCode::OutputShort, input.len(), 0));
    }
    for i in 0..n {
        let Some(v) = r.next_value()? else {
            return Err((StatusCode::OutputShort, input.len(), i));
        };
        emit(i, v);
    }
    if want_end { r.end() } else { Ok(r.body_at) }
}

/// Decodes `out.len()` values (`T` is `i32` or `i64`).
pub fn decode<T: IntElem>(input: &[u8], out: &mut [T]) -> ChunkStatus {
    let bits = T::TYPE.bits();
    match walk(input, out.len(), bits, false, |i, v| {
        out[i] = T::from_bits(v)
    }) {
        Ok(_) => ChunkStatus::ok(out.len() as u64),
        Err((code, at, produced)) => ChunkStatus::failed(code, at as u64, produced as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode;
    use super::*;

    #[test]
    fn spec_example() {
        // Parquet spec: 1 2 3 4 5 (block 128, 4 miniblocks, deltas all 1).
        let mut input = vec![0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0];
        input.truncate(10);
        let mut out = [0i32; 5];
        let st = decode(&input, &mut out);
        assert!(st.is_ok(), "{st}");
        assert_eq!(out, [1, 2, 3, 4, 5]);
    }

    #[test]
    fn round_trips_with_wrapping() {
        let v64: Vec<i64> = (0..1000)
            .map(|i: i64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15u64 as i64) >> (i % 60))
            .chain([i64::MIN, i64::MAX, 0, -1])
            .collect();
        let bytes = encode(&v64.iter().map(|&v| v as u64).collect::<Vec<_>>(), 64);
        let mut out = vec![0i64; v64.len()];
        let st = decode(&bytes, &mut out);
        assert!(st.is_ok(), "{st}");
        assert_eq!(out, v64);
        let v32: Vec<i32> = vec![i32::MIN, i32::MAX, 5, -7, 0, 1 << 30];
        let bytes = encode(
            &v32.iter().map(|&v| v as u32 as u64).collect::<Vec<_>>(),
            32,
        );
        let mut out = vec![0i32; v32.len()];
        assert!(decode(&bytes, &mut out).is_ok());
        assert_eq!(out, v32);
        // A prefix of the values is fine.
        let mut three = [0i32; 3];
        assert!(decode(&bytes, &mut three).is_ok());
        assert_eq!(three, [i32::MIN, i32::MAX, 5]);
        // The end is found after the padded last miniblock.
        let end = walk(&bytes, 0, 32, true, |_, _| {}).unwrap();
        assert_eq!(end, bytes.len());
    }

    #[test]
    fn errors_are_statuses() {
        let mut out = [0i64; 4];
        assert_eq!(
            decode::<i64>(&[], &mut out).status(),
            StatusCode::InputTruncated
        );
        // Block size not a multiple of 128.
        assert_eq!(
            decode::<i64>(&[0x40, 1, 4, 0], &mut out).status(),
            StatusCode::InputCorrupt
        );
        // Fewer values than asked.
        assert_eq!(
            decode::<i64>(&[0x80, 1, 1, 2, 0], &mut out).status(),
            StatusCode::OutputShort
        );
        // Bit width over the type's.
        let mut v = vec![0x80, 1, 1, 4, 0, 0];
        v.push(33);
        let mut o32 = [0i32; 4];
        assert_eq!(decode(&v, &mut o32).status(), StatusCode::InputCorrupt);
        // Missing miniblock bytes.
        let bytes = encode(&[1, 100, 3, 1000], 64);
        assert_eq!(
            decode::<i64>(&bytes[..12], &mut out).status(),
            StatusCode::InputTruncated
        );
    }
}
