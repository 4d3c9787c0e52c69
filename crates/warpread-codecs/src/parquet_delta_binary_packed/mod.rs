//! Parquet DELTA_BINARY_PACKED (Parquet spec, "Delta Encoding"): a header
//! `<block size> <miniblocks per block> <total count> <first value>`
//! (ULEB128, the first value zigzag), then blocks of `<min delta>` (zigzag
//! ULEB128), one bit-width byte per miniblock, and the miniblocks' deltas
//! bit-packed LSB first. Value `i + 1 = value i + min delta + delta i`, with
//! two's complement wrapping in the column's width.
//!
//! The last miniblock holding values is padded to full size; miniblocks
//! after it have a bit-width byte but no body. [`decode`] is the CPU
//! reference for INT32 and INT64 columns; [`walk`] also serves the
//! DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY length streams, which need
//! where the stream ends.

mod decode;
mod encode;

pub use decode::{Failure, Reader, decode, walk};
pub use encode::{DEFAULT_SHAPE, encode, encode_shaped};
