//! Parquet BYTE_STREAM_SPLIT: a page of `n` values of `width` bytes stored
//! as `width` streams of `n` bytes, stream `b` holding byte `b` of every
//! value. `n` is the page's value bytes divided by `width`.

mod decode;
mod encode;

pub use decode::decode;
pub use encode::encode;
