//! The Parquet reader against the parquet crate's Arrow reader
//! (`ParquetRecordBatchReader`): every fixture in `testdata/parquet`
//! (`scripts/gen_parquet_fixtures.py`) and every Parquet file of the
//! third-party corpus when `../shared/corpora` exists. Schemas must be equal
//! and values equal (dictionary arrays compared by their values: the
//! dictionaries themselves may be built differently). On a GPU machine the
//! CUDA backend must give exactly the CPU's arrays.

use std::fs::File;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use arrow::array::{Array, ArrayRef, RecordBatch, RecordBatchReader};
use arrow::compute::concat_batches;
use arrow::datatypes::{DataType, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use warpread::exec::{Backend, CpuBackend};
use warpread::orc::ReadOptions;
use warpread::parquet::ParquetFile;

use crate::common;
use crate::common::root;

/// What the parquet crate reads, or why it cannot.
pub fn expected(path: &Path) -> Result<(SchemaRef, RecordBatch), String> {
    let run = || -> Result<(SchemaRef, RecordBatch), String> {
        let f = File::open(path).map_err(|e| e.to_string())?;
        let r = ParquetRecordBatchReaderBuilder::try_new(f)
            .map_err(|e| e.to_string())?
            .with_batch_size(1024)
            .build()
            .map_err(|e| e.to_string())?;
        let schema = r.schema();
        let batches = r
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let all = concat_batches(&schema, &batches).map_err(|e| e.to_string())?;
        Ok((schema, all))
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|_| Err("parquet crate panicked".into()))
}

/// What warpread reads.
pub fn ours(path: &Path, backend: &dyn Backend) -> warpread::Result<(SchemaRef, RecordBatch)> {
    let file = ParquetFile::open(path)?;
    let batches = file.read(&ReadOptions::default().with_batch_size(1000), backend)?;
    let schema = file.schema();
    let all = concat_batches(&schema, &batches).expect("batches share the schema");
    Ok((schema, all))
}

/// Dictionary arrays as their values, recursively at the top level.
fn plain(a: &ArrayRef) -> ArrayRef {
    match a.data_type() {
        DataType::Dictionary(_, v) => arrow::compute::cast(a, v).unwrap(),
        _ => a.clone(),
    }
}

/// The first difference, if any.
pub fn compare(
    got_schema: &SchemaRef,
    got: &RecordBatch,
    want_schema: &SchemaRef,
    want: &RecordBatch,
) -> Option<String> {
    if got_schema.fields().len() != want_schema.fields().len() {
        return Some(format!(
            "{} fields, parquet crate {}",
            got_schema.fields().len(),
            want_schema.fields().len()
        ));
    }
    for (g, w) in got_schema.fields().iter().zip(want_schema.fields()) {
        if g.name() != w.name()
            || g.data_type() != w.data_type()
            || g.is_nullable() != w.is_nullable()
        {
            return Some(format!("field {g:?}, parquet crate {w:?}"));
        }
    }
    if got.num_rows() != want.num_rows() {
        return Some(format!(
            "{} rows, parquet crate {}",
            got.num_rows(),
            want.num_rows()
        ));
    }
    for (i, f) in want_schema.fields().iter().enumerate() {
        let (g, w) = (plain(got.column(i)), plain(want.column(i)));
        if g.to_data() != w.to_data() {
            let first = (0..g.len().min(w.len()))
                .find(|&r| g.slice(r, 1).to_data() != w.slice(r, 1).to_data());
            return Some(format!(
                "column {} differs (first at row {first:?}): got {:?} want {:?}",
                f.name(),
                first.map(|r| g.slice(r, 1)),
                first.map(|r| w.slice(r, 1))
            ));
        }
    }
    None
}

pub fn fixtures() -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(root().join("testdata/parquet"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "testdata/parquet has no fixtures");
    v
}

#[test]
fn parquet_fixtures_match_the_parquet_crate() {
    let mut failures = Vec::new();
    for path in fixtures() {
        let (ws, wb) = expected(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        match ours(&path, &CpuBackend::new()) {
            Ok((gs, gb)) => {
                if let Some(d) = compare(&gs, &gb, &ws, &wb) {
                    failures.push(format!("{}: {d}", path.display()));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixtures differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn parquet_projection_and_pruning() {
    let path = root().join("testdata/parquet/types_snappy_v1.parquet");
    let file = ParquetFile::open(&path).unwrap();
    let all = file.metadata().num_row_groups();
    assert!(all > 1);
    let opts = ReadOptions::default().with_columns(["str", "i32"]);
    let got = file.read(&opts, &CpuBackend::new()).unwrap();
    assert_eq!(got[0].schema().field(0).name(), "str");
    let rows: usize = got.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows as u64, file.rows());
    // A predicate no row group can satisfy prunes them all.
    let none = ReadOptions::default().with_predicate("i64 > 9223372036854775807".parse().unwrap());
    assert!(file.selected_row_groups(&none).unwrap().is_empty());
    let some = ReadOptions::default().with_predicate("i32 >= 0".parse().unwrap());
    assert_eq!(file.selected_row_groups(&some).unwrap().len(), all);
}

#[test]
fn parquet_cuda_matches_cpu_on_fixtures() {
    let Some(cuda) = common::cuda("parquet_cuda_matches_cpu_on_fixtures") else {
        return;
    };
    let before = cuda.profile().bytes_mirrored;
    for path in fixtures() {
        let (_, cpu) = ours(&path, &CpuBackend::new()).unwrap();
        let (_, gpu) = ours(&path, cuda).unwrap();
        assert_eq!(cpu, gpu, "{}", path.display());
    }
    // The v1 GZIP pages inflate on the device and decode from there (and
    // the Snappy and Zstd ones from a copy uploaded once): the comparison
    // above covered the mirrored path.
    assert!(
        cuda.profile().bytes_mirrored > before,
        "no stage read decompressed pages from a device mirror"
    );
}

/// Corpus files where the parquet crate's output is not the reference,
/// with the reason.
const ALLOWED: &[(&str, &str)] = &[(
    "parquet-testing/data/repeated_no_annotation.parquet",
    "the footer says 0 rows but its row group holds 6; the parquet crate sizes batches by \
     the footer count and returns none, pyarrow and warpread read the 6 rows",
)];

#[test]
fn parquet_corpus_matches_the_parquet_crate() {
    let Some(dir) = common::corpus_dir() else {
        println!("parquet corpus: skipped: no ../shared/corpora");
        return;
    };
    let index = std::fs::read_to_string(dir.join("INDEX.tsv")).unwrap();
    let cuda = common::cuda("parquet_corpus_matches_the_parquet_crate");
    let (mut matched, mut unsupported, mut both_fail, mut failures) =
        (0, Vec::new(), 0, Vec::new());
    for line in index.lines().skip(1) {
        let Some((path, tags)) = line.split_once('\t') else {
            continue;
        };
        if !tags.split(',').any(|t| t == "fmt:parquet") {
            continue;
        }
        let file = dir.join(path);
        let want = expected(&file);
        let got = catch_unwind(AssertUnwindSafe(|| ours(&file, &CpuBackend::new())));
        let Ok(got) = got else {
            failures.push(format!("{path}: PANIC"));
            continue;
        };
        match (want, got) {
            (Ok((ws, wb)), Ok((gs, gb))) => {
                match compare(&gs, &gb, &ws, &wb) {
                    None => matched += 1,
                    Some(d) => match ALLOWED.iter().find(|(p, _)| *p == path) {
                        Some((_, why)) => println!("{path}: allowed difference ({d}): {why}"),
                        None => failures.push(format!("{path}: {d}")),
                    },
                }
                if let Some(cuda) = cuda {
                    match ours(&file, cuda) {
                        Ok((_, g)) if g == gb => {}
                        Ok(_) => failures.push(format!("{path}: CUDA differs from CPU")),
                        Err(e) => failures.push(format!("{path}: CUDA error {e}")),
                    }
                }
            }
            (Err(w), Err(e)) => {
                println!("{path}: both fail; parquet crate: {w}; warpread: {e}");
                both_fail += 1;
            }
            (Ok(_), Err(e @ warpread::Error::Unsupported(_))) => {
                unsupported.push(format!("{path}: {e}"))
            }
            (Ok(_), Err(e)) => {
                failures.push(format!("{path}: parquet crate reads it, we fail: {e}"))
            }
            (Err(w), Ok(_)) => println!("{path}: parquet crate fails ({w}), warpread reads it"),
        }
    }
    for u in &unsupported {
        println!("unsupported: {u}");
    }
    println!(
        "parquet corpus: {matched} match, {} unsupported (clean error), {both_fail} unreadable by both (clean error), {} failures",
        unsupported.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} corpus files differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Definition levels that change between pages of a chunk: pages without
/// nulls (whose levels the reader keeps implicit) before, between and after
/// pages with some nulls and pages of nulls only, flat and nested, in row
/// groups of several pages; against the parquet crate on both backends.
#[test]
fn levels_changing_between_pages_match_the_parquet_crate() {
    use arrow::array::{Int32Array, Int64Array, ListArray, StructArray};
    use arrow::datatypes::{Field, Fields, Schema};
    use parquet::file::properties::WriterProperties;
    use std::sync::Arc;

    let rows = 1000usize;
    let sparse =
        Int64Array::from_iter((0..rows).map(|i| (!(150..160).contains(&i)).then_some(i as i64)));
    let late = Int64Array::from_iter(
        (0..rows).map(|i| (i < 250 || (600..620).contains(&i)).then_some(-(i as i64))),
    );
    let child = Int32Array::from_iter((0..rows).map(|i| (i % 300 != 299).then_some(i as i32)));
    let fields = Fields::from(vec![Field::new("c", DataType::Int32, true)]);
    let s = StructArray::new(
        fields.clone(),
        vec![Arc::new(child) as ArrayRef],
        Some((0..rows).map(|i| !(700..705).contains(&i)).collect()),
    );
    let list =
        ListArray::from_iter_primitive::<arrow::datatypes::Int32Type, _, _>((0..rows).map(|i| {
            (i % 97 != 0).then(|| {
                (0..i % 3)
                    .map(|k| (k != 1 || i < 500).then_some(k as i32))
                    .collect::<Vec<_>>()
            })
        }));
    // Nested, nullable at every level, but no nulls anywhere: every page's
    // levels are one run at the maximum.
    let full = StructArray::new(
        fields.clone(),
        vec![Arc::new(Int32Array::from_iter_values(0..rows as i32)) as ArrayRef],
        None,
    );
    let full_list = ListArray::from_iter_primitive::<arrow::datatypes::Int32Type, _, _>(
        (0..rows).map(|i| Some((0..1 + i % 3).map(|k| Some(k as i32)).collect::<Vec<_>>())),
    );
    let schema = Arc::new(Schema::new(vec![
        Field::new("sparse", DataType::Int64, true),
        Field::new("late", DataType::Int64, true),
        Field::new("s", DataType::Struct(fields.clone()), true),
        Field::new("l", list.data_type().clone(), true),
        Field::new("full", DataType::Struct(fields), true),
        Field::new("full_l", full_list.data_type().clone(), true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(sparse),
            Arc::new(late),
            Arc::new(s),
            Arc::new(list),
            Arc::new(full),
            Arc::new(full_list),
        ],
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("warpread-pq-levels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for dictionary in [false, true] {
        let path = dir.join(format!("levels-{dictionary}.parquet"));
        let props = WriterProperties::builder()
            .set_dictionary_enabled(dictionary)
            .set_data_page_row_count_limit(50)
            .set_write_batch_size(50)
            .set_max_row_group_row_count(Some(400))
            .build();
        written_matches_the_parquet_crate(
            &path,
            &batch,
            props,
            "levels_changing_between_pages_match_the_parquet_crate",
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Pages of a few hundred thousand values each (pyarrow writes a million
/// dictionary indices into one page when they compress well): their level
/// and index streams decode as several jobs cut at run boundaries; against
/// the parquet crate on both backends, data pages v1 and v2.
#[test]
fn long_pages_match_the_parquet_crate() {
    use arrow::array::{BooleanArray, Int64Array, StringArray};
    use arrow::datatypes::{Field, Schema};
    use parquet::file::properties::{WriterProperties, WriterVersion};
    use std::sync::Arc;

    let rows = 300_000usize;
    let flags = StringArray::from_iter((0..rows).map(|i| {
        (i % 997 != 0).then_some(match (i / 7000) % 3 {
            0 => "N",
            1 => "Y",
            _ => {
                if i % 5 == 0 {
                    "maybe"
                } else {
                    "N"
                }
            }
        })
    }));
    let small =
        Int64Array::from_iter((0..rows).map(|i| (i % 1009 != 5).then_some((i / 5000) as i64)));
    let bits =
        BooleanArray::from_iter((0..rows).map(|i| (i % 3001 != 0).then_some((i / 9000) % 2 == 0)));
    let schema = Arc::new(Schema::new(vec![
        Field::new("flag", DataType::Utf8, true),
        Field::new("small", DataType::Int64, true),
        Field::new("bits", DataType::Boolean, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(flags), Arc::new(small), Arc::new(bits)],
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("warpread-pq-long-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
        let path = dir.join(format!("long-{}.parquet", version.as_num()));
        let props = WriterProperties::builder()
            .set_writer_version(version)
            .set_data_page_size_limit(64 << 20)
            .set_data_page_row_count_limit(usize::MAX)
            .set_write_batch_size(rows)
            .build();
        written_matches_the_parquet_crate(
            &path,
            &batch,
            props,
            "long_pages_match_the_parquet_crate",
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Strings whose pages are all ASCII skip the host's UTF-8 pass (the data
/// stage says so in its status); pages of other UTF-8, in every byte-array
/// encoding and mixed with ASCII pages in one chunk, still read like the
/// parquet crate; and invalid UTF-8 in a string column is an error on both
/// backends, as it is for the parquet crate.
#[test]
fn ascii_and_other_strings_read_like_the_parquet_crate() {
    use arrow::array::StringArray;
    use arrow::datatypes::{Field, Schema};
    use parquet::basic::Encoding;
    use parquet::file::properties::WriterProperties;
    use std::sync::Arc;

    let rows = 20_000usize;
    let words = ["plain", "café", "日本語", "", "ascii only", "naïve"];
    // Pages of 1,000 rows: some all ASCII, some not.
    let strings = StringArray::from_iter((0..rows).map(|i| {
        (i % 101 != 7).then(|| {
            let w = if (i / 1000) % 3 == 0 {
                words[i % 6]
            } else {
                words[(i % 2) * 4]
            };
            format!("{w}-{i}")
        })
    }));
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
    let batch = RecordBatch::try_new(schema, vec![Arc::new(strings)]).unwrap();
    let dir = std::env::temp_dir().join(format!("warpread-pq-ascii-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for enc in [
        Encoding::PLAIN,
        Encoding::DELTA_LENGTH_BYTE_ARRAY,
        Encoding::DELTA_BYTE_ARRAY,
    ] {
        let path = dir.join(format!("strings-{enc}.parquet"));
        let props = WriterProperties::builder()
            .set_dictionary_enabled(false)
            .set_encoding(enc)
            .set_data_page_row_count_limit(1000)
            .set_write_batch_size(1000)
            .build();
        written_matches_the_parquet_crate(&path, &batch, props, "ascii_and_other_strings");
    }

    // Invalid UTF-8 in an ASCII-free page of a string column.
    let path = dir.join("invalid-utf8.parquet");
    {
        use parquet::data_type::{ByteArray, ByteArrayType};
        use parquet::file::writer::SerializedFileWriter;
        use parquet::schema::parser::parse_message_type;
        let schema =
            Arc::new(parse_message_type("message m { required binary s (STRING); }").unwrap());
        let props = Arc::new(
            WriterProperties::builder()
                .set_dictionary_enabled(false)
                .build(),
        );
        let mut w = SerializedFileWriter::new(File::create(&path).unwrap(), schema, props).unwrap();
        let mut rg = w.next_row_group().unwrap();
        let mut col = rg.next_column().unwrap().unwrap();
        let values: Vec<ByteArray> = [&b"ok"[..], b"\xff\xfe", b"fine"]
            .iter()
            .map(|v| ByteArray::from(v.to_vec()))
            .collect();
        col.typed::<ByteArrayType>()
            .write_batch(&values, None, None)
            .unwrap();
        col.close().unwrap();
        rg.close().unwrap();
        w.close().unwrap();
    }
    assert!(
        expected(&path).is_err(),
        "the parquet crate accepted invalid UTF-8"
    );
    let e = ours(&path, &CpuBackend::new()).expect_err("invalid UTF-8 read on the CPU");
    assert!(e.to_string().contains("invalid-utf8.parquet"), "{e}");
    if let Some(cuda) = common::cuda("ascii_and_other_strings") {
        let e = ours(&path, cuda).expect_err("invalid UTF-8 read on CUDA");
        assert!(e.to_string().contains("invalid-utf8.parquet"), "{e}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Writes `batch` to `path` with `props` and reads it back on the CPU (and
/// CUDA where present), against the parquet crate.
fn written_matches_the_parquet_crate(
    path: &Path,
    batch: &RecordBatch,
    props: parquet::file::properties::WriterProperties,
    test: &str,
) {
    let mut w = parquet::arrow::ArrowWriter::try_new(
        File::create(path).unwrap(),
        batch.schema(),
        Some(props),
    )
    .unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    let (ws, wb) = expected(path).unwrap();
    let (gs, gb) = ours(path, &CpuBackend::new()).unwrap();
    assert_eq!(compare(&gs, &gb, &ws, &wb), None, "{}", path.display());
    if let Some(cuda) = common::cuda(test) {
        let (cs, cb) = ours(path, cuda).unwrap();
        assert_eq!(
            compare(&cs, &cb, &ws, &wb),
            None,
            "cuda, {}",
            path.display()
        );
    }
}
