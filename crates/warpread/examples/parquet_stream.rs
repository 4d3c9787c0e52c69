//! Streams a Parquet file as record batches: two columns, the row groups
//! and pages that `l_quantity < 5` rules out skipped, the others' rows
//! filtered exactly, on the GPU when one is usable.
//!
//! `cargo run -p warpread --example parquet_stream [FILE.parquet]`
//! (default: a fixture of the repository).

use arrow::array::RecordBatchReader;
use warpread::parquet::ParquetReaderBuilder;
use warpread::read::Predicate;

/// Runs the example on `path`; returns the rows read.
pub fn run(path: &str) -> warpread::Result<usize> {
    let builder = ParquetReaderBuilder::try_new(path)?;
    println!(
        "{path}: {} rows in {} row groups",
        builder.metadata().file_metadata().num_rows(),
        builder.metadata().num_row_groups()
    );
    let schema = builder.file().schema();
    // The first integer column and the first column after it.
    let column = |pred: &dyn Fn(&arrow::datatypes::DataType) -> bool| {
        schema
            .fields()
            .iter()
            .find(|f| pred(f.data_type()))
            .map(|f| f.name().clone())
    };
    let int = column(&|t| {
        matches!(
            t,
            arrow::datatypes::DataType::Int32 | arrow::datatypes::DataType::Int64
        )
    })
    .unwrap_or_else(|| schema.field(0).name().clone());
    let reader = builder
        .with_projection([int.clone()])
        .with_predicate(format!("{int} < 5").parse::<Predicate>()?)
        .with_row_filter(true)
        .with_batch_size(8192)
        .build()?;
    println!("schema: {}", reader.schema());
    let mut rows = 0;
    for batch in reader {
        let batch = batch.map_err(|e| warpread::Error::arrow("reading", e))?;
        rows += batch.num_rows();
    }
    println!("{rows} rows with {int} < 5");
    Ok(rows)
}

#[allow(dead_code)]
fn main() -> warpread::Result<()> {
    let default = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/parquet/types_gzip_v1.parquet"
    );
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| default.to_string());
    run(&path).map(|_| ())
}
