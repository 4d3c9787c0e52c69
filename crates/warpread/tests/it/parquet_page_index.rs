//! Page pruning by the page index on the `page_index_*` fixtures
//! (`scripts/gen_parquet_fixtures.py`: 4 row groups of 1500 rows, pages of
//! 100 to 900 rows, GZIP v1 and SNAPPY v2 pages). The oracle is the parquet
//! crate: its Arrow reader gives the full table, its page index (read by
//! its own reader) gives the pages a predicate keeps, decided here by plain
//! comparisons of each page's min and max. A pruned read must return
//! exactly the rows of those pages, in order, in every column; every row
//! that satisfies the predicate must be among them; and exactly the
//! expected data pages must be decoded.

use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::compute::kernels::cmp;
use arrow::compute::{concat_batches, take_record_batch};
use arrow::datatypes::{DataType, SchemaRef};
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use warpread::exec::CpuBackend;
use warpread::orc::{CmpOp, Predicate, ReadOptions, ReadStats, Scalar};
use warpread::parquet::ParquetFile;

use crate::common::root;
use crate::parquet_differential::compare;

pub use crate::common::{PAGE_INDEX_FIXTURES as FIXTURES, parquet_fixture as fixture};

/// The parquet crate's reading of a file: the whole table and the footer
/// with the page index.
pub struct Oracle {
    pub schema: SchemaRef,
    pub all: RecordBatch,
    pub meta: Arc<ParquetMetaData>,
}

pub fn oracle(path: &Path) -> Oracle {
    let options = ArrowReaderOptions::new()
        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Required);
    let b =
        ParquetRecordBatchReaderBuilder::try_new_with_options(File::open(path).unwrap(), options)
            .unwrap();
    let meta = b.metadata().clone();
    assert!(meta.column_index().is_some() && meta.offset_index().is_some());
    let r = b.with_batch_size(1024).build().unwrap();
    let schema = arrow::array::RecordBatchReader::schema(&r);
    let batches: Vec<_> = r.collect::<Result<_, _>>().unwrap();
    Oracle {
        all: concat_batches(&schema, &batches).unwrap(),
        schema,
        meta,
    }
}

fn p(column: &str, op: CmpOp, value: Scalar) -> Predicate {
    Predicate {
        column: column.into(),
        op,
        value,
    }
}

fn int(column: &str, op: CmpOp, v: i64) -> Predicate {
    p(column, op, Scalar::Int(v))
}

/// Whether a page with these bounds may hold a value `op v`.
fn may<T: PartialOrd>(min: &T, max: &T, op: CmpOp, v: &T) -> bool {
    match op {
        CmpOp::Eq => min <= v && v <= max,
        CmpOp::Lt => min < v,
        CmpOp::Le => min <= v,
        CmpOp::Gt => max > v,
        CmpOp::Ge => max >= v,
    }
}

/// The oracle's decision for page `i` of a column index.
fn page_may_match(ci: &ColumnIndexMetaData, i: usize, pred: &Predicate) -> bool {
    use ColumnIndexMetaData as C;
    match (ci, &pred.value) {
        (C::NONE, _) => true,
        (ci, _) if ci.is_null_page(i) => false,
        (C::INT32(x), Scalar::Int(v)) => may(
            &i64::from(*x.min_value(i).unwrap()),
            &i64::from(*x.max_value(i).unwrap()),
            pred.op,
            v,
        ),
        (C::INT64(x), Scalar::Int(v)) => {
            may(x.min_value(i).unwrap(), x.max_value(i).unwrap(), pred.op, v)
        }
        (C::DOUBLE(x), Scalar::Float(v)) => {
            may(x.min_value(i).unwrap(), x.max_value(i).unwrap(), pred.op, v)
        }
        (C::DOUBLE(x), Scalar::Int(v)) => may(
            x.min_value(i).unwrap(),
            x.max_value(i).unwrap(),
            pred.op,
            &(*v as f64),
        ),
        (C::BYTE_ARRAY(x), Scalar::Str(v)) => may(
            &x.min_value(i).unwrap(),
            &x.max_value(i).unwrap(),
            pred.op,
            &v.as_bytes(),
        ),
        _ => true,
    }
}

/// The top-level column of each leaf, and whether it is a flat leaf itself.
fn leaves(meta: &ParquetMetaData) -> Vec<(String, bool)> {
    meta.file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| {
            let parts = c.path().parts();
            (parts[0].clone(), parts.len() == 1 && c.max_rep_level() == 0)
        })
        .collect()
}

/// Row ranges of each row group's pages of leaf `c`, in file rows.
fn pages(meta: &ParquetMetaData, g: usize, c: usize) -> Vec<Range<u64>> {
    let base: i64 = (0..g).map(|i| meta.row_group(i).num_rows()).sum();
    let rows = meta.row_group(g).num_rows();
    let locs = meta.offset_index().unwrap()[g][c].page_locations();
    let firsts: Vec<i64> = locs.iter().map(|l| l.first_row_index).collect();
    let ends = firsts.iter().skip(1).copied().chain([rows]);
    firsts
        .iter()
        .zip(ends)
        .map(|(&s, e)| (base + s) as u64..(base + e) as u64)
        .collect()
}

/// The oracle's kept rows (file row numbers, in order) for a conjunction.
pub fn expected_rows(meta: &ParquetMetaData, preds: &[Predicate]) -> Vec<u64> {
    let cols = leaves(meta);
    let mut out = Vec::new();
    for g in 0..meta.num_row_groups() {
        let base: i64 = (0..g).map(|i| meta.row_group(i).num_rows()).sum();
        let rows = meta.row_group(g).num_rows();
        let mut keep = vec![true; rows as usize];
        for pred in preds {
            let c = cols.iter().position(|(n, _)| *n == pred.column).unwrap();
            let ci = &meta.column_index().unwrap()[g][c];
            for (i, r) in pages(meta, g, c).into_iter().enumerate() {
                if !page_may_match(ci, i, pred) {
                    for row in r {
                        keep[(row as i64 - base) as usize] = false;
                    }
                }
            }
        }
        out.extend(
            (0..rows)
                .filter(|&r| keep[r as usize])
                .map(|r| (base + r) as u64),
        );
    }
    out
}

/// Data pages a read of `projection` keeping `kept` must decode: flat
/// top-level leaves read the pages overlapping kept rows of their row
/// group, other leaves every page of a row group with a kept row.
fn expected_pages(meta: &ParquetMetaData, projection: &[&str], kept: &[u64]) -> u64 {
    let cols = leaves(meta);
    let mut n = 0;
    for g in 0..meta.num_row_groups() {
        for (c, (name, flat)) in cols.iter().enumerate() {
            if !projection.contains(&name.as_str()) {
                continue;
            }
            let ps = pages(meta, g, c);
            let in_group = |r: &Range<u64>| kept.iter().any(|k| r.contains(k));
            let whole = ps.first().unwrap().start..ps.last().unwrap().end;
            if !in_group(&whole) {
                continue;
            }
            n += if *flat {
                ps.iter().filter(|r| in_group(r)).count() as u64
            } else {
                ps.len() as u64
            };
        }
    }
    n
}

/// Rows of `all` satisfying `pred` (nulls never do).
fn matching(all: &RecordBatch, pred: &Predicate) -> Vec<u64> {
    let col = all.column_by_name(&pred.column).unwrap();
    let lit: ArrayRef = match &pred.value {
        Scalar::Int(v) => {
            arrow::compute::cast(&Int64Array::from(vec![*v]), col.data_type()).unwrap()
        }
        Scalar::Float(v) => Arc::new(Float64Array::from(vec![*v])),
        Scalar::Str(v) => Arc::new(StringArray::from(vec![v.as_str()])),
    };
    let col = match col.data_type() {
        DataType::Float64 => col.clone(),
        _ if matches!(pred.value, Scalar::Float(_)) => {
            arrow::compute::cast(col, &DataType::Float64).unwrap()
        }
        _ => col.clone(),
    };
    let lit = arrow::array::Scalar::new(lit);
    let mask = match pred.op {
        CmpOp::Eq => cmp::eq(&col, &lit),
        CmpOp::Lt => cmp::lt(&col, &lit),
        CmpOp::Le => cmp::lt_eq(&col, &lit),
        CmpOp::Gt => cmp::gt(&col, &lit),
        CmpOp::Ge => cmp::gt_eq(&col, &lit),
    }
    .unwrap();
    (0..mask.len())
        .filter(|&i| mask.is_valid(i) && mask.value(i))
        .map(|i| i as u64)
        .collect()
}

/// The oracle's rows `rows` of `columns` (all: `None`).
pub fn rows_of(o: &Oracle, rows: &[u64], columns: Option<&[&str]>) -> RecordBatch {
    let idx = arrow::array::UInt32Array::from_iter_values(rows.iter().map(|&r| r as u32));
    let all = take_record_batch(&o.all, &idx).unwrap();
    match columns {
        None => all,
        Some(names) => all
            .project(
                &names
                    .iter()
                    .map(|n| o.schema.index_of(n).unwrap())
                    .collect::<Vec<_>>(),
            )
            .unwrap(),
    }
}

pub fn read(
    path: &Path,
    preds: &[Predicate],
    columns: Option<&[&str]>,
    batch: usize,
) -> (SchemaRef, RecordBatch, ReadStats) {
    let file = ParquetFile::open(path).unwrap();
    let mut options = ReadOptions::default().with_batch_size(batch);
    if let Some(c) = columns {
        options = options.with_columns(c.iter().copied());
    }
    options.predicates = preds.to_vec();
    let (batches, stats) = file
        .read_with_stats(&options, &CpuBackend::new())
        .unwrap_or_else(|e| panic!("{preds:?}: {e}"));
    assert!(batches.iter().all(|b| b.num_rows() <= batch));
    let schema = file.projected_schema(&options).unwrap();
    (
        schema.clone(),
        concat_batches(&schema, &batches).unwrap(),
        stats,
    )
}

/// Predicates of every operator on every prunable kind of column.
fn cases() -> Vec<Vec<Predicate>> {
    use CmpOp::*;
    let s = |c, op, v: &str| p(c, op, Scalar::Str(v.into()));
    // 2020-01-01 is day 18262; `day` advances one day per 40 rows.
    vec![
        vec![int("id", Lt, 100)],
        vec![int("id", Le, 1650)],
        vec![int("id", Eq, 3333)],
        vec![int("id", Gt, 5900)],
        vec![int("id", Ge, 4470)],
        vec![int("id", Ge, 2000), int("id", Lt, 2500)],
        vec![int("id", Ge, 1000), int("k32", Le, 400)],
        vec![int("k32", Eq, 1000)],
        vec![int("k32", Lt, 50)],
        vec![int("day", Le, 18270)],
        vec![int("day", Gt, 18400)],
        vec![s("name", Eq, "n003000")],
        vec![s("name", Ge, "n005500")],
        vec![s("name", Lt, "n000150")],
        vec![p("score", Gt, Scalar::Float(1400.0))],
        vec![int("score", Le, 10)],
        vec![int("sparse", Ge, 0)],
        vec![int("sparse", Lt, 100)],
        // Nothing to skip: random values, a dictionary of five strings.
        vec![int("rnd", Lt, 0)],
        vec![s("color", Eq, "red")],
        // Nothing matches.
        vec![int("id", Gt, 1_000_000)],
    ]
}

const ALL: [&str; 10] = [
    "id", "k32", "day", "name", "color", "score", "sparse", "rnd", "tags", "pt",
];

#[test]
fn page_pruning_returns_exactly_the_rows_of_the_kept_pages() {
    let mut skipped_total = 0;
    for name in FIXTURES {
        let path = fixture(name);
        let o = oracle(&path);
        assert_eq!(o.schema.fields().len(), ALL.len());
        for preds in cases() {
            let kept = expected_rows(&o.meta, &preds);
            // Rows satisfying every predicate.
            let mut m: Vec<u64> = (0..o.all.num_rows() as u64).collect();
            for p in &preds {
                let these = matching(&o.all, p);
                m.retain(|r| these.binary_search(r).is_ok());
            }
            assert!(
                m.iter().all(|r| kept.binary_search(r).is_ok()),
                "{name} {preds:?}: a matching row is outside the kept pages"
            );
            // The predicate column is not always read: other columns must
            // still give the kept rows.
            let without: [&str; 4] = ["name", "tags", "pt", "color"];
            for (columns, batch) in [(None, 1000), (Some(&without[..]), 77)] {
                let (schema, got, stats) = read(&path, &preds, columns, batch);
                let want = rows_of(&o, &kept, columns);
                if let Some(d) = compare(&schema, &got, &want.schema(), &want) {
                    panic!("{name} {preds:?} {columns:?}: {d}");
                }
                let projection = columns.unwrap_or(&ALL);
                assert_eq!(
                    stats.pages_read,
                    expected_pages(&o.meta, projection, &kept),
                    "{name} {preds:?} {columns:?}: data pages decoded"
                );
                if (kept.len() as i64) < o.meta.file_metadata().num_rows() && !kept.is_empty() {
                    assert!(stats.pages_skipped > 0, "{name} {preds:?}: nothing skipped");
                }
                skipped_total += stats.pages_skipped;
            }
        }
    }
    assert!(
        skipped_total > 100,
        "the page index skipped {skipped_total} pages"
    );
}

#[test]
fn reads_without_predicates_load_no_index_and_skip_nothing() {
    for name in FIXTURES {
        let path = fixture(name);
        let o = oracle(&path);
        let (schema, got, stats) = read(&path, &[], None, 1000);
        assert!(compare(&schema, &got, &o.schema, &o.all).is_none());
        assert_eq!(stats.pages_skipped, 0);
        let all: Vec<u64> = (0..o.all.num_rows() as u64).collect();
        assert_eq!(stats.pages_read, expected_pages(&o.meta, &ALL, &all));
        // A predicate that keeps everything reads everything.
        let (_, got, stats) = read(&path, &[int("id", CmpOp::Ge, 0)], None, 1000);
        assert_eq!(got.num_rows(), o.all.num_rows());
        assert_eq!(stats.pages_skipped, 0);
    }
}

#[test]
fn files_without_a_page_index_read_whole_row_groups() {
    // `types_gzip_v1` has no page index: only row-group statistics prune.
    let path = root().join("testdata/parquet/types_gzip_v1.parquet");
    let (_, got, stats) = read(&path, &[int("i32", CmpOp::Lt, 0)], None, 1000);
    assert_eq!(stats.pages_skipped, 0);
    assert_eq!(got.num_rows(), 250);
}
