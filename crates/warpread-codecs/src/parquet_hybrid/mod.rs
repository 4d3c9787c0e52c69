//! The Parquet RLE/bit-packed hybrid (Parquet spec, "Run Length Encoding /
//! Bit-Packing Hybrid"): definition and repetition levels, dictionary
//! indices, and RLE booleans.
//!
//! A stream is a sequence of runs, each introduced by a ULEB128 header `h`.
//! `h & 1 == 0`: an RLE run of `h >> 1` copies of one value stored in
//! `ceil(bit_width / 8)` little-endian bytes. `h & 1 == 1`: `h >> 1` groups
//! of eight values bit-packed LSB first, `bit_width` bytes per group.
//!
//! [`decode`] is the CPU reference; [`decode_bits`] decodes bit width 1
//! into a bitmap, for definition levels the host reads. Like the parquet crate it stops once the
//! job's count is reached (writers pad the last bit-packed group, and a page
//! may hold more levels than it needs), and a final bit-packed run cut short
//! is accepted while it still covers the values asked for.

mod bits;
mod decode;
mod encode;
mod split;

pub use bits::decode_bits;
pub(crate) use decode::{Sink, walk};
pub use decode::{decode, uniform};
pub use encode::encode;
pub use split::split;

/// Widest values the hybrid carries here (levels and dictionary indices are
/// 32-bit in every writer).
pub const MAX_BIT_WIDTH: u8 = 32;
