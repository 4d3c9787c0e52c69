//! Huffman columns of the GSST container (`warpread.huffman`): every
//! fixed-width type and strings, with nulls, empty batches, all-null and
//! single-value columns, round trip under every codec policy and through
//! every reading path (whole file, random access, the sync and async
//! builders with projection, selection and row filters), on the CPU and,
//! where a device is usable, identically on CUDA; `auto` picks as
//! documented; damaged Huffman columns are errors naming file, batch and
//! column.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Date32Array, Date64Array, Decimal32Array, Decimal64Array,
    Decimal128Array, Decimal256Array, DurationMillisecondArray, Float32Array, Float64Array,
    Int8Array, Int16Array, Int32Array, Int64Array, IntervalDayTimeArray, IntervalMonthDayNanoArray,
    IntervalYearMonthArray, LargeBinaryArray, LargeStringArray, RecordBatch, RunArray, StringArray,
    Time32MillisecondArray, Time64MicrosecondArray, TimestampMicrosecondArray,
    TimestampNanosecondArray, UInt8Array, UInt16Array, UInt32Array, UInt64Array,
};
use arrow::compute::{concat_batches, filter_record_batch};
use arrow::datatypes::{
    DataType, Field, Int64Type, IntervalDayTime, IntervalMonthDayNano, Schema, SchemaRef, i256,
};
use arrow::ipc::writer::FileWriter;
use futures::TryStreamExt;
use object_store::memory::InMemory;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use warpread::codecs::huffman::SymbolWidth;
use warpread::exec::{Backend, CpuBackend};
use warpread::gsst::codec_choice::{CodecPolicy, ColumnEncoding, STAGE_WEIGHT, candidates};
use warpread::gsst::container::{
    ContainerOptions, ContainerStats, encode_batch, encode_schema_with, write_container,
};
use warpread::gsst::container_file::ContainerFile;
use warpread::gsst::huffman_extension::HuffmanEncoding;
use warpread::gsst::{GsstReaderBuilder, GsstStreamBuilder};
use warpread::plan::GsstLayout;
use warpread::read::RowSelection;

use crate::common::{Rng, cuda, runtime};

/// A skewed value in 0..1000 (a few common, many rare), or null one time
/// in seven.
fn skewed(rng: &mut Rng) -> Option<i64> {
    let r = rng.next();
    (r % 7 != 3).then(|| ((r >> 8) % 1000) as i64 >> ((r >> 40) % 8))
}

/// One column of every type a Huffman column holds, strings among them,
/// an all-null and a single-value column, and two plain-only columns.
fn all_types(rng: &mut Rng, n: usize) -> RecordBatch {
    let v: Vec<Option<i64>> = (0..n).map(|_| skewed(rng)).collect();
    let map = |f: &dyn Fn(i64) -> i64| v.iter().map(|x| x.map(f)).collect::<Vec<_>>();
    let i32s = || map(&|x| x).into_iter().map(|x| x.map(|x| x as i32));
    let f16 = arrow::compute::cast(
        &Float32Array::from_iter(map(&|x| x).into_iter().map(|x| x.map(|x| x as f32 / 8.0))),
        &DataType::Float16,
    )
    .unwrap();
    let words = ["slyly", "final", "deposits", "", "carefully ironic", "ü"];
    let text = |x: i64| {
        (0..x % 5)
            .map(|k| words[((x + k) % 6) as usize])
            .collect::<Vec<_>>()
            .join(" ")
    };
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "i8",
            Arc::new(Int8Array::from_iter(
                map(&|x| x % 100).into_iter().map(|x| x.map(|x| x as i8)),
            )),
        ),
        (
            "i16",
            Arc::new(Int16Array::from_iter(
                map(&|x| x - 500).into_iter().map(|x| x.map(|x| x as i16)),
            )),
        ),
        ("i32", Arc::new(Int32Array::from_iter(i32s()))),
        (
            "i64",
            Arc::new(Int64Array::from_iter(map(&|x| x * 1_000_003))),
        ),
        (
            "u8",
            Arc::new(UInt8Array::from_iter(
                map(&|x| x % 200).into_iter().map(|x| x.map(|x| x as u8)),
            )),
        ),
        (
            "u16",
            Arc::new(UInt16Array::from_iter(
                map(&|x| x).into_iter().map(|x| x.map(|x| x as u16)),
            )),
        ),
        (
            "u32",
            Arc::new(UInt32Array::from_iter(
                map(&|x| x << 12).into_iter().map(|x| x.map(|x| x as u32)),
            )),
        ),
        (
            "u64",
            Arc::new(UInt64Array::from_iter(
                map(&|x| x << 40).into_iter().map(|x| x.map(|x| x as u64)),
            )),
        ),
        ("f16", f16),
        (
            "f32",
            Arc::new(Float32Array::from_iter(
                map(&|x| x).into_iter().map(|x| x.map(|x| x as f32 * 0.5)),
            )),
        ),
        (
            "f64",
            Arc::new(Float64Array::from_iter(
                map(&|x| x).into_iter().map(|x| x.map(|x| x as f64 / 3.0)),
            )),
        ),
        ("date32", Arc::new(Date32Array::from_iter(i32s()))),
        (
            "date64",
            Arc::new(Date64Array::from_iter(map(&|x| x * 86_400_000))),
        ),
        (
            "time32",
            Arc::new(Time32MillisecondArray::from_iter(i32s())),
        ),
        (
            "time64",
            Arc::new(Time64MicrosecondArray::from_iter(map(&|x| x * 7))),
        ),
        (
            "ts_utc",
            Arc::new(
                TimestampMicrosecondArray::from_iter(map(&|x| 1_700_000_000_000_000 + x))
                    .with_timezone("UTC"),
            ),
        ),
        (
            "ts",
            Arc::new(TimestampNanosecondArray::from_iter(map(&|x| x * 1000))),
        ),
        (
            "dur",
            Arc::new(DurationMillisecondArray::from_iter(map(&|x| x))),
        ),
        ("ym", Arc::new(IntervalYearMonthArray::from_iter(i32s()))),
        (
            "dt",
            Arc::new(IntervalDayTimeArray::from_iter(
                i32s().map(|x| x.map(|x| IntervalDayTime::new(x % 31, x * 1000))),
            )),
        ),
        (
            "mdn",
            Arc::new(IntervalMonthDayNanoArray::from_iter(
                map(&|x| x).into_iter().map(|x| {
                    x.map(|x| IntervalMonthDayNano::new(x as i32 % 12, x as i32 % 28, x * 1000))
                }),
            )),
        ),
        (
            "dec32",
            Arc::new(
                Decimal32Array::from_iter(i32s())
                    .with_precision_and_scale(9, 2)
                    .unwrap(),
            ),
        ),
        (
            "dec64",
            Arc::new(
                Decimal64Array::from_iter(map(&|x| x))
                    .with_precision_and_scale(18, 3)
                    .unwrap(),
            ),
        ),
        (
            "dec128",
            Arc::new(
                Decimal128Array::from_iter(map(&|x| x).into_iter().map(|x| x.map(i128::from)))
                    .with_precision_and_scale(15, 2)
                    .unwrap(),
            ),
        ),
        (
            "dec256",
            Arc::new(
                Decimal256Array::from_iter(
                    map(&|x| x)
                        .into_iter()
                        .map(|x| x.map(|x| i256::from_i128(x.into()))),
                )
                .with_precision_and_scale(50, 5)
                .unwrap(),
            ),
        ),
        (
            "s",
            Arc::new(StringArray::from_iter(v.iter().map(|x| x.map(text)))),
        ),
        (
            "ls",
            Arc::new(LargeStringArray::from_iter_values(
                v.iter().map(|x| text(x.unwrap_or(3) + 1)),
            )),
        ),
        ("all_null", Arc::new(Int64Array::from(vec![None::<i64>; n]))),
        ("same", Arc::new(Int32Array::from(vec![7; n]))),
        (
            "bool",
            Arc::new(BooleanArray::from_iter(
                v.iter().map(|x| x.map(|x| x % 2 == 0)),
            )),
        ),
        (
            "bin",
            Arc::new(arrow::array::BinaryArray::from_iter(
                v.iter().map(|x| x.map(|x| x.to_le_bytes())),
            )),
        ),
    ];
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, a)| Field::new(*name, a.data_type().clone(), *name != "same"))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

/// Batches of every shape: empty, one row, a slice of a larger batch, a
/// plain one.
fn batches(rng: &mut Rng) -> (SchemaRef, Vec<RecordBatch>) {
    let big = all_types(rng, 20_000);
    let b = vec![
        all_types(rng, 0),
        all_types(rng, 1),
        big.slice(1234, 9000),
        all_types(rng, 3000),
    ];
    (b[0].schema(), b)
}

fn write(
    schema: &Schema,
    batches: &[RecordBatch],
    policy: CodecPolicy,
) -> (bytes::Bytes, ContainerStats) {
    let mut buf = Vec::new();
    let stats = write_container(
        &mut buf,
        schema,
        batches.iter().cloned().map(Ok),
        &ContainerOptions::new(GsstLayout::Splits).with_codec(policy),
    )
    .unwrap();
    (bytes::Bytes::from(buf), stats)
}

fn read_all(name: &str, bytes: &bytes::Bytes, backend: &dyn Backend) -> Vec<RecordBatch> {
    let f = ContainerFile::from_bytes(name, bytes.clone()).unwrap();
    let all: Vec<usize> = (0..f.blocks().len()).collect();
    f.read(&all, &[], backend).unwrap()
}

fn assert_same(got: &[RecordBatch], want: &[RecordBatch], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: batches");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.schema(), w.schema(), "{what}: schema of batch {i}");
        for (c, f) in w.schema().fields().iter().enumerate() {
            assert_eq!(
                g.column(c).as_ref(),
                w.column(c).as_ref(),
                "{what}: batch {i}, column {}",
                f.name()
            );
        }
    }
}

#[test]
fn every_type_round_trips_under_every_policy() {
    let mut rng = Rng::fresh("every_type_round_trips_under_every_policy");
    let (schema, source) = batches(&mut rng);
    for policy in CodecPolicy::ALL {
        let what = policy.name();
        let (bytes, stats) = write(&schema, &source, policy);
        let got = read_all("all.arrow", &bytes, &CpuBackend::new());
        assert_same(&got, &source, what);
        for (c, f) in stats.columns.iter().zip(schema.fields()) {
            let allowed = candidates(f.data_type(), policy);
            assert!(allowed.contains(&c.encoding), "{what}: {}", f.name());
            if policy == CodecPolicy::Huffman && allowed.len() > 1 {
                assert!(
                    matches!(c.encoding, ColumnEncoding::Huffman(_)),
                    "{}",
                    f.name()
                );
            }
        }
        if let Some(gpu) = cuda("every_type_round_trips_under_every_policy") {
            let on_gpu = read_all("all.arrow", &bytes, gpu);
            assert_same(&on_gpu, &got, &format!("{what} on CUDA"));
        }
    }
}

/// Every Huffman encoding of every column, forced, reads back on both
/// backends: each symbol width, and GSST before Huffman for strings.
#[test]
fn every_encoding_of_every_column_round_trips() {
    let mut rng = Rng::fresh("every_encoding_of_every_column_round_trips");
    let (schema, source) = batches(&mut rng);
    let options = ContainerOptions::new(GsstLayout::Coalesced);
    for width in [SymbolWidth::U8, SymbolWidth::U16] {
        for gsst in [false, true] {
            let h = ColumnEncoding::Huffman(HuffmanEncoding { width, gsst });
            let encodings: Vec<ColumnEncoding> = schema
                .fields()
                .iter()
                .map(|f| {
                    let c = candidates(f.data_type(), CodecPolicy::Auto);
                    if c.contains(&h) {
                        h
                    } else {
                        ColumnEncoding::Plain
                    }
                })
                .collect();
            let encoded = encode_schema_with(&schema, &encodings, options.layout).unwrap();
            let mut buf = Vec::new();
            let mut w = FileWriter::try_new(&mut buf, &encoded).unwrap();
            let mut stats = ContainerStats::default();
            for b in &source {
                w.write(&encode_batch(b, &encoded, &options, &mut stats).unwrap())
                    .unwrap();
            }
            w.finish().unwrap();
            drop(w);
            let bytes = bytes::Bytes::from(buf);
            let what = h.name();
            let got = read_all("forced.arrow", &bytes, &CpuBackend::new());
            assert_same(&got, &source, &what);
            if let Some(gpu) = cuda("every_encoding_of_every_column_round_trips") {
                assert_same(&read_all("forced.arrow", &bytes, gpu), &source, &what);
            }
        }
    }
}

#[test]
fn auto_picks_as_documented() {
    let mut rng = Rng::seeded(33);
    let n = 40_000;
    let noise = UInt64Array::from_iter_values((0..n).map(|_| rng.next()));
    let few = Int32Array::from_iter_values((0..n).map(|i| [3, 3, 3, 5, 9][i % 5]));
    let prose = StringArray::from_iter_values((0..n).map(|i| {
        format!(
            "the {} pending deposits sleep quickly above the {} ironic packages",
            ["blue", "final", "bold"][i % 3],
            i % 13
        )
    }));
    let flags = BooleanArray::from_iter((0..n).map(|i| Some(i % 3 == 0)));
    let schema = Arc::new(Schema::new(vec![
        Field::new("noise", DataType::UInt64, false),
        Field::new("few", DataType::Int32, false),
        Field::new("prose", DataType::Utf8, false),
        Field::new("flags", DataType::Boolean, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(noise) as ArrayRef,
            Arc::new(few),
            Arc::new(prose),
            Arc::new(flags),
        ],
    )
    .unwrap();
    let (bytes, stats) = write(&schema, std::slice::from_ref(&batch), CodecPolicy::Auto);
    let enc: Vec<ColumnEncoding> = stats.columns.iter().map(|c| c.encoding).collect();
    // Random bytes do not compress: plain. A few values: Huffman. Text:
    // some non-plain encoding. Booleans have no candidate.
    assert_eq!(enc[0], ColumnEncoding::Plain);
    assert!(matches!(enc[1], ColumnEncoding::Huffman(_)), "{enc:?}");
    assert_ne!(enc[2], ColumnEncoding::Plain);
    assert_eq!(enc[3], ColumnEncoding::Plain);
    assert!(stats.columns[3].measured.is_empty());
    // The documented rule: the least bytes x 1.1 per decode stage, plain
    // counted as it is.
    for c in &stats.columns[..3] {
        let weight =
            |(e, b): &(ColumnEncoding, u64)| *b as f64 * STAGE_WEIGHT.powi(e.stages() as i32);
        let best = c
            .measured
            .iter()
            .min_by(|a, b| weight(a).total_cmp(&weight(b)))
            .unwrap();
        assert_eq!(
            weight(best),
            weight(&(c.encoding, c.stored_bytes)),
            "{}",
            c.name
        );
        assert_eq!(
            c.measured.iter().find(|m| m.0 == c.encoding).unwrap().1,
            c.stored_bytes,
            "{}: the sample was the whole file",
            c.name
        );
    }
    assert!(stats.columns[1].ratio() > 3.0, "{:?}", stats.columns[1]);
    let got = read_all("auto.arrow", &bytes, &CpuBackend::new());
    assert_same(&got, &[batch], "auto");
}

#[test]
fn builders_read_huffman_columns_with_projection_selection_and_filters() {
    let mut rng = Rng::fresh("builders_read_huffman_columns");
    let (schema, source) = batches(&mut rng);
    let (bytes, stats) = write(&schema, &source, CodecPolicy::Huffman);
    assert!(
        stats
            .columns
            .iter()
            .any(|c| matches!(c.encoding, ColumnEncoding::Huffman(_)))
    );
    let whole = concat_batches(&schema, &source).unwrap();
    let cpu: Arc<dyn Backend> = Arc::new(CpuBackend::new());
    let project = |b: &RecordBatch, names: &[&str]| {
        let idx: Vec<usize> = names.iter().map(|n| schema.index_of(n).unwrap()).collect();
        b.project(&idx).unwrap()
    };
    let cols = ["dec128", "s", "ts_utc"];
    let got: Vec<RecordBatch> = GsstReaderBuilder::from_bytes("b.arrow", bytes.clone())
        .unwrap()
        .with_backend(cpu.clone())
        .with_projection(cols)
        .with_row_selection(RowSelection::from_ranges(std::iter::once(500..7000)))
        .with_batch_size(777)
        .build()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let want = project(&whole.slice(500, 6500), &cols);
    assert_eq!(concat_batches(&want.schema(), &got).unwrap(), want);

    // A predicate with row filtering keeps exactly the matching rows.
    let got: Vec<RecordBatch> = GsstReaderBuilder::from_bytes("b.arrow", bytes.clone())
        .unwrap()
        .with_backend(cpu.clone())
        .with_projection(["i64", "ls"])
        .with_predicate("i64>=400000000".parse().unwrap())
        .with_row_filter(true)
        .build()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let i64s = whole
        .column(schema.index_of("i64").unwrap())
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .clone();
    let mask = BooleanArray::from_iter(
        i64s.iter()
            .map(|v| Some(v.is_some_and(|v| v >= 400_000_000))),
    );
    let want = project(&filter_record_batch(&whole, &mask).unwrap(), &["i64", "ls"]);
    assert!(want.num_rows() > 0 && want.num_rows() < whole.num_rows());
    assert_eq!(concat_batches(&want.schema(), &got).unwrap(), want);

    // The async builder over an object store.
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let location = ObjectPath::from("h/b.arrow");
    let cols = ["u16", "all_null", "same", "mdn"];
    let got: Vec<RecordBatch> = runtime().block_on(async {
        store.put(&location, PutPayload::from(bytes)).await.unwrap();
        GsstStreamBuilder::new(store.clone(), location.clone())
            .await
            .unwrap()
            .with_backend(cpu)
            .with_projection(cols)
            .with_limit(10_000)
            .build()
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap()
    });
    let want = project(&whole.slice(0, 10_000), &cols);
    assert_eq!(concat_batches(&want.schema(), &got).unwrap(), want);
}

/// A written container of one Huffman column `x` (16-bit symbols) beside a
/// plain one, in three batches.
fn one_column_container(width: SymbolWidth) -> (SchemaRef, Vec<RecordBatch>, SchemaRef) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("x", DataType::Int64, true),
    ]));
    let batch = |n: i32| {
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from_iter_values(0..n)) as ArrayRef,
                Arc::new(Int64Array::from_iter(
                    (0..n).map(|i| (i % 9 != 1).then_some(i64::from(i % 50) * 1000)),
                )),
            ],
        )
        .unwrap()
    };
    let options = ContainerOptions::new(GsstLayout::Splits);
    let h = ColumnEncoding::Huffman(HuffmanEncoding { width, gsst: false });
    let encoded = encode_schema_with(&schema, &[ColumnEncoding::Plain, h], options.layout).unwrap();
    let mut stats = ContainerStats::default();
    let stored = [batch(4000), batch(70_000), batch(300)]
        .iter()
        .map(|b| encode_batch(b, &encoded, &options, &mut stats).unwrap())
        .collect();
    (schema, stored, encoded)
}

fn write_stored(name: &str, schema: &SchemaRef, batches: &[RecordBatch]) -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("warpread-huffman-container-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let mut w = FileWriter::try_new(std::fs::File::create(&path).unwrap(), schema).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
    path
}

/// Reads a whole container on the CPU (and on CUDA, which must fail the
/// same way): the error text.
fn read_error(path: &std::path::Path) -> String {
    let read = |backend: &dyn Backend| {
        ContainerFile::open(path)
            .and_then(|f| {
                let all: Vec<usize> = (0..f.blocks().len()).collect();
                f.read(&all, &[], backend)
            })
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let e = read(&CpuBackend::new());
    if let Some(gpu) = cuda("damaged Huffman columns") {
        assert_eq!(read(gpu), e, "CUDA and CPU disagree");
    }
    e
}

/// The regression test of issue 33: bytes of a Huffman column in a
/// written container corrupted in place (the frame's magic, its decoded
/// size, its symbol width, its payload, the column container's row count,
/// the extension metadata) give errors naming the file, the batch and the
/// column; never a panic.
#[test]
fn corrupted_huffman_bytes_in_a_written_container_are_located_errors() {
    let (_, stored, encoded) = one_column_container(SymbolWidth::U16);
    let path = write_stored("intact.arrow", &encoded, &stored);
    let bytes = std::fs::read(&path).unwrap();
    // Batch 1's column container is the second `WRHC` in the file.
    let cells: Vec<usize> = bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| w == b"WRHC")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(cells.len(), 3);
    let cell = cells[1];
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let frame = cell + 40 + u64_at(cell + 16) + u64_at(cell + 24);
    let frame_len = u64_at(cell + 32);
    assert_eq!(&bytes[frame..frame + 4], b"WRHF");
    type Edit = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(&str, &str, Edit)> = vec![
        (
            "frame magic",
            "bad magic",
            Box::new(move |b| b[frame] ^= 0xff),
        ),
        (
            "frame longer than the column",
            "decodes to",
            Box::new(move |b| b[frame + 8] = b[frame + 8].wrapping_add(16)),
        ),
        (
            "symbol width",
            "code section",
            Box::new(move |b| b[frame + 32] = 1),
        ),
        (
            "payload",
            "corrupt data",
            Box::new(move |b| {
                for x in &mut b[frame + frame_len - 200..frame + frame_len - 100] {
                    *x ^= 0xa5;
                }
            }),
        ),
        (
            "container rows",
            "rows",
            Box::new(move |b| b[cell + 8] ^= 1),
        ),
    ];
    for (what, expect, edit) in cases {
        let mut b = bytes.clone();
        edit(&mut b);
        let name = format!("{}.arrow", what.replace(' ', "-"));
        let bad = path.with_file_name(&name);
        std::fs::write(&bad, &b).unwrap();
        let e = read_error(&bad);
        assert!(
            e.contains(&name)
                && e.contains("stripe 1")
                && e.contains("column x")
                && e.contains(expect),
            "{what}: {e}"
        );
    }
    // Damaged extension metadata (in the footer's schema) fails on opening,
    // naming the file and the column.
    let mut b = bytes.clone();
    let key = br#""inner":"none""#;
    let mut patched = 0;
    for i in 0..b.len() - key.len() {
        if &b[i..i + key.len()] == key {
            b[i..i + key.len()].copy_from_slice(br#""inner":"zstd""#);
            patched += 1;
        }
    }
    assert!(patched >= 1);
    let bad = path.with_file_name("metadata.arrow");
    std::fs::write(&bad, &b).unwrap();
    let e = ContainerFile::open(&bad).unwrap_err().to_string();
    assert!(
        e.contains("metadata.arrow") && e.contains("column x") && e.contains("zstd"),
        "{e}"
    );
    // Random flips over the column containers: errors naming the file, or
    // (for bytes nothing checks, e.g. a null row's value) valid data.
    let mut rng = Rng::fresh("corrupted_huffman_bytes_in_a_written_container");
    let bad = path.with_file_name("random.arrow");
    for round in 0..150 {
        let mut b = bytes.clone();
        for _ in 0..1 + rng.below(3) {
            let c = cells[rng.below(3) as usize];
            let at = c + rng.below(200.min(bytes.len() - c) as u64) as usize;
            b[at] ^= 1 << rng.below(8);
        }
        std::fs::write(&bad, &b).unwrap();
        let read =
            ContainerFile::open(&bad).and_then(|f| f.read(&[0, 1, 2], &[], &CpuBackend::new()));
        match read {
            Ok(got) => {
                for g in got {
                    g.columns()
                        .iter()
                        .for_each(|c| c.to_data().validate_full().unwrap());
                }
            }
            Err(e) => {
                let e = e.to_string();
                assert!(
                    e.contains("random.arrow") && !e.contains("panicked"),
                    "round {round}: {e}"
                );
            }
        }
    }
}

/// The stored Huffman column of `one_column_container`'s batches.
const X: usize = 1;

/// Row 0's column container of a stored batch's Huffman column.
fn cell_of(b: &RecordBatch) -> Vec<u8> {
    let run = b
        .column(X)
        .as_any()
        .downcast_ref::<RunArray<Int64Type>>()
        .unwrap();
    let cells = run
        .values()
        .as_any()
        .downcast_ref::<LargeBinaryArray>()
        .unwrap();
    cells.value(0).to_vec()
}

/// A stored batch whose Huffman column is `cell` in one run for every row
/// (`second` None) or in row 0 with `second` in the other rows.
fn rebuild(b: &RecordBatch, cell: Vec<u8>, second: Option<Vec<u8>>) -> RecordBatch {
    let n = b.num_rows() as i64;
    let (ends, values) = match second {
        Some(second) => (vec![1, n], vec![cell, second]),
        None => (vec![n], vec![cell]),
    };
    let run = RunArray::<Int64Type>::try_new(
        &Int64Array::from(ends),
        &LargeBinaryArray::from_iter_values(values),
    )
    .unwrap();
    let mut cols = b.columns().to_vec();
    cols[X] = Arc::new(run);
    RecordBatch::try_new(b.schema(), cols).unwrap()
}

/// Damage that byte flips cannot make in place: a truncated frame, a
/// width the field does not say, a storage that is not one container and
/// one empty run.
#[test]
fn structurally_damaged_huffman_columns_are_located_errors() {
    let (_, stored, encoded) = one_column_container(SymbolWidth::U8);
    let u64_at =
        |c: &[u8], at: usize| u64::from_le_bytes(c[at..at + 8].try_into().unwrap()) as usize;
    type Damage = Box<dyn Fn(&RecordBatch) -> RecordBatch>;
    let cases: Vec<(&str, &str, Damage)> = vec![
        (
            "truncated frame",
            "Huffman",
            Box::new(move |b| {
                let mut c = cell_of(b);
                let cut = 64;
                c.truncate(c.len() - cut);
                let f = u64_at(&c, 32) - cut;
                c[32..40].copy_from_slice(&(f as u64).to_le_bytes());
                rebuild(b, c, Some(Vec::new()))
            }),
        ),
        (
            "one run for every row",
            "one empty run",
            Box::new(move |b| rebuild(b, cell_of(b), None)),
        ),
        (
            "data in the second run",
            "one empty run",
            Box::new(move |b| rebuild(b, cell_of(b), Some(b"x".to_vec()))),
        ),
    ];
    for (what, expect, damage) in cases {
        let mut batches = stored.clone();
        batches[1] = damage(&stored[1]);
        let name = format!("{}.arrow", what.replace(' ', "-"));
        let e = read_error(&write_stored(&name, &encoded, &batches));
        assert!(
            e.contains(&name)
                && e.contains("stripe 1")
                && e.contains("column x")
                && e.contains(expect),
            "{what}: {e}"
        );
    }
    // The field says 16-bit symbols, the frames hold 8-bit ones.
    let (_, _, wide) = one_column_container(SymbolWidth::U16);
    let relabeled: Vec<RecordBatch> = stored
        .iter()
        .map(|b| RecordBatch::try_new(wide.clone(), b.columns().to_vec()).unwrap())
        .collect();
    let e = read_error(&write_stored("width.arrow", &wide, &relabeled));
    assert!(
        e.contains("width.arrow")
            && e.contains("stripe 0")
            && e.contains("column x")
            && e.contains("8-bit symbols in a column of 16-bit symbols"),
        "{e}"
    );
}
