//! Data generation: TPC-H tables produced in-process with `tpchgen`, written
//! as files the readers and benchmarks use.

pub mod tpch;
