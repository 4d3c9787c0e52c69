//! The reader builders against whole-file reads: every fixture read
//! through the sync builder (from a path and from bytes, with and without
//! read-ahead) and the async builder over an in-memory object store gives
//! the whole-file read's rows; projection, predicates with row filtering,
//! row selection and limits give what the same steps give applied to the
//! whole-file read.

use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{Array, BooleanArray, RecordBatch};
use arrow::compute::{concat_batches, filter_record_batch};
use arrow::datatypes::SchemaRef;
use futures::TryStreamExt;
use object_store::memory::InMemory;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use warpread::exec::{Backend, CpuBackend};
use warpread::orc::{OrcFile, OrcReaderBuilder, OrcStreamBuilder};
use warpread::parquet::{ParquetFile, ParquetReaderBuilder, ParquetStreamBuilder};
use warpread::read::{GroupedFile, ReadOptions, ReadTuning, RowSelection};

use crate::common::{root, runtime};

fn fixtures(ext: &str) -> Vec<PathBuf> {
    let dir = root().join("testdata").join(ext);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no fixtures in {}", dir.display());
    v
}

fn cpu() -> Arc<dyn Backend> {
    Arc::new(CpuBackend::new())
}

fn concat(schema: &SchemaRef, batches: &[RecordBatch]) -> RecordBatch {
    concat_batches(schema, batches).unwrap()
}

/// Rows of `whole` at file rows `rows` (the whole read returns every row
/// in file order when nothing prunes).
fn take_rows(whole: &RecordBatch, keep: impl Fn(usize) -> bool) -> RecordBatch {
    let mask = BooleanArray::from((0..whole.num_rows()).map(&keep).collect::<Vec<_>>());
    filter_record_batch(whole, &mask).unwrap()
}

/// Every fixture of a format: sync builder (path, bytes; read-ahead 0 and
/// 1; small batches) and async builder over an in-memory store equal the
/// whole-file read.
fn check_format<F: GroupedFile + std::fmt::Debug>(
    ext: &str,
    open: impl Fn(&PathBuf) -> warpread::Result<F>,
    whole: impl Fn(&F) -> warpread::Result<Vec<RecordBatch>>,
) {
    let rt = runtime();
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let mut checked = 0;
    for path in fixtures(ext) {
        let Ok(file) = open(&path) else {
            continue; // fixtures of unsupported features are others' tests
        };
        let Ok(want) = whole(&file) else {
            continue;
        };
        let schema = GroupedFile::file_schema(&file);
        let want = concat(&schema, &want);
        let name = path.display().to_string();
        // Groups of one stripe or row group each, three in flight: the
        // order and the rows are those of one group at a time.
        let one_each = ReadTuning::default().with_group_bytes(Some(1));
        for (read_ahead, in_flight, tuning) in [
            (0, 1, ReadTuning::default()),
            (1, 1, ReadTuning::default()),
            (1, 3, one_each.clone()),
            (2, 2, one_each),
        ] {
            let reader = warpread::read::ReaderBuilder::<F>::try_new(&path)
                .unwrap()
                .with_backend(cpu())
                .with_batch_size(777)
                .with_read_ahead(read_ahead)
                .with_groups_in_flight(in_flight)
                .with_tuning(tuning)
                .build()
                .unwrap();
            let got: Vec<RecordBatch> = reader.collect::<Result<_, _>>().unwrap();
            assert!(
                got.iter().all(|b| b.num_rows() <= 777 && b.num_rows() > 0),
                "{name}"
            );
            assert_eq!(
                concat(&schema, &got),
                want,
                "{name}: sync, read-ahead {read_ahead}, {in_flight} in flight"
            );
        }
        let bytes = bytes::Bytes::from(std::fs::read(&path).unwrap());
        let got: Vec<RecordBatch> =
            warpread::read::ReaderBuilder::<F>::from_bytes(&name, bytes.clone())
                .unwrap()
                .with_backend(cpu())
                .build()
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
        assert_eq!(concat(&schema, &got), want, "{name}: from bytes");
        let location =
            ObjectPath::from(format!("t/{}", path.file_name().unwrap().to_string_lossy()));
        let got: Vec<RecordBatch> = rt.block_on(async {
            store.put(&location, PutPayload::from(bytes)).await.unwrap();
            warpread::read::StreamBuilder::<F>::new(store.clone(), location.clone())
                .await
                .unwrap()
                .with_backend(cpu())
                .with_batch_size(1000)
                .build()
                .await
                .unwrap()
                .try_collect()
                .await
                .unwrap()
        });
        assert_eq!(concat(&schema, &got), want, "{name}: object store");
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} {ext} fixtures read");
}

#[test]
fn parquet_builders_read_what_the_whole_file_read_gives() {
    let cpu = CpuBackend::new();
    check_format::<ParquetFile>(
        "parquet",
        |p| ParquetFile::open(p),
        |f| f.read(&ReadOptions::default(), &cpu),
    );
}

#[test]
fn orc_builders_read_what_the_whole_file_read_gives() {
    let cpu = CpuBackend::new();
    check_format::<OrcFile>(
        "orc",
        |p| OrcFile::open(p),
        |f| f.read(&ReadOptions::default(), &cpu),
    );
}

/// A multi-stripe ORC fixture with a row index and an integer column.
fn orc_fixture() -> PathBuf {
    root().join("testdata/orc/rowgroups_v12_zlib.orc")
}

#[test]
fn selection_limit_and_row_filter_match_the_whole_read() {
    let path = orc_fixture();
    let file = OrcFile::open(&path).unwrap();
    let schema = file.schema();
    let whole = concat(
        &schema,
        &file
            .read(&ReadOptions::default(), &CpuBackend::new())
            .unwrap(),
    );
    let n = whole.num_rows();
    assert!(n > 1000, "{n} rows");
    // Row selection: two ranges; rows outside are dropped.
    let sel = RowSelection::from_ranges([10..20, (n as u64 - 5)..(n as u64 + 100)]);
    let got: Vec<RecordBatch> = OrcReaderBuilder::try_new(&path)
        .unwrap()
        .with_backend(cpu())
        .with_row_selection(sel.clone())
        .build()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let want = take_rows(&whole, |i| sel.intersects(&(i as u64..i as u64 + 1)));
    assert_eq!(concat(&schema, &got), want);
    assert_eq!(want.num_rows(), 15);
    // Limit: the first rows, and no more.
    let got: Vec<RecordBatch> = OrcReaderBuilder::try_new(&path)
        .unwrap()
        .with_backend(cpu())
        .with_limit(1234)
        .with_batch_size(500)
        .build()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(concat(&schema, &got), whole.slice(0, 1234));
    assert_eq!(got.len(), 3);
    // The same with one stripe per group and three in flight: the groups
    // in flight past the limit are dropped.
    for (sel, limit) in [(None, 1234), (Some(sel), n)] {
        let mut b = OrcReaderBuilder::try_new(&path)
            .unwrap()
            .with_backend(cpu())
            .with_limit(limit)
            .with_groups_in_flight(3)
            .with_tuning(ReadTuning::default().with_group_bytes(Some(1)));
        let want = match &sel {
            Some(s) => take_rows(&whole, |i| s.intersects(&(i as u64..i as u64 + 1))),
            None => whole.slice(0, limit),
        };
        if let Some(s) = sel {
            b = b.with_row_selection(s);
        }
        let got: Vec<RecordBatch> = b.build().unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(concat(&schema, &got), want);
    }
    // A limit of 0 reads nothing.
    let none = OrcReaderBuilder::try_new(&path)
        .unwrap()
        .with_backend(cpu())
        .with_limit(0)
        .build()
        .unwrap();
    assert_eq!(none.count(), 0);
}

#[test]
fn row_filter_keeps_exactly_the_matching_rows_and_drops_its_columns() {
    for path in fixtures("parquet").into_iter().chain(fixtures("orc")) {
        let is_orc = path.extension().is_some_and(|e| e == "orc");
        // Every flat integer column of the file, filtered at its median.
        let (schema, whole) = if is_orc {
            let f = OrcFile::open(&path).unwrap();
            let Ok(b) = f.read(&ReadOptions::default(), &CpuBackend::new()) else {
                continue;
            };
            (f.schema(), b)
        } else {
            let Ok(f) = ParquetFile::open(&path) else {
                continue;
            };
            let Ok(b) = f.read(&ReadOptions::default(), &CpuBackend::new()) else {
                continue;
            };
            (f.schema(), b)
        };
        let whole = concat(&schema, &whole);
        let Some((ci, field)) = schema.fields().iter().enumerate().find(|(_, f)| {
            matches!(
                f.data_type(),
                arrow::datatypes::DataType::Int32 | arrow::datatypes::DataType::Int64
            )
        }) else {
            continue;
        };
        if whole.num_rows() < 3 || schema.fields().len() < 2 {
            continue;
        }
        let col =
            arrow::compute::cast(whole.column(ci), &arrow::datatypes::DataType::Int64).unwrap();
        let col = col
            .as_any()
            .downcast_ref::<arrow::array::Int64Array>()
            .unwrap();
        let mut vals: Vec<i64> = col.iter().flatten().collect();
        vals.sort();
        let Some(&median) = vals.get(vals.len() / 2) else {
            continue;
        };
        let pred: warpread::read::Predicate =
            format!("{}>={median}", field.name()).parse().unwrap();
        // Project another column only: the filter's column is read for it
        // and dropped.
        let other = schema
            .fields()
            .iter()
            .position(|f| f.name() != field.name())
            .unwrap();
        let other_name = schema.field(other).name().clone();
        let got: Vec<RecordBatch> = if is_orc {
            OrcReaderBuilder::try_new(&path)
                .unwrap()
                .with_backend(cpu())
                .with_projection([other_name.clone()])
                .with_predicate(pred)
                .with_row_filter(true)
                .build()
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        } else {
            ParquetReaderBuilder::try_new(&path)
                .unwrap()
                .with_backend(cpu())
                .with_projection([other_name.clone()])
                .with_predicate(pred)
                .with_row_filter(true)
                .build()
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        let mask: Vec<bool> = (0..whole.num_rows())
            .map(|i| col.is_valid(i) && col.value(i) >= median)
            .collect();
        let want =
            filter_record_batch(&whole.project(&[other]).unwrap(), &BooleanArray::from(mask))
                .unwrap();
        let out_schema = want.schema();
        assert_eq!(concat(&out_schema, &got), want, "{}", path.display());
        return;
    }
    panic!("no fixture with an integer column and another");
}

#[test]
fn a_footer_longer_than_the_first_fetch_is_fetched_in_a_second_round() {
    // 3,000 columns: a footer of several hundred KiB, past the 64 KiB tail
    // fetched first.
    use arrow::array::Int32Array;
    use arrow::datatypes::{DataType, Field, Schema};
    let fields: Vec<Field> = (0..3000)
        .map(|i| Field::new(format!("column_number_{i}"), DataType::Int32, false))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let cols: Vec<Arc<dyn Array>> = (0..3000)
        .map(|i| Arc::new(Int32Array::from(vec![i, i + 1, i + 2])) as _)
        .collect();
    let batch = RecordBatch::try_new(schema.clone(), cols).unwrap();
    let mut buf = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema.clone(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let location = ObjectPath::from("wide.parquet");
    let got: Vec<RecordBatch> = runtime().block_on(async {
        store.put(&location, PutPayload::from(buf)).await.unwrap();
        let b = ParquetStreamBuilder::new(store.clone(), location.clone())
            .await
            .unwrap();
        assert_eq!(b.metadata().file_metadata().num_rows(), 3);
        b.with_backend(cpu())
            .with_projection(["column_number_2999", "column_number_7"])
            .build()
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap()
    });
    let want = batch.project(&[2999, 7]).unwrap();
    assert_eq!(concat(&want.schema(), &got), want);
}

#[test]
fn object_store_errors_name_the_object() {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let rt = runtime();
    let e = rt
        .block_on(OrcStreamBuilder::new(
            store.clone(),
            ObjectPath::from("missing.orc"),
        ))
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.orc"), "{e}");
    // A truncated object: a format error naming it, no panic.
    let bytes = std::fs::read(orc_fixture()).unwrap();
    let location = ObjectPath::from("cut.orc");
    let e = rt.block_on(async {
        store
            .put(
                &location,
                PutPayload::from(bytes[..bytes.len() / 2].to_vec()),
            )
            .await
            .unwrap();
        OrcStreamBuilder::new(store.clone(), location.clone())
            .await
            .unwrap_err()
            .to_string()
    });
    assert!(e.contains("cut.orc"), "{e}");
}

#[test]
fn gsst_containers_stream_from_bytes_and_object_stores() {
    use arrow::array::{Int32Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use warpread::gsst::container::{ContainerOptions, write_container};
    use warpread::gsst::{GsstReaderBuilder, GsstStreamBuilder};
    use warpread::plan::GsstLayout;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("s", DataType::Utf8, true),
    ]));
    let batches: Vec<RecordBatch> = (0..5)
        .map(|k| {
            let n = 300 + k * 50;
            let ids = Int32Array::from_iter_values((0..n).map(|i| i + 1000 * k));
            let s =
                StringArray::from_iter((0..n).map(|i| {
                    (i % 5 != 2).then(|| format!("row {i} of batch {k}: final deposits"))
                }));
            RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(s)]).unwrap()
        })
        .collect();
    let mut buf = Vec::new();
    write_container(
        &mut buf,
        &schema,
        batches.iter().cloned().map(Ok),
        &ContainerOptions::new(GsstLayout::Splits),
    )
    .unwrap();
    let want = concat(&schema, &batches);
    let bytes = bytes::Bytes::from(buf);
    let got: Vec<RecordBatch> = GsstReaderBuilder::from_bytes("t.arrow", bytes.clone())
        .unwrap()
        .with_backend(cpu())
        .with_row_selection(RowSelection::from_ranges(std::iter::once(290..700)))
        .with_batch_size(128)
        .build()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(concat(&schema, &got), want.slice(290, 410));
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let location = ObjectPath::from("c/t.arrow");
    let got: Vec<RecordBatch> = runtime().block_on(async {
        store.put(&location, PutPayload::from(bytes)).await.unwrap();
        GsstStreamBuilder::new(store.clone(), location.clone())
            .await
            .unwrap()
            .with_backend(cpu())
            .with_projection(["s"])
            .build()
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap()
    });
    let want_s = want.project(&[1]).unwrap();
    assert_eq!(concat(&want_s.schema(), &got), want_s);
}

#[test]
fn cuda_builders_read_what_the_cpu_reads() {
    let Some(cuda) = crate::common::cuda_shared("cuda_builders_read_what_the_cpu_reads") else {
        return;
    };
    let rt = runtime();
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let mut checked = 0;
    for path in fixtures("parquet").into_iter().chain(fixtures("orc")) {
        let is_orc = path.extension().is_some_and(|e| e == "orc");
        let read =
            |backend: Arc<dyn Backend>| crate::concurrent_reads::read_sync(&path, backend, 5000);
        let Some(want) = read(cpu()) else { continue };
        let got =
            read(cuda.clone()).unwrap_or_else(|| panic!("{}: CUDA read failed", path.display()));
        assert_eq!(got, want, "{}: sync", path.display());
        let location = ObjectPath::from(format!(
            "gpu/{}",
            path.file_name().unwrap().to_string_lossy()
        ));
        let bytes = std::fs::read(&path).unwrap();
        let got: Vec<RecordBatch> = rt.block_on(async {
            store.put(&location, PutPayload::from(bytes)).await.unwrap();
            let (store, location) = (store.clone(), location.clone());
            crate::concurrent_reads::read_async(store, location, is_orc, cuda.clone(), 5000).await
        });
        assert_eq!(got, want, "{}: object store", path.display());
        checked += 1;
    }
    assert!(checked >= 20, "{checked}");
}

#[test]
fn a_selection_over_a_pruned_read_keeps_the_selected_file_rows() {
    // Predicates prune ORC row groups by the row index (as windows of a
    // stripe); the selection then applies to the file rows that are left,
    // so the reader must know which file row each output row is.
    let path = orc_fixture();
    let file = OrcFile::open(&path).unwrap();
    let schema = file.schema();
    let int = schema
        .fields()
        .iter()
        .find(|f| {
            matches!(
                f.data_type(),
                arrow::datatypes::DataType::Int64 | arrow::datatypes::DataType::Int32
            )
        })
        .unwrap()
        .name()
        .clone();
    let whole = concat(
        &schema,
        &file
            .read(&ReadOptions::default(), &CpuBackend::new())
            .unwrap(),
    );
    let col = arrow::compute::cast(
        whole.column_by_name(&int).unwrap(),
        &arrow::datatypes::DataType::Int64,
    )
    .unwrap();
    let col = col
        .as_any()
        .downcast_ref::<arrow::array::Int64Array>()
        .unwrap();
    let mut sorted: Vec<i64> = col.iter().flatten().collect();
    sorted.sort();
    let cut = sorted[sorted.len() * 3 / 4];
    let pred: warpread::read::Predicate = format!("{int}>={cut}").parse().unwrap();
    let options = ReadOptions::default().with_predicate(pred.clone());
    let kept_rows = file.selected_rows(&options).unwrap();
    let total: u64 = kept_rows.iter().map(|r| r.end - r.start).sum();
    assert!(
        total < whole.num_rows() as u64,
        "the predicate prunes nothing"
    );
    // Every other 1000 file rows.
    let n = whole.num_rows() as u64;
    let sel = RowSelection::from_ranges((0..n).step_by(2000).map(|s| s..s + 1000));
    let got: Vec<RecordBatch> = OrcReaderBuilder::try_new(&path)
        .unwrap()
        .with_backend(cpu())
        .with_predicate(pred)
        .with_row_selection(sel.clone())
        .build()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let want = take_rows(&whole, |i| {
        let r = i as u64..i as u64 + 1;
        sel.intersects(&r)
            && kept_rows
                .iter()
                .any(|k| k.start <= r.start && r.end <= k.end)
    });
    assert!(want.num_rows() > 0);
    assert_eq!(concat(&schema, &got), want);
}

/// Over an object store, a projection fetches only the projected columns'
/// streams (ORC: found from the stripe footers, fetched first); each
/// column of every fixture alone equals the whole-file read's column.
#[test]
fn projections_over_an_object_store_read_their_columns() {
    let rt = runtime();
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let mut checked = 0;
    for path in fixtures("orc").into_iter().chain(fixtures("parquet")) {
        let is_orc = path.extension().is_some_and(|e| e == "orc");
        let whole = |cols: Option<&str>| -> Option<RecordBatch> {
            let mut o = ReadOptions::default();
            if let Some(c) = cols {
                o = o.with_columns([c]);
            }
            let (schema, b) = if is_orc {
                let f = OrcFile::open(&path).ok()?;
                (
                    f.projected_schema(&o).ok()?,
                    f.read(&o, &CpuBackend::new()).ok()?,
                )
            } else {
                let f = ParquetFile::open(&path).ok()?;
                (
                    f.projected_schema(&o).ok()?,
                    f.read(&o, &CpuBackend::new()).ok()?,
                )
            };
            Some(concat(&schema, &b))
        };
        let Some(all) = whole(None) else { continue };
        let location = ObjectPath::from(format!(
            "proj/{}",
            path.file_name().unwrap().to_string_lossy()
        ));
        rt.block_on(store.put(&location, PutPayload::from(std::fs::read(&path).unwrap())))
            .unwrap();
        for field in all.schema().fields() {
            let want = whole(Some(field.name())).unwrap();
            let got: Vec<RecordBatch> = rt.block_on(async {
                let cols = [field.name().clone()];
                if is_orc {
                    OrcStreamBuilder::new(store.clone(), location.clone())
                        .await
                        .unwrap()
                        .with_backend(cpu())
                        .with_projection(cols)
                        .build()
                        .await
                        .unwrap()
                        .try_collect()
                        .await
                        .unwrap()
                } else {
                    ParquetStreamBuilder::new(store.clone(), location.clone())
                        .await
                        .unwrap()
                        .with_backend(cpu())
                        .with_projection(cols)
                        .build()
                        .await
                        .unwrap()
                        .try_collect()
                        .await
                        .unwrap()
                }
            });
            assert_eq!(
                concat(&want.schema(), &got),
                want,
                "{}: {}",
                path.display(),
                field.name()
            );
        }
        checked += 1;
    }
    assert!(checked >= 20, "{checked}");
}

/// A read group's ranges are all its read needs: fetched into a source of
/// fetched ranges, the group reads without a miss (ORC with a projection
/// and row-index pruning; Parquet with a projection and page pruning).
#[test]
fn group_ranges_cover_what_the_group_reads() {
    use warpread::read::stream::{fetch_into, open_fetched, ranges_fetching};
    let rt = runtime();
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let cases = [
        ("orc/rowgroups_v12_zlib.orc", true),
        ("parquet/page_index_gzip_v1.parquet", false),
        ("parquet/page_index_snappy_v2.parquet", false),
    ];
    for (name, is_orc) in cases {
        let path = root().join("testdata").join(name);
        let location = ObjectPath::from(format!("ranges/{name}"));
        rt.block_on(store.put(&location, PutPayload::from(std::fs::read(&path).unwrap())))
            .unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        fn check<F: GroupedFile>(
            rt: &tokio::runtime::Runtime,
            store: &Arc<dyn ObjectStore>,
            location: &ObjectPath,
            size: u64,
            name: &str,
        ) {
            let file: F = rt
                .block_on(open_fetched(
                    store,
                    location,
                    size,
                    F::FORMAT,
                    64 << 10,
                    F::from_source,
                ))
                .unwrap();
            let schema = file.file_schema();
            // The last column, pruned by the first integer column.
            let last = schema.fields().last().unwrap().name().clone();
            let int = schema
                .fields()
                .iter()
                .find(|f| {
                    matches!(
                        f.data_type(),
                        arrow::datatypes::DataType::Int32 | arrow::datatypes::DataType::Int64
                    )
                })
                .unwrap()
                .name()
                .clone();
            let options = ReadOptions::default()
                .with_columns([last])
                .with_predicate(format!("{int}>=1000").parse().unwrap());
            let src = file.source();
            rt.block_on(fetch_into(
                store,
                location,
                src,
                &file.planning_ranges(&options).unwrap(),
            ))
            .unwrap();
            let cpu = CpuBackend::new();
            let mut stats = Default::default();
            let groups = file
                .plan_groups(&options, &cpu, &|_| true, &mut stats)
                .unwrap();
            assert!(!groups.is_empty(), "{name}");
            let mut fetched = 0;
            for g in &groups {
                let ranges = rt
                    .block_on(ranges_fetching(store, location, src, || {
                        file.group_ranges(g, &options)
                    }))
                    .unwrap();
                rt.block_on(fetch_into(store, location, src, &ranges))
                    .unwrap();
                fetched += ranges.iter().map(|r| r.end - r.start).sum::<u64>();
                let before = src.miss_count();
                let mut stats = Default::default();
                file.read_group(g, &options, &cpu, &mut stats).unwrap();
                assert_eq!(
                    src.miss_count(),
                    before,
                    "{name}: the group read bytes it did not fetch"
                );
                src.evict(&ranges);
            }
            // One column of several: less than the file was fetched.
            assert!(fetched < size / 2, "{name}: {fetched} of {size} bytes");
        }
        if is_orc {
            check::<OrcFile>(&rt, &store, &location, size, name);
        } else {
            check::<ParquetFile>(&rt, &store, &location, size, name);
        }
    }
}
