//! Benchmarks behind `warpread bench`: the CODAG-style column suite and the
//! codec runner that times a backend and verifies it against the CPU, the
//! end-to-end read benchmark and TPC-H through DataFusion (`sql`).

pub mod codecs;
pub mod gsst;
pub mod read;
pub mod sql;
pub mod suite;
