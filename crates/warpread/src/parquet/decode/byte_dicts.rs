//! Byte-array dictionary chunks gathered by stages rather than on the
//! host: which chunks qualify, and the two stages
//! (`ParquetOp::ByteDictOffsets`, `ParquetOp::ByteDictData`) over a buffer
//! of their dictionaries and index sections.

use std::ops::Range;

use arrow::buffer::Buffer;
use rayon::prelude::*;

use super::{Dict, LeafInfo, PLAIN_DICTIONARY, RLE_DICTIONARY, Work};
use crate::codecs::parquet_dict::bytes as dict_bytes;
use crate::error::Result;
use crate::exec::Backend;
use crate::exec::batch::{RequestId, StageBatch};
use crate::parquet::decompress::Pages;
use crate::parquet::page_header::PageKind;
use crate::plan::{MAX_CHUNK_INPUT, ParquetOp, StageOp};
use crate::read::ReadTuning;

/// Whether byte-array dictionary pages are gathered by stages
/// (`ParquetOp::ByteDictOffsets`, `ByteDictData`) rather than on the host:
/// as [`ReadTuning::device_byte_dicts`] says, else where the pages lie on
/// the device.
fn byte_dicts_by_stage(backend: &dyn Backend, buf: &[u8], tuning: &ReadTuning) -> bool {
    tuning
        .device_byte_dicts
        .unwrap_or_else(|| backend.holds_on_device(buf))
}

/// Most values of a chunk gathered by the byte dictionary stages: one warp
/// walks a chunk's pages in order, so a long chunk keeps one warp busy for
/// milliseconds while the host's gather splits it across cores. Measured
/// on the H100 host: TPC-H SF 10's chunks of 262K values read faster
/// staged (12.9 to 16.5 against 10.1 to 13.1 GB/s); the NYC taxi sample
/// x16, whose one staged chunk had 517K values (a limit of 512Ki), slower
/// (8.1 to 9.2 against 9.5 to 11.8 GB/s).
const MAX_STAGED_VALUES: u64 = 256 * 1024;

/// Per chunk, whether its byte dictionary pages are gathered by stages:
/// a byte-array chunk with a dictionary whose data pages are all
/// dictionary-encoded, of at most [`MAX_STAGED_VALUES`] values, whose
/// gathered bytes surely fit 32-bit offsets (at
/// most the dictionary page's bytes per value) and whose job input fits a
/// job. Decided before the dictionary is decoded, from its page's size.
pub(super) fn staged_byte_dicts(
    works: &[Work],
    infos: &[LeafInfo],
    dict_data: &[Option<(RequestId, RequestId)>],
    pages: &Pages,
    backend: &dyn Backend,
    tuning: &ReadTuning,
) -> Vec<bool> {
    let mut staged = vec![false; infos.len()];
    if !byte_dicts_by_stage(backend, &pages.buf, tuning) {
        return staged;
    }
    // (values, bytes of the pages' sections and headers, all dictionary-encoded)
    let mut per: Vec<(u64, u64, bool)> = vec![(0, 0, true); infos.len()];
    for w in works {
        let p = &pages.chunks[w.chunk][w.page];
        let e = &mut per[w.chunk];
        e.0 += w.n as u64;
        e.1 += 11 + w.values.len() as u64;
        e.2 &= matches!(p.header.encoding, PLAIN_DICTIONARY | RLE_DICTIONARY);
    }
    for (c, s) in staged.iter_mut().enumerate() {
        let (values, sections, all_dict) = per[c];
        let dict_page = pages.chunks[c]
            .iter()
            .find(|p| p.header.kind == PageKind::Dictionary);
        let Some(dict_page) = dict_page else {
            continue;
        };
        let dict_len = dict_page.data.len() as u64;
        *s = infos[c].is_bytes()
            && dict_data[c].is_some()
            && all_dict
            && values > 0
            && values <= MAX_STAGED_VALUES
            && values.saturating_mul(dict_len) <= i32::MAX as u64
            && 15 + 2 * dict_len + sections <= MAX_CHUNK_INPUT;
    }
    staged
}

/// Gathers the staged byte-array chunks (`staged`): one job per chunk over
/// a buffer written here (its dictionary, then its pages' index sections),
/// offsets first, then the bytes the last offset sizes. Per chunk, its
/// offsets and bytes.
pub(super) fn run_byte_dicts(
    works: &[Work],
    staged: &[bool],
    dicts: &[Option<Dict<'_>>],
    pages: &Pages,
    backend: &dyn Backend,
) -> Result<Vec<Option<(Buffer, Buffer)>>> {
    let mut out: Vec<Option<(Buffer, Buffer)>> = vec![None; staged.len()];
    if !staged.iter().any(|&s| s) {
        return Ok(out);
    }
    let buf = &pages.buf[..];
    let byte_dict = |c: usize| match &dicts[c] {
        Some(Dict::Bytes(d)) => d,
        _ => unreachable!("staged chunks have byte dictionaries"),
    };
    // Each staged chunk's works and where its job lies in the input.
    let mut jobs: Vec<(usize, &[Work], Range<usize>)> = Vec::new();
    let mut len = 0usize;
    for ws in works.chunk_by(|a, b| a.chunk == b.chunk) {
        let c = ws[0].chunk;
        if !staged[c] {
            continue;
        }
        let d = byte_dict(c);
        let n = dict_bytes::job_len(d.len(), d.data().len(), ws.iter().map(|w| w.values.len()));
        let start = len.next_multiple_of(16);
        jobs.push((c, ws, start..start + n));
        len = start + n;
    }
    let mut src = backend.input_buffer(len)?;
    {
        // Every byte is written: the jobs, and the gaps before them.
        // A gap (`None`) or a chunk's job and works.
        type Slot<'s, 'w> = (&'s mut [u8], Option<(usize, &'w [Work])>);
        let mut slots: Vec<Slot> = Vec::new();
        let mut rest = &mut src[..];
        let mut at = 0;
        for (c, ws, r) in &jobs {
            let (gap, tail) = std::mem::take(&mut rest).split_at_mut(r.start - at);
            let (job, tail) = tail.split_at_mut(r.len());
            slots.push((gap, None));
            slots.push((job, Some((*c, *ws))));
            rest = tail;
            at = r.end;
        }
        slots.into_par_iter().for_each(|(dst, job)| match job {
            None => dst.fill(0),
            Some((c, ws)) => {
                let d = byte_dict(c);
                let sections = ws.iter().map(|w| (w.n as u32, &buf[w.values.clone()]));
                dict_bytes::write_job(dst, d.offsets(), d.data(), sections);
            }
        });
    }
    let at = |ws: &[Work]| pages.chunks[ws[0].chunk][ws[0].page].location.clone();
    let mut first = StageBatch::new(&src);
    let ids: Vec<RequestId> = jobs
        .iter()
        .map(|(_, ws, r)| {
            let n: u64 = ws.iter().map(|w| w.n as u64).sum();
            first.add(
                StageOp::Parquet(ParquetOp::ByteDictOffsets),
                r.clone(),
                n + 1,
                at(ws),
            )
        })
        .collect();
    let ends = first.run(backend)?;
    let mut second = StageBatch::new(&src);
    let data_ids: Vec<RequestId> = jobs
        .iter()
        .zip(&ids)
        .map(|((_, ws, r), &id)| {
            let total = ends.typed::<u32>(id).last().copied().unwrap_or(0);
            second.add(
                StageOp::Parquet(ParquetOp::ByteDictData),
                r.clone(),
                u64::from(total),
                at(ws),
            )
        })
        .collect();
    let bytes = second.run(backend)?;
    for (((c, _, _), id), did) in jobs.iter().zip(ids).zip(data_ids) {
        out[*c] = Some((ends.buffer(id), bytes.buffer(did)));
    }
    Ok(out)
}
