//! CPU reference decoder for ORC RLE v2.
//!
//! The order of the checks below is part of the contract with the GPU
//! kernel: for each run, header bytes, then format violations, then the
//! presence of the whole run, then the range of the values taken. The first
//! failing run is reported at its header offset. A run holding more values
//! than are still wanted is cut short (ORC readers take what they need of a
//! run; ORC C++ pads a union's first child stream with junk values), but it
//! must still be whole and well-formed.
//!
//! Signed values are decoded at 64 bits and truncated to the element type;
//! unsigned ones must fit it ([`orc_wire_type`] says why).

use super::bits::{closest_fixed, decode_width, packed_len, unpack};
use crate::int::{IntElem, in_range, orc_wire_type};
use crate::plan::{ChunkStatus, IntType, StatusCode};
use crate::varint;

/// Decodes one chunk into `out`, which must be filled exactly: decoding stops
/// once `out.len()` values are produced and trailing input is not examined.
///
/// Errors are reported, never panicked on: the returned status names the
/// byte offset of the run that failed and the values produced before it.
pub fn decode<T: IntElem>(input: &[u8], out: &mut [T]) -> ChunkStatus {
    let count = out.len();
    let mut pos = 0usize;
    let mut produced = 0usize;
    while produced < count {
        let run = Run {
            input,
            at: pos,
            room: count - produced,
        };
        match run.decode(&mut out[produced..]) {
            Ok((n, next)) => {
                produced += n;
                pos = next;
            }
            Err(code) => return ChunkStatus::failed(code, pos as u64, produced as u64),
        }
    }
    ChunkStatus::ok(produced as u64)
}

/// One run being decoded: the stream, the header offset and the output room.
struct Run<'a> {
    input: &'a [u8],
    at: usize,
    room: usize,
}

type RunResult = Result<(usize, usize), StatusCode>;

impl Run<'_> {
    fn byte(&self, i: usize) -> Result<u8, StatusCode> {
        self.input
            .get(self.at + i)
            .copied()
            .ok_or(StatusCode::InputTruncated)
    }

    /// `len` bytes from header offset `from`, or `InputTruncated`.
    fn bytes(&self, from: usize, len: usize) -> Result<&[u8], StatusCode> {
        let start = self.at + from;
        self.input
            .get(start..start.saturating_add(len))
            .ok_or(StatusCode::InputTruncated)
    }

    fn length(h0: u8, h1: u8) -> usize {
        ((usize::from(h0) & 1) << 8 | usize::from(h1)) + 1
    }

    fn decode<T: IntElem>(&self, out: &mut [T]) -> RunResult {
        let Some(&h0) = self.input.get(self.at) else {
            return Err(StatusCode::OutputShort);
        };
        match h0 >> 6 {
            0 => self.short_repeat(h0, out),
            1 => self.direct(h0, out),
            2 => self.patched_base(h0, out),
            _ => self.delta(h0, out),
        }
    }

    fn short_repeat<T: IntElem>(&self, h0: u8, out: &mut [T]) -> RunResult {
        let width = usize::from((h0 >> 3) & 7) + 1;
        let n = (usize::from(h0 & 7) + 3).min(self.room);
        let raw = self
            .bytes(1, width)?
            .iter()
            .fold(0u64, |acc, &b| acc << 8 | u64::from(b));
        let v = signed_payload(T::TYPE, raw);
        check::<T>(v)?;
        out[..n].fill(T::from_bits(v));
        Ok((n, self.at + 1 + width))
    }

    fn direct<T: IntElem>(&self, h0: u8, out: &mut [T]) -> RunResult {
        let h1 = self.byte(1)?;
        let width = decode_width(h0 >> 1);
        let n = Self::length(h0, h1);
        let data = self.bytes(2, packed_len(n, width))?;
        let take = n.min(self.room);
        for (i, slot) in out[..take].iter_mut().enumerate() {
            let v = signed_payload(T::TYPE, unpack(data, i, width));
            check::<T>(v)?;
            *slot = T::from_bits(v);
        }
        Ok((take, self.at + 2 + data.len()))
    }

    fn patched_base<T: IntElem>(&self, h0: u8, out: &mut [T]) -> RunResult {
        let h = self.bytes(0, 4)?;
        let (h1, h2, h3) = (h[1], h[2], h[3]);
        let width = decode_width(h0 >> 1);
        let n = Self::length(h0, h1);
        let base_bytes = usize::from(h2 >> 5) + 1;
        let patch_width = decode_width(h2);
        let gap_width = u32::from(h3 >> 5) + 1;
        let patches = usize::from(h3 & 0x1f);
        if patches > 0 && gap_width + patch_width > 64 {
            return Err(StatusCode::InputCorrupt);
        }
        let entry_width = closest_fixed(gap_width + patch_width);
        let data_len = packed_len(n, width);
        let base_raw = self.bytes(4, base_bytes)?;
        let data = self.bytes(4 + base_bytes, data_len)?;
        let list = self.bytes(4 + base_bytes + data_len, packed_len(patches, entry_width))?;

        let raw = base_raw
            .iter()
            .fold(0u64, |acc, &b| acc << 8 | u64::from(b));
        let sign = 1u64 << (base_bytes * 8 - 1);
        let base = if raw & sign != 0 {
            (raw & !sign).wrapping_neg()
        } else {
            raw
        };

        // Patch positions must strictly increase; those beyond the run are
        // ignored as the Java reader does.
        let mut offsets = [0u64; super::MAX_RUN];
        for (i, o) in offsets[..n].iter_mut().enumerate() {
            *o = unpack(data, i, width);
        }
        let patch_mask = if patch_width == 64 {
            u64::MAX
        } else {
            (1u64 << patch_width) - 1
        };
        let mut at = 0u64;
        let mut last: Option<u64> = None;
        let mut k = 0;
        while k < patches {
            let entry = unpack(list, k, entry_width);
            let gap = entry >> patch_width;
            let patch = entry & patch_mask;
            at += gap;
            k += 1;
            if gap == 255 && patch == 0 {
                // A filler: the next entry continues the gap.
                if k == patches {
                    return Err(StatusCode::InputCorrupt);
                }
                continue;
            }
            if last == Some(at) {
                // Two patches for one value: the Java reader would skip
                // every later patch, so the stream cannot be trusted.
                return Err(StatusCode::InputCorrupt);
            }
            last = Some(at);
            if (at as usize) < n {
                offsets[at as usize] |= patch.checked_shl(width).unwrap_or(0);
            }
        }
        let take = n.min(self.room);
        for (slot, &o) in out[..take].iter_mut().zip(&offsets[..take]) {
            let v = base.wrapping_add(o);
            check::<T>(v)?;
            *slot = T::from_bits(v);
        }
        Ok((take, self.at + 4 + base_bytes + data_len + list.len()))
    }

    fn delta<T: IntElem>(&self, h0: u8, out: &mut [T]) -> RunResult {
        let h1 = self.byte(1)?;
        let code = (h0 >> 1) & 0x1f;
        let width = if code == 0 { 0 } else { decode_width(code) };
        let n = Self::length(h0, h1);
        if width != 0 && n < 2 {
            return Err(StatusCode::InputCorrupt);
        }
        let ty = orc_wire_type(T::TYPE);
        let mut p = self.at + 2;
        let (raw, nb) = varint::read(self.input, p, ty)?;
        p += nb;
        let base = signed_payload(ty, raw);
        let (zz, nb) = varint::read(self.input, p, IntType::I64)?;
        p += nb;
        let step = varint::unzigzag(zz) as u64;
        let take = n.min(self.room);
        if width == 0 {
            for (i, slot) in out[..take].iter_mut().enumerate() {
                let v = base.wrapping_add((i as u64).wrapping_mul(step));
                check::<T>(v)?;
                *slot = T::from_bits(v);
            }
            return Ok((take, p));
        }
        let data = self.bytes(p - self.at, packed_len(n - 2, width))?;
        let down = (step as i64) < 0;
        let mut v = base;
        for (i, slot) in out[..take.min(2)].iter_mut().enumerate() {
            if i == 1 {
                v = v.wrapping_add(step);
            }
            check::<T>(v)?;
            *slot = T::from_bits(v);
        }
        v = base.wrapping_add(step);
        for (i, slot) in out[2.min(take)..take].iter_mut().enumerate() {
            let d = unpack(data, i, width);
            v = if down {
                v.wrapping_sub(d)
            } else {
                v.wrapping_add(d)
            };
            check::<T>(v)?;
            *slot = T::from_bits(v);
        }
        Ok((take, p + data.len()))
    }
}

/// Undoes zigzag for signed streams; unsigned payloads are the value.
#[inline]
fn signed_payload(ty: IntType, raw: u64) -> u64 {
    if ty.is_signed() {
        varint::unzigzag(raw) as u64
    } else {
        raw
    }
}

#[inline]
fn check<T: IntElem>(v: u64) -> Result<(), StatusCode> {
    if in_range(orc_wire_type(T::TYPE), v as i64) {
        Ok(())
    } else {
        Err(StatusCode::ValueOutOfRange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec<T: IntElem>(input: &[u8], n: usize) -> (Vec<T>, ChunkStatus) {
        let mut out = vec![T::default(); n];
        let st = decode(input, &mut out);
        (out, st)
    }

    #[test]
    fn spec_short_repeat() {
        // ORC spec: [0x0a, 0x27, 0x10] is five 10000s (unsigned).
        let (v, st) = dec::<u32>(&[0x0a, 0x27, 0x10], 5);
        assert!(st.is_ok(), "{st}");
        assert_eq!(v, vec![10000; 5]);
    }

    #[test]
    fn spec_direct() {
        let input = [0x5e, 0x03, 0x5c, 0xa1, 0xab, 0x1e, 0xde, 0xad, 0xbe, 0xef];
        let (v, st) = dec::<u32>(&input, 4);
        assert!(st.is_ok(), "{st}");
        assert_eq!(v, vec![23713, 43806, 57005, 48879]);
    }

    #[test]
    fn spec_patched_base() {
        let input = [
            0x8e, 0x13, 0x2b, 0x21, 0x07, 0xd0, 0x1e, 0x00, 0x14, 0x70, 0x28, 0x32, 0x3c, 0x46,
            0x50, 0x5a, 0x64, 0x6e, 0x78, 0x82, 0x8c, 0x96, 0xa0, 0xaa, 0xb4, 0xbe, 0xfc, 0xe8,
        ];
        let (v, st) = dec::<i64>(&input, 20);
        assert!(st.is_ok(), "{st}");
        let want: Vec<i64> = vec![
            2030, 2000, 2020, 1000000, 2040, 2050, 2060, 2070, 2080, 2090, 2100, 2110, 2120, 2130,
            2140, 2150, 2160, 2170, 2180, 2190,
        ];
        assert_eq!(v, want);
    }

    #[test]
    fn spec_delta() {
        let input = [0xc6, 0x09, 0x02, 0x02, 0x22, 0x42, 0x42, 0x46];
        let (v, st) = dec::<u32>(&input, 10);
        assert!(st.is_ok(), "{st}");
        assert_eq!(v, vec![2, 3, 5, 7, 11, 13, 17, 19, 23, 29]);
    }

    #[test]
    fn errors_name_the_failing_run() {
        // SHORT_REPEAT of three 1s, then a DIRECT header cut short.
        let input = [0x00, 0x01, 0x5e];
        let (_, st) = dec::<u16>(&input, 5);
        assert_eq!(st, ChunkStatus::failed(StatusCode::InputTruncated, 2, 3));
        let (_, st) = dec::<u16>(&input[..2], 4);
        assert_eq!(st, ChunkStatus::failed(StatusCode::OutputShort, 2, 3));
        // Wanting fewer values than a run holds cuts it short.
        let (v, st) = dec::<u16>(&input[..2], 2);
        assert_eq!((v, st), (vec![1, 1], ChunkStatus::ok(2)));
        // 300 does not fit a byte.
        let (_, st) = dec::<u8>(&[0x08, 0x01, 0x2c], 3);
        assert_eq!(st, ChunkStatus::failed(StatusCode::ValueOutOfRange, 0, 0));
        // Signed values are 64-bit on the wire and wrap to the element
        // type: zigzag(40000) repeated three times, then a DELTA run with
        // base zigzag(32767) = 65534 and step +1.
        let (v, st) = dec::<i16>(&[0x10, 0x01, 0x38, 0x80], 3);
        assert_eq!((v, st), (vec![-25536; 3], ChunkStatus::ok(3)));
        let (v, st) = dec::<i16>(&[0xc0, 0x02, 0xfe, 0xff, 0x03, 0x02], 3);
        assert_eq!((v, st), (vec![32767, -32768, -32767], ChunkStatus::ok(3)));
        // The same payload unsigned does not fit a u16.
        let (_, st) = dec::<u16>(&[0x10, 0x01, 0x38, 0x80], 3);
        assert_eq!(st, ChunkStatus::failed(StatusCode::ValueOutOfRange, 0, 0));
        // A delta run of one value with delta bits is malformed.
        let (_, st) = dec::<u32>(&[0xc2, 0x00, 0x01, 0x02], 1);
        assert_eq!(st, ChunkStatus::failed(StatusCode::InputCorrupt, 0, 0));
        // Trailing bytes after the last wanted value are not examined.
        let (_, st) = dec::<u8>(&[0x00, 0x01, 0xff], 3);
        assert!(st.is_ok());
    }
}
