//! The GSST byte layout (docs/gsst-format.md): frame header, block
//! directory, block headers and split tables, all little-endian.
//!
//! The frame is parsed here, on the CPU, into a decode plan; block headers
//! are checked by both decoders (the CPU reference in `decode.rs` and the
//! kernels), which must classify every block identically. The checks a
//! block decoder makes are written once, in [`check_block`], and mirrored by
//! `kernels/gsst.cu`.

use crate::error::{Error, Location, Result};
use crate::plan::{ChunkJob, ChunkStatus, GsstLayout, Stage, StageOp, StatusCode};

/// The frame's first four bytes.
pub const MAGIC: [u8; 4] = *b"GSST";
/// The format version this crate writes and reads.
pub const VERSION: u16 = 1;
/// Bytes of the fixed frame header.
pub const FRAME_HEADER_BYTES: usize = 32;
/// Bytes of one block directory entry (compressed size, uncompressed size).
pub const DIRECTORY_ENTRY_BYTES: usize = 8;
/// Bytes of a block header's fixed part.
pub const BLOCK_FIXED_BYTES: usize = 16;
/// Bytes of one split table entry (code end, output end).
pub const SPLIT_ENTRY_BYTES: usize = 8;
/// Alignment of blocks and of the codes region; also the granule in which
/// the coalesced layout interleaves splits, and the GPU's transfer size.
pub const ALIGN: usize = 16;
/// Most splits one block may have (the kernels keep per-split state for at
/// most this many).
pub const MAX_SPLITS: usize = 1024;
/// Most uncompressed bytes in one block: codes of a block stay below 2 GiB
/// even if every byte is escaped, so every size fits 32 bits.
pub const MAX_BLOCK_BYTES: usize = 1 << 30;
/// The code that escapes the following byte.
pub const ESCAPE: u8 = 255;
/// Most symbols in a table (codes 0..=254).
pub const MAX_SYMBOLS: usize = 255;
/// Most bytes one symbol stands for, and so the most output one code byte
/// gives: a block's uncompressed size is at most this times its codes.
pub const MAX_SYMBOL_BYTES: usize = 8;

/// `x` rounded up to a multiple of [`ALIGN`].
pub fn align_up(x: usize) -> usize {
    x.div_ceil(ALIGN) * ALIGN
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Bytes of a block header before its codes: fixed part, split table,
/// symbols and lengths, padded to [`ALIGN`].
pub fn block_header_bytes(splits: usize, symbols: usize) -> usize {
    align_up(BLOCK_FIXED_BYTES + SPLIT_ENTRY_BYTES * splits + 9 * symbols)
}

/// A parsed frame: where each block lies and how big it decodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Code layout of every block.
    pub layout: GsstLayout,
    /// Total uncompressed bytes.
    pub uncompressed: u64,
    /// Per block: byte range in the frame and uncompressed size.
    pub blocks: Vec<BlockEntry>,
}

/// One block of a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockEntry {
    /// Frame offset of the block's first byte (a multiple of 16).
    pub offset: u64,
    /// Bytes of the block, header and padding included.
    pub compressed: u32,
    /// Bytes the block decodes to.
    pub uncompressed: u32,
}

fn malformed(location: &Location, detail: impl Into<String>) -> Error {
    Error::Format {
        format: "GSST",
        location: Box::new(location.clone()),
        message: detail.into(),
    }
}

impl Frame {
    /// Parses and checks a frame's header and block directory against the
    /// frame's length. Block contents are checked by the block decoders.
    pub fn parse(frame: &[u8], location: &Location) -> Result<Self> {
        let bad = |d: String| malformed(location, d);
        if frame.len() < FRAME_HEADER_BYTES {
            return Err(bad(format!(
                "{} bytes is shorter than the {FRAME_HEADER_BYTES}-byte frame header",
                frame.len()
            )));
        }
        if frame[..4] != MAGIC {
            return Err(bad("not a GSST frame (bad magic)".into()));
        }
        let version = u16_at(frame, 4);
        if version != VERSION {
            return Err(bad(format!(
                "version {version} (this reader knows {VERSION})"
            )));
        }
        let layout = GsstLayout::from_code(frame[6])
            .ok_or_else(|| bad(format!("unknown layout {}", frame[6])))?;
        if frame[7] != 0 || u32_at(frame, 12) != 0 {
            return Err(bad("reserved header bytes are not zero".into()));
        }
        let count = u32_at(frame, 8) as usize;
        let uncompressed = u64_at(frame, 16);
        let length = u64_at(frame, 24);
        if length != frame.len() as u64 {
            return Err(bad(format!(
                "header says {length} bytes, frame has {}",
                frame.len()
            )));
        }
        let dir_end = count
            .checked_mul(DIRECTORY_ENTRY_BYTES)
            .and_then(|d| d.checked_add(FRAME_HEADER_BYTES))
            .filter(|&e| e <= frame.len())
            .ok_or_else(|| bad(format!("directory of {count} blocks exceeds the frame")))?;
        let mut offset = align_up(dir_end) as u64;
        let mut blocks = Vec::with_capacity(count);
        let mut total = 0u64;
        for i in 0..count {
            let at = FRAME_HEADER_BYTES + i * DIRECTORY_ENTRY_BYTES;
            let compressed = u32_at(frame, at);
            let size = u32_at(frame, at + 4);
            if !(compressed as usize).is_multiple_of(ALIGN)
                || (compressed as usize) < BLOCK_FIXED_BYTES
            {
                return Err(bad(format!(
                    "block {i}: compressed size {compressed} is not a positive multiple of {ALIGN}"
                )));
            }
            if size as usize > MAX_BLOCK_BYTES {
                return Err(bad(format!(
                    "block {i}: {size} uncompressed bytes exceed the {MAX_BLOCK_BYTES}-byte limit"
                )));
            }
            // The decoders allocate the output before reading a block, so
            // a size its codes cannot produce is refused here: every code
            // byte gives at most one symbol, of at most 8 bytes.
            let codes_max = (compressed as usize).saturating_sub(block_header_bytes(1, 0));
            if size as usize > MAX_SYMBOL_BYTES * codes_max {
                return Err(bad(format!(
                    "block {i}: {size} uncompressed bytes from a {compressed}-byte block \
                     (at most {MAX_SYMBOL_BYTES} per code byte)"
                )));
            }
            blocks.push(BlockEntry {
                offset,
                compressed,
                uncompressed: size,
            });
            offset += u64::from(compressed);
            total += u64::from(size);
        }
        if offset != frame.len() as u64 {
            return Err(bad(format!(
                "blocks end at byte {offset}, frame has {} bytes",
                frame.len()
            )));
        }
        if total != uncompressed {
            return Err(bad(format!(
                "blocks decode to {total} bytes, header says {uncompressed}"
            )));
        }
        Ok(Self {
            layout,
            uncompressed,
            blocks,
        })
    }

    /// The decode stage of this frame: one job per block, the frame itself
    /// as the stage input, outputs back to back.
    pub fn stage(&self, location: Location) -> Stage {
        let mut out = 0u64;
        let jobs = self
            .blocks
            .iter()
            .map(|b| {
                let job = ChunkJob {
                    input: b.offset..b.offset + u64::from(b.compressed),
                    output_offset: out,
                    values: u64::from(b.uncompressed),
                    aux: 0,
                };
                out += u64::from(b.uncompressed);
                job
            })
            .collect();
        Stage {
            op: StageOp::Gsst(self.layout),
            jobs,
            output_values: self.uncompressed,
            location,
        }
    }
}

/// Writes a frame header and directory for blocks of the given (compressed,
/// uncompressed) sizes; the blocks follow at [`frame_data_offset`].
pub fn write_frame_header(layout: GsstLayout, sizes: &[(u32, u32)], out: &mut Vec<u8>) {
    let start = out.len();
    let data = frame_data_offset(sizes.len());
    let total: u64 = sizes.iter().map(|s| u64::from(s.1)).sum();
    let length = data as u64 + sizes.iter().map(|s| u64::from(s.0)).sum::<u64>();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.push(layout.code());
    out.push(0);
    out.extend_from_slice(&(sizes.len() as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&length.to_le_bytes());
    for &(c, u) in sizes {
        out.extend_from_slice(&c.to_le_bytes());
        out.extend_from_slice(&u.to_le_bytes());
    }
    out.resize(start + data, 0);
}

/// Frame offset of the first block for a frame of `blocks` blocks.
pub fn frame_data_offset(blocks: usize) -> usize {
    align_up(FRAME_HEADER_BYTES + DIRECTORY_ENTRY_BYTES * blocks)
}

/// A block header that passed [`check_block`].
#[derive(Debug, Clone, Copy)]
pub struct BlockHeader {
    /// Splits.
    pub splits: usize,
    /// Symbols in the table.
    pub symbols: usize,
    /// Byte offset of the codes region in the block.
    pub codes_at: usize,
    /// Bytes of the codes region.
    pub codes_len: usize,
    /// Uncompressed bytes.
    pub uncompressed: usize,
}

impl BlockHeader {
    /// Block offset of the split table entry of split `s`.
    pub fn split_entry_at(s: usize) -> usize {
        BLOCK_FIXED_BYTES + SPLIT_ENTRY_BYTES * s
    }

    /// Block offset of the symbol table.
    pub fn symbols_at(&self) -> usize {
        BLOCK_FIXED_BYTES + SPLIT_ENTRY_BYTES * self.splits
    }

    /// Block offset of the symbol lengths.
    pub fn lengths_at(&self) -> usize {
        self.symbols_at() + 8 * self.symbols
    }

    /// (code end, output end) of split `s`, cumulative from the block's start.
    pub fn split_end(block: &[u8], s: usize) -> (u32, u32) {
        let at = Self::split_entry_at(s);
        (u32_at(block, at), u32_at(block, at + 4))
    }

    /// Symbol `c` of the table, bytes past its length cleared.
    pub fn symbol(&self, block: &[u8], c: usize) -> (u64, u32) {
        let len = u32::from(block[self.lengths_at() + c]);
        let raw = u64_at(block, self.symbols_at() + 8 * c);
        let mask = if len >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * len)) - 1
        };
        (raw & mask, len)
    }
}

fn fail(code: StatusCode, at: usize) -> ChunkStatus {
    ChunkStatus::failed(code, at as u64, 0)
}

/// Checks a block's header, split table and symbol lengths in byte order and
/// returns the first failure, exactly as `kernels/gsst.cu` classifies it:
///
/// 1. the block starts 16-byte aligned in the stage input (`stage_offset`),
///    else `InputCorrupt` at 0; it is at least 16 bytes, else
///    `InputTruncated` at 0;
/// 2. compressed size = the job's input length (`InputCorrupt` at 0);
/// 3. uncompressed size = the job's value count (`InputCorrupt` at 4);
/// 4. 1 ≤ splits ≤ [`MAX_SPLITS`] (`InputCorrupt` at 8);
/// 5. the layout byte names the stage's layout (`InputCorrupt` at 11);
/// 6. header + codes fit the block (`InputTruncated` at 12) and the block is
///    exactly that, padded to 16 (`InputCorrupt` at 12);
/// 7. split entries in order: code and output ends never decrease; the last
///    output end is the uncompressed size and the last code end accounts for
///    the codes region (the code count in the splits layout; in the coalesced
///    layout the region is `rows × splits × 16` bytes, `rows` the largest
///    split's code count divided by 16, rounded up) (`InputCorrupt` at the
///    entry);
/// 8. every symbol length is 1..=8 (`InputCorrupt` at the length byte).
pub fn check_block(
    block: &[u8],
    stage_offset: u64,
    values: u64,
    layout: GsstLayout,
) -> std::result::Result<BlockHeader, ChunkStatus> {
    use StatusCode::{InputCorrupt, InputTruncated};
    if !stage_offset.is_multiple_of(ALIGN as u64) {
        return Err(fail(InputCorrupt, 0));
    }
    if block.len() < BLOCK_FIXED_BYTES {
        return Err(fail(InputTruncated, 0));
    }
    if u32_at(block, 0) as usize != block.len() {
        return Err(fail(InputCorrupt, 0));
    }
    let uncompressed = u32_at(block, 4);
    if u64::from(uncompressed) != values {
        return Err(fail(InputCorrupt, 4));
    }
    let splits = usize::from(u16_at(block, 8));
    if splits == 0 || splits > MAX_SPLITS {
        return Err(fail(InputCorrupt, 8));
    }
    let symbols = usize::from(block[10]);
    if block[11] != layout.code() {
        return Err(fail(InputCorrupt, 11));
    }
    let codes_len = u32_at(block, 12) as usize;
    let codes_at = block_header_bytes(splits, symbols);
    if codes_at + codes_len > block.len() {
        return Err(fail(InputTruncated, 12));
    }
    if align_up(codes_at + codes_len) != block.len() {
        return Err(fail(InputCorrupt, 12));
    }
    let (mut code_prev, mut out_prev, mut longest) = (0u32, 0u32, 0u32);
    for s in 0..splits {
        let (code_end, out_end) = BlockHeader::split_end(block, s);
        let mut ok = code_end >= code_prev && out_end >= out_prev;
        longest = longest.max(code_end.wrapping_sub(code_prev));
        if s + 1 == splits {
            let region = match layout {
                GsstLayout::Splits => u64::from(code_end),
                GsstLayout::Coalesced => {
                    u64::from(longest.div_ceil(ALIGN as u32)) * (splits * ALIGN) as u64
                }
            };
            ok &= out_end == uncompressed && region == codes_len as u64;
        }
        if !ok {
            return Err(fail(InputCorrupt, BlockHeader::split_entry_at(s)));
        }
        (code_prev, out_prev) = (code_end, out_end);
    }
    let header = BlockHeader {
        splits,
        symbols,
        codes_at,
        codes_len,
        uncompressed: uncompressed as usize,
    };
    let lengths = header.lengths_at();
    if let Some(c) = block[lengths..lengths + symbols]
        .iter()
        .position(|&l| !(1..=8).contains(&l))
    {
        return Err(fail(InputCorrupt, lengths + c));
    }
    Ok(header)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_sizes_are_aligned() {
        assert_eq!(block_header_bytes(1, 0), 32);
        assert_eq!(block_header_bytes(192, 255), align_up(16 + 1536 + 2295));
        assert_eq!(frame_data_offset(0), 32);
        assert_eq!(frame_data_offset(1), 48);
        assert_eq!(frame_data_offset(2), 48);
    }

    #[test]
    fn empty_frame_round_trips_its_header() {
        let mut f = Vec::new();
        write_frame_header(GsstLayout::Coalesced, &[], &mut f);
        let parsed = Frame::parse(&f, &Location::default()).unwrap();
        assert_eq!(parsed.layout, GsstLayout::Coalesced);
        assert!(parsed.blocks.is_empty());
        assert_eq!(parsed.stage(Location::default()).output_values, 0);
    }

    #[test]
    fn frame_parse_rejects_damage() {
        let mut f = Vec::new();
        write_frame_header(GsstLayout::Splits, &[(32, 0)], &mut f);
        f.resize(f.len() + 32, 0);
        Frame::parse(&f, &Location::default()).unwrap();
        for (at, v) in [
            (0, b'X'),
            (4, 9),
            (6, 7),
            (7, 1),
            (12, 1),
            (24, 1),
            (32, 17),
        ] {
            let mut g = f.clone();
            g[at] = v;
            assert!(Frame::parse(&g, &Location::default()).is_err(), "byte {at}");
        }
        for cut in 0..f.len() {
            assert!(Frame::parse(&f[..cut], &Location::default()).is_err());
        }
    }

    #[test]
    fn frame_parse_bounds_sizes_by_what_codes_can_give() {
        // One 64-byte block: at most 32 code bytes, so at most 256 bytes.
        for (size, ok) in [(256, true), (257, false), (1 << 30, false)] {
            let mut f = Vec::new();
            write_frame_header(GsstLayout::Splits, &[(64, size)], &mut f);
            f.resize(f.len() + 64, 0);
            let r = Frame::parse(&f, &Location::default());
            assert_eq!(r.is_ok(), ok, "{size}: {r:?}");
        }
        // Many small blocks each claiming the 1 GiB limit: refused before
        // any output is sized from them.
        let sizes = vec![(32u32, 1u32 << 30); 64];
        let mut f = Vec::new();
        write_frame_header(GsstLayout::Coalesced, &sizes, &mut f);
        f.resize(f.len() + 64 * 32, 0);
        let e = Frame::parse(&f, &Location::default()).unwrap_err();
        assert!(e.to_string().contains("block 0"), "{e}");
    }
}
