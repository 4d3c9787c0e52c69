//! The crate's example, run as a test.

#[path = "../../examples/sql.rs"]
mod sql_example;

use crate::common::root;

#[test]
fn sql_example_counts_the_rows() {
    let path = root().join("testdata/orc/many_stripes_v12_none.orc");
    let rows = warpread::orc::OrcFile::open(&path).unwrap().rows();
    let rt = warpread_datafusion::runtime().unwrap();
    let text = rt
        .block_on(sql_example::run(path.to_str().unwrap()))
        .unwrap();
    assert!(text.contains(&format!("| {rows} ")), "{text}");
}
