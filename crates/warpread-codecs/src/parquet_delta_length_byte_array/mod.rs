//! Parquet DELTA_LENGTH_BYTE_ARRAY: every value's length as one
//! DELTA_BINARY_PACKED stream, then all the values' bytes end to end.
//!
//! Two passes, like PLAIN byte arrays: [`lengths`] (the delta stream) and
//! [`data`] (the bytes after it). Negative lengths are `ValueOutOfRange`.

mod decode;
mod encode;

pub use decode::{data, lengths, suffix_start};
pub use encode::{encode, encode_shaped};
