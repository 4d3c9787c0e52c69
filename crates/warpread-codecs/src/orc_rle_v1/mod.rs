//! ORC integer run-length encoding, version 1 (ORC spec, "Run Length
//! Encoding", integer RLE v1), used by ORC files written with
//! `file_version 0.11`.
//!
//! A stream is a sequence of runs. A header byte `h >= 0` starts a run of
//! `h + 3` values: a signed delta byte and a varint base, value `i` being
//! `base + i * delta`. A header `h < 0` is followed by `-h` literal varints.
//! Signed streams zigzag their varints.
//!
//! [`decode`] is the CPU reference: the GPU kernel (`kernels/orc_rle_v1.cu`)
//! must produce the same values and the same [`ChunkStatus`](crate::plan::ChunkStatus)
//! on every input, valid or not.

mod decode;
mod encode;
mod split;

pub use decode::decode;
pub use encode::{encode, encode_chunks};
pub use split::split;

/// Longest run a header can describe.
pub const MAX_RUN: usize = 130;
/// Shortest run (header 0).
pub const MIN_RUN: usize = 3;
/// Most literals after one header.
pub const MAX_LITERALS: usize = 128;
