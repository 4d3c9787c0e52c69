//! Column chunks to pages: reads each chunk's byte range and walks its page
//! headers. Page bodies stay compressed; nothing is decoded here.

use std::ops::Range;

use parquet::file::metadata::ColumnChunkMetaData;

use super::page_header::{self, PageHeader, PageKind};
use crate::error::{Error, Location, Result};

/// Most level entries one page may claim per byte of its uncompressed body
/// (plus a constant): an RLE run of bit width 1 stores 2^31 values in 6
/// bytes, but no writer puts more than a few thousand per byte, and the
/// bound keeps hostile counts from sizing allocations.
const MAX_VALUES_PER_BYTE: u64 = 1 << 13;

/// One page of a column chunk, still compressed.
#[derive(Debug, Clone)]
pub struct RawPage {
    /// The parsed header.
    pub header: PageHeader,
    /// The body within the raw buffer.
    pub body: Range<usize>,
    /// Ordinal within the chunk (dictionary page included).
    pub index: usize,
    /// File offset of the page header.
    pub file_offset: u64,
}

/// A column chunk's pages.
#[derive(Debug, Clone)]
pub struct RawChunk {
    /// The pages (the dictionary page first, if any).
    pub pages: Vec<RawPage>,
    /// Where the chunk is, for messages.
    pub location: Location,
}

/// A column chunk's start and size as the footer states them (the
/// dictionary page, if any, else the first data page), unchecked.
pub fn raw_range(cc: &ColumnChunkMetaData) -> (i64, i64) {
    (
        cc.dictionary_page_offset().unwrap_or(cc.data_page_offset()),
        cc.compressed_size(),
    )
}

/// [`raw_range`] as file offsets: `None` when the footer gives a negative
/// offset or size (the parquet crate's own `byte_range` panics on those,
/// and footers come from untrusted files).
pub fn chunk_range(cc: &ColumnChunkMetaData) -> Option<(u64, u64)> {
    let (start, len) = raw_range(cc);
    Some((u64::try_from(start).ok()?, u64::try_from(len).ok()?))
}

/// [`chunk_range`], or an error naming the chunk.
pub fn checked_range(cc: &ColumnChunkMetaData, at: &Location) -> Result<(u64, u64)> {
    chunk_range(cc).ok_or_else(|| {
        let (start, len) = raw_range(cc);
        Error::parquet(
            at,
            format!("column chunk with a negative offset or size (offset {start}, {len} bytes)"),
        )
    })
}

/// Walks the page headers of a column chunk's bytes `chunk`, which lie at
/// `base` of the raw buffer and at `start` of the file.
pub fn walk(
    chunk: &[u8],
    base: usize,
    start: u64,
    cc: &ColumnChunkMetaData,
    at: &Location,
) -> Result<Vec<RawPage>> {
    let want = u64::try_from(cc.num_values()).unwrap_or(0);
    let (mut pos, mut seen, mut pages) = (0usize, 0u64, Vec::new());
    while pos < chunk.len() && (seen < want || pages.is_empty()) {
        let index = pages.len();
        let page_at = at.clone().with_page(index as u64).at(start + pos as u64);
        let header = page_header::parse_page_header(&chunk[pos..])
            .map_err(|m| Error::parquet(&page_at, format!("bad page header: {m}")))?;
        let body_start = pos + header.header_len;
        let body_end = body_start + header.compressed_size as usize;
        if body_end > chunk.len() {
            return Err(Error::parquet(
                &page_at,
                format!(
                    "page of {} bytes runs past its column chunk ({} bytes)",
                    header.compressed_size,
                    chunk.len()
                ),
            ));
        }
        let bytes = header.uncompressed_size.max(header.compressed_size) as u64;
        if header.num_values < 0 || header.num_values as u64 > (bytes + 64) * MAX_VALUES_PER_BYTE {
            return Err(Error::parquet(
                &page_at,
                format!("page claims {} values in {bytes} bytes", header.num_values),
            ));
        }
        match header.kind {
            PageKind::Data | PageKind::DataV2 => seen += header.num_values as u64,
            PageKind::Dictionary if index != 0 => {
                return Err(Error::parquet(
                    &page_at,
                    "dictionary page after the first page of a column chunk",
                ));
            }
            _ => {}
        }
        pages.push(RawPage {
            header,
            body: base + body_start..base + body_end,
            index,
            file_offset: start + pos as u64,
        });
        pos = body_end;
    }
    if seen < want {
        return Err(Error::parquet(
            at,
            format!("column chunk pages hold {seen} values, metadata says {want}"),
        ));
    }
    Ok(pages)
}
