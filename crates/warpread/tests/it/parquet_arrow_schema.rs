//! Damaged `ARROW:schema` metadata: arrow-ipc panicked on some of it inside
//! the parquet crate, and a caught panic still printed its message and a
//! backtrace. Every damaged schema must give the Parquet schema (with a
//! warning) or an error, and no panic at all: the reads run in a child
//! process of this test binary whose panic hook counts panics, and the
//! parent also checks the child printed none.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::array::{
    ArrayRef, Decimal128Array, Int32Array, ListArray, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow::datatypes::Int64Type;
use base64::Engine;
use base64::prelude::BASE64_STANDARD;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use warpread::exec::CpuBackend;
use warpread::orc::ReadOptions;
use warpread::parquet::ParquetFile;

const CHILD: &str = "WARPREAD_ARROW_SCHEMA_CHILD";
const TEST: &str = "parquet_arrow_schema::damaged_embedded_arrow_schemas_never_panic";

fn batch() -> RecordBatch {
    let list = ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
        Some(vec![Some(1), None]),
        None,
        Some(vec![]),
    ]);
    let cols: Vec<(&str, ArrayRef)> = vec![
        (
            "i",
            Arc::new(Int32Array::from(vec![Some(1), None, Some(3)])),
        ),
        ("s", Arc::new(StringArray::from(vec!["a", "bc", ""]))),
        (
            "t",
            Arc::new(TimestampMicrosecondArray::from(vec![1, 2, 3]).with_timezone("UTC")),
        ),
        (
            "d",
            Arc::new(
                Decimal128Array::from(vec![12345, -1, 0])
                    .with_precision_and_scale(20, 2)
                    .unwrap(),
            ),
        ),
        ("l", Arc::new(list)),
    ];
    RecordBatch::try_from_iter(cols).unwrap()
}

/// The batch written with `schema` as its `ARROW:schema` value.
fn with_schema(b: &RecordBatch, schema: &str) -> Vec<u8> {
    let props = WriterProperties::builder()
        .set_key_value_metadata(Some(vec![KeyValue::new(
            "ARROW:schema".into(),
            schema.to_string(),
        )]))
        .build();
    let options = ArrowWriterOptions::new()
        .with_properties(props)
        .with_skip_arrow_metadata(true);
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new_with_options(&mut out, b.schema(), options).unwrap();
    w.write(b).unwrap();
    w.close().unwrap();
    out
}

/// The damaged values: bad base64, truncations, and every byte of the
/// flatbuffer changed in a few ways.
fn damaged(valid: &str) -> Vec<String> {
    let bytes = BASE64_STANDARD.decode(valid).unwrap();
    let mut out = vec![
        "not base64 at all".to_string(),
        valid[..valid.len() - 1].to_string(),
        String::new(),
    ];
    for n in (0..bytes.len()).step_by(7) {
        out.push(BASE64_STANDARD.encode(&bytes[..n]));
    }
    for k in 0..bytes.len() {
        for f in [
            |b: u8| b ^ 0x01,
            |b: u8| b ^ 0x80,
            |b: u8| b.wrapping_add(24),
            |_| 0,
            |_| 0xff,
        ] {
            let mut b = bytes.clone();
            b[k] = f(b[k]);
            if b != bytes {
                out.push(BASE64_STANDARD.encode(&b));
            }
        }
    }
    out
}

static PANICS: AtomicUsize = AtomicUsize::new(0);

fn child() {
    std::panic::set_hook(Box::new(|_| {
        PANICS.fetch_add(1, Ordering::SeqCst);
    }));
    let b = batch();
    let valid = parquet::arrow::encode_arrow_schema(&b.schema());
    let tmp = std::env::temp_dir().join(format!("warpread-arrow-schema-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let (mut read, mut failed) = (0, 0);
    let cases = damaged(&valid);
    for (i, schema) in cases.iter().enumerate() {
        let path = tmp.join(format!("{i}.parquet"));
        std::fs::write(&path, with_schema(&b, schema)).unwrap();
        let got = ParquetFile::open(&path)
            .and_then(|f| f.read(&ReadOptions::default(), &CpuBackend::new()));
        match got {
            Ok(batches) => {
                read += 1;
                let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
                assert_eq!(rows, 3, "case {i}");
            }
            Err(e) => {
                failed += 1;
                assert!(e.to_string().contains(&*path.to_string_lossy()), "{e}");
            }
        }
        std::fs::remove_file(&path).ok();
    }
    std::fs::remove_dir_all(&tmp).ok();
    println!(
        "{} damaged schemas: {read} read, {failed} errors",
        cases.len()
    );
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "panics while reading");
}

#[test]
fn damaged_embedded_arrow_schemas_never_panic() {
    if std::env::var_os(CHILD).is_some() {
        child();
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("damaged schemas"),
        "the child ran nothing:\n{stdout}"
    );
    assert!(
        !stderr.contains("panicked") && !stdout.contains("panicked"),
        "{stderr}"
    );
}
