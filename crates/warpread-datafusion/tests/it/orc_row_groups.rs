//! ORC row-group pruning by the row index: a read with predicates returns
//! exactly the unpruned read's rows of the row groups it keeps
//! ([`OrcFile::selected_rows`]), never drops a matching row, prunes what
//! the statistics allow (counted in `ReadStats`), reads kept row groups as
//! windows of their stripe without decoding the others, survives damaged
//! row indexes, and gives DataFusion the same answers.

// Lists of row ranges (`&[0..900]`) are what the reader returns, not
// mistaken ranges of values.
#![allow(clippy::single_range_in_vec_init)]

use std::ops::Range;
use std::path::{Path, PathBuf};

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::compute::{cast, concat_batches};
use arrow::datatypes::{DataType, Float64Type, Int64Type};
use prost::Message;
use warpread::exec::CpuBackend;
use warpread::orc::proto::RowIndex;
use warpread::orc::stripe::StreamKind;
use warpread::orc::{CmpOp, OrcFile, Predicate, ReadOptions, ReadStats, Scalar};

fn fixture(name: &str) -> PathBuf {
    crate::common::root().join("testdata/orc").join(name)
}

fn read(file: &OrcFile, options: &ReadOptions) -> warpread::Result<(RecordBatch, ReadStats)> {
    let (batches, stats) = file.read_with_stats(options, &CpuBackend::new())?;
    let schema = file.projected_schema(options)?;
    Ok((concat_batches(&schema, &batches).unwrap(), stats))
}

/// `all`'s rows in `ranges`, in order.
fn restrict(all: &RecordBatch, ranges: &[Range<u64>]) -> RecordBatch {
    let parts: Vec<RecordBatch> = ranges
        .iter()
        .map(|r| all.slice(r.start as usize, (r.end - r.start) as usize))
        .collect();
    concat_batches(&all.schema(), &parts).unwrap()
}

/// Whether each slot of `a` satisfies `p` (nulls and NaN never do), the
/// way a SQL engine filters; `None` for column types pruning ignores.
fn matches(a: &ArrayRef, p: &Predicate) -> Option<Vec<bool>> {
    use std::cmp::Ordering;
    let test = |o: Option<Ordering>| {
        o.is_some_and(|o| match p.op {
            CmpOp::Eq => o.is_eq(),
            CmpOp::Lt => o.is_lt(),
            CmpOp::Le => o.is_le(),
            CmpOp::Gt => o.is_gt(),
            CmpOp::Ge => o.is_ge(),
        })
    };
    Some(match (a.data_type(), &p.value) {
        (
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Date32,
            Scalar::Int(v),
        ) => {
            let a = cast(a, &DataType::Int64).unwrap();
            let a = a.as_primitive::<Int64Type>();
            (0..a.len())
                .map(|i| a.is_valid(i) && test(Some(a.value(i).cmp(v))))
                .collect()
        }
        (DataType::Float32 | DataType::Float64, Scalar::Float(v)) => {
            let a = cast(a, &DataType::Float64).unwrap();
            let a = a.as_primitive::<Float64Type>();
            (0..a.len())
                .map(|i| a.is_valid(i) && test(a.value(i).partial_cmp(v)))
                .collect()
        }
        (DataType::Utf8, Scalar::Str(v)) => {
            let a = a.as_string::<i32>();
            (0..a.len())
                .map(|i| a.is_valid(i) && test(Some(a.value(i).cmp(v.as_str()))))
                .collect()
        }
        _ => return None,
    })
}

/// Literals for predicates on `a`: below, at and above its values (`quick`:
/// its least, median and greatest values).
fn literals(a: &ArrayRef, quick: bool) -> Vec<Scalar> {
    let pick = |n: usize| {
        if quick {
            vec![0, n / 2, n.saturating_sub(1)]
        } else {
            vec![0, n / 10, n / 2, n * 9 / 10, n.saturating_sub(1)]
        }
    };
    match a.data_type() {
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Date32 => {
            let a = cast(a, &DataType::Int64).unwrap();
            let mut v: Vec<i64> = a.as_primitive::<Int64Type>().iter().flatten().collect();
            v.sort();
            if v.is_empty() {
                return vec![Scalar::Int(0)];
            }
            let mut out: Vec<Scalar> = pick(v.len()).iter().map(|&i| Scalar::Int(v[i])).collect();
            if !quick {
                out.push(Scalar::Int(v[0].saturating_sub(1)));
                out.push(Scalar::Int(v[v.len() - 1].saturating_add(1)));
            }
            out
        }
        DataType::Float32 | DataType::Float64 => {
            let a = cast(a, &DataType::Float64).unwrap();
            let mut v: Vec<f64> = a
                .as_primitive::<Float64Type>()
                .iter()
                .flatten()
                .filter(|x| x.is_finite())
                .collect();
            v.sort_by(f64::total_cmp);
            if v.is_empty() {
                return vec![Scalar::Float(0.0)];
            }
            pick(v.len()).iter().map(|&i| Scalar::Float(v[i])).collect()
        }
        DataType::Utf8 => {
            let mut v: Vec<&str> = a.as_string::<i32>().iter().flatten().collect();
            v.sort();
            if v.is_empty() {
                return vec![Scalar::Str("a".into())];
            }
            let mut out: Vec<Scalar> = pick(v.len())
                .iter()
                .map(|&i| Scalar::Str(v[i].to_string()))
                .collect();
            if !quick {
                out.push(Scalar::Str(String::new()));
                out.push(Scalar::Str("\u{10FFFF}".into()));
            }
            out
        }
        _ => Vec::new(),
    }
}

const OPS: [CmpOp; 5] = [CmpOp::Eq, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge];

/// Every predicate (each column, literal and op; `quick`: fewer) on `path`,
/// read with the projection `columns` (`None`: all): the rows equal the
/// full read's kept row groups, and every matching row is among them.
/// Returns the summed stats.
fn check_predicates(path: &Path, columns: Option<&[&str]>, quick: bool) -> ReadStats {
    let file = OrcFile::open(path).unwrap();
    let mut base = ReadOptions::default().with_batch_size(777);
    if let Some(c) = columns {
        base = base.with_columns(c.iter().copied());
    }
    let (all, _) = read(&file, &base).unwrap();
    // Predicate columns come from the whole file (they need not be read).
    let (whole, _) = read(&file, &ReadOptions::default()).unwrap();
    let mut total = ReadStats::default();
    for (i, field) in whole.schema().fields().iter().enumerate() {
        for value in literals(whole.column(i), quick) {
            let ops: &[CmpOp] = if quick {
                &[CmpOp::Eq, CmpOp::Lt, CmpOp::Ge]
            } else {
                &OPS
            };
            for &op in ops {
                let p = Predicate {
                    column: field.name().clone(),
                    op,
                    value: value.clone(),
                };
                let Some(want) = matches(whole.column(i), &p) else {
                    continue;
                };
                let options = base.clone().with_predicate(p.clone());
                let (got, stats) = read(&file, &options).unwrap();
                let kept = file.selected_rows(&options).unwrap();
                let expected = restrict(&all, &kept);
                assert_eq!(
                    got,
                    expected,
                    "{}: {p:?}: not the full read's rows {kept:?}",
                    path.display()
                );
                // Every matching row is in a kept range.
                for (row, _) in want.iter().enumerate().filter(|(_, m)| **m) {
                    let row = row as u64;
                    assert!(
                        kept.iter().any(|r| r.contains(&row)),
                        "{}: {p:?}: matching row {row} pruned",
                        path.display()
                    );
                }
                assert_eq!(
                    got.num_rows() as u64,
                    kept.iter().map(|r| r.end - r.start).sum::<u64>()
                );
                total.add(&stats);
            }
        }
    }
    total
}

/// Fixtures whose stripes hold several row groups: ZLIB with RLE v2 and a
/// dictionary column (pyarrow), uncompressed RLE v1 and v2 (stride 90),
/// Zstd with 1 KiB blocks, so positions land in many chunks (ORC C++).
const MULTI_GROUP: [&str; 4] = [
    "rowgroups_v12_zlib.orc",
    "many_stripes_v12_none.orc",
    "many_stripes_v11_none.orc",
    "pyorc_many_stripes_v12_zstd_block1k.orc",
];

#[test]
fn every_predicate_reads_the_kept_row_groups_of_the_full_read() {
    for name in MULTI_GROUP {
        let stats = check_predicates(&fixture(name), None, false);
        println!("{name}: {stats:?}");
        assert!(stats.row_groups_pruned > 0, "{name}: nothing pruned");
    }
}

#[test]
fn flat_projections_skip_pruned_row_groups_without_decoding_them() {
    // Without the nested column every stripe is read as windows: nothing
    // falls back, and pruned groups are sliced only where windows merge.
    let stats = check_predicates(&fixture("rowgroups_v12_zlib.orc"), Some(&FLAT), false);
    assert_eq!(stats.row_index_fallbacks, 0, "{stats:?}");
    assert!(
        stats.row_groups_pruned > stats.row_groups_sliced,
        "{stats:?}"
    );
    // The nested column makes stripes with pruned groups read whole.
    let stats = check_predicates(
        &fixture("rowgroups_v12_zlib.orc"),
        Some(&["id", "lst"]),
        false,
    );
    assert!(stats.row_index_fallbacks > 0, "{stats:?}");
    assert_eq!(
        stats.row_groups_sliced, stats.row_groups_pruned,
        "{stats:?}"
    );
}

/// ORC files of the third-party corpus (Java, C++, Hive, Spark, cuDF
/// writers) with several row groups in a stripe, through the quick
/// predicate check. Files the reader cannot read are other tests' concern.
#[test]
fn corpus_predicates_read_the_kept_row_groups_of_the_full_read() {
    let Some(dir) = crate::common::corpus_dir() else {
        println!("corpus: skipped: no ../shared/corpora");
        return;
    };
    let index = std::fs::read_to_string(dir.join("INDEX.tsv")).unwrap();
    let mut checked = Vec::new();
    for line in index.lines().skip(1) {
        let Some((path, tags)) = line.split_once('\t') else {
            continue;
        };
        if !tags.split(',').any(|t| t == "fmt:orc") {
            continue;
        }
        let orc = dir.join(path);
        let Ok(file) = OrcFile::open(&orc) else {
            continue;
        };
        let stride = u64::from(file.tail().footer.row_index_stride.unwrap_or(0));
        if stride == 0 || !file.stripes().iter().any(|s| s.rows > stride) {
            continue;
        }
        if read(&file, &ReadOptions::default()).is_err() {
            continue;
        }
        // Nested columns send stripes to the whole-stripe fallback: read
        // the flat ones, which are windowed.
        let schema = file.schema();
        let flat: Vec<&str> = schema
            .fields()
            .iter()
            .filter(|f| !f.data_type().is_nested())
            .map(|f| f.name().as_str())
            .collect();
        let columns = (flat.len() < schema.fields().len()).then_some(flat.as_slice());
        let stats = check_predicates(&orc, columns, true);
        println!("{path}: {stats:?}");
        checked.push((path.to_string(), stats));
    }
    println!("corpus: {} files checked", checked.len());
    assert!(!checked.is_empty());
    let pruned: u64 = checked.iter().map(|(_, s)| s.row_groups_pruned).sum();
    assert!(pruned > 0, "the corpus pruned no row group");
}

fn pred(s: &str) -> Predicate {
    s.parse().unwrap()
}

/// The row-groups fixture's columns but the nested one.
const FLAT: [&str; 10] = ["id", "v", "f", "s", "k", "d", "ts", "dec", "sparse", "b"];

/// Reads `predicates` from the row-groups fixture (its flat columns);
/// checks the rows are exactly `rows` of the full read and returns the
/// stats.
fn expect_rows(predicates: &[&str], rows: &[Range<u64>]) -> ReadStats {
    let file = OrcFile::open(fixture("rowgroups_v12_zlib.orc")).unwrap();
    let flat = ReadOptions::default().with_columns(FLAT);
    let (all, full) = read(&file, &flat).unwrap();
    let mut options = flat;
    for p in predicates {
        options = options.with_predicate(pred(p));
    }
    let (got, stats) = read(&file, &options).unwrap();
    assert_eq!(
        file.selected_rows(&options).unwrap(),
        rows,
        "{predicates:?}"
    );
    assert_eq!(got, restrict(&all, rows), "{predicates:?}");
    assert!(
        stats.file_bytes <= full.file_bytes,
        "{predicates:?}: {stats:?} read more than {full:?}"
    );
    stats
}

#[test]
fn sorted_columns_prune_to_the_expected_row_groups() {
    // Stripes of 2300, 2300 and 1400 rows, row groups of 300: stripe 0 has
    // 8 groups (the last of 200 rows), stripe 1 8, stripe 2 5.
    let s = expect_rows(&["id < 700"], &[0..900]);
    assert_eq!((s.stripes_read, s.stripes_pruned), (1, 2), "{s:?}");
    assert_eq!((s.row_groups_read, s.row_groups_pruned), (3, 5), "{s:?}");
    assert_eq!(
        (s.row_groups_sliced, s.row_index_fallbacks),
        (0, 0),
        "{s:?}"
    );
    // A window inside a stripe: both of its ends are cut.
    let s = expect_rows(&["id >= 1000", "id < 1500"], &[900..1500]);
    assert_eq!((s.row_groups_read, s.row_groups_pruned), (2, 6), "{s:?}");
    assert_eq!(
        (s.row_groups_sliced, s.row_index_fallbacks),
        (0, 0),
        "{s:?}"
    );
    // Across a stripe boundary: the end of stripe 0, the start of stripe 1.
    let s = expect_rows(&["id >= 2200", "id <= 2700"], &[2100..2900]);
    assert_eq!((s.stripes_read, s.stripes_pruned), (2, 1), "{s:?}");
    assert_eq!((s.row_groups_read, s.row_groups_pruned), (3, 13), "{s:?}");
    // The last, short row group of the file.
    let s = expect_rows(&["id >= 5950"], &[5800..6000]);
    assert_eq!((s.row_groups_read, s.row_groups_pruned), (1, 4), "{s:?}");
    // A dictionary-encoded string column (k = k05: rows 2500..3000).
    let s = expect_rows(&["k = 'k05'"], &[2300..3200]);
    assert_eq!((s.row_groups_read, s.row_groups_pruned), (3, 5), "{s:?}");
    // A descending date column: d = 20000 - row / 20.
    let s = expect_rows(&["d > 19800"], &[0..4100]);
    assert_eq!(s.row_index_fallbacks, 0, "{s:?}");
}

#[test]
fn scattered_row_groups_sharing_chunks_read_as_one_window() {
    // `sparse` has values only in every third row group (rows 300..600,
    // 1200..1500, ...): the others have no non-null value, so no comparison
    // can hold. Row groups count from each stripe's start (0, 2300, 4600).
    let s = expect_rows(
        &["sparse >= 0"],
        &[
            300..600,
            1200..1500,
            2100..2600,
            2900..3500,
            3800..4400,
            4600..5200,
            5500..6000,
        ],
    );
    // Each stream of a stripe is one 64 KiB chunk: separate windows would
    // decompress it again, so each stripe is one window from its first kept
    // group to its last, the groups between sliced off.
    assert_eq!(s.row_index_fallbacks, 0, "{s:?}");
    assert_eq!((s.row_groups_read, s.row_groups_pruned), (12, 9), "{s:?}");
    // Stripe 0 keeps groups 1, 4, 7 (2, 3, 5, 6 sliced, 0 skipped),
    // stripe 1 0, 2, 3, 5, 6 (1, 4 sliced, 7 skipped), stripe 2 0, 1, 3, 4
    // (2 sliced).
    assert_eq!(s.row_groups_sliced, 7, "{s:?}");
}

/// Where a column's ROW_INDEX stream of a stripe lies in the file.
fn row_index_range(file: &OrcFile, stripe: usize, column: &str) -> Range<usize> {
    let id = file
        .root()
        .children
        .iter()
        .find(|c| c.name == column)
        .unwrap()
        .id;
    let layout = file.stripe_layout(stripe).unwrap();
    let s = layout.stream(id, StreamKind::RowIndex).unwrap();
    s.range.start as usize..s.range.end as usize
}

/// A copy of `name` with `edit` applied to its bytes, in a temp folder.
fn damaged(name: &str, tag: &str, edit: impl FnOnce(&OrcFile, &mut Vec<u8>)) -> PathBuf {
    let src = fixture(name);
    let file = OrcFile::open(&src).unwrap();
    let mut bytes = std::fs::read(&src).unwrap();
    edit(&file, &mut bytes);
    let dir = std::env::temp_dir().join(format!("warpread-rowindex-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{tag}-{name}"));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Re-encodes an uncompressed ROW_INDEX stream after `change`, padded with
/// an unknown field (which readers skip) to its old length, so the file
/// layout stays as it was.
fn rewrite_index(bytes: &mut [u8], range: Range<usize>, change: impl FnOnce(&mut RowIndex)) {
    let mut index = RowIndex::decode(&bytes[range.clone()]).unwrap();
    change(&mut index);
    let mut out = index.encode_to_vec();
    let room = range.len() - out.len();
    assert!(room >= 2, "the change must shrink the index");
    // Field 15, length-delimited: tag byte 0x7a, a one-byte length.
    let pad = room - 2;
    assert!(pad < 128);
    out.push(0x7a);
    out.push(pad as u8);
    out.resize(range.len(), 0);
    bytes[range].copy_from_slice(&out);
}

/// `path` read with `predicate` equals the undamaged fixture's pruned read;
/// returns the stats.
fn same_rows(path: &Path, name: &str, predicate: &str) -> ReadStats {
    let options = ReadOptions::default().with_predicate(pred(predicate));
    let good = OrcFile::open(fixture(name)).unwrap();
    let (want, _) = read(&good, &options).unwrap();
    let bad = OrcFile::open(path).unwrap();
    let (got, stats) = read(&bad, &options).unwrap();
    assert_eq!(got, want, "{}", path.display());
    stats
}

/// A change to a row index.
type Damage = fn(&mut RowIndex);

/// A change to one position field of a column's index: (column, field,
/// new value from old).
type Lie = (&'static str, usize, fn(u64) -> u64);

#[test]
fn damaged_row_index_positions_fall_back_to_whole_stripes() {
    // Uncompressed, stride 90, stripes of 200 rows: `id` prunes, `v` (with
    // nulls: PRESENT and DATA positions) is damaged in stripe 3.
    let name = "many_stripes_v12_none.orc";
    let predicate = "id >= 700"; // stripe 3 (rows 600..800): keeps groups 1, 2
    // Each damage drops the statistics of `v` (not a predicate column)
    // first, to make room in the re-encoded stream.
    let cases: [(&str, Damage); 4] = [
        ("count", |ix| {
            ix.entry.pop();
        }),
        ("past-end", |ix| ix.entry[1].positions[3] = 1 << 40),
        ("backwards", |ix| {
            ix.entry[1].positions[3] = ix.entry[2].positions[3] + 1
        }),
        ("skip-past-run", |ix| ix.entry[1].positions[4] = 600),
    ];
    for (tag, change) in cases {
        let path = damaged(name, tag, |f, bytes| {
            let r = row_index_range(f, 3, "v");
            rewrite_index(bytes, r, |ix| {
                for e in &mut ix.entry {
                    e.statistics = None;
                }
                change(ix);
            });
        });
        let stats = same_rows(&path, name, predicate);
        assert_eq!(stats.row_index_fallbacks, 1, "{tag}: {stats:?}");
    }
}

#[test]
fn lying_row_index_positions_never_give_wrong_rows() {
    // Positions that fit the streams but point elsewhere (uncompressed, so
    // any value is plausible): the window decodes to values that disagree
    // with the row groups' statistics (non-null counts, ranges) or fails
    // to decode, and the stripe is read whole again.
    let name = "many_stripes_v12_none.orc";
    // (column, position field, change): `v` has PRESENT (offset, byte
    // skip, bit) then DATA (offset, skip); `id`, without nulls, DATA only.
    let cases: [Lie; 6] = [
        ("v", 0, |x| x + 1),
        ("v", 2, |x| (x + 3) % 8),
        ("v", 3, |x| x + 1),
        ("v", 4, |x| x + 7),
        ("id", 0, |x| x + 1),
        ("id", 1, |x| x + 5),
    ];
    for (k, (column, field, change)) in cases.into_iter().enumerate() {
        let path = damaged(name, &format!("lie{k}"), |f, bytes| {
            let r = row_index_range(f, 3, column);
            rewrite_index(bytes, r, |ix| {
                // Room for a longer varint: drop the integer sums.
                for e in &mut ix.entry {
                    if let Some(s) = e
                        .statistics
                        .as_mut()
                        .and_then(|s| s.int_statistics.as_mut())
                    {
                        s.sum = None;
                    }
                }
                let p = &mut ix.entry[1].positions;
                p[field] = change(p[field]);
            });
        });
        let stats = same_rows(&path, name, "id >= 700");
        assert_eq!(
            stats.row_index_fallbacks, 1,
            "{column} field {field}: the lie went unnoticed: {stats:?}"
        );
    }
}

#[test]
fn unreadable_row_index_is_an_error_naming_its_place() {
    // ZLIB: a chunk header claiming more bytes than the stream has.
    let path = damaged("rowgroups_v12_zlib.orc", "header", |f, bytes| {
        let r = row_index_range(f, 1, "id");
        bytes[r.start..r.start + 3].copy_from_slice(&[0xfe, 0xff, 0x7f]);
    });
    let file = OrcFile::open(&path).unwrap();
    let options = ReadOptions::default().with_predicate(pred("id > 2500"));
    let err = read(&file, &options).unwrap_err().to_string();
    for part in [
        &*path.to_string_lossy(),
        "stripe 1",
        "column id (id 1)",
        "ROW_INDEX",
    ] {
        assert!(err.contains(part), "{part} missing: {err}");
    }
    // Without predicates the row index is not read: the file reads.
    assert_eq!(
        read(&file, &ReadOptions::default()).unwrap().0.num_rows(),
        6000
    );
    // Uncompressed: bytes that are no protobuf message.
    let path = damaged("many_stripes_v12_none.orc", "garbage", |f, bytes| {
        let r = row_index_range(f, 2, "id");
        bytes[r].fill(0xff);
    });
    let file = OrcFile::open(&path).unwrap();
    let options = ReadOptions::default().with_predicate(pred("id > 500"));
    let err = read(&file, &options).unwrap_err().to_string();
    for part in ["stripe 2", "column id (id 1)", "ROW_INDEX", "row index"] {
        assert!(err.contains(part), "{part} missing: {err}");
    }
}

#[test]
fn damaged_files_with_predicates_never_panic() {
    let mut rng = crate::common::Rng::fresh("damaged_files_with_predicates_never_panic");
    let src = fixture("rowgroups_v12_zlib.orc");
    let bytes = std::fs::read(&src).unwrap();
    let dir = std::env::temp_dir().join(format!("warpread-rowindex-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The index sections, where damage reaches the row index code.
    let file = OrcFile::open(&src).unwrap();
    let spans: Vec<Range<u64>> = file
        .stripes()
        .iter()
        .map(|s| s.offset..s.offset + s.index_length)
        .collect();
    for i in 0..40 {
        let mut b = bytes.clone();
        let span = &spans[i % spans.len()];
        for _ in 0..1 + rng.below(6) {
            let k = span.start + rng.below(span.end - span.start);
            b[k as usize] ^= 1 << rng.below(8);
        }
        let path = dir.join(format!("fuzz-{i}.orc"));
        std::fs::write(&path, &b).unwrap();
        let result = std::panic::catch_unwind(|| {
            let f = OrcFile::open(&path)?;
            let options = ReadOptions::default()
                .with_predicate(pred("id >= 1000"))
                .with_predicate(pred("id < 4000"));
            f.read(&options, &CpuBackend::new())
        });
        match result.unwrap_or_else(|_| panic!("panic reading {}", path.display())) {
            Ok(_) => {}
            Err(e) => assert!(
                e.to_string().contains(&*path.to_string_lossy()),
                "error without the file name: {e}"
            ),
        }
    }
}

#[test]
fn sql_over_pruned_row_groups_gives_the_unpruned_answers() {
    use datafusion::datasource::file_format::options::ArrowReadOptions;
    use std::sync::Arc;
    use warpread_datafusion::{
        SessionContextExt, WarpreadConfig, compare_results, run_sql, session,
    };
    let orc = fixture("rowgroups_v12_zlib.orc");
    let arrow = fixture("rowgroups_v12_zlib.arrow");
    let rt = warpread_datafusion::runtime().unwrap();
    rt.block_on(async {
        let ctx = session(
            WarpreadConfig::with_backend(Arc::new(CpuBackend::new())),
            Default::default(),
        );
        ctx.register_orc("t", &orc.to_string_lossy(), Default::default())
            .await
            .unwrap();
        // pyarrow's reading of the same file, through DataFusion's own
        // Arrow IPC reader: no warpread, no pruning.
        ctx.register_arrow("r", &arrow.to_string_lossy(), ArrowReadOptions::default())
            .await
            .unwrap();
        for filter in [
            "id >= 1000 AND id < 1500",
            "id > 2250 AND id <= 2650",
            "k = 'k05'",
            "sparse > 50",
            "v > 990",
            "f < -250.0",
            "s >= 's99000'",
            "d < DATE '2024-01-01' AND id > 10",
            "id < 0",
        ] {
            // Flat columns only (read through windows), every row; then
            // aggregates with the nested column (stripes read whole).
            let queries = [
                "SELECT id, v, f, s, k, d, ts, dec, sparse, b FROM {t} WHERE {filter}",
                "SELECT count(*) AS n, sum(id) AS si, min(s) AS ms, max(v) AS mv, \
                 count(ts) AS nts, sum(dec) AS sd, count(lst) AS nl, max(k) AS mk \
                 FROM {t} WHERE {filter}",
            ];
            for q in queries {
                let sql = |t: &str| q.replace("{t}", t).replace("{filter}", filter);
                let a = run_sql(&ctx, &sql("t")).await.unwrap();
                let b = run_sql(&ctx, &sql("r")).await.unwrap();
                assert!(!b[0].batches.is_empty() || filter == "id < 0");
                compare_results(&a[0].batches, &b[0].batches, 0.0)
                    .unwrap_or_else(|e| panic!("{}: {e}", sql("t")));
            }
        }
        let analyzed = run_sql(
            &ctx,
            "EXPLAIN ANALYZE SELECT sum(v) FROM t WHERE id >= 1000 AND id < 1500",
        )
        .await
        .unwrap();
        let text = warpread_datafusion::sorted_rows(&analyzed[0].batches)
            .concat()
            .join("\n");
        assert!(text.contains("warpread_row_groups_pruned=6"), "{text}");
        assert!(text.contains("warpread_row_groups_read=2"), "{text}");
    });
}
