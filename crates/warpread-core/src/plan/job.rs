//! Chunk jobs, stages and plans.

use std::ops::Range;

use crate::error::{Error, Location, Result};

/// Element type of an integer decode stage's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntType {
    /// Signed 8-bit.
    I8,
    /// Unsigned 8-bit.
    U8,
    /// Signed 16-bit.
    I16,
    /// Unsigned 16-bit.
    U16,
    /// Signed 32-bit.
    I32,
    /// Unsigned 32-bit.
    U32,
    /// Signed 64-bit.
    I64,
    /// Unsigned 64-bit.
    U64,
}

impl IntType {
    /// Every type, narrow to wide, signed first.
    pub const ALL: [IntType; 8] = [
        Self::I8,
        Self::U8,
        Self::I16,
        Self::U16,
        Self::I32,
        Self::U32,
        Self::I64,
        Self::U64,
    ];

    /// Width in bits.
    #[inline]
    pub fn bits(self) -> u32 {
        match self {
            Self::I8 | Self::U8 => 8,
            Self::I16 | Self::U16 => 16,
            Self::I32 | Self::U32 => 32,
            Self::I64 | Self::U64 => 64,
        }
    }

    /// Width in bytes.
    #[inline]
    pub fn byte_width(self) -> usize {
        self.bits() as usize / 8
    }

    /// True for the signed (zigzag-encoded in ORC) types.
    #[inline]
    pub fn is_signed(self) -> bool {
        matches!(self, Self::I8 | Self::I16 | Self::I32 | Self::I64)
    }

    /// Short lowercase name, as used in kernel entry points (`i32`, `u8`).
    #[inline]
    pub fn name(self) -> &'static str {
        match self {
            Self::I8 => "i8",
            Self::U8 => "u8",
            Self::I16 => "i16",
            Self::U16 => "u16",
            Self::I32 => "i32",
            Self::U32 => "u32",
            Self::I64 => "i64",
            Self::U64 => "u64",
        }
    }
}

/// The operation of a stage: what every chunk job of it decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StageOp {
    /// ORC integer RLE version 1 into elements of the given type.
    OrcRleV1(IntType),
    /// ORC integer RLE version 2 into elements of the given type.
    OrcRleV2(IntType),
    /// ORC byte RLE into bytes.
    OrcByteRle,
    /// ORC boolean RLE (byte RLE of MSB-first bit groups) into one byte,
    /// 0 or 1, per boolean. A job's `values` counts booleans.
    OrcBoolRle,
    /// Raw deflate into bytes. A job's `values` is its output capacity; the
    /// decompressed size is its status's `produced`.
    Inflate,
    /// A general-purpose block codec without a GPU kernel (yet), run on the
    /// CPU by every backend. `values` is the output capacity, as for
    /// [`StageOp::Inflate`].
    Decompress(BlockCodec),
    /// GSST blocks (docs/gsst-format.md) of the given layout into bytes. A
    /// job is one whole block, its `values` the block's exact uncompressed
    /// size; a job's input must start 16-byte aligned in the stage input.
    Gsst(GsstLayout),
    /// Huffman blocks (docs/huffman-format.md) into bytes, by the given GPU
    /// decoder (the CPU reference decodes both alike). A job is one block,
    /// its input the frame's code section through the block's end, its
    /// `aux` the block's offset in that input, its `values` the block's
    /// exact decoded size; its input must start 4-byte aligned in the
    /// stage input.
    Huffman(HuffmanDecoder),
    /// A Parquet value or level decoder (`src/codecs/parquet_*`).
    Parquet(ParquetOp),
    /// The CRC-32 of each job's input bytes (IEEE, reflected polynomial
    /// 0xEDB88320, initial value and final xor 0xFFFFFFFF: the gzip / zlib
    /// CRC) as one `u32`. A job's `values` must be 1: 0 is `OutputOverflow`,
    /// more is `OutputShort`, and nothing is written. For checking GZIP
    /// members' trailers where the inflated bytes already lie (on the
    /// device: `kernels/crc32.cu`).
    Crc32,
}

/// Parquet decoders. Each job is (typically) one page's levels or values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParquetOp {
    /// The RLE/bit-packed hybrid of the given bit width (0..=32) into `u32`:
    /// definition and repetition levels, dictionary indices.
    Hybrid {
        /// Bits per value.
        bit_width: u8,
    },
    /// PLAIN booleans (LSB-first bits) into one byte, 0 or 1, each.
    PlainBool,
    /// PLAIN fixed-width values (INT32, INT64, INT96, FLOAT, DOUBLE,
    /// FIXED_LEN_BYTE_ARRAY) copied out as `width`-byte elements.
    PlainFixed {
        /// Bytes per value.
        width: u32,
    },
    /// BYTE_STREAM_SPLIT values of `width` bytes, interleaved back.
    ByteStreamSplit {
        /// Bytes per value.
        width: u32,
    },
    /// DELTA_BINARY_PACKED into `i32` or `i64` (wrapping arithmetic).
    DeltaBinaryPacked(IntType),
    /// First pass over a BYTE_ARRAY page: each value's length as `u32`.
    ByteArrayLengths(ByteArrayEncoding),
    /// Second pass: the values' bytes end to end; a job's `values` is the
    /// sum of the lengths the first pass gave.
    ByteArrayData(ByteArrayEncoding),
    /// Dictionary gather of fixed-width values: a job's input is a `u32`
    /// dictionary size `n`, `n * width` dictionary bytes, then one `u32`
    /// index per output value.
    DictGather {
        /// Bytes per value.
        width: u32,
    },
    /// A whole dictionary-encoded page of fixed-width values, its indices
    /// decoded and gathered in one pass: a job's input starts with the
    /// dictionary's entries (`width` bytes each), and its indices — the bit
    /// width as one byte, then the page's RLE/bit-packed runs to the end of
    /// the input — start further in; the job's `aux` says where each ends
    /// and starts (`codecs::parquet_dict::page_aux`), so a job can read the
    /// decompressed column chunk as it lies, dictionary page to data page.
    DictPage {
        /// Bytes per value.
        width: u32,
    },
    /// A column chunk's dictionary-encoded BYTE_ARRAY pages gathered,
    /// first pass: the Arrow offsets (`u32`, a leading 0, then each
    /// value's end) of the entries the pages' indices select. One job per
    /// chunk, its input the dictionary and the pages' index sections
    /// (`codecs::parquet_dict::bytes`).
    ByteDictOffsets,
    /// Second pass of [`ParquetOp::ByteDictOffsets`] over the same input:
    /// the entries' bytes end to end; a job's `values` is the last offset
    /// the first pass gave.
    ByteDictData,
}

/// Encodings of Parquet BYTE_ARRAY pages decoded in two passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteArrayEncoding {
    /// PLAIN: a 4-byte little-endian length before each value.
    Plain,
    /// DELTA_LENGTH_BYTE_ARRAY: delta-packed lengths, then the bytes.
    DeltaLength,
    /// DELTA_BYTE_ARRAY: delta-packed prefix lengths, then the suffixes as
    /// DELTA_LENGTH_BYTE_ARRAY.
    Delta,
}

impl ByteArrayEncoding {
    /// Lowercase name.
    #[inline]
    pub fn name(self) -> &'static str {
        match self {
            Self::Plain => "plain",
            Self::DeltaLength => "delta-length",
            Self::Delta => "delta",
        }
    }
}

impl ParquetOp {
    /// Bytes per output element.
    #[inline]
    pub fn output_width(&self) -> usize {
        match self {
            Self::Hybrid { .. } | Self::ByteArrayLengths(_) | Self::ByteDictOffsets => 4,
            Self::PlainBool | Self::ByteArrayData(_) | Self::ByteDictData => 1,
            Self::PlainFixed { width }
            | Self::ByteStreamSplit { width }
            | Self::DictGather { width }
            | Self::DictPage { width } => *width as usize,
            Self::DeltaBinaryPacked(t) => t.byte_width(),
        }
    }

    /// A stable name (`parquet-hybrid/3`, `parquet-plain/8`).
    pub fn name(&self) -> String {
        match self {
            Self::Hybrid { bit_width } => format!("parquet-hybrid/{bit_width}"),
            Self::PlainBool => "parquet-plain-bool".to_string(),
            Self::PlainFixed { width } => format!("parquet-plain/{width}"),
            Self::ByteStreamSplit { width } => format!("parquet-byte-stream-split/{width}"),
            Self::DeltaBinaryPacked(t) => format!("parquet-delta-binary-packed/{}", t.name()),
            Self::ByteArrayLengths(e) => format!("parquet-byte-array-lengths/{}", e.name()),
            Self::ByteArrayData(e) => format!("parquet-byte-array-data/{}", e.name()),
            Self::DictGather { width } => format!("parquet-dict-gather/{width}"),
            Self::DictPage { width } => format!("parquet-dict-page/{width}"),
            Self::ByteDictOffsets => "parquet-byte-dict-offsets".to_string(),
            Self::ByteDictData => "parquet-byte-dict-data".to_string(),
        }
    }
}

/// How a GSST block orders its codes (docs/gsst-format.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GsstLayout {
    /// Each split's codes are contiguous; one GPU thread per split.
    Splits,
    /// The splits' codes are interleaved in 16-byte granules so that the
    /// threads of a warp read adjacent memory.
    Coalesced,
}

impl GsstLayout {
    /// Both layouts.
    pub const ALL: [GsstLayout; 2] = [Self::Splits, Self::Coalesced];

    /// Lowercase name (`splits`, `coalesced`).
    #[inline]
    pub fn name(self) -> &'static str {
        match self {
            Self::Splits => "splits",
            Self::Coalesced => "coalesced",
        }
    }

    /// The layout's byte in GSST headers.
    #[inline]
    pub fn code(self) -> u8 {
        match self {
            Self::Splits => 0,
            Self::Coalesced => 1,
        }
    }

    /// The layout a header byte names, if any.
    #[inline]
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(Self::Splits),
            1 => Some(Self::Coalesced),
            _ => None,
        }
    }
}

impl std::str::FromStr for GsstLayout {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| {
                Error::Unsupported(format!("GSST layout `{s}` (expected splits or coalesced)"))
            })
    }
}

/// The GPU decoder of a Huffman stage (cuSZ's two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HuffmanDecoder {
    /// Threads start where the blocks' gap arrays say (blocks without gap
    /// arrays fall back to self-synchronization).
    Gap,
    /// Threads start at arbitrary bits and synchronize with their
    /// neighbours; no side data is read.
    SelfSync,
}

impl HuffmanDecoder {
    /// Both decoders.
    pub const ALL: [HuffmanDecoder; 2] = [Self::Gap, Self::SelfSync];

    /// Lowercase name (`gap`, `sync`).
    #[inline]
    pub fn name(self) -> &'static str {
        match self {
            Self::Gap => "gap",
            Self::SelfSync => "sync",
        }
    }
}

impl std::str::FromStr for HuffmanDecoder {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| {
                Error::Unsupported(format!("Huffman decoder `{s}` (expected gap or sync)"))
            })
    }
}

/// Block compression codecs decompressed on the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockCodec {
    /// Snappy raw blocks.
    Snappy,
    /// Zstandard frames.
    Zstd,
    /// LZ4 raw blocks (ORC LZ4, Parquet LZ4_RAW).
    Lz4,
    /// LZO1X blocks (ORC LZO).
    Lzo,
    /// Parquet `LZ4` (deprecated): Hadoop framing (big-endian sizes before
    /// each raw LZ4 block), else an LZ4 frame, else one raw block, in the
    /// order the parquet crate tries them.
    Lz4Hadoop,
    /// Brotli streams (Parquet BROTLI).
    Brotli,
}

impl BlockCodec {
    /// Lowercase name.
    #[inline]
    pub fn name(self) -> &'static str {
        match self {
            Self::Snappy => "snappy",
            Self::Zstd => "zstd",
            Self::Lz4 => "lz4",
            Self::Lzo => "lzo",
            Self::Lz4Hadoop => "lz4-hadoop",
            Self::Brotli => "brotli",
        }
    }
}

impl StageOp {
    /// Bytes per output element.
    #[inline]
    pub fn output_width(&self) -> usize {
        match self {
            Self::OrcRleV1(t) | Self::OrcRleV2(t) => t.byte_width(),
            Self::OrcByteRle
            | Self::OrcBoolRle
            | Self::Inflate
            | Self::Decompress(_)
            | Self::Gsst(_)
            | Self::Huffman(_) => 1,
            Self::Parquet(p) => p.output_width(),
            Self::Crc32 => 4,
        }
    }

    /// A stable name for messages, `explain` and the CLI.
    #[inline]
    pub fn name(&self) -> String {
        match self {
            Self::OrcRleV1(t) => format!("orc-rle-v1/{}", t.name()),
            Self::OrcRleV2(t) => format!("orc-rle-v2/{}", t.name()),
            Self::OrcByteRle => "orc-byte-rle".to_string(),
            Self::OrcBoolRle => "orc-bool-rle".to_string(),
            Self::Inflate => "inflate".to_string(),
            Self::Decompress(c) => format!("decompress/{}", c.name()),
            Self::Gsst(l) => format!("gsst/{}", l.name()),
            Self::Huffman(d) => format!("huffman/{}", d.name()),
            Self::Parquet(p) => p.name(),
            Self::Crc32 => "crc32".to_string(),
        }
    }
}

/// Most input bytes one chunk job may have: kernels keep chunk positions in
/// 32 bits (4 GiB less a margin for the input ring's look-ahead).
pub const MAX_CHUNK_INPUT: u64 = u32::MAX as u64 - 4096;
/// Most elements one chunk job may produce (32-bit kernel counters).
pub const MAX_CHUNK_VALUES: u64 = u32::MAX as u64;

/// One independent unit of decoding work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkJob {
    /// Byte range of the job's input within the stage input.
    pub input: Range<u64>,
    /// First output element the job writes.
    pub output_offset: u64,
    /// Number of elements the job must produce.
    pub values: u64,
    /// A parameter of this job for ops that need one beside their input
    /// range (`ParquetOp::DictPage`: where its dictionary ends and its
    /// indices start); 0 for every other op.
    pub aux: u64,
}

impl ChunkJob {
    /// Output element range.
    #[inline]
    pub fn output(&self) -> Range<u64> {
        self.output_offset..self.output_offset + self.values
    }
}

/// The kernels' view of a job (`codag::ChunkJob`, 40 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct JobDesc {
    /// Byte offset of the input.
    pub in_off: u64,
    /// Input length in bytes.
    pub in_len: u64,
    /// First output element.
    pub out_off: u64,
    /// Elements to produce.
    pub out_count: u64,
    /// The op's per-job parameter ([`ChunkJob::aux`]).
    pub aux: u64,
}

// SAFETY: five u64 fields, no padding.
unsafe impl cudarc::driver::DeviceRepr for JobDesc {}

impl From<&ChunkJob> for JobDesc {
    fn from(j: &ChunkJob) -> Self {
        Self {
            in_off: j.input.start,
            in_len: j.input.end - j.input.start,
            out_off: j.output_offset,
            out_count: j.values,
            aux: j.aux,
        }
    }
}

/// A batch of chunk jobs applying one operation from one input buffer into
/// one output buffer of `output_values` elements.
#[derive(Debug, Clone)]
pub struct Stage {
    /// What every job decodes.
    pub op: StageOp,
    /// The jobs, sorted by output offset with disjoint output ranges.
    pub jobs: Vec<ChunkJob>,
    /// Elements in the output buffer.
    pub output_values: u64,
    /// Where this stage's input comes from, for error messages.
    pub location: Location,
}

impl Stage {
    /// A stage of one job: `op` over the input bytes `input` into an output
    /// of `values` elements (no location).
    pub fn single(op: StageOp, input: Range<u64>, values: u64) -> Self {
        Self {
            op,
            jobs: vec![ChunkJob {
                input,
                output_offset: 0,
                values,
                aux: 0,
            }],
            output_values: values,
            location: Location::default(),
        }
    }

    /// Checks the plan against an input of `input_len` bytes: every range in
    /// bounds, outputs disjoint. Hostile metadata must fail here, not in a
    /// kernel.
    pub fn validate(&self, input_len: u64) -> Result<()> {
        let mut next_free = 0u64;
        for (i, job) in self.jobs.iter().enumerate() {
            let bad = |why: String| {
                Error::InvalidPlan(format!(
                    "{} job {i} at {}: {why}",
                    self.op.name(),
                    self.location
                ))
            };
            if job.input.start > job.input.end || job.input.end > input_len {
                return Err(bad(format!(
                    "input {:?} outside {input_len} input bytes",
                    job.input
                )));
            }
            if job.input.end - job.input.start > MAX_CHUNK_INPUT || job.values > MAX_CHUNK_VALUES {
                return Err(bad(format!(
                    "chunk of {} input bytes and {} values exceeds the per-chunk limits",
                    job.input.end - job.input.start,
                    job.values
                )));
            }
            let end = job
                .output_offset
                .checked_add(job.values)
                .ok_or_else(|| bad("output range overflows".into()))?;
            if job.output_offset < next_free {
                return Err(bad("output ranges overlap or are unsorted".into()));
            }
            if end > self.output_values {
                return Err(bad(format!(
                    "output {}..{end} outside {} values",
                    job.output_offset, self.output_values
                )));
            }
            next_free = end;
        }
        Ok(())
    }

    /// Output size in bytes (saturating: an absurd size then fails to
    /// allocate with an error).
    #[inline]
    pub fn output_bytes(&self) -> usize {
        usize::try_from(self.output_values)
            .unwrap_or(usize::MAX)
            .saturating_mul(self.op.output_width())
    }
}

/// A whole plan: stages a backend runs in order. Today each stage reads a
/// caller-supplied input buffer; decompression stages that feed decode stages
/// arrive with the ORC and Parquet readers.
#[derive(Debug, Clone, Default)]
pub struct DecodePlan {
    /// The stages.
    pub stages: Vec<Stage>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(jobs: Vec<ChunkJob>, out: u64) -> Stage {
        Stage {
            op: StageOp::OrcRleV1(IntType::I32),
            jobs,
            output_values: out,
            location: Location::default(),
        }
    }

    #[test]
    fn validate_accepts_disjoint_jobs() {
        let s = stage(
            vec![
                ChunkJob {
                    input: 0..4,
                    output_offset: 0,
                    values: 3,
                    aux: 0,
                },
                ChunkJob {
                    input: 4..9,
                    output_offset: 3,
                    values: 2,
                    aux: 0,
                },
            ],
            5,
        );
        s.validate(9).unwrap();
        assert_eq!(s.output_bytes(), 20);
    }

    #[test]
    fn validate_rejects_hostile_ranges() {
        let job = |input: Range<u64>, output_offset, values| ChunkJob {
            input,
            output_offset,
            values,
            aux: 0,
        };
        assert!(stage(vec![job(0..10, 0, 1)], 1).validate(9).is_err());
        assert!(stage(vec![job(0..1, 0, 2)], 1).validate(9).is_err());
        assert!(
            stage(vec![job(0..1, 0, 2), job(1..2, 1, 1)], 3)
                .validate(9)
                .is_err()
        );
        assert!(stage(vec![job(0..1, u64::MAX, 2)], 3).validate(9).is_err());
        let huge = MAX_CHUNK_VALUES + 1;
        assert!(stage(vec![job(0..1, 0, huge)], huge).validate(9).is_err());
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = 5..1;
        assert!(stage(vec![job(reversed, 0, 1)], 3).validate(9).is_err());
    }

    #[test]
    fn job_desc_layout() {
        assert_eq!(std::mem::size_of::<JobDesc>(), 40);
    }
}
