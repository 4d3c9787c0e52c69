//! ORC compression framing: every compressed stream (and the footer and
//! metadata) is a sequence of chunks, each behind a 3-byte little-endian
//! header `length << 1 | is_original`. Compressed chunks are independent,
//! so they become the jobs of a decompression stage; original chunks are
//! copied as they are.

use std::ops::Range;

use crate::codecs::{block, deflate};
use crate::error::{Error, Location, Result};
use crate::plan::{BlockCodec, StageOp};

/// The compression named in an ORC postscript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionKind {
    /// Streams are stored as they are, without chunk headers.
    None,
    /// Raw deflate.
    Zlib,
    /// Snappy.
    Snappy,
    /// LZO1X.
    Lzo,
    /// LZ4 raw blocks.
    Lz4,
    /// Zstandard.
    Zstd,
}

impl CompressionKind {
    /// Maps the postscript's enumeration value.
    pub fn from_proto(v: i32, at: &Location) -> Result<Self> {
        Ok(match v {
            0 => Self::None,
            1 => Self::Zlib,
            2 => Self::Snappy,
            3 => Self::Lzo,
            4 => Self::Lz4,
            5 => Self::Zstd,
            6 => return Err(Error::Unsupported(format!("ORC BROTLI compression ({at})"))),
            other => return Err(Error::orc(at, format!("unknown compression kind {other}"))),
        })
    }

    /// The stage that decompresses one chunk, or `None` for `None`.
    pub fn stage_op(self) -> Option<StageOp> {
        match self {
            Self::None => None,
            Self::Zlib => Some(StageOp::Inflate),
            Self::Snappy => Some(StageOp::Decompress(BlockCodec::Snappy)),
            Self::Lzo => Some(StageOp::Decompress(BlockCodec::Lzo)),
            Self::Lz4 => Some(StageOp::Decompress(BlockCodec::Lz4)),
            Self::Zstd => Some(StageOp::Decompress(BlockCodec::Zstd)),
        }
    }

    /// The name ORC tools print.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "NONE",
            Self::Zlib => "ZLIB",
            Self::Snappy => "SNAPPY",
            Self::Lzo => "LZO",
            Self::Lz4 => "LZ4",
            Self::Zstd => "ZSTD",
        }
    }
}

/// A file's compression: codec and the most bytes a chunk decompresses to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compression {
    /// The codec.
    pub kind: CompressionKind,
    /// Uncompressed size bound of one chunk.
    pub block_size: u64,
}

/// Largest compression block size accepted: the chunk header holds 23 bits
/// of length, and writers use at most a few MiB; a larger claim is hostile.
pub const MAX_BLOCK_SIZE: u64 = 1 << 24;

/// One chunk of a compressed stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The chunk's payload, relative to the start of the stream.
    pub data: Range<u64>,
    /// Stored without compression ("original").
    pub original: bool,
    /// Where a stored chunk's copy framed as stored DEFLATE blocks lies in
    /// the streams buffer, when the reader made one (ZLIB only).
    pub framed: Option<std::ops::Range<usize>>,
}

/// Splits a compressed stream into its chunks, checking every header
/// against the stream's length and the block size.
pub fn chunks(stream: &[u8], c: &Compression, at: &Location) -> Result<Vec<Chunk>> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < stream.len() {
        if stream.len() - pos < 3 {
            return Err(Error::orc(
                &at.clone().at(pos as u64),
                "compression chunk header truncated",
            ));
        }
        let h = u32::from(stream[pos])
            | u32::from(stream[pos + 1]) << 8
            | u32::from(stream[pos + 2]) << 16;
        let original = h & 1 == 1;
        let len = (h >> 1) as usize;
        let start = pos + 3;
        if len > stream.len() - start {
            return Err(Error::orc(
                &at.clone().at(pos as u64),
                format!(
                    "compression chunk of {len} bytes overruns the stream ({} bytes left)",
                    stream.len() - start
                ),
            ));
        }
        if original && len as u64 > c.block_size {
            return Err(Error::orc(
                &at.clone().at(pos as u64),
                format!(
                    "uncompressed chunk of {len} bytes exceeds the block size {}",
                    c.block_size
                ),
            ));
        }
        out.push(Chunk {
            data: start as u64..(start + len) as u64,
            original,
            framed: None,
        });
        pos = start + len;
    }
    Ok(out)
}

/// Decompresses a whole stream on the CPU. Used for the file tail and
/// stripe footers, which are small and needed before any plan exists.
pub fn decompress_on_cpu(stream: &[u8], c: &Compression, at: &Location) -> Result<Vec<u8>> {
    let Some(op) = c.kind.stage_op() else {
        return Ok(stream.to_vec());
    };
    let mut out = Vec::new();
    for chunk in chunks(stream, c, at)? {
        let data = &stream[chunk.data.start as usize..chunk.data.end as usize];
        if chunk.original {
            out.extend_from_slice(data);
            continue;
        }
        let start = out.len();
        out.resize(start + c.block_size as usize, 0);
        let st = match op {
            StageOp::Inflate => deflate::inflate(data, &mut out[start..]),
            StageOp::Decompress(codec) => block::decompress(codec, data, &mut out[start..]),
            _ => unreachable!("stage_op gives decompression ops only"),
        };
        if !st.is_ok() {
            return Err(Error::Corrupt {
                location: Box::new(at.clone().at(chunk.data.start - 3)),
                status: st,
            });
        }
        out.truncate(start + st.produced as usize);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(len: usize, original: bool) -> [u8; 3] {
        let v = (len as u32) << 1 | u32::from(original);
        [v as u8, (v >> 8) as u8, (v >> 16) as u8]
    }

    #[test]
    fn parses_and_decompresses_mixed_chunks() {
        let data = b"hello hello hello hello hello".repeat(20);
        let z = deflate::deflate(&data, 9);
        let mut stream = header(z.len(), false).to_vec();
        stream.extend_from_slice(&z);
        stream.extend_from_slice(&header(3, true));
        stream.extend_from_slice(b"abc");
        let c = Compression {
            kind: CompressionKind::Zlib,
            block_size: 1024,
        };
        let at = Location::file("t.orc");
        let chunks = chunks(&stream, &c, &at).unwrap();
        assert_eq!(chunks.len(), 2);
        assert!(chunks[1].original);
        let out = decompress_on_cpu(&stream, &c, &at).unwrap();
        assert_eq!(&out[..data.len()], &data[..]);
        assert_eq!(&out[data.len()..], b"abc");
    }

    #[test]
    fn rejects_bad_headers() {
        let c = Compression {
            kind: CompressionKind::Zlib,
            block_size: 4,
        };
        let at = Location::file("t.orc");
        assert!(chunks(&[1, 0], &c, &at).is_err());
        assert!(chunks(&header(10, false), &c, &at).is_err());
        let mut s = header(5, true).to_vec();
        s.extend_from_slice(b"12345");
        let err = chunks(&s, &c, &at).unwrap_err().to_string();
        assert!(err.contains("t.orc") && err.contains("block size"), "{err}");
    }
}
