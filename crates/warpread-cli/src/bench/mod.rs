//! Benchmarks behind `warpread bench`: the CODAG-style column suite and the
//! codec runner that times a backend and verifies it against the CPU, the
//! Huffman codec's ratio and decoders (`huffman`), the
//! end-to-end read benchmark and TPC-H through DataFusion (`sql`).

pub mod codecs;
pub mod gsst;
pub mod huffman;
pub mod read;
pub mod sql;
pub mod suite;
