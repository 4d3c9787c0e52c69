//! The Huffman byte layout (docs/huffman-format.md): frame header, code
//! section, block directory and block headers, all little-endian.
//!
//! The frame is parsed here, on the CPU, into a decode plan of one job per
//! block. Each job's input starts at the frame's code section and ends at
//! its block's end (jobs share the code section); its `aux` is where its
//! block starts in that input. The code section and block header checks a
//! block decoder makes are written once, in [`CodeSection::parse`] and
//! [`check_block`], and mirrored by `kernels/huffman.cu`.

use super::code::{CanonicalCode, MAX_CODE_LEN};
use crate::error::{Error, Location, Result};
use crate::plan::{ChunkJob, HuffmanDecoder, Stage, StageOp, StatusCode};

/// The frame's first four bytes.
pub const MAGIC: [u8; 4] = *b"WRHF";
/// The newest format version this crate writes and reads: version 2 adds
/// parallel ways (code section byte 3). Frames without ways are written as
/// version 1, which every reader of this format reads.
pub const VERSION: u16 = 2;
/// The version of frames without ways.
pub const VERSION_NO_WAYS: u16 = 1;
/// Bytes of the fixed frame header.
pub const FRAME_HEADER_BYTES: usize = 32;
/// Bytes of the code section's fixed part.
pub const CODE_FIXED_BYTES: usize = 8;
/// Bytes of a block header's fixed part.
pub const BLOCK_FIXED_BYTES: usize = 8;
/// Most decoded bytes in one block: every bit count of a block then fits
/// 32 bits (at most 24 bits a symbol).
pub const MAX_BLOCK_BYTES: u32 = 1 << 26;
/// Most payload bits in one Huffman block (more than the largest block
/// needs at 24 bits a symbol), so that every bit position stays far from
/// 32-bit overflow.
pub const MAX_PAYLOAD_BITS: u32 = 1 << 31;
/// Smallest and largest subsequence of a gap array, as log2 of its bits.
/// A subsequence must be longer than the longest code so that every one
/// but the last holds the start of a codeword.
pub const SUB_LOG2: std::ops::RangeInclusive<u8> = 5..=16;
/// Most parallel ways in one Huffman block, as log2 (1,024 ways).
pub const MAX_WAYS_LOG2: u8 = 10;
/// Block kind: Huffman codes.
pub const KIND_HUFFMAN: u8 = 0;
/// Block kind: the bytes stored as they are (data the code does not
/// shrink).
pub const KIND_RAW: u8 = 1;
/// Bits of the decoders' first-level lookup table (at most): codes up to
/// this long decode with one shared-memory lookup, longer ones through the
/// per-length limits.
pub const LUT_BITS: u32 = 11;

/// `x` rounded up to a multiple of 4.
pub fn align4(x: usize) -> usize {
    x.div_ceil(4) * 4
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Bits of one symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolWidth {
    /// One byte a symbol.
    U8,
    /// Two bytes a symbol, little-endian; an odd last byte is stored raw.
    U16,
}

impl SymbolWidth {
    /// Bytes of one symbol (1 or 2), the code section's first byte.
    pub fn bytes(self) -> usize {
        match self {
            Self::U8 => 1,
            Self::U16 => 2,
        }
    }

    /// Number of symbol values.
    pub fn alphabet(self) -> usize {
        1 << (8 * self.bytes())
    }

    /// The width a code section's first byte names.
    pub fn from_bytes(b: u8) -> Option<Self> {
        match b {
            1 => Some(Self::U8),
            2 => Some(Self::U16),
            _ => None,
        }
    }
}

/// A parsed code section: the canonical code and the gap-array setting, as
/// both decoders see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeSection {
    /// Symbol width.
    pub width: SymbolWidth,
    /// The code (its `max_len` is the header's bound).
    pub code: CanonicalCode,
    /// log2 of the bits of a gap-array subsequence; 0 when blocks carry no
    /// gap arrays.
    pub sub_log2: u8,
    /// log2 of the parallel ways of every Huffman block (E²MC's decoding
    /// ways); 0 for one way, the version 1 layout.
    pub ways_log2: u8,
    /// Bytes the section takes (a multiple of 4).
    pub len: usize,
}

impl CodeSection {
    /// Bytes a section of `n` symbols of `width` with bound `max_len`
    /// takes.
    pub fn bytes_for(width: SymbolWidth, max_len: u32, n: usize) -> usize {
        align4(CODE_FIXED_BYTES + 4 * max_len as usize + n * width.bytes())
    }

    /// Parses and checks the section at the start of `b` (see
    /// [`CodeView::parse`]) into an owned section.
    pub fn parse(b: &[u8]) -> std::result::Result<Self, (StatusCode, u64)> {
        let v = CodeView::parse(b)?;
        Ok(Self {
            width: v.width,
            code: CanonicalCode {
                max_len: v.max_len,
                counts: v.counts[..=v.max_len as usize].to_vec(),
                symbols: (0..v.symbol_count()).map(|i| v.symbol(i)).collect(),
            },
            sub_log2: v.sub_log2,
            ways_log2: v.ways_log2,
            len: v.len,
        })
    }

    /// Appends the section's bytes.
    pub fn write(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.push(self.width.bytes() as u8);
        out.push(self.code.max_len as u8);
        out.push(self.sub_log2);
        out.push(self.ways_log2);
        out.extend_from_slice(&(self.code.symbols.len() as u32).to_le_bytes());
        for l in 1..=self.code.max_len as usize {
            out.extend_from_slice(&self.code.counts[l].to_le_bytes());
        }
        for &s in &self.code.symbols {
            match self.width {
                SymbolWidth::U8 => out.push(s as u8),
                SymbolWidth::U16 => out.extend_from_slice(&s.to_le_bytes()),
            }
        }
        out.resize(start + align4(out.len() - start), 0);
    }
}

/// A checked code section as it lies in a job's input: what a block
/// decoder needs, without copying the symbols.
#[derive(Debug, Clone, Copy)]
pub struct CodeView<'a> {
    /// Symbol width.
    pub width: SymbolWidth,
    /// Longest code the header allows.
    pub max_len: u32,
    /// Codes per length (index 0 unused).
    pub counts: [u32; MAX_CODE_LEN as usize + 1],
    /// log2 of the gap subsequence bits, 0 without gap arrays.
    pub sub_log2: u8,
    /// log2 of the parallel ways of a Huffman block, 0 for one way.
    pub ways_log2: u8,
    /// The symbols in canonical order, `width` bytes each.
    pub symbols: &'a [u8],
    /// Bytes the section takes (a multiple of 4).
    pub len: usize,
}

impl<'a> CodeView<'a> {
    /// Parses and checks the section at the start of `b` (which may go on
    /// past it): the width, the length bound (1..=24), the gap setting,
    /// the ways setting (at most 2^10, never with gaps), symbol count, that the counts add up to it and fit
    /// the code space (Kraft). Errors are the status and the byte offset
    /// of the offending field: the status detail both decoders report.
    pub fn parse(b: &'a [u8]) -> std::result::Result<Self, (StatusCode, u64)> {
        if b.len() < CODE_FIXED_BYTES {
            return Err((StatusCode::InputTruncated, b.len() as u64));
        }
        let width = SymbolWidth::from_bytes(b[0]).ok_or((StatusCode::InputCorrupt, 0))?;
        let max_len = u32::from(b[1]);
        if !(1..=MAX_CODE_LEN).contains(&max_len) {
            return Err((StatusCode::InputCorrupt, 1));
        }
        let sub_log2 = b[2];
        if sub_log2 != 0 && !SUB_LOG2.contains(&sub_log2) {
            return Err((StatusCode::InputCorrupt, 2));
        }
        let ways_log2 = b[3];
        if ways_log2 > MAX_WAYS_LOG2 || ways_log2 != 0 && sub_log2 != 0 {
            return Err((StatusCode::InputCorrupt, 3));
        }
        let n = u32_at(b, 4) as usize;
        if n > width.alphabet() {
            return Err((StatusCode::InputCorrupt, 4));
        }
        let len = CodeSection::bytes_for(width, max_len, n);
        if b.len() < len {
            return Err((StatusCode::InputTruncated, b.len() as u64));
        }
        let mut counts = [0u32; MAX_CODE_LEN as usize + 1];
        let mut sum = 0u64;
        let mut kraft = 0u64;
        for (l, slot) in counts
            .iter_mut()
            .enumerate()
            .take(max_len as usize + 1)
            .skip(1)
        {
            let c = u32_at(b, CODE_FIXED_BYTES + 4 * (l - 1));
            *slot = c;
            sum += u64::from(c);
            kraft += u64::from(c) << (max_len as usize - l);
        }
        if sum != n as u64 || kraft > 1u64 << max_len {
            return Err((StatusCode::InputCorrupt, CODE_FIXED_BYTES as u64));
        }
        let at = CODE_FIXED_BYTES + 4 * max_len as usize;
        Ok(Self {
            width,
            max_len,
            counts,
            sub_log2,
            ways_log2,
            symbols: &b[at..at + n * width.bytes()],
            len,
        })
    }

    /// Parallel ways of a Huffman block.
    pub fn ways(&self) -> u32 {
        1 << self.ways_log2
    }

    /// Number of coded symbols.
    pub fn symbol_count(&self) -> usize {
        self.symbols.len() / self.width.bytes()
    }

    /// The `i`-th symbol in canonical order.
    #[inline]
    pub fn symbol(&self, i: usize) -> u16 {
        match self.width {
            SymbolWidth::U8 => u16::from(self.symbols[i]),
            SymbolWidth::U16 => u16_at(self.symbols, 2 * i),
        }
    }
}

/// A checked block header: where its parts lie in the job's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockLayout {
    /// [`KIND_HUFFMAN`] or [`KIND_RAW`].
    pub kind: u8,
    /// The raw last byte, if the block's size is odd (16-bit symbols).
    pub tail: Option<u8>,
    /// Payload bits (Huffman) or bytes (raw).
    pub payload: u32,
    /// Gap-array entries (0 without gap arrays or for raw blocks).
    pub gaps: u32,
    /// Job-input offset of the gap array, or of the way directory (the
    /// bit count of every way but the last) with ways.
    pub gaps_at: usize,
    /// Job-input offset of the payload.
    pub payload_at: usize,
    /// Job-input offset of the block's end (header, gaps or way directory,
    /// and payload).
    pub end: usize,
}

/// Checks the header of the block at `aux` in a job's `input` that must
/// decode to `values` bytes under `code`. The order of the checks is the
/// order `kernels/huffman.cu` makes them in; the error is the status and
/// its detail (a job-input byte offset).
pub fn check_block(
    input: &[u8],
    aux: u64,
    values: u64,
    code: &CodeView<'_>,
) -> std::result::Result<BlockLayout, (StatusCode, u64)> {
    let len = input.len() as u64;
    if !aux.is_multiple_of(4) || aux < code.len as u64 || aux > len {
        return Err((StatusCode::InputCorrupt, aux.min(len)));
    }
    if len - aux < BLOCK_FIXED_BYTES as u64 {
        return Err((StatusCode::InputTruncated, len));
    }
    let at = aux as usize;
    let (kind, tail_flag, tail_byte, reserved) =
        (input[at], input[at + 1], input[at + 2], input[at + 3]);
    let payload = u32_at(input, at + 4);
    let sb = code.width.bytes() as u64;
    let odd = !values.is_multiple_of(sb);
    if kind > KIND_RAW || tail_flag > 1 || reserved != 0 || (tail_flag == 1) != (odd && kind == 0) {
        return Err((StatusCode::InputCorrupt, aux));
    }
    if kind == KIND_RAW && tail_byte != 0
        || kind == KIND_HUFFMAN && tail_flag == 0 && tail_byte != 0
    {
        return Err((StatusCode::InputCorrupt, aux + 2));
    }
    if kind == KIND_HUFFMAN && payload > MAX_PAYLOAD_BITS {
        return Err((StatusCode::InputCorrupt, aux + 4));
    }
    let gaps_at = at + BLOCK_FIXED_BYTES;
    let (gaps, payload_at, end) = if kind == KIND_RAW {
        if u64::from(payload) != values {
            return Err((StatusCode::InputCorrupt, aux + 4));
        }
        (0, gaps_at, gaps_at as u64 + align4(payload as usize) as u64)
    } else {
        let gaps = if code.sub_log2 == 0 {
            0
        } else {
            (u64::from(payload)).div_ceil(1 << code.sub_log2) as u32
        };
        let payload_at = gaps_at + align4(gaps as usize) + directory_bytes(code.ways());
        let words = u64::from(payload).div_ceil(32);
        (gaps, payload_at, payload_at as u64 + 4 * words)
    };
    if end > len {
        return Err((StatusCode::InputTruncated, len));
    }
    Ok(BlockLayout {
        kind,
        tail: (tail_flag == 1).then_some(tail_byte),
        payload,
        gaps,
        gaps_at,
        payload_at,
        end: end as usize,
    })
}

/// The symbols of way `v` of a block of `nsym` symbols in `ways` ways:
/// ⌈nsym / ways⌉ a way in order, the last ways shorter or empty.
pub fn way_symbols(nsym: u64, ways: u32, v: u32) -> std::ops::Range<u64> {
    let q = nsym.div_ceil(u64::from(ways));
    let a = (u64::from(v) * q).min(nsym);
    a..(a + q).min(nsym)
}

/// Bytes of a way directory of `ways` ways: a 16-bit bit count for every
/// way but the last, padded to 4.
pub fn directory_bytes(ways: u32) -> usize {
    align4(2 * (ways as usize - 1))
}

/// Most bits of one way (its directory entry is 16 bits).
pub const MAX_WAY_BITS: u64 = u16::MAX as u64;

/// The payload bit range of every way of a Huffman block with `ways` ways,
/// from its directory (at `layout.gaps_at`: the bit count of each way but
/// the last): the ways lie back to back from bit 0, the last ending at the
/// payload's end. The error is the offset of the first entry whose way
/// would end past the payload.
pub fn way_bits(
    input: &[u8],
    layout: &BlockLayout,
    ways: u32,
) -> std::result::Result<Vec<std::ops::Range<u32>>, (StatusCode, u64)> {
    let p = u64::from(layout.payload);
    let mut out = Vec::with_capacity(ways as usize);
    let mut start = 0u64;
    for v in 0..ways as usize - 1 {
        let at = layout.gaps_at + 2 * v;
        let end = start + u64::from(u16_at(input, at));
        if end > p {
            return Err((StatusCode::InputCorrupt, at as u64));
        }
        out.push(start as u32..end as u32);
        start = end;
    }
    out.push(start as u32..p as u32);
    Ok(out)
}

/// A parsed frame: its code section and where each block lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Total decoded bytes.
    pub total: u64,
    /// Decoded bytes of every block but the last.
    pub block_bytes: u32,
    /// The code section.
    pub code: CodeSection,
    /// Frame offset of the code section.
    pub code_at: u64,
    /// Per block: frame byte range.
    pub blocks: Vec<std::ops::Range<u64>>,
}

impl Frame {
    /// Parses and checks a frame's header, code section and directory
    /// (not the blocks: their decoders check them).
    pub fn parse(frame: &[u8], location: &Location) -> Result<Self> {
        let bad = |why: String| Error::Format {
            format: "Huffman",
            location: Box::new(location.clone()),
            message: why,
        };
        if frame.len() < FRAME_HEADER_BYTES {
            return Err(bad(format!(
                "{} bytes, shorter than its header",
                frame.len()
            )));
        }
        if frame[..4] != MAGIC {
            return Err(bad("bad magic".into()));
        }
        let version = u16_at(frame, 4);
        if !(VERSION_NO_WAYS..=VERSION).contains(&version) {
            return Err(bad(format!(
                "version {version} (this reader reads {VERSION_NO_WAYS} to {VERSION})"
            )));
        }
        if u16_at(frame, 6) != 0 || u32_at(frame, 28) != 0 {
            return Err(bad("reserved header fields are not zero".into()));
        }
        let total = u64_at(frame, 8);
        let block_bytes = u32_at(frame, 16);
        let count = u32_at(frame, 20) as usize;
        let code_len = u32_at(frame, 24) as usize;
        let code_at = FRAME_HEADER_BYTES;
        let code = CodeSection::parse(&frame[code_at..])
            .map_err(|(s, at)| bad(format!("code section: {s:?} at byte {at}")))?;
        if version == VERSION_NO_WAYS && code.ways_log2 != 0 {
            return Err(bad(format!(
                "a version {version} frame with {} ways a block",
                1u32 << code.ways_log2
            )));
        }
        if code.len != code_len {
            return Err(bad(format!(
                "code section of {code_len} bytes, its fields take {}",
                code.len
            )));
        }
        if block_bytes == 0
            || block_bytes > MAX_BLOCK_BYTES
            || !(block_bytes as usize).is_multiple_of(code.width.bytes())
        {
            return Err(bad(format!("block size {block_bytes}")));
        }
        let want = total.div_ceil(u64::from(block_bytes));
        if count as u64 != want {
            return Err(bad(format!(
                "{count} blocks for {total} bytes in blocks of {block_bytes}"
            )));
        }
        let dir = code_at + code_len;
        let mut at = (dir as u64)
            .checked_add(4 * count as u64)
            .filter(|&a| a <= frame.len() as u64)
            .ok_or_else(|| bad(format!("directory of {count} blocks past the frame's end")))?;
        let mut blocks = Vec::with_capacity(count);
        for i in 0..count {
            let size = u64::from(u32_at(frame, dir + 4 * i));
            if size < BLOCK_FIXED_BYTES as u64 || size % 4 != 0 {
                return Err(bad(format!("block {i} of {size} bytes")));
            }
            blocks.push(at..at + size);
            at += size;
        }
        if at != frame.len() as u64 {
            return Err(bad(format!(
                "blocks end at byte {at} of a {}-byte frame",
                frame.len()
            )));
        }
        Ok(Self {
            total,
            block_bytes,
            code,
            code_at: code_at as u64,
            blocks,
        })
    }

    /// Decoded bytes of block `i`.
    pub fn block_values(&self, i: usize) -> u64 {
        let start = i as u64 * u64::from(self.block_bytes);
        (self.total - start).min(u64::from(self.block_bytes))
    }

    /// One job per block for `decoder`, the frame lying at byte `base` of
    /// the stage input (which must be a multiple of 4), its output at
    /// element `output_offset` of a stage output of `output_values`.
    pub fn jobs(&self, base: u64, output_offset: u64) -> Vec<ChunkJob> {
        let start = base + self.code_at;
        (0..self.blocks.len())
            .map(|i| ChunkJob {
                input: start..base + self.blocks[i].end,
                output_offset: output_offset + i as u64 * u64::from(self.block_bytes),
                values: self.block_values(i),
                aux: self.blocks[i].start - self.code_at,
            })
            .collect()
    }

    /// The stage that decodes the whole frame (the stage input) with
    /// `decoder`.
    pub fn stage(&self, decoder: HuffmanDecoder, location: Location) -> Stage {
        Stage {
            op: StageOp::Huffman(decoder),
            jobs: self.jobs(0, 0),
            output_values: self.total,
            location,
        }
    }
}

/// Writes a frame header, `code` and the directory of blocks of the given
/// sizes; the blocks follow.
pub fn write_frame_head(
    total: u64,
    block_bytes: u32,
    code: &CodeSection,
    sizes: &[u32],
    out: &mut Vec<u8>,
) {
    let version = if code.ways_log2 == 0 {
        VERSION_NO_WAYS
    } else {
        VERSION
    };
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&block_bytes.to_le_bytes());
    out.extend_from_slice(&(sizes.len() as u32).to_le_bytes());
    out.extend_from_slice(&(code.len as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    code.write(out);
    for s in sizes {
        out.extend_from_slice(&s.to_le_bytes());
    }
}
