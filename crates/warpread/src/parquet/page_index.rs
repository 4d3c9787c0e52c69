//! The page index of one row group (parquet-format's `PageIndex.md`: a
//! ColumnIndex with each page's min, max and null flag, an OffsetIndex with
//! each page's location and first row) and the rows of the row group the
//! predicates may match by it.
//!
//! The index is loaded only for reads with predicates, only for row groups
//! whose predicate columns point at one. Its bytes are read through
//! [`Source`] (bounds-checked) and decoded by the parquet crate's
//! `ParquetMetaDataPushDecoder` (inside `catch_unwind`: third-party code on
//! hostile bytes), fed a footer of this one row group so that it asks for
//! this row group's index only. The index is optional metadata, so a
//! damaged one (undecodable, out of the file, a page count that disagrees
//! with the ColumnIndex, first rows not increasing from 0 within the row
//! group) is not an error: the row group is read without page pruning and
//! a warning names it.

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};

use bytes::Bytes;
use parquet::DecodeResult;
use parquet::file::metadata::{
    PageIndexPolicy, ParquetMetaData, ParquetMetaDataBuilder, ParquetMetaDataPushDecoder,
};
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::page_index::offset_index::OffsetIndexMetaData;

use super::predicate;
use super::row_ranges::RowRanges;
use crate::error::Location;
use crate::read::Predicate;
use crate::source::Source;

/// Most index bytes one row group may have read per pass: a hostile footer
/// must not have the whole file read once per row group.
const MAX_INDEX_BYTES: u64 = 64 << 20;

/// The page index of one row group, per leaf column of the file.
#[derive(Debug)]
pub struct RowGroupIndex {
    /// ColumnIndex of the predicate columns (`NONE` for the others and
    /// where the file has none).
    pub columns: Vec<ColumnIndexMetaData>,
    /// OffsetIndex of every column (the decoder wants every column's).
    pub offsets: Vec<OffsetIndexMetaData>,
}

/// What page pruning keeps of one row group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The rows that may match, a strict subset of the row group's.
    pub rows: RowRanges,
    /// Data pages of the projected leaf columns, by their OffsetIndex: all
    /// skipped when `rows` is empty.
    pub pages: u64,
}

/// Page pruning of row group `g`: `None` when it keeps every row, or when
/// the row group has no usable page index (a damaged one is logged).
/// `preds` pairs each predicate with its flat leaf column; `leaves` are the
/// projected leaf columns.
pub fn plan(
    src: &Source,
    meta: &ParquetMetaData,
    g: usize,
    preds: &[(&Predicate, usize)],
    leaves: &[usize],
    at: &Location,
) -> Option<Kept> {
    let rows = u64::try_from(meta.row_group(g).num_rows()).ok()?;
    if preds.is_empty() || rows == 0 {
        return None;
    }
    let stats: Vec<usize> = preds.iter().map(|&(_, c)| c).collect();
    let decided = load(src, meta, g, &stats).and_then(|index| {
        let Some(index) = index else {
            return Ok(None);
        };
        let descr = meta.file_metadata().schema_descr();
        let mut kept = RowRanges::all(rows);
        for &(p, c) in preds {
            let column = descr.column(c);
            let pages = page_rows(&index, c, rows)
                .map_err(|m| format!("column {}: {m}", column.path().string()))?;
            let Some(pages) = pages else { continue };
            let ci = &index.columns[c];
            let may = RowRanges::from_sorted(
                pages
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| predicate::may_match_page(p, &column, ci, *i))
                    .map(|(_, r)| r),
            );
            kept = kept.intersect(&may);
        }
        let pages = leaves
            .iter()
            .filter_map(|&c| index.offsets.get(c))
            .map(|o| o.page_locations().len() as u64)
            .sum();
        Ok((kept.rows() < rows).then_some(Kept { rows: kept, pages }))
    });
    decided.unwrap_or_else(|m| {
        tracing::warn!("{at}: page index not used: {m}");
        None
    })
}

/// The row ranges of a predicate column's pages by its OffsetIndex, or
/// `None` when it has no ColumnIndex to prune with. Fails when the two
/// disagree on the page count or the first rows do not go up from 0 within
/// the row group.
fn page_rows(
    index: &RowGroupIndex,
    c: usize,
    rows: u64,
) -> Result<Option<Vec<Range<u64>>>, String> {
    let ci = index.columns.get(c).unwrap_or(&ColumnIndexMetaData::NONE);
    if matches!(ci, ColumnIndexMetaData::NONE) {
        return Ok(None);
    }
    let locs = index
        .offsets
        .get(c)
        .ok_or("no OffsetIndex")?
        .page_locations();
    if ci.num_pages() != locs.len() as u64 {
        return Err(format!(
            "ColumnIndex has {} pages, OffsetIndex {}",
            ci.num_pages(),
            locs.len()
        ));
    }
    let mut firsts = Vec::with_capacity(locs.len());
    for (i, l) in locs.iter().enumerate() {
        let first = u64::try_from(l.first_row_index)
            .ok()
            .filter(|&f| {
                f < rows
                    && (if i == 0 {
                        f == 0
                    } else {
                        Some(&f) > firsts.last()
                    })
            })
            .ok_or_else(|| {
                format!(
                    "page {i} starts at row {} (row group of {rows} rows, previous page at {:?})",
                    l.first_row_index,
                    firsts.last()
                )
            })?;
        firsts.push(first);
    }
    let ends = firsts.iter().skip(1).copied().chain([rows]);
    Ok(Some(firsts.iter().zip(ends).map(|(&s, e)| s..e).collect()))
}

/// Loads the page index of row group `g`: the ColumnIndex of the `stats`
/// columns and every OffsetIndex. `None` when no `stats` column has both.
fn load(
    src: &Source,
    meta: &ParquetMetaData,
    g: usize,
    stats: &[usize],
) -> Result<Option<RowGroupIndex>, String> {
    let rg = meta.row_group(g);
    let has = |c: usize| {
        rg.columns().get(c).is_some_and(|cc| {
            cc.column_index_offset().is_some() && cc.offset_index_offset().is_some()
        })
    };
    if !stats.iter().any(|&c| has(c)) {
        return Ok(None);
    }
    // Two passes, each over one contiguous range: writers put all
    // ColumnIndexes of the file before all OffsetIndexes, so one range
    // covering both of a row group would span the indexes of others.
    let names = || {
        let descr = meta.file_metadata().schema_descr();
        stats
            .iter()
            .map(|&c| descr.column(c).path().string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let columns = decode(src, one_row_group(meta, g, Some(stats))?, true)
        .map_err(|m| format!("ColumnIndex of {}: {m}", names()))?
        .column_index()
        .and_then(|v| v.first().cloned())
        .unwrap_or_default();
    let offsets = decode(src, one_row_group(meta, g, None)?, false)
        .map_err(|m| format!("OffsetIndex: {m}"))?
        .offset_index()
        .and_then(|v| v.first().cloned())
        .ok_or("no OffsetIndex")?;
    if offsets.len() != rg.columns().len() {
        return Err(format!(
            "{} OffsetIndexes for {} columns",
            offsets.len(),
            rg.columns().len()
        ));
    }
    Ok(Some(RowGroupIndex { columns, offsets }))
}

/// A footer holding only row group `g`; with `stats`, only those columns
/// keep their ColumnIndex (the decoder then asks for those alone).
fn one_row_group(
    meta: &ParquetMetaData,
    g: usize,
    stats: Option<&[usize]>,
) -> Result<ParquetMetaData, String> {
    let mut rg = meta.row_group(g).clone().into_builder();
    let columns = rg
        .take_columns()
        .into_iter()
        .enumerate()
        .map(|(c, cc)| match stats {
            Some(s) if !s.contains(&c) => cc
                .into_builder()
                .set_column_index_offset(None)
                .set_column_index_length(None)
                .build()
                .map_err(|e| e.to_string()),
            _ => Ok(cc),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let rg = rg
        .set_column_metadata(columns)
        .build()
        .map_err(|e| e.to_string())?;
    Ok(ParquetMetaDataBuilder::new(meta.file_metadata().clone())
        .add_row_group(rg)
        .build())
}

/// Runs the parquet crate's decoder over `meta`'s ColumnIndexes
/// (`column`) or OffsetIndexes, reading the range it asks for.
fn decode(src: &Source, meta: ParquetMetaData, column: bool) -> Result<ParquetMetaData, String> {
    let (ci, oi) = if column {
        (PageIndexPolicy::Required, PageIndexPolicy::Skip)
    } else {
        (PageIndexPolicy::Skip, PageIndexPolicy::Required)
    };
    let run = || -> Result<ParquetMetaData, String> {
        let mut decoder = ParquetMetaDataPushDecoder::try_new_with_metadata(src.len(), meta)
            .map_err(|e| e.to_string())?
            .with_column_index_policy(ci)
            .with_offset_index_policy(oi);
        // One range is asked for, then the answer comes: a bounded loop in
        // case a decoder keeps asking.
        for _ in 0..3 {
            match decoder.try_decode().map_err(|e| e.to_string())? {
                DecodeResult::Data(m) => return Ok(m),
                DecodeResult::NeedsData(ranges) => {
                    for r in ranges {
                        let len = r.end.saturating_sub(r.start);
                        if len > MAX_INDEX_BYTES {
                            return Err(format!(
                                "{len} bytes at {} (more than {MAX_INDEX_BYTES})",
                                r.start
                            ));
                        }
                        let mut buf = Vec::new();
                        let at = Location::file(src.path());
                        src.read_into(r.start, len, &mut buf, &at)
                            .map_err(|e| e.to_string())?;
                        decoder
                            .push_range(r, Bytes::from(buf))
                            .map_err(|e| e.to_string())?;
                    }
                }
                DecodeResult::Finished => break,
            }
        }
        Err("the decoder gave no index".into())
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|_| Err("index decoder panicked".into()))
}

/// What the page index says about one column chunk (for `inspect`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageIndexColumn {
    /// Data pages (OffsetIndex entries).
    pub pages: usize,
    /// Fewest and most rows in one page, by the first rows.
    pub rows_per_page: (u64, u64),
    /// Whether the chunk has a ColumnIndex (per-page min and max).
    pub has_column_index: bool,
    /// Pages the ColumnIndex marks as all nulls.
    pub null_pages: usize,
}

/// Per column of row group `g`, its page index; `None` when the row group
/// has none, an error message when it is damaged.
pub fn summary(
    src: &Source,
    meta: &ParquetMetaData,
    g: usize,
) -> Result<Option<Vec<PageIndexColumn>>, String> {
    let rg = meta.row_group(g);
    let all: Vec<usize> = (0..rg.columns().len()).collect();
    let Some(index) = load(src, meta, g, &all)? else {
        return Ok(None);
    };
    let rows = u64::try_from(rg.num_rows()).unwrap_or(0);
    Ok(Some(
        index
            .offsets
            .iter()
            .zip(&index.columns)
            .map(|(oi, ci)| {
                let locs = oi.page_locations();
                let firsts = locs.iter().map(|l| l.first_row_index.max(0) as u64);
                let sizes = firsts
                    .clone()
                    .zip(firsts.skip(1).chain([rows]))
                    .map(|(s, e)| e.saturating_sub(s));
                let has = !matches!(ci, ColumnIndexMetaData::NONE);
                PageIndexColumn {
                    pages: locs.len(),
                    rows_per_page: (sizes.clone().min().unwrap_or(0), sizes.max().unwrap_or(0)),
                    has_column_index: has,
                    null_pages: if has {
                        (0..ci.num_pages() as usize)
                            .filter(|&i| ci.is_null_page(i))
                            .count()
                    } else {
                        0
                    },
                }
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{CmpOp, Scalar};
    use std::path::PathBuf;

    /// The gzip page-index fixture: 4 row groups of 1500 rows; leaf 0 `id`
    /// (0..6000, sorted), leaf 6 `sparse` (values in each row group's first
    /// 600 rows, then one page of nulls).
    fn fixture() -> (Source, ParquetMetaData) {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/parquet/page_index_gzip_v1.parquet");
        let file = crate::parquet::ParquetFile::open(&path).unwrap();
        (
            Source::open(&path, "Parquet").unwrap(),
            file.metadata().clone(),
        )
    }

    fn pred(column: &str, op: CmpOp, v: i64) -> Predicate {
        Predicate {
            column: column.into(),
            op,
            value: Scalar::Int(v),
        }
    }

    fn firsts(index: &RowGroupIndex, c: usize) -> Vec<u64> {
        index.offsets[c]
            .page_locations()
            .iter()
            .map(|l| l.first_row_index as u64)
            .collect()
    }

    #[test]
    fn keeps_the_pages_whose_min_max_may_match() {
        let (src, meta) = fixture();
        let at = Location::default();
        let index = load(&src, &meta, 1, &[0]).unwrap().unwrap();
        let f = firsts(&index, 0);
        assert!(f.len() > 4, "{f:?}");
        // Row group 1 holds ids 1500..3000: `id < 1500 + f[2]` is the first
        // two pages of `id`.
        let p = pred("id", CmpOp::Lt, 1500 + f[2] as i64);
        let kept = plan(&src, &meta, 1, &[(&p, 0)], &[0, 3], &at).unwrap();
        assert_eq!(kept.rows, RowRanges::one(0..f[2]));
        let name_pages = index.offsets[3].page_locations().len() as u64;
        assert_eq!(kept.pages, f.len() as u64 + name_pages);
        // `=` keeps the one page holding the value; `>=` the tail.
        let p = pred("id", CmpOp::Eq, 1500 + f[3] as i64 + 1);
        let kept = plan(&src, &meta, 1, &[(&p, 0)], &[0], &at).unwrap();
        assert_eq!(kept.rows, RowRanges::one(f[3]..f[4]));
        let p = pred("id", CmpOp::Ge, 1500 + f[4] as i64);
        let kept = plan(&src, &meta, 1, &[(&p, 0)], &[0], &at).unwrap();
        assert_eq!(kept.rows, RowRanges::one(f[4]..1500));
        // Two predicates: the intersection.
        let (a, b) = (
            pred("id", CmpOp::Ge, 1500 + f[1] as i64),
            pred("id", CmpOp::Le, 1500 + f[3] as i64 - 1),
        );
        let kept = plan(&src, &meta, 1, &[(&a, 0), (&b, 0)], &[0], &at).unwrap();
        assert_eq!(kept.rows, RowRanges::one(f[1]..f[3]));
        // Nothing to gain: no plan.
        let p = pred("id", CmpOp::Ge, 0);
        assert_eq!(plan(&src, &meta, 1, &[(&p, 0)], &[0], &at), None);
        assert_eq!(plan(&src, &meta, 1, &[], &[0], &at), None);
        // Ruled out entirely: an empty plan.
        let p = pred("id", CmpOp::Gt, 10_000);
        let kept = plan(&src, &meta, 1, &[(&p, 0)], &[0], &at).unwrap();
        assert!(kept.rows.is_empty());
    }

    #[test]
    fn pages_of_nulls_never_match() {
        let (src, meta) = fixture();
        let index = load(&src, &meta, 2, &[6]).unwrap().unwrap();
        let f = firsts(&index, 6);
        let last = f.len() - 1;
        assert!(index.columns[6].is_null_page(last));
        assert!((0..last).all(|i| !index.columns[6].is_null_page(i)));
        let p = pred("sparse", CmpOp::Ge, i64::MIN);
        let kept = plan(&src, &meta, 2, &[(&p, 6)], &[6], &Location::default()).unwrap();
        assert_eq!(kept.rows, RowRanges::one(0..f[last]));
    }

    #[test]
    fn a_damaged_offset_index_is_refused() {
        let (src, meta) = fixture();
        let good = load(&src, &meta, 0, &[0]).unwrap().unwrap();
        assert_eq!(
            page_rows(&good, 0, 1500).unwrap().unwrap().len(),
            firsts(&good, 0).len()
        );
        // Not yet loaded: no ColumnIndex, nothing to check.
        assert_eq!(page_rows(&good, 3, 1500), Ok(None));
        let damaged =
            |f: &dyn Fn(&mut Vec<parquet::file::page_index::offset_index::PageLocation>)| {
                let mut index = RowGroupIndex {
                    columns: good.columns.clone(),
                    offsets: good.offsets.clone(),
                };
                f(&mut index.offsets[0].page_locations);
                page_rows(&index, 0, 1500)
            };
        assert!(damaged(&|l| l[0].first_row_index = 1).is_err());
        assert!(damaged(&|l| l[2].first_row_index = l[1].first_row_index).is_err());
        assert!(damaged(&|l| l[2].first_row_index = -5).is_err());
        assert!(damaged(&|l| l.last_mut().unwrap().first_row_index = 1500).is_err());
        assert!(
            damaged(&|l| {
                l.pop();
            })
            .is_err()
        );
    }

    #[test]
    fn index_ranges_outside_the_file_are_errors() {
        let (src, meta) = fixture();
        let mut rg = meta.row_group(0).clone().into_builder();
        let columns = rg
            .take_columns()
            .into_iter()
            .map(|cc| {
                cc.into_builder()
                    .set_column_index_offset(Some(src.len() as i64 - 4))
                    .build()
                    .unwrap()
            })
            .collect();
        let rg = rg.set_column_metadata(columns).build().unwrap();
        let bad = ParquetMetaDataBuilder::new(meta.file_metadata().clone())
            .add_row_group(rg)
            .build();
        let e = load(&src, &bad, 0, &[0]).unwrap_err();
        assert!(e.contains("outside the file"), "{e}");
        let p = pred("id", CmpOp::Lt, 10);
        assert_eq!(
            plan(&src, &bad, 0, &[(&p, 0)], &[0], &Location::default()),
            None
        );
    }
}
