//! Reads an ORC file through the streaming reader: its footer, then its
//! batches as stripes finish, the first 10,000 rows only.
//!
//! `cargo run -p warpread --example orc_read [FILE.orc]` (default: a
//! fixture of the repository).

use warpread::orc::OrcReaderBuilder;

/// Runs the example on `path`; returns the rows read.
pub fn run(path: &str) -> warpread::Result<usize> {
    let builder = OrcReaderBuilder::try_new(path)?;
    let tail = builder.metadata();
    println!(
        "{path}: ORC {:?}, {} compression, {} stripes",
        tail.postscript.version,
        tail.compression.kind.name(),
        builder.file().stripes().len()
    );
    let mut reader = builder.with_limit(10_000).build()?;
    let mut rows = 0;
    while let Some(batch) = reader.next_batch() {
        let batch = batch?;
        rows += batch.num_rows();
        println!(
            "batch of {} rows, {} columns",
            batch.num_rows(),
            batch.num_columns()
        );
    }
    Ok(rows)
}

#[allow(dead_code)]
fn main() -> warpread::Result<()> {
    let default = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/orc/rowgroups_v12_zlib.orc"
    );
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| default.to_string());
    run(&path).map(|_| ())
}
