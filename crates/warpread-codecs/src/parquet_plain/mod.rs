//! Parquet PLAIN encoding: fixed-width values little-endian back to back
//! (INT32, INT64, INT96, FLOAT, DOUBLE, FIXED_LEN_BYTE_ARRAY), booleans one
//! bit each LSB first, BYTE_ARRAY values each after a 4-byte little-endian
//! length.
//!
//! Byte arrays decode in two passes, as on a GPU: [`byte_array_lengths`]
//! finds every value's length (the serial walk), the caller turns lengths
//! into offsets, and [`byte_array_data`] copies the bytes end to end.
//! Trailing input after the values asked for is ignored, as the parquet
//! crate does.

mod decode;
mod encode;

pub use decode::{byte_array_data, byte_array_lengths, decode_bool, decode_fixed};
pub use encode::{encode_bool, encode_byte_array};
