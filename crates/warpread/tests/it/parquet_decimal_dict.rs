//! Decimal128 columns stored as INT32 or INT64: dictionary-encoded chunks
//! are gathered through a dictionary widened to 16 bytes, chunks that fell
//! back to PLAIN pages are widened after decoding; both must read exactly
//! as the parquet crate reads them, on every backend.

use std::sync::Arc;

use arrow::array::{ArrayRef, Decimal128Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, GzipLevel};
use parquet::file::properties::WriterProperties;
use warpread::exec::{self, Backend, BackendChoice, CpuBackend};
use warpread::orc::ReadOptions;
use warpread::parquet::ParquetFile;

use crate::common::Rng;

fn column(rng: &mut Rng, n: usize, distinct: u64, p: u8, nulls: bool) -> ArrayRef {
    let scale = 10i128.pow(u32::from(p) - 1);
    let values = (0..n).map(|_| {
        let v = (rng.below(distinct) as i128 - distinct as i128 / 2)
            * (scale / distinct as i128).max(1);
        (!nulls || rng.below(10) != 0).then_some(v)
    });
    Arc::new(
        values
            .collect::<Decimal128Array>()
            .with_precision_and_scale(p, 2)
            .unwrap(),
    )
}

#[test]
fn decimals_through_widened_dictionaries_match_the_parquet_crate() {
    let mut rng = Rng::fresh("decimals_through_widened_dictionaries_match_the_parquet_crate");
    let n = 30_000;
    let fields = [
        ("d9_dict", 9, 40, false),
        ("d15_dict", 15, 11, false),
        ("d15_dict_nulls", 15, 7, true),
        // Thousands of distinct values against a small dictionary page
        // limit: the chunk falls back to PLAIN pages after its first ones.
        ("d18_fallback", 18, 1 << 40, false),
        ("d9_fallback_nulls", 9, 1 << 20, true),
    ];
    let schema = Arc::new(Schema::new(
        fields
            .iter()
            .map(|&(name, p, _, nulls)| Field::new(name, DataType::Decimal128(p, 2), nulls))
            .collect::<Vec<_>>(),
    ));
    let columns: Vec<ArrayRef> = fields
        .iter()
        .map(|&(_, p, distinct, nulls)| column(&mut rng, n, distinct, p, nulls))
        .collect();
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let props = WriterProperties::builder()
        .set_compression(Compression::GZIP(GzipLevel::default()))
        .set_dictionary_page_size_limit(4 << 10)
        .set_data_page_size_limit(8 << 10)
        .set_max_row_group_row_count(Some(12_000))
        .build();
    let path = std::env::temp_dir().join(format!(
        "warpread-decimal-dict-{}.parquet",
        std::process::id()
    ));
    let mut w =
        ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();

    let want: Vec<RecordBatch> =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&path).unwrap())
            .unwrap()
            .build()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
    let want = arrow::compute::concat_batches(&want[0].schema(), &want).unwrap();
    let auto = exec::select(BackendChoice::Auto).unwrap();
    for backend in [&CpuBackend::new() as &dyn Backend, auto.as_ref()] {
        let got = ParquetFile::open(&path)
            .unwrap()
            .read(&ReadOptions::default(), backend)
            .unwrap();
        let got = arrow::compute::concat_batches(&got[0].schema(), &got).unwrap();
        assert_eq!(got, want, "{}", backend.name());
    }
    std::fs::remove_file(&path).ok();
}
