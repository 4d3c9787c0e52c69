//! GSST: FSST string compression laid out for GPU decoding (the thesis in
//! the papers behind warpread), in our own versioned format (docs/gsst-format.md).
//!
//! A frame holds independent blocks, each with its own symbol table, its
//! codes cut into splits that GPU threads decode concurrently. The frame is
//! parsed on the CPU into a [`Stage`](crate::plan::Stage) of one job per
//! block ([`Frame::stage`]); a backend decodes it: the CPU reference
//! ([`decode_block`]) or the kernels of `kernels/gsst.cu`.
//!
//! ```
//! use warpread::gsst::{self, GsstParams, TargetDevice};
//! use warpread::plan::GsstLayout;
//!
//! let text = b"final deposits sleep carefully\n".repeat(1000);
//! let params = GsstParams::for_device(&TargetDevice::H100, text.len(), GsstLayout::Splits);
//! let frame = gsst::compress(&text, &params);
//! assert!(frame.len() * 2 < text.len());
//! assert_eq!(gsst::decompress(&frame)?, text);
//! # Ok::<(), warpread::Error>(())
//! ```

pub mod arrow;
pub mod codec_choice;
mod column_parts;
pub mod container;
pub mod container_file;
mod decompress;
pub mod huffman_column;
pub mod huffman_extension;
mod ipc_layout;

pub use decompress::{decompress, decompress_with};
pub use warpread_codecs::gsst::Frame;
pub use warpread_codecs::gsst::{
    GsstLayout, GsstParams, GsstShape, MIN_BLOCK_BYTES, MIN_SPLIT_BYTES, SymbolTable, TargetDevice,
    compress, compress_block, decode_block, format, shape,
};

/// A synchronous, streaming reader builder over a local GSST container
/// (or any Arrow IPC file) or one held in memory
/// ([`crate::read::ReaderBuilder`]).
pub type GsstReaderBuilder = crate::read::ReaderBuilder<container_file::ContainerFile>;

/// An async, streaming reader builder over a GSST container in any
/// `object_store::ObjectStore` ([`crate::read::StreamBuilder`]).
pub type GsstStreamBuilder = crate::read::StreamBuilder<container_file::ContainerFile>;
