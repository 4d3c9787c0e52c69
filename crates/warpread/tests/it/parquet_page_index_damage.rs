//! Damaged page indexes: copies of a `page_index_*` fixture whose index of
//! row group 1 (rows 1500..3000) is made unusable, read with predicates
//! that keep a few pages of it. The index is optional metadata, so the
//! reader falls back to reading that row group whole: no error, no panic,
//! and exactly its rows. An index that is well formed but wrong (first rows
//! moved) can make the wrong pages be kept, but the rows returned are
//! still real rows, whole and in order, since pages are placed by their
//! own headers.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use arrow::array::{Array, Int64Array};
use parquet::file::metadata::{
    PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader, ParquetMetaDataWriter,
};
use parquet::file::writer::TrackedWrite;
use warpread::orc::{CmpOp, Predicate, Scalar};

use crate::parquet_differential::compare;
use crate::parquet_page_index::{FIXTURES, expected_rows, fixture, oracle, read, rows_of};

/// `1600 <= id < 1700`: a few pages of row group 1 only.
fn preds() -> Vec<Predicate> {
    let p = |op, v| Predicate {
        column: "id".into(),
        op,
        value: Scalar::Int(v),
    };
    vec![p(CmpOp::Ge, 1600), p(CmpOp::Lt, 1700)]
}

fn tmp(name: &str, tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "warpread-pqidx-{}-{tag}-{name}",
        std::process::id()
    ))
}

/// A copy whose page index and footer are written anew from the metadata
/// (loaded with its page index) after `f` changed it.
fn with_index(
    src: &Path,
    tag: &str,
    f: impl FnOnce(ParquetMetaData) -> ParquetMetaData,
) -> PathBuf {
    let bytes = std::fs::read(src).unwrap();
    let meta = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Required)
        .parse_and_finish(&File::open(src).unwrap())
        .unwrap();
    // The indexes lie between the last data page and the footer.
    let start = meta
        .row_groups()
        .iter()
        .flat_map(|rg| rg.columns())
        .flat_map(|c| [c.column_index_offset(), c.offset_index_offset()])
        .flatten()
        .min()
        .unwrap() as usize;
    let meta = f(meta);
    let mut out = Vec::new();
    let mut w = TrackedWrite::new(&mut out);
    w.write_all(&bytes[..start]).unwrap();
    ParquetMetaDataWriter::new_with_tracked(w, &meta)
        .finish()
        .unwrap();
    let path = tmp(src.file_name().unwrap().to_str().unwrap(), tag);
    std::fs::write(&path, out).unwrap();
    path
}

/// A copy whose footer alone is written anew after `f` changed it (the
/// index bytes stay where they are).
fn with_footer(
    src: &Path,
    tag: &str,
    f: impl FnOnce(ParquetMetaData) -> ParquetMetaData,
) -> PathBuf {
    let bytes = std::fs::read(src).unwrap();
    let meta = ParquetMetaDataReader::new()
        .parse_and_finish(&File::open(src).unwrap())
        .unwrap();
    let footer = u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap());
    let mut out = bytes[..bytes.len() - 8 - footer as usize].to_vec();
    ParquetMetaDataWriter::new(&mut out, &f(meta))
        .finish()
        .unwrap();
    let path = tmp(src.file_name().unwrap().to_str().unwrap(), tag);
    std::fs::write(&path, out).unwrap();
    path
}

/// A copy with `len` bytes at `at` overwritten by `byte`.
fn with_bytes(src: &Path, tag: &str, at: u64, len: u64, byte: u8) -> PathBuf {
    let mut bytes = std::fs::read(src).unwrap();
    bytes[at as usize..(at + len) as usize].fill(byte);
    let path = tmp(src.file_name().unwrap().to_str().unwrap(), tag);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Changes the OffsetIndex of `id` (leaf 0) in row group 1.
fn id_offsets(
    f: impl Fn(&mut Vec<parquet::file::page_index::offset_index::PageLocation>),
) -> impl FnOnce(ParquetMetaData) -> ParquetMetaData {
    move |meta| {
        let mut oi = meta.offset_index().unwrap().clone();
        f(&mut oi[1][0].page_locations);
        meta.into_builder().set_offset_index(Some(oi)).build()
    }
}

/// Changes column chunk `id` of row group 1 in the footer.
fn id_chunk(
    f: impl Fn(
        parquet::file::metadata::ColumnChunkMetaDataBuilder,
    ) -> parquet::file::metadata::ColumnChunkMetaDataBuilder,
) -> impl FnOnce(ParquetMetaData) -> ParquetMetaData {
    move |meta| {
        let mut b = meta.clone().into_builder();
        let groups = b.take_row_groups();
        let groups = groups
            .into_iter()
            .enumerate()
            .map(|(g, rg)| {
                if g != 1 {
                    return rg;
                }
                let mut rb = rg.into_builder();
                let mut cols = rb.take_columns();
                cols[0] = f(cols[0].clone().into_builder()).build().unwrap();
                rb.set_column_metadata(cols).build().unwrap()
            })
            .collect();
        b.set_row_groups(groups).build()
    }
}

#[test]
fn damaged_page_indexes_fall_back_to_whole_row_groups() {
    for name in FIXTURES {
        let path = fixture(name);
        let o = oracle(&path);
        let whole: Vec<u64> = (1500..3000).collect();
        // The undamaged file, and a faithful rewrite of it, prune.
        let pruned = expected_rows(&o.meta, &preds());
        assert!(pruned.len() < 600, "{name}: {} rows kept", pruned.len());
        let same = with_index(&path, "same", |m| m);
        for p in [&path, &same] {
            let (schema, got, stats) = read(p, &preds(), None, 1000);
            let want = rows_of(&o, &pruned, None);
            assert!(
                compare(&schema, &got, &want.schema(), &want).is_none(),
                "{}",
                p.display()
            );
            assert!(stats.pages_skipped > 0);
        }
        std::fs::remove_file(&same).ok();
        let id = &o.meta.row_group(1).columns()[0];
        let (ci_at, ci_len) = (
            id.column_index_offset().unwrap() as u64,
            id.column_index_length().unwrap() as u64,
        );
        let (oi_at, oi_len) = (
            id.offset_index_offset().unwrap() as u64,
            id.offset_index_length().unwrap() as u64,
        );
        let damaged = [
            (
                "first rows not increasing",
                with_index(
                    &path,
                    "order",
                    id_offsets(|l| l[3].first_row_index = l[2].first_row_index),
                ),
            ),
            (
                "first row past the row group",
                with_index(
                    &path,
                    "past",
                    id_offsets(|l| l.last_mut().unwrap().first_row_index = 5000),
                ),
            ),
            (
                "first row not 0",
                with_index(&path, "first", id_offsets(|l| l[0].first_row_index = 3)),
            ),
            (
                "a page missing",
                with_index(
                    &path,
                    "count",
                    id_offsets(|l| {
                        l.pop();
                    }),
                ),
            ),
            (
                "ColumnIndex past the file",
                with_footer(
                    &path,
                    "cilen",
                    id_chunk(|b| b.set_column_index_length(Some(i32::MAX))),
                ),
            ),
            (
                "negative OffsetIndex offset",
                with_footer(
                    &path,
                    "oineg",
                    id_chunk(|b| b.set_offset_index_offset(Some(-77))),
                ),
            ),
            (
                "ColumnIndex bytes garbage",
                with_bytes(&path, "cigarbage", ci_at, ci_len, 0xff),
            ),
            (
                "OffsetIndex bytes zeroed",
                with_bytes(&path, "oizero", oi_at, oi_len, 0),
            ),
        ];
        for (what, p) in damaged {
            let (schema, got, stats) = read(&p, &preds(), None, 1000);
            let want = rows_of(&o, &whole, None);
            if let Some(d) = compare(&schema, &got, &want.schema(), &want) {
                panic!("{name}, {what}: {d}");
            }
            assert_eq!(stats.pages_skipped, 0, "{name}, {what}");
            std::fs::remove_file(&p).ok();
        }
    }
}

#[test]
fn page_locations_are_not_trusted() {
    // Page offsets and sizes far outside the file: pages are found by the
    // page walk, so pruning is unchanged.
    for name in FIXTURES {
        let path = fixture(name);
        let o = oracle(&path);
        let p = with_index(&path, "locs", |meta| {
            let mut oi = meta.offset_index().unwrap().clone();
            for chunk in &mut oi[1] {
                for l in &mut chunk.page_locations {
                    l.offset = 1 << 40;
                    l.compressed_page_size = 7;
                }
            }
            meta.into_builder().set_offset_index(Some(oi)).build()
        });
        let (schema, got, stats) = read(&p, &preds(), None, 1000);
        let want = rows_of(&o, &expected_rows(&o.meta, &preds()), None);
        assert!(
            compare(&schema, &got, &want.schema(), &want).is_none(),
            "{name}"
        );
        assert!(stats.pages_skipped > 0);
        std::fs::remove_file(&p).ok();
    }
}

#[test]
fn a_wrong_but_well_formed_index_still_gives_real_rows() {
    // First rows moved (still increasing from 0): the index now names the
    // wrong rows for some pages. Whatever is kept must be whole real rows
    // in order; `id` is the row number, so it names each returned row.
    for name in FIXTURES {
        let path = fixture(name);
        let o = oracle(&path);
        for (tag, shift) in [("plus", 37i64), ("minus", -37)] {
            let p = with_index(
                &path,
                tag,
                id_offsets(move |l| {
                    for loc in l.iter_mut().skip(1) {
                        loc.first_row_index += shift;
                    }
                }),
            );
            let (schema, got, _) = read(&p, &preds(), None, 1000);
            let ids = got.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            let rows: Vec<u64> = ids.values().iter().map(|&i| i as u64).collect();
            assert!(rows.windows(2).all(|w| w[0] < w[1]), "{name} {tag}: order");
            assert!(!rows.is_empty() && ids.null_count() == 0);
            let want = rows_of(&o, &rows, None);
            assert!(
                compare(&schema, &got, &want.schema(), &want).is_none(),
                "{name} {tag}: rows are not the file's"
            );
            std::fs::remove_file(&p).ok();
        }
    }
}
