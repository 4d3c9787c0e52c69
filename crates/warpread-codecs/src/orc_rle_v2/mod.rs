//! ORC integer run-length encoding, version 2 (ORC spec, "Integer Run Length
//! Encoding, version 2"), used by ORC files written with `file_version 0.12`.
//!
//! Each run starts with a header whose top two bits name its sub-encoding:
//!
//! - `SHORT_REPEAT` (1-byte header): 3 to 10 copies of one big-endian value
//!   of 1 to 8 bytes.
//! - `DIRECT` (2-byte header): up to 512 values bit-packed MSB first at one
//!   of 32 encodable widths.
//! - `PATCHED_BASE` (4-byte header): a sign-magnitude base, bit-packed
//!   offsets from it at a narrow width, and a patch list that restores the
//!   high bits of the few outliers (position gaps of up to 255, chained by
//!   empty `(255, 0)` entries).
//! - `DELTA` (2-byte header): a varint base, a signed varint first delta and
//!   either no more bits (a constant step) or bit-packed delta magnitudes
//!   whose sign is the first delta's.
//!
//! Signed streams zigzag DIRECT, SHORT_REPEAT and the DELTA base; PATCHED_BASE
//! bases are sign-magnitude in either case.
//!
//! [`decode`] is the CPU reference: the GPU kernel (`kernels/orc_rle_v2.cu`)
//! must produce the same values and the same [`ChunkStatus`](crate::plan::ChunkStatus)
//! on every input, valid or not.

mod bits;
mod decode;
mod encode;
mod split;

pub use decode::decode;
pub use encode::{SubEncoding, encode, encode_chunks, encode_run};
pub use split::split;

/// Most values in one run (9-bit length field plus one).
pub const MAX_RUN: usize = 512;
/// Most patch list entries in a PATCHED_BASE run (5-bit field).
pub const MAX_PATCHES: usize = 31;
