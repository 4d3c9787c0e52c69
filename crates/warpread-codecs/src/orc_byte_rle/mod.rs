//! ORC byte run-length encoding and boolean RLE (ORC spec, "Byte Run Length
//! Encoding" and "Boolean Run Length Encoding").
//!
//! A header byte `h >= 0` starts a run of `h + 3` copies of the next byte; a
//! header `h < 0` is followed by `-h` literal bytes. Boolean streams are byte
//! RLE of bytes whose bits, most significant first, are the booleans.
//!
//! [`decode`] and [`decode_bools`] are the CPU references for the kernels in
//! `kernels/orc_byte_rle.cu`: same values and same statuses on every input.

mod decode;
mod encode;
mod split;

pub use decode::{decode, decode_bools};
pub use encode::{encode, encode_bools};
pub use split::{split, split_bools};

/// Longest run a header can describe.
pub const MAX_RUN: usize = 130;
/// Shortest run (header 0).
pub const MIN_RUN: usize = 3;
/// Most literals after one header.
pub const MAX_LITERALS: usize = 128;
