//! GZIP page trailers: the reader checks each page's CRC32 beside the
//! decode rounds (deferred), so a page whose trailer does not match must
//! still fail the read, naming the page, on every backend; an intact file
//! reads the same on every backend.

use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, GzipLevel};
use parquet::file::properties::WriterProperties;
use warpread::exec::{self, Backend, BackendChoice, CpuBackend};
use warpread::orc::ReadOptions;
use warpread::parquet::ParquetFile;
use warpread::parquet::page_header::{PageKind, parse_page_header};

use crate::common::Rng;

/// A GZIP file of one Int64 column over several small data pages, no
/// dictionary.
fn gzip_file(rng: &mut Rng) -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
    let values: Vec<i64> = (0..40_000).map(|_| (rng.next() % 1000) as i64).collect();
    let batch =
        RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(values))]).unwrap();
    let props = WriterProperties::builder()
        .set_compression(Compression::GZIP(GzipLevel::default()))
        .set_dictionary_enabled(false)
        .set_data_page_size_limit(16 << 10)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

/// The file offsets of the data page bodies of the first column chunk.
fn page_bodies(path: &std::path::Path, bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let file = ParquetFile::open(path).unwrap();
    let cc = file.metadata().row_group(0).column(0);
    let (start, len) = cc.byte_range();
    let (mut pos, end) = (start as usize, (start + len) as usize);
    let mut out = Vec::new();
    while pos < end {
        let h = parse_page_header(&bytes[pos..end]).unwrap();
        let body = pos + h.header_len..pos + h.header_len + h.compressed_size as usize;
        if h.kind == PageKind::Data {
            out.push(body.clone());
        }
        pos = body.end;
    }
    out
}

fn rows(path: &std::path::Path, backend: &dyn Backend) -> Result<Vec<RecordBatch>, String> {
    ParquetFile::open(path)
        .and_then(|f| f.read(&ReadOptions::default(), backend))
        .map_err(|e| e.to_string())
}

#[test]
fn a_page_whose_gzip_crc_does_not_match_fails_the_read() {
    let mut rng = Rng::fresh("a_page_whose_gzip_crc_does_not_match_fails_the_read");
    let dir = std::env::temp_dir().join(format!("warpread-gzip-trailer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.parquet");
    let bytes = gzip_file(&mut rng);
    std::fs::write(&good, &bytes).unwrap();
    let bodies = page_bodies(&good, &bytes);
    assert!(bodies.len() > 3, "{} data pages", bodies.len());
    let auto = exec::select(BackendChoice::Auto).unwrap();
    let cpu = CpuBackend::new();
    let want = rows(&good, &cpu).unwrap();
    assert_eq!(rows(&good, auto.as_ref()).unwrap(), want);
    // The CRC32 is the trailer's first 4 bytes; the size after it still
    // matches, so only the CRC check can catch it.
    let page = rng.below(bodies.len() as u64) as usize;
    let mut bad = bytes.clone();
    bad[bodies[page].end - 8] ^= 1 << rng.below(8);
    let path = dir.join("bad_crc.parquet");
    std::fs::write(&path, &bad).unwrap();
    for backend in [&cpu as &dyn Backend, auto.as_ref()] {
        let e = rows(&path, backend).expect_err("a bad CRC32 must fail the read");
        assert!(e.contains("CRC32"), "{}: {e}", backend.name());
        assert!(
            e.contains(&format!("page {page}")),
            "{}: {e}",
            backend.name()
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
