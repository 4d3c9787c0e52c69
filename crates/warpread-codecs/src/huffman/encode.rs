//! The CPU encoder: one code for the whole frame, blocks encoded in
//! parallel, each with its gap array or its ways.

use rayon::prelude::*;

use super::code::{CanonicalCode, MAX_CODE_LEN, limited_lengths};
use super::format::{
    BLOCK_FIXED_BYTES, CodeSection, KIND_HUFFMAN, KIND_RAW, MAX_BLOCK_BYTES, MAX_WAY_BITS,
    MAX_WAYS_LOG2, SUB_LOG2, SymbolWidth, align4, directory_bytes, way_symbols, write_frame_head,
};
use super::histogram::{Sampling, counts};
use crate::error::{Error, Result};

/// Encoder settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HuffmanParams {
    /// Symbol width.
    pub width: SymbolWidth,
    /// Longest code (1..=24).
    pub max_len: u32,
    /// Decoded bytes per block (a GPU thread block's job), even for
    /// 16-bit symbols.
    pub block_bytes: u32,
    /// log2 of the bits of a gap-array subsequence (5..=16), or 0 for
    /// blocks without gap arrays (then only the self-synchronizing decoder
    /// is fast on the GPU; every decoder still reads them).
    pub sub_log2: u8,
    /// How the code's symbol counts are taken.
    pub sampling: Sampling,
    /// log2 of the parallel ways each block is cut into (0..=10; E²MC's
    /// decoding ways): every way decodes on its own from a directory entry,
    /// so a GPU thread decodes each symbol once. Excludes gap arrays
    /// (`sub_log2` must be 0). 0: one way, the version 1 layout.
    pub ways_log2: u8,
}

impl HuffmanParams {
    /// 8-bit symbols, codes of at most 12 bits (the bound that keeps
    /// nearly all of the ratio on text and whose codes mostly decode in
    /// the first-level table), 32 KiB blocks (one shared-memory staging
    /// window on the GPU), a gap per 512 bits (1.6% side data).
    pub const BYTES: Self = Self {
        width: SymbolWidth::U8,
        max_len: 12,
        block_bytes: 32 << 10,
        sub_log2: 9,
        sampling: Sampling::Exact,
        ways_log2: 0,
    };

    /// 16-bit symbols, codes of at most 20 bits (E²MC's bound for 16-bit
    /// symbols), otherwise as [`BYTES`](Self::BYTES).
    pub const PAIRS: Self = Self {
        width: SymbolWidth::U16,
        max_len: 20,
        ..Self::BYTES
    };

    /// 8-bit symbols in 128 ways a 32 KiB block, without gap arrays (E²MC's
    /// parallel decoding ways): the layout the GPU decodes fastest (each
    /// symbol decoded once), at about the gap arrays' ratio
    /// (benchmarks/huffman.md).
    pub const BYTES_IN_WAYS: Self = Self {
        sub_log2: 0,
        ways_log2: 7,
        ..Self::BYTES
    };

    /// 16-bit symbols in 128 ways a 32 KiB block, as
    /// [`BYTES_IN_WAYS`](Self::BYTES_IN_WAYS).
    pub const PAIRS_IN_WAYS: Self = Self {
        sub_log2: 0,
        ways_log2: 7,
        ..Self::PAIRS
    };

    /// Checks the settings.
    pub fn check(&self) -> Result<()> {
        let bad = |why: String| Err(Error::Unsupported(format!("Huffman settings: {why}")));
        if !(1..=MAX_CODE_LEN).contains(&self.max_len) {
            return bad(format!(
                "code length bound {} (1..={MAX_CODE_LEN})",
                self.max_len
            ));
        }
        if self.block_bytes == 0
            || self.block_bytes > MAX_BLOCK_BYTES
            || !(self.block_bytes as usize).is_multiple_of(self.width.bytes())
        {
            return bad(format!("block size {}", self.block_bytes));
        }
        if self.sub_log2 != 0 && !SUB_LOG2.contains(&self.sub_log2) {
            return bad(format!("gap subsequence of 2^{} bits", self.sub_log2));
        }
        if self.ways_log2 > MAX_WAYS_LOG2 {
            return bad(format!(
                "2^{} ways (at most 2^{MAX_WAYS_LOG2})",
                self.ways_log2
            ));
        }
        if self.ways_log2 != 0 && self.sub_log2 != 0 {
            return bad("ways and gap arrays together (ways need no gaps)".into());
        }
        let symbols = u64::from(self.block_bytes) / self.width.bytes() as u64;
        let way_bits = symbols.div_ceil(1 << self.ways_log2) * u64::from(self.max_len);
        if self.ways_log2 != 0 && way_bits > MAX_WAY_BITS {
            return bad(format!(
                "ways of up to {way_bits} bits (at most {MAX_WAY_BITS}: more ways or smaller blocks)"
            ));
        }
        if self.width == SymbolWidth::U16 && self.max_len < 16 && self.sampling != Sampling::Exact {
            return bad("sampled 16-bit codes cover all 65,536 symbols: bound below 16".into());
        }
        Ok(())
    }
}

/// The code `params` builds for `data`.
pub fn build_code(data: &[u8], params: &HuffmanParams) -> Result<CanonicalCode> {
    params.check()?;
    code_from_counts(&counts(data, params.width, params.sampling), params)
}

/// The code `params` builds from symbol counts `c` (as
/// [`histogram::counts`](super::histogram::counts) takes them): the CPU
/// encoder's code, and the GPU encoder's from the counts its kernel takes.
pub fn code_from_counts(c: &[u64], params: &HuffmanParams) -> Result<CanonicalCode> {
    params.check()?;
    if c.len() != params.width.alphabet() {
        return Err(Error::Unsupported(format!(
            "{} symbol counts for an alphabet of {}",
            c.len(),
            params.width.alphabet()
        )));
    }
    let lengths = limited_lengths(c, params.max_len).ok_or_else(|| {
        Error::Unsupported(format!(
            "{} symbols do not fit codes of at most {} bits",
            c.iter().filter(|&&x| x > 0).count(),
            params.max_len
        ))
    })?;
    CanonicalCode::from_lengths(&lengths, params.max_len)
        .ok_or_else(|| Error::Unsupported("Huffman lengths oversubscribe the code".into()))
}

/// Compresses `data` into one frame (docs/huffman-format.md).
pub fn encode(data: &[u8], params: &HuffmanParams) -> Result<Vec<u8>> {
    let code = build_code(data, params)?;
    encode_with(data, &code, params)
}

/// Compresses `data` with a given `code` (blocks holding a symbol without
/// a code, or that the code does not shrink, are stored raw).
pub fn encode_with(data: &[u8], code: &CanonicalCode, params: &HuffmanParams) -> Result<Vec<u8>> {
    params.check()?;
    let table = code.encode_table(params.width.alphabet());
    let blocks: Vec<Vec<u8>> = data
        .par_chunks(params.block_bytes as usize)
        .map(|b| encode_block(b, params, &table))
        .collect();
    let sizes: Vec<u32> = blocks.iter().map(|b| b.len() as u32).collect();
    let mut out = frame_head(data.len() as u64, code, params, &sizes);
    out.reserve(sizes.iter().map(|&s| s as usize).sum());
    for b in blocks {
        out.extend_from_slice(&b);
    }
    Ok(out)
}

/// A frame's bytes before its blocks (header, code section, block
/// directory) for `total` bytes encoded with `code` under `params` into
/// blocks of the given sizes: what both encoders put first.
pub fn frame_head(
    total: u64,
    code: &CanonicalCode,
    params: &HuffmanParams,
    sizes: &[u32],
) -> Vec<u8> {
    let section = CodeSection {
        width: params.width,
        len: CodeSection::bytes_for(params.width, code.max_len, code.symbols.len()),
        code: code.clone(),
        sub_log2: params.sub_log2,
        ways_log2: params.ways_log2,
    };
    let mut out = Vec::with_capacity(64 + section.len + 4 * sizes.len());
    write_frame_head(total, params.block_bytes, &section, sizes, &mut out);
    out
}

/// Appends MSB-first codewords to 32-bit words.
struct BitWriter {
    words: Vec<u32>,
    acc: u64,
    used: u32,
    bits: u64,
}

impl BitWriter {
    fn new(capacity_bits: usize) -> Self {
        Self {
            words: Vec::with_capacity(capacity_bits / 32 + 1),
            acc: 0,
            used: 0,
            bits: 0,
        }
    }

    #[inline]
    fn put(&mut self, code: u32, len: u32) {
        self.acc = self.acc << len | u64::from(code);
        self.used += len;
        self.bits += u64::from(len);
        if self.used >= 32 {
            self.used -= 32;
            self.words.push((self.acc >> self.used) as u32);
        }
    }

    fn finish(mut self) -> (Vec<u32>, u64) {
        if self.used > 0 {
            self.words.push((self.acc << (32 - self.used)) as u32);
        }
        (self.words, self.bits)
    }
}

/// One block: Huffman codes and gap array (or its ways and their
/// directory), or the bytes raw when that is no larger or a symbol has no
/// code. `table` is the code's (code, length) per symbol.
pub fn encode_block(data: &[u8], params: &HuffmanParams, table: &[(u32, u32)]) -> Vec<u8> {
    let width = params.width;
    let sb = width.bytes();
    let nsym = data.len() / sb;
    let tail = (data.len() % sb == 1).then(|| data[data.len() - 1]);
    let sub = if params.sub_log2 == 0 {
        0
    } else {
        1u64 << params.sub_log2
    };
    let ways = 1u32 << params.ways_log2;
    let mut w = BitWriter::new(data.len() * 4);
    let mut gaps = Vec::new();
    let mut directory = Vec::with_capacity(ways as usize - 1);
    let mut next = 0u64;
    let mut coded = true;
    let mut way_start = 0u64;
    'ways: for v in 0..ways {
        if v > 0 {
            // The way before ends here (its bits fit 16: `check`).
            directory.push((w.bits - way_start) as u16);
            way_start = w.bits;
        }
        for i in way_symbols(nsym as u64, ways, v) {
            let i = i as usize;
            let s = match width {
                SymbolWidth::U8 => usize::from(data[i]),
                SymbolWidth::U16 => usize::from(u16::from_le_bytes([data[2 * i], data[2 * i + 1]])),
            };
            let (c, l) = table[s];
            if l == 0 {
                coded = false;
                break 'ways;
            }
            // The gap of every boundary this codeword starts at or after.
            while sub != 0 && next <= w.bits {
                gaps.push((w.bits - next) as u8);
                next += sub;
            }
            w.put(c, l);
        }
    }
    let (words, bits) = w.finish();
    while sub != 0 && next < bits {
        gaps.push((bits - next) as u8);
        next += sub;
    }
    let side = align4(gaps.len()) + directory_bytes(ways);
    let huff_len = BLOCK_FIXED_BYTES + side + 4 * words.len();
    let raw_len = BLOCK_FIXED_BYTES + align4(data.len());
    let mut out = Vec::with_capacity(huff_len.min(raw_len));
    if !coded || bits > u64::from(u32::MAX) || huff_len >= raw_len {
        out.extend_from_slice(&[KIND_RAW, 0, 0, 0]);
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(data);
    } else {
        out.extend_from_slice(&[KIND_HUFFMAN, u8::from(tail.is_some()), tail.unwrap_or(0), 0]);
        out.extend_from_slice(&(bits as u32).to_le_bytes());
        out.extend_from_slice(&gaps);
        out.resize(align4(out.len()), 0);
        for bits in directory {
            out.extend_from_slice(&bits.to_le_bytes());
        }
        out.resize(align4(out.len()), 0);
        for word in words {
            out.extend_from_slice(&word.to_le_bytes());
        }
    }
    out.resize(align4(out.len()), 0);
    out
}
