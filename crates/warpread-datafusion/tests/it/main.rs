//! Integration tests of the DataFusion provider.

#[path = "../../../warpread/tests/it/common.rs"]
#[allow(dead_code)]
mod common;
mod orc_row_groups;
mod sql_page_index;
