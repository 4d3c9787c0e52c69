//! Benchmarks behind `warpread bench`: the CODAG-style column suite and the
//! codec runner that times a backend and verifies it against the CPU.

pub mod codecs;
pub mod gsst;
pub mod read;
pub mod suite;
