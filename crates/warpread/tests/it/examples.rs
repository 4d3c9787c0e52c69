//! The crate's examples, run as tests (CI runs what the README shows).

#[path = "../../examples/object_store.rs"]
mod object_store_example;
#[path = "../../examples/orc_read.rs"]
mod orc_read;
#[path = "../../examples/parquet_stream.rs"]
mod parquet_stream;

use crate::common::root;

fn fixture(p: &str) -> String {
    root()
        .join("testdata")
        .join(p)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn parquet_stream_example_filters_rows() {
    let rows = parquet_stream::run(&fixture("parquet/types_gzip_v1.parquet")).unwrap();
    // Rows where the first integer column is below 5, counted another way.
    let file =
        warpread::parquet::ParquetFile::open(fixture("parquet/types_gzip_v1.parquet")).unwrap();
    let batches = file
        .read(
            &warpread::read::ReadOptions::default(),
            &warpread::exec::CpuBackend::new(),
        )
        .unwrap();
    let col = file
        .schema()
        .fields()
        .iter()
        .position(|f| {
            matches!(
                f.data_type(),
                arrow::datatypes::DataType::Int32 | arrow::datatypes::DataType::Int64
            )
        })
        .unwrap();
    let want: usize = batches
        .iter()
        .map(|b| {
            let c =
                arrow::compute::cast(b.column(col), &arrow::datatypes::DataType::Int64).unwrap();
            let c = c
                .as_any()
                .downcast_ref::<arrow::array::Int64Array>()
                .unwrap();
            c.iter().filter(|v| v.is_some_and(|v| v < 5)).count()
        })
        .sum();
    assert_eq!(rows, want);
}

#[test]
fn orc_read_example_stops_at_its_limit() {
    let rows = orc_read::run(&fixture("orc/rowgroups_v12_zlib.orc")).unwrap();
    let all = warpread::orc::OrcFile::open(fixture("orc/rowgroups_v12_zlib.orc"))
        .unwrap()
        .rows();
    assert_eq!(rows as u64, all.min(10_000));
}

#[test]
fn object_store_example_reads_every_row() {
    let path = fixture("parquet/types_zstd_v1.parquet");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rows = rt.block_on(object_store_example::run(&path)).unwrap();
    assert_eq!(
        rows as u64,
        warpread::parquet::ParquetFile::open(&path).unwrap().rows()
    );
}
