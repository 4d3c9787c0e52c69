//! Data generation: TPC-H tables produced in-process with `tpchgen`, written
//! as files the readers and benchmarks use, and the small ORC writer that
//! writes them as ORC.

pub mod cache;
pub use warpread::orc::writer as orc;
pub mod tpch;
