//! Codecs: one folder per stream format, each with its CPU reference decoder
//! and an encoder for tests and benchmarks; the CUDA backend
//! (`warpread-exec`) names each one's GPU entry points.

#![warn(missing_docs)]

use warpread_core::error;
#[doc(hidden)]
pub use warpread_core::plan;

pub mod gsst;
pub mod huffman;
#[doc(hidden)]
pub mod testing;

pub mod block;
pub mod deflate;
pub mod int;
mod lzo;
pub mod orc_byte_rle;
pub mod orc_rle_v1;
pub mod orc_rle_v2;
pub mod parquet_byte_stream_split;
pub mod parquet_delta_binary_packed;
pub mod parquet_delta_byte_array;
pub mod parquet_delta_length_byte_array;
pub mod parquet_dict;
pub mod parquet_hybrid;
pub mod parquet_ops;
pub mod parquet_plain;
pub mod split;
pub mod varint;

/// Encodes `values` as independent streams of `chunk_values` values each
/// (the last may be shorter) with `encode_into`, concatenated; returns the
/// bytes and one job per chunk, the layout of the CODAG benchmarks.
pub fn encode_chunks_with<T>(
    values: &[T],
    chunk_values: usize,
    encode_into: impl Fn(&[T], &mut Vec<u8>),
) -> (Vec<u8>, Vec<crate::plan::ChunkJob>) {
    let mut out = Vec::with_capacity(std::mem::size_of_val(values) / 4 + 16);
    let mut jobs = Vec::new();
    for (c, chunk) in values.chunks(chunk_values.max(1)).enumerate() {
        let start = out.len() as u64;
        encode_into(chunk, &mut out);
        jobs.push(crate::plan::ChunkJob {
            input: start..out.len() as u64,
            output_offset: (c * chunk_values) as u64,
            values: chunk.len() as u64,
            aux: 0,
        });
    }
    (out, jobs)
}

/// A codec the `bench codecs` command and the backends know by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodecName {
    /// ORC integer RLE version 1.
    OrcRleV1,
    /// ORC integer RLE version 2.
    OrcRleV2,
    /// Raw deflate (ORC ZLIB, inside Parquet GZIP).
    Deflate,
}

impl CodecName {
    /// Every named codec.
    pub const ALL: [CodecName; 3] = [CodecName::OrcRleV1, CodecName::OrcRleV2, CodecName::Deflate];

    /// The CLI name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OrcRleV1 => "orc-rle-v1",
            Self::OrcRleV2 => "orc-rle-v2",
            Self::Deflate => "deflate",
        }
    }

    /// Parses a CLI name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}
