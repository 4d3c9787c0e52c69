//! GSST: FSST string compression laid out for GPU decoding (the thesis in
//! the papers behind warpread), in our own versioned format
//! (docs/gsst-format.md): the bitstream, the compressor, the launch shape
//! the compressor's defaults follow, and the CPU reference block decoder.
//!
//! A frame holds independent blocks, each with its own symbol table, its
//! codes cut into splits that GPU threads decode concurrently. The frame is
//! parsed on the CPU into a [`Stage`](crate::plan::Stage) of one job per
//! block ([`Frame::stage`]); a backend decodes it: the CPU reference
//! ([`decode_block`]) or the CUDA backend's `gsst.cu` kernels.

mod compress;
mod decode;
pub mod format;
mod params;
pub mod shape;
mod symbols;

pub use compress::{compress, compress_block};
pub use decode::decode_block;
pub use format::Frame;
pub use params::{GsstParams, MIN_BLOCK_BYTES, MIN_SPLIT_BYTES, TargetDevice};
pub use shape::GsstShape;
pub use symbols::SymbolTable;

pub use crate::plan::GsstLayout;
