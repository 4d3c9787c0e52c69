//! Integration tests: one binary, one module per concern.

mod cli;
mod common;
mod corrupt_inputs;
mod deflate_differential;
mod gsst;
mod rle_v1_differential;
