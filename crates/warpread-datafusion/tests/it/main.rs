//! Integration tests of the DataFusion provider.

mod cancellation;
#[path = "../../../warpread/tests/it/common.rs"]
#[allow(dead_code)]
// The shared test helpers find fixtures and seeds through the environment;
// the crate's `clippy.toml` rule is for its library code.
#[allow(clippy::disallowed_methods)]
mod common;
mod examples;
mod object_stores;
mod orc_row_groups;
mod settings;
mod sql_page_index;
#[path = "../../../warpread/tests/it/stage_counting.rs"]
mod stage_counting;
