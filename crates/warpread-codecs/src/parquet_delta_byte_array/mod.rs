//! Parquet DELTA_BYTE_ARRAY (incremental encoding): each value's length of
//! the prefix it shares with the previous value as one DELTA_BINARY_PACKED
//! stream, then the suffixes as DELTA_LENGTH_BYTE_ARRAY.
//!
//! Two passes: [`lengths`] (prefix + suffix length per value, checking each
//! prefix fits the previous value) and [`data`] (values rebuilt end to end,
//! the previous value read back from the output). Both stream the two
//! length streams in lockstep, so nothing is allocated.

mod decode;
mod encode;

pub use decode::{data, lengths};
pub use encode::{encode, encode_shaped};
