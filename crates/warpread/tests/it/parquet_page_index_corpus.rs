//! Page pruning on every third-party corpus file with a page index
//! (`../shared/corpora`, tag `page_index`) that both readers read whole.
//! For a few top-level columns, predicates taken from the data (`=`, `<`,
//! `>=` a value of the column) must give, in order, a subsequence of the
//! parquet crate's rows (whole rows: every column agrees) that holds every
//! row satisfying the predicate. No error, no panic.

use std::panic::{AssertUnwindSafe, catch_unwind};

use arrow::array::{Array, ArrayRef, RecordBatch};
use arrow::compute::kernels::cmp;
use arrow::datatypes::DataType;
use arrow::row::{RowConverter, SortField};
use warpread::exec::CpuBackend;
use warpread::orc::{CmpOp, Predicate, ReadOptions, Scalar};
use warpread::parquet::ParquetFile;

use crate::common::corpus_dir;
use crate::parquet_differential::expected;

/// Columns tried per file, so the test stays short.
const COLUMNS: usize = 3;

/// The values of a column, dictionaries decoded.
fn plain(a: &ArrayRef) -> ArrayRef {
    match a.data_type() {
        DataType::Dictionary(_, v) => arrow::compute::cast(a, v).unwrap(),
        _ => a.clone(),
    }
}

/// A literal of the reader's kinds for row `i` of `a`, if it has one.
fn literal(a: &ArrayRef, i: usize) -> Option<Scalar> {
    use DataType::*;
    if a.is_null(i) {
        return None;
    }
    let v = a.slice(i, 1);
    Some(match a.data_type() {
        Int8 | Int16 | Int32 | Int64 | Date32 => {
            let v = arrow::compute::cast(&v, &Int64)
                .ok()?
                .as_any()
                .downcast_ref::<arrow::array::Int64Array>()?
                .value(0);
            Scalar::Int(v)
        }
        Float32 | Float64 => {
            let v = arrow::compute::cast(&v, &Float64).ok()?;
            let v = v
                .as_any()
                .downcast_ref::<arrow::array::Float64Array>()?
                .value(0);
            // NaN compares apart from statistics (which leave it out).
            if v.is_nan() {
                return None;
            }
            Scalar::Float(v)
        }
        Utf8 | LargeUtf8 | Utf8View => {
            let v = arrow::compute::cast(&v, &Utf8).ok()?;
            Scalar::Str(
                v.as_any()
                    .downcast_ref::<arrow::array::StringArray>()?
                    .value(0)
                    .to_string(),
            )
        }
        _ => return None,
    })
}

/// Rows of `col` satisfying `op lit` (nulls never do).
fn count_matching(col: &ArrayRef, op: CmpOp, lit: &Scalar) -> Option<usize> {
    let col = plain(col);
    let lit: ArrayRef = match lit {
        Scalar::Int(v) => std::sync::Arc::new(arrow::array::Int64Array::from(vec![*v])),
        Scalar::Float(v) => std::sync::Arc::new(arrow::array::Float64Array::from(vec![*v])),
        Scalar::Str(v) => std::sync::Arc::new(arrow::array::StringArray::from(vec![v.as_str()])),
    };
    let lit = arrow::compute::cast(&lit, col.data_type()).ok()?;
    let lit = arrow::array::Scalar::new(lit);
    let mask = match op {
        CmpOp::Eq => cmp::eq(&col, &lit),
        CmpOp::Lt => cmp::lt(&col, &lit),
        CmpOp::Ge => cmp::gt_eq(&col, &lit),
        CmpOp::Le => cmp::lt_eq(&col, &lit),
        CmpOp::Gt => cmp::gt(&col, &lit),
    }
    .ok()?;
    Some(mask.true_count())
}

/// Whether the rows of `got` are, in order, a subsequence of `want`'s
/// (`None` when the row format cannot hold these types).
fn is_subsequence(got: &RecordBatch, want: &RecordBatch) -> Option<bool> {
    let plain_cols = |b: &RecordBatch| b.columns().iter().map(plain).collect::<Vec<_>>();
    let (g, w) = (plain_cols(got), plain_cols(want));
    let conv = RowConverter::new(
        w.iter()
            .map(|c| SortField::new(c.data_type().clone()))
            .collect(),
    )
    .ok()?;
    let (gr, wr) = (
        conv.convert_columns(&g).ok()?,
        conv.convert_columns(&w).ok()?,
    );
    let mut j = 0;
    for i in 0..gr.num_rows() {
        while j < wr.num_rows() && wr.row(j) != gr.row(i) {
            j += 1;
        }
        if j == wr.num_rows() {
            return Some(false);
        }
        j += 1;
    }
    Some(true)
}

#[test]
fn page_pruning_on_corpus_files_keeps_real_and_matching_rows() {
    let Some(dir) = corpus_dir() else {
        println!("page pruning corpus: skipped: no ../shared/corpora");
        return;
    };
    let index = std::fs::read_to_string(dir.join("INDEX.tsv")).unwrap();
    let (mut files, mut reads, mut skipped, mut failures) = (0, 0, 0u64, Vec::new());
    for line in index.lines().skip(1) {
        let Some((path, tags)) = line.split_once('\t') else {
            continue;
        };
        let tags: Vec<&str> = tags.split(',').collect();
        if !tags.contains(&"fmt:parquet") || !tags.contains(&"page_index") {
            continue;
        }
        let file = dir.join(path);
        let Ok((_, want)) = expected(&file) else {
            continue;
        };
        let Ok(pf) = ParquetFile::open(&file) else {
            continue;
        };
        if pf
            .read(&ReadOptions::default(), &CpuBackend::new())
            .is_err()
            || want.num_rows() == 0
        {
            continue;
        }
        files += 1;
        let mut tried = 0;
        for (c, field) in want.schema().fields().iter().enumerate() {
            if tried == COLUMNS {
                break;
            }
            let col = plain(want.column(c));
            let n = col.len();
            let Some(lit) = (n / 3..n).chain(0..n / 3).find_map(|i| literal(&col, i)) else {
                continue;
            };
            tried += 1;
            for op in [CmpOp::Eq, CmpOp::Lt, CmpOp::Ge] {
                let pred = Predicate {
                    column: field.name().clone(),
                    op,
                    value: lit.clone(),
                };
                let what = format!("{path} {pred:?}");
                let options = ReadOptions::default().with_predicate(pred);
                let run = || pf.read_with_stats(&options, &CpuBackend::new());
                let got = match catch_unwind(AssertUnwindSafe(run)) {
                    Err(_) => {
                        failures.push(format!("{what}: PANIC"));
                        continue;
                    }
                    Ok(Err(e)) => {
                        failures.push(format!("{what}: {e}"));
                        continue;
                    }
                    Ok(Ok((batches, stats))) => {
                        skipped += stats.pages_skipped;
                        arrow::compute::concat_batches(&want.schema(), &batches).unwrap()
                    }
                };
                reads += 1;
                match is_subsequence(&got, &want) {
                    Some(true) => {}
                    Some(false) => failures.push(format!("{what}: rows not the file's, in order")),
                    None => {}
                }
                let m = |b: &RecordBatch| count_matching(b.column(c), op, &lit);
                if m(&got) != m(&want) {
                    failures.push(format!(
                        "{what}: {:?} matching rows returned of {:?}",
                        m(&got),
                        m(&want)
                    ));
                }
            }
        }
    }
    println!(
        "page pruning corpus: {files} files, {reads} predicated reads, {skipped} pages skipped"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
