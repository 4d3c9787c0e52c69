//! Page skipping in the page walk: of a flat column chunk's walked pages,
//! the dictionary page and the data pages holding kept rows go on to
//! decompression and decoding; the others are dropped here. Row positions
//! come from the pages' own headers (a flat column's level count is its
//! row count), not from the OffsetIndex, so a lying index can skip the
//! wrong pages but never shift rows.

use super::page_header::PageKind;
use super::pages::RawPage;
use super::row_ranges::RowRanges;
use crate::error::{Error, Location, Result};

/// Keeps, of `pages` (the walked pages of a column chunk without
/// repetition, in a row group of `rows` rows), the non-data pages and the
/// data pages whose rows overlap `kept`. Returns the rows the kept data
/// pages hold and how many data pages were dropped.
pub fn select(
    pages: &mut Vec<RawPage>,
    kept: &RowRanges,
    rows: u64,
    at: &Location,
) -> Result<(RowRanges, u64)> {
    let (mut first, mut skipped) = (0u64, 0u64);
    let mut held = Vec::new();
    let mut out = Vec::with_capacity(pages.len());
    for p in pages.drain(..) {
        if !matches!(p.header.kind, PageKind::Data | PageKind::DataV2) {
            out.push(p);
            continue;
        }
        // The page walk refused negative counts.
        let r = first..first + p.header.num_values.max(0) as u64;
        first = r.end;
        if kept.overlaps(&r) {
            held.push(r);
            out.push(p);
        } else {
            skipped += 1;
        }
    }
    if first != rows {
        return Err(Error::parquet(
            at,
            format!("data pages hold {first} rows, row group has {rows}"),
        ));
    }
    *pages = out;
    Ok((RowRanges::from_sorted(held), skipped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parquet::page_header::PageHeader;

    fn page(kind: PageKind, n: i32, index: usize) -> RawPage {
        RawPage {
            header: PageHeader {
                kind,
                uncompressed_size: 0,
                compressed_size: 0,
                num_values: n,
                encoding: 0,
                num_nulls: 0,
                num_rows: n,
                def_levels_len: 0,
                rep_levels_len: 0,
                is_compressed: true,
                def_level_encoding: 3,
                rep_level_encoding: 3,
                header_len: 0,
            },
            body: 0..0,
            index,
            file_offset: 0,
        }
    }

    #[test]
    fn keeps_the_dictionary_and_overlapping_pages() {
        let mut pages = vec![
            page(PageKind::Dictionary, 5, 0),
            page(PageKind::Data, 100, 1),
            page(PageKind::DataV2, 100, 2),
            page(PageKind::Data, 100, 3),
            page(PageKind::Data, 50, 4),
        ];
        let kept = RowRanges::from_sorted([150..160, 330..340]);
        let (held, skipped) = select(&mut pages, &kept, 350, &Location::default()).unwrap();
        assert_eq!(held, RowRanges::from_sorted([100..200, 300..350]));
        assert_eq!(skipped, 2);
        assert_eq!(
            pages.iter().map(|p| p.index).collect::<Vec<_>>(),
            vec![0, 2, 4]
        );
    }

    #[test]
    fn pages_must_hold_the_row_group() {
        let mut pages = vec![page(PageKind::Data, 100, 0), page(PageKind::Data, 100, 1)];
        let kept = RowRanges::one(0..10);
        let e = select(&mut pages, &kept, 250, &Location::default()).unwrap_err();
        assert!(e.to_string().contains("hold 200 rows"), "{e}");
    }
}
