//! Reads an ORC file into Arrow record batches on the best backend and
//! prints the schema, the row count and where the time went.
//!
//! ```sh
//! cargo run --release --example read_orc -- testdata/orc/types_v12_zlib.orc
//! ```

use warpread::exec::{self, BackendChoice};
use warpread::orc::{OrcFile, ReadOptions};

fn main() -> warpread::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "testdata/orc/types_v12_zlib.orc".into());
    let backend = exec::select(BackendChoice::Auto)?;
    let file = OrcFile::open(&path)?;
    println!(
        "{path}: {} rows in {} stripes",
        file.rows(),
        file.stripes().len()
    );
    println!("schema: {}", file.root().type_string());
    let (batches, stats) = file.read_with_stats(&ReadOptions::default(), backend.as_ref())?;
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    println!(
        "read {rows} rows in {} batches on {}: io {:.4} s, decompress {:.4} s, decode {:.4} s, assemble {:.4} s",
        batches.len(),
        backend.describe(),
        stats.io_s,
        stats.decompress_s,
        stats.decode_s,
        stats.assemble_s
    );
    if let Some(first) = batches.first() {
        let head = first.slice(0, first.num_rows().min(3));
        println!(
            "{}",
            arrow::util::pretty::pretty_format_batches(&[head])
                .map_err(|e| warpread::Error::arrow("formatting", e))?
        );
    }
    Ok(())
}
