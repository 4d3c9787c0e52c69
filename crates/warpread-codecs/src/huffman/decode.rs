//! The CPU reference block decoder, and the lookup tables both it and the
//! kernels build from a code section.
//!
//! A block is valid when decoding it from its first bit yields exactly the
//! job's symbols, ending exactly at its last payload bit, and every gap
//! (if present) names the first codeword start at or after its
//! subsequence's boundary. A block in ways is valid when its directory is
//! valid and each way, decoded from its first bit, yields exactly its share of
//! the symbols ending exactly at its last bit; the ways are checked in
//! order. The decoder walks the codewords in order and
//! reports the first event that breaks this, in bit order; at one bit
//! position a gap mismatch comes before an overflow, which comes before a
//! bad or truncated codeword. The GPU decoders find the same first event
//! from many starting points (`kernels/huffman.cu`).

use super::format::{
    BlockLayout, CodeView, KIND_RAW, LUT_BITS, SymbolWidth, check_block, way_bits, way_symbols,
};
use crate::plan::{ChunkStatus, StatusCode};

/// Decoding tables of a canonical code.
#[derive(Debug, Clone)]
pub struct DecodeTables<'a> {
    /// Bits indexing [`lut`](Self::lut): min(max_len, [`LUT_BITS`]).
    pub lut_bits: u32,
    /// Per `lut_bits`-bit prefix: `symbol | length << 16` of the code it
    /// starts with, or 0 when no code of at most `lut_bits` bits does.
    pub lut: Vec<u32>,
    /// Per length `l`: first code of that length.
    pub first: [u32; 25],
    /// Per length: index of its first code's symbol.
    pub offset: [u32; 25],
    /// The code section.
    pub code: CodeView<'a>,
}

impl<'a> DecodeTables<'a> {
    /// Tables for a checked code section.
    pub fn new(code: CodeView<'a>) -> Self {
        let l_max = code.max_len as usize;
        let lut_bits = code.max_len.min(LUT_BITS);
        let mut first = [0u32; 25];
        let mut offset = [0u32; 25];
        let (mut next, mut idx) = (0u32, 0u32);
        let mut lut = vec![0u32; 1 << lut_bits];
        for l in 1..=l_max {
            first[l] = next;
            offset[l] = idx;
            if l as u32 <= lut_bits {
                let shift = lut_bits - l as u32;
                for k in 0..code.counts[l] {
                    let entry = u32::from(code.symbol((idx + k) as usize)) | (l as u32) << 16;
                    let lo = ((next + k) << shift) as usize;
                    lut[lo..lo + (1 << shift)].fill(entry);
                }
            }
            // Kraft's check keeps `next` within l + 1 bits here.
            next = (next + code.counts[l]) << 1;
            idx += code.counts[l];
        }
        Self {
            lut_bits,
            lut,
            first,
            offset,
            code,
        }
    }

    /// The codeword at the top of `window` (the next 32 stream bits):
    /// (symbol, length), or `None` for bits no code starts with.
    #[inline]
    pub fn decode(&self, window: u32) -> Option<(u16, u32)> {
        let e = self.lut[(window >> (32 - self.lut_bits)) as usize];
        if e != 0 {
            return Some((e as u16, e >> 16));
        }
        for l in self.lut_bits + 1..=self.code.max_len {
            let c = window >> (32 - l);
            let k = c.wrapping_sub(self.first[l as usize]);
            if k < self.code.counts[l as usize] {
                let i = (self.offset[l as usize] + k) as usize;
                return Some((self.code.symbol(i), l));
            }
        }
        None
    }
}

/// The 32 stream bits from bit `pos` of a payload of `words` 32-bit words
/// (bits past the last word read as zeros). Stream bit `i` is bit
/// `31 - i % 32` of word `i / 32`.
#[inline]
pub fn window(payload: &[u8], words: usize, pos: u32) -> u32 {
    let w = (pos / 32) as usize;
    let word = |i: usize| {
        if i < words {
            u32::from_le_bytes(payload[4 * i..4 * i + 4].try_into().expect("4 bytes"))
        } else {
            0
        }
    };
    let pair = u64::from(word(w)) << 32 | u64::from(word(w + 1));
    ((pair << (pos % 32)) >> 32) as u32
}

/// Decodes one job: `input` from the frame's code section to the end of its
/// block, which starts at `aux`; `abs_start` is the input's offset in the
/// stage input (it must be a multiple of 4, for the kernels' word loads);
/// `out` takes the job's decoded bytes.
pub fn decode_block(input: &[u8], abs_start: u64, aux: u64, out: &mut [u8]) -> ChunkStatus {
    if !abs_start.is_multiple_of(4) {
        return ChunkStatus::failed(StatusCode::InputCorrupt, 0, 0);
    }
    let section = match CodeView::parse(input) {
        Ok(s) => s,
        Err((code, at)) => return ChunkStatus::failed(code, at, 0),
    };
    let layout = match check_block(input, aux, out.len() as u64, &section) {
        Ok(l) => l,
        Err((code, at)) => return ChunkStatus::failed(code, at, 0),
    };
    if layout.kind == KIND_RAW {
        out.copy_from_slice(&input[layout.payload_at..layout.payload_at + out.len()]);
        return ChunkStatus::ok(out.len() as u64);
    }
    let tables = DecodeTables::new(section);
    decode_payload(input, &tables, &layout, out)
}

/// Decodes a Huffman block's ways in order (one way without a directory;
/// see the module docs for what is checked, in which order).
fn decode_payload(
    input: &[u8],
    tables: &DecodeTables<'_>,
    layout: &BlockLayout,
    out: &mut [u8],
) -> ChunkStatus {
    let section = &tables.code;
    let sb = section.width.bytes();
    if let Some(t) = layout.tail
        && let Some(last) = out.last_mut()
    {
        *last = t;
    }
    let nsym = out.len() / sb;
    let p = layout.payload;
    let words = p.div_ceil(32) as usize;
    let payload = Payload {
        bytes: &input[layout.payload_at..layout.payload_at + 4 * words],
        words,
        at: layout.payload_at,
    };
    let ways = section.ways();
    if ways == 1 {
        let gaps = &input[layout.gaps_at..layout.gaps_at + layout.gaps as usize];
        let sub = if section.sub_log2 == 0 {
            0
        } else {
            1u64 << section.sub_log2
        };
        return walk(tables, &payload, 0..p, gaps, sub, 0..nsym, out)
            .unwrap_or_else(|| ChunkStatus::ok(out.len() as u64));
    }
    let bits = match way_bits(input, layout, ways) {
        Ok(b) => b,
        Err((code, at)) => return ChunkStatus::failed(code, at, 0),
    };
    for (v, range) in bits.into_iter().enumerate() {
        let syms = way_symbols(nsym as u64, ways, v as u32);
        let syms = syms.start as usize..syms.end as usize;
        if let Some(failed) = walk(tables, &payload, range, &[], 0, syms, out) {
            return failed;
        }
    }
    ChunkStatus::ok(out.len() as u64)
}

/// A block's payload words and their job-input offset.
struct Payload<'a> {
    bytes: &'a [u8],
    words: usize,
    at: usize,
}

/// Walks the codewords of payload bits `bits` into symbols `syms` of
/// `out`, checking the gaps (subsequences of `sub` bits, counted from bit
/// 0) when there are any; `None` when the walk yields exactly those
/// symbols and ends exactly at the range's end, else the first problem.
fn walk(
    tables: &DecodeTables<'_>,
    payload: &Payload<'_>,
    bits: std::ops::Range<u32>,
    gaps: &[u8],
    sub: u64,
    syms: std::ops::Range<usize>,
    out: &mut [u8],
) -> Option<ChunkStatus> {
    let sb = tables.code.width.bytes();
    let p = bits.end;
    let at = |pos: u32| (payload.at + pos as usize / 8) as u64;
    let fail = |code, pos, produced: usize| {
        Some(ChunkStatus::failed(code, at(pos), (produced * sb) as u64))
    };
    let (mut pos, mut j, mut produced) = (bits.start, 0usize, syms.start);
    loop {
        while j < gaps.len() && j as u64 * sub <= u64::from(pos) {
            if u64::from(pos) != j as u64 * sub + u64::from(gaps[j]) {
                return fail(StatusCode::InputCorrupt, pos, produced);
            }
            j += 1;
        }
        if produced == syms.end {
            if pos != p {
                return fail(StatusCode::OutputOverflow, pos, produced);
            }
            return None;
        }
        if pos >= p {
            return fail(StatusCode::OutputShort, p, produced);
        }
        let Some((sym, len)) = tables.decode(window(payload.bytes, payload.words, pos)) else {
            return fail(StatusCode::InputCorrupt, pos, produced);
        };
        if len > p - pos {
            return fail(StatusCode::InputTruncated, pos, produced);
        }
        match tables.code.width {
            SymbolWidth::U8 => out[produced] = sym as u8,
            SymbolWidth::U16 => {
                out[2 * produced..2 * produced + 2].copy_from_slice(&sym.to_le_bytes())
            }
        }
        produced += 1;
        pos += len;
    }
}

#[cfg(test)]
mod tests {
    use super::super::code::CanonicalCode;
    use super::*;

    #[test]
    fn window_reads_msb_first_across_words() {
        let payload = [0x78, 0x56, 0x34, 0x12, 0xF0, 0xDE, 0xBC, 0x9A];
        assert_eq!(window(&payload, 2, 0), 0x1234_5678);
        assert_eq!(window(&payload, 2, 4), 0x2345_6789);
        assert_eq!(window(&payload, 2, 32), 0x9ABC_DEF0);
        assert_eq!(window(&payload, 2, 40), 0xBCDE_F000);
        assert_eq!(window(&payload, 1, 8), 0x3456_7800);
    }

    #[test]
    fn tables_decode_short_and_long_codes() {
        // Lengths 1, 2, two codes of 14 bits and ten of 15: the long
        // ones go past the 11-bit table.
        let mut lengths = vec![0u32; 20];
        lengths[7] = 1;
        lengths[3] = 2;
        for l in lengths.iter_mut().skip(8).take(2) {
            *l = 14;
        }
        for l in lengths.iter_mut().skip(10) {
            *l = 15;
        }
        let code = CanonicalCode::from_lengths(&lengths, 15).unwrap();
        let section = super::super::format::CodeSection {
            width: SymbolWidth::U8,
            len: super::super::format::CodeSection::bytes_for(SymbolWidth::U8, 15, 12),
            code: code.clone(),
            sub_log2: 0,
            ways_log2: 0,
        };
        let mut bytes = Vec::new();
        section.write(&mut bytes);
        let t = DecodeTables::new(CodeView::parse(&bytes).unwrap());
        for (s, (c, l)) in code.encode_table(20).into_iter().enumerate() {
            if l == 0 {
                continue;
            }
            let w = c << (32 - l) | (0x5555_5555 >> l);
            assert_eq!(t.decode(w), Some((s as u16, l)), "symbol {s}");
        }
        // The code space is not full: the last 15-bit prefixes are unused.
        assert_eq!(t.decode(u32::MAX), None);
    }
}
