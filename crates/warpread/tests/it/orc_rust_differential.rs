//! The ORC reader against a second reference reader, orc-rust (a
//! dev-dependency only): every fixture in `testdata/orc` and every ORC file
//! of the third-party corpus that pyarrow reads is read by warpread's CPU
//! backend and by orc-rust, and the two tables must hold the same values.
//!
//! pyarrow wrote the fixtures' expected output and warpread maps ORC types
//! to Arrow as pyarrow does, so the pyarrow test cannot see a misreading
//! the two share; orc-rust decodes the format independently of both. Only
//! files pyarrow reads go to orc-rust (for the corpus, its index's `pa_ok`
//! tag, recorded from pyarrow itself, so this test needs no Python): the
//! corpus also holds deliberately broken files, and orc-rust panics on some
//! inputs instead of returning an error. Files on which it panics although
//! pyarrow reads them are in [`SKIPPED`], by name. A file orc-rust returns
//! an error for is listed as unsupported, not a failure; a file warpread
//! fails on, tables of another shape, a value that differs outside
//! [`KNOWN_DIFFERENCES`], and comparing no file at all are failures.
//!
//! What is compared: row counts, the top-level column names in order, and
//! each column's values, logically (Arrow array equality: validity and the
//! values of valid slots, not the bytes under nulls or the buffer layout).
//! orc-rust's default Arrow mapping agrees with warpread's (and pyarrow's)
//! on every leaf type of the compared files: timestamps in nanoseconds,
//! TIMESTAMP_INSTANT with zone UTC, `Decimal128(p, s)`, `Utf8` for STRING,
//! CHAR and VARCHAR, sparse unions with type ids `0..n`; a leaf type that
//! differs fails the test. Two differences are normalised away:
//!
//! - field metadata and nested field names: warpread copies ORC type
//!   attributes into field metadata, as pyarrow does, orc-rust writes none,
//!   and orc-rust names a map's key and value fields `keys` and `values`
//!   where pyarrow says `key` and `value`. orc-rust's nested arrays are
//!   rebuilt around warpread's fields (same layout, buffers unchanged); the
//!   pyarrow test compares the metadata.
//! - the slots of a sparse union's children that the row's type id does not
//!   select carry no value (warpread leaves an empty string there, orc-rust
//!   a null), but Arrow's equality compares every child in full: both sides'
//!   unselected slots are made null first.
//!
//! Schema metadata (the ORC user metadata) is not compared: pyarrow drops
//! entries that are not UTF-8, orc-rust decodes them lossily.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, ListArray, MapArray, RecordBatch, RecordBatchReader,
    StructArray, UnionArray,
};
use arrow::compute::{concat_batches, nullif};
use arrow::datatypes::{DataType, UnionMode};
use orc_rust::ArrowReaderBuilder;
use warpread::exec::CpuBackend;

use crate::common::corpus_dir;
use crate::orc_differential::{corpus_orc, fixtures, read_orc};

/// Why pyarrow-written files with pre-1970 fractional timestamps are not
/// given to orc-rust. It decodes the nanoseconds as unsigned, so a negative
/// value overflows its multiplication: a panic with overflow checks on, a
/// wrong value without (`testdata/orc/README.md`, TIMESTAMP semantics).
const NEGATIVE_NANOS: &str = "orc-rust panics (`attempt to multiply with overflow`, \
    encoding/timestamp.rs) on the negative nanoseconds pyarrow's writer stores for pre-1970 \
    timestamps with a fraction; the C++ reader, pyarrow and warpread shift them arithmetically";

/// Files that pyarrow reads but that orc-rust is not given, by fixture
/// name or corpus path, each with the reason.
const SKIPPED: &[(&str, &str)] = &[
    ("coercions_v12_none.orc", NEGATIVE_NANOS),
    ("timestamps_v11_none.orc", NEGATIVE_NANOS),
    ("timestamps_v12_zlib.orc", NEGATIVE_NANOS),
    ("types_v11_lz4.orc", NEGATIVE_NANOS),
    ("types_v11_none.orc", NEGATIVE_NANOS),
    ("types_v11_snappy.orc", NEGATIVE_NANOS),
    ("types_v11_zlib.orc", NEGATIVE_NANOS),
    ("types_v11_zstd.orc", NEGATIVE_NANOS),
    ("types_v12_lz4.orc", NEGATIVE_NANOS),
    ("types_v12_none.orc", NEGATIVE_NANOS),
    ("types_v12_snappy.orc", NEGATIVE_NANOS),
    ("types_v12_zlib.orc", NEGATIVE_NANOS),
    ("types_v12_zstd.orc", NEGATIVE_NANOS),
];

/// ORC-763's one-second correction of pre-1970 values with at least 1 ms
/// of fraction, where the UTC instant and the wall clock lie on opposite
/// sides of 1970 (`testdata/orc/README.md`, TIMESTAMP semantics).
const ORC_763: &str = "ORC-763's one-second correction: orc-rust tests the sign of the UTC \
    instant, the C++ reader (pyarrow, and warpread with it) the sign of the writer's wall clock";

/// Columns on which orc-rust reads other values than pyarrow and the ORC
/// C++ reader, and warpread with them: (file, column, reason). The column
/// must still differ, so that an entry goes once orc-rust agrees.
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[
    ("pyorc_timestamps_tz_kolkata_v12_none.orc", "ts", ORC_763),
    ("pyorc_timestamps_tz_la_v12_none.orc", "ts", ORC_763),
    (
        "cudf/python/cudf/cudf/tests/data/orc/TestOrcFile.Spark.EpochTimestamp.Shanghai.orc",
        "ts",
        ORC_763,
    ),
    (
        "orc-examples/examples/TestOrcFile.testDate2038.orc",
        "time",
        "the writer zone's daylight saving after 2037: orc-rust applies none (chrono-tz lists \
         transitions up to 2037), the C++ reader continues the zone's rule",
    ),
];

/// The whole file as orc-rust reads it, or its error.
fn read_orc_rust(path: &Path) -> Result<RecordBatch, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let reader = ArrowReaderBuilder::try_new(file)
        .map_err(|e| e.to_string())?
        .with_batch_size(1000)
        .build();
    let schema = reader.schema();
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    concat_batches(&schema, &batches).map_err(|e| e.to_string())
}

/// orc-rust's array in warpread's type `want`: nested arrays rebuilt
/// around warpread's fields, leaves as they are.
fn align(got: &ArrayRef, want: &DataType) -> Result<ArrayRef, String> {
    if got.data_type() == want {
        return Ok(got.clone());
    }
    let err = |e: arrow::error::ArrowError| e.to_string();
    Ok(match (got.data_type(), want) {
        (DataType::Struct(_), DataType::Struct(fields)) => {
            let s = got.as_struct();
            if s.num_columns() != fields.len() {
                return Err(format!(
                    "{} fields, warpread {}",
                    s.num_columns(),
                    fields.len()
                ));
            }
            let columns = s
                .columns()
                .iter()
                .zip(fields)
                .map(|(c, f)| align(c, f.data_type()))
                .collect::<Result<Vec<_>, _>>()?;
            Arc::new(
                StructArray::try_new(fields.clone(), columns, s.nulls().cloned()).map_err(err)?,
            )
        }
        (DataType::List(_), DataType::List(item)) => {
            let l = got.as_list::<i32>();
            let values = align(l.values(), item.data_type())?;
            Arc::new(
                ListArray::try_new(
                    item.clone(),
                    l.offsets().clone(),
                    values,
                    l.nulls().cloned(),
                )
                .map_err(err)?,
            )
        }
        (DataType::Map(..), DataType::Map(entries, sorted)) => {
            let m = got.as_map();
            let kv: ArrayRef = Arc::new(m.entries().clone());
            let kv = align(&kv, entries.data_type())?;
            Arc::new(
                MapArray::try_new(
                    entries.clone(),
                    m.offsets().clone(),
                    kv.as_struct().clone(),
                    m.nulls().cloned(),
                    *sorted,
                )
                .map_err(err)?,
            )
        }
        (DataType::Union(_, UnionMode::Sparse), DataType::Union(fields, UnionMode::Sparse)) => {
            let u = got.as_union();
            let children = fields
                .iter()
                .map(|(id, f)| align(u.child(id), f.data_type()))
                .collect::<Result<Vec<_>, _>>()?;
            Arc::new(
                UnionArray::try_new(fields.clone(), u.type_ids().clone(), None, children)
                    .map_err(err)?,
            )
        }
        (from, to) => return Err(format!("orc-rust type {from}, warpread {to}")),
    })
}

/// The array with every sparse union's unselected child slots made null,
/// nested unions included. Those slots carry no value (warpread leaves an
/// empty string there, orc-rust a null) but Arrow's equality compares
/// every child in full.
fn mask_unselected(a: &ArrayRef) -> Result<ArrayRef, String> {
    let err = |e: arrow::error::ArrowError| e.to_string();
    Ok(match a.data_type() {
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let columns = s
                .columns()
                .iter()
                .map(mask_unselected)
                .collect::<Result<Vec<_>, _>>()?;
            Arc::new(
                StructArray::try_new(fields.clone(), columns, s.nulls().cloned()).map_err(err)?,
            )
        }
        DataType::List(item) => {
            let l = a.as_list::<i32>();
            let values = mask_unselected(l.values())?;
            Arc::new(
                ListArray::try_new(
                    item.clone(),
                    l.offsets().clone(),
                    values,
                    l.nulls().cloned(),
                )
                .map_err(err)?,
            )
        }
        DataType::Map(entries, sorted) => {
            let m = a.as_map();
            let kv: ArrayRef = Arc::new(m.entries().clone());
            let kv = mask_unselected(&kv)?;
            Arc::new(
                MapArray::try_new(
                    entries.clone(),
                    m.offsets().clone(),
                    kv.as_struct().clone(),
                    m.nulls().cloned(),
                    *sorted,
                )
                .map_err(err)?,
            )
        }
        DataType::Union(fields, UnionMode::Sparse) => {
            let u = a.as_union();
            let children = fields
                .iter()
                .map(|(id, _)| {
                    let child = mask_unselected(u.child(id))?;
                    let other: BooleanArray = u.type_ids().iter().map(|&t| Some(t != id)).collect();
                    nullif(&child, &other).map_err(err)
                })
                .collect::<Result<Vec<_>, _>>()?;
            Arc::new(
                UnionArray::try_new(fields.clone(), u.type_ids().clone(), None, children)
                    .map_err(err)?,
            )
        }
        _ => a.clone(),
    })
}

/// How one column of orc-rust's table compares with warpread's: `None`
/// when equal, else the first difference.
fn compare_column(ours: &ArrayRef, theirs: &ArrayRef, want: &DataType) -> Option<String> {
    let pair = align(theirs, want)
        .and_then(|g| mask_unselected(&g))
        .and_then(|g| Ok((mask_unselected(ours)?, g)));
    let (w, g) = match pair {
        Ok(pair) => pair,
        Err(e) => return Some(e),
    };
    if g.to_data() == w.to_data() {
        return None;
    }
    let first = (0..w.len()).find(|&r| g.slice(r, 1).to_data() != w.slice(r, 1).to_data());
    Some(format!(
        "differs (first at row {first:?}): warpread {:?}, orc-rust {:?}",
        first.map(|r| w.slice(r, 1)),
        first.map(|r| g.slice(r, 1))
    ))
}

/// The columns that differ between warpread's table and orc-rust's, each
/// with its first difference; `Err` when the tables differ in shape.
fn compare(ours: &RecordBatch, theirs: &RecordBatch) -> Result<Vec<(String, String)>, String> {
    let names = |b: &RecordBatch| -> Vec<String> {
        b.schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    };
    if names(ours) != names(theirs) {
        return Err(format!(
            "columns {:?}, orc-rust {:?}",
            names(ours),
            names(theirs)
        ));
    }
    if ours.num_rows() != theirs.num_rows() {
        return Err(format!(
            "{} rows, orc-rust {}",
            ours.num_rows(),
            theirs.num_rows()
        ));
    }
    Ok(ours
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            compare_column(ours.column(i), theirs.column(i), f.data_type())
                .map(|d| (f.name().clone(), d))
        })
        .collect())
}

/// Tallies of one run over a set of files.
#[derive(Default)]
struct Tally {
    agreed: Vec<String>,
    known: Vec<String>,
    unsupported: Vec<String>,
    skipped: Vec<String>,
    failures: Vec<String>,
}

impl Tally {
    fn check(&mut self, name: &str, path: &Path) {
        if let Some((_, why)) = SKIPPED.iter().find(|(n, _)| *n == name) {
            self.skipped.push(format!("{name}: {why}"));
            return;
        }
        let ours = match read_orc(path, &CpuBackend::new()) {
            Ok((_, batch)) => batch,
            Err(e) => {
                self.failures
                    .push(format!("{name}: pyarrow reads it, warpread fails: {e}"));
                return;
            }
        };
        let theirs = match read_orc_rust(path) {
            Ok(theirs) => theirs,
            Err(e) => {
                self.unsupported.push(format!("{name}: {e}"));
                return;
            }
        };
        let differing = match compare(&ours, &theirs) {
            Ok(d) => d,
            Err(e) => {
                self.failures.push(format!("{name}: {e}"));
                return;
            }
        };
        let known: Vec<_> = KNOWN_DIFFERENCES
            .iter()
            .filter(|(file, _, _)| *file == name)
            .collect();
        for (column, d) in &differing {
            match known.iter().find(|(_, c, _)| c == column) {
                Some((_, _, why)) => self.known.push(format!("{name}: column {column}: {why}")),
                None => self.failures.push(format!("{name}: column {column} {d}")),
            }
        }
        for (_, column, _) in &known {
            if !differing.iter().any(|(c, _)| c == column) {
                self.failures.push(format!(
                    "{name}: column {column} agrees now: drop it from KNOWN_DIFFERENCES"
                ));
            }
        }
        if differing.is_empty() {
            self.agreed.push(name.to_string());
        }
    }

    fn report(self, what: &str) {
        println!(
            "{what}: {} agree with orc-rust, {} with known differences, {} orc-rust: unsupported, \
             {} not given to orc-rust",
            self.agreed.len(),
            self.known.len(),
            self.unsupported.len(),
            self.skipped.len()
        );
        for (label, list) in [
            ("known difference", &self.known),
            ("orc-rust: unsupported", &self.unsupported),
            ("not given to orc-rust", &self.skipped),
        ] {
            for line in list {
                println!("  {label}: {line}");
            }
        }
        assert!(
            self.failures.is_empty(),
            "{what}: {} differences from orc-rust:\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
        assert!(!self.agreed.is_empty(), "{what}: no file was compared");
    }
}

#[test]
fn fixtures_match_orc_rust() {
    let mut tally = Tally::default();
    for orc in fixtures() {
        let name = orc.file_name().unwrap().to_string_lossy().into_owned();
        tally.check(&name, &orc);
    }
    tally.report("fixtures");
}

#[test]
fn corpus_matches_orc_rust() {
    let Some(dir) = corpus_dir() else {
        println!("corpus_matches_orc_rust: skipped: no ../shared/corpora");
        return;
    };
    let mut tally = Tally::default();
    for (path, pyarrow_reads) in corpus_orc(&dir) {
        if pyarrow_reads {
            tally.check(&path, &dir.join(&path));
        }
    }
    tally.report("corpus");
}
