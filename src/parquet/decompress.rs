//! Decompression as one plan stage: every compressed page body of every
//! column chunk in a read group becomes one job (GZIP: one `Inflate` job per
//! gzip member, headers and trailers parsed here; other codecs:
//! `Decompress(codec)` CPU jobs), and the pages are then laid end to end,
//! uncompressed, for the decode rounds.

use std::ops::Range;

use parquet::basic::Compression;
use rayon::prelude::*;

use super::gzip;
use super::page_header::{PageHeader, PageKind};
use super::pages::{RawChunk, RawPage};
use crate::error::{Error, Location, Result};
use crate::exec::Backend;
use crate::exec::batch::{RequestId, StageBatch};
use crate::plan::{BlockCodec, StageOp};

/// A page with its body uncompressed.
#[derive(Debug, Clone)]
pub struct Page {
    /// The header.
    pub header: PageHeader,
    /// The uncompressed body (v2: levels then values) in [`Pages::buf`].
    pub data: Range<usize>,
    /// Where the page is, for messages.
    pub location: Location,
}

/// The bytes the uncompressed pages lie in.
#[derive(Debug)]
pub enum PageBytes {
    /// Pieces gathered into one buffer.
    Gathered(Vec<u8>),
    /// The decompression stage's own output, when every page is one job
    /// whose output already follows the previous page's.
    Stage(arrow::buffer::Buffer),
}

impl Default for PageBytes {
    fn default() -> Self {
        Self::Gathered(Vec::new())
    }
}

impl std::ops::Deref for PageBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Self::Gathered(v) => v,
            Self::Stage(b) => b.as_slice(),
        }
    }
}

/// Every page of a read group, uncompressed.
#[derive(Debug, Default)]
pub struct Pages {
    /// The bodies, end to end.
    pub buf: PageBytes,
    /// Per chunk (same order as the input chunks), its pages.
    pub chunks: Vec<Vec<Page>>,
    /// GZIP trailers not checked yet (`run` with `defer_crc`): each page's
    /// range in `buf` and its gzip member.
    pub unchecked: Vec<(Range<usize>, gzip::Member)>,
}

/// Checks the trailers `run` deferred, every page on its own task.
pub fn verify(pages: &Pages) -> bool {
    pages.unchecked.par_iter().all(|(r, m)| check(pages, r, m))
}

/// [`verify`] on `threads` threads of its own rather than rayon's
/// (`exec::threads`): a read off the rayon pool (a column set's thread)
/// checks its pages beside the decode rounds, and queued behind the other
/// sets' rayon work the checks had become the last step of the taxi
/// table's read (44 ms for ~50 MB).
pub fn verify_on_threads(pages: &Pages, threads: usize) -> bool {
    let items: Vec<_> = pages.unchecked.iter().collect();
    crate::exec::threads::map(items, threads, |(r, m)| check(pages, r, m))
        .into_iter()
        .all(|ok| ok)
}

/// [`verify`] where the inflated pages lie on the device (a device mirror:
/// [`Backend::holds_on_device`]): one `Crc32` stage over them in place,
/// each page's CRC32 computed by the device and only the 4-byte sums
/// coming back, against the host's pass over every inflated byte (44 ms
/// of four threads for the taxi table's ~0.6 GB). Sizes are compared
/// first, on the host. A stage that fails counts as a failed check: the
/// caller's strict path then decides.
pub fn verify_on_device(pages: &Pages, backend: &dyn Backend) -> bool {
    if pages
        .unchecked
        .iter()
        .any(|(r, m)| r.len() as u32 != m.isize || r.end > pages.buf.len())
    {
        return false;
    }
    if pages.unchecked.is_empty() {
        return true;
    }
    let mut batch = StageBatch::new(&pages.buf);
    let ids: Vec<RequestId> = pages
        .unchecked
        .iter()
        .map(|(r, _)| batch.add(StageOp::Crc32, r.clone(), 1, Location::default()))
        .collect();
    match batch.run(backend) {
        Ok(out) => ids
            .iter()
            .zip(&pages.unchecked)
            .all(|(&id, (_, m))| out.typed::<u32>(id).first() == Some(&m.crc)),
        Err(e) => {
            tracing::debug!("device CRC32 stage failed ({e}); the strict path decides");
            false
        }
    }
}

/// Set to `0` to check CRC32s on the host even where the pages lie on the
/// device ([`verify_on_device`]): for benchmarks that compare both.
pub const ENV_DEVICE_CRC: &str = "WARPREAD_DEVICE_CRC";

/// Whether [`verify_on_device`] may be used ([`ENV_DEVICE_CRC`]).
pub fn device_crc() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var(ENV_DEVICE_CRC).map_or(true, |v| v != "0"))
}

fn check(pages: &Pages, r: &Range<usize>, m: &gzip::Member) -> bool {
    pages.buf.get(r.clone()).is_some_and(|b| gzip::check(m, b))
}

/// The stage operation of a codec, `None` for UNCOMPRESSED.
pub fn stage_op(codec: Compression, at: &Location) -> Result<Option<StageOp>> {
    Ok(Some(match codec {
        Compression::UNCOMPRESSED => return Ok(None),
        Compression::GZIP(_) => StageOp::Inflate,
        Compression::SNAPPY => StageOp::Decompress(BlockCodec::Snappy),
        Compression::ZSTD(_) => StageOp::Decompress(BlockCodec::Zstd),
        Compression::LZ4_RAW => StageOp::Decompress(BlockCodec::Lz4),
        Compression::LZ4 => StageOp::Decompress(BlockCodec::Lz4Hadoop),
        Compression::BROTLI(_) => StageOp::Decompress(BlockCodec::Brotli),
        Compression::LZO => {
            return Err(Error::Unsupported(format!(
                "{at}: Parquet LZO compression (the parquet crate does not read it either)"
            )));
        }
    }))
}

enum Piece {
    Raw,
    Job {
        id: RequestId,
        expect: usize,
        gzip: Option<(gzip::Member, Range<usize>)>,
    },
    /// Several gzip members decoded in the fallback batch.
    Members(Vec<(RequestId, gzip::Member)>, usize),
}

/// The compressed part of a page body and the uncompressed prefix before
/// it (v2 levels), or `None` when nothing is compressed.
fn split(p: &RawPage, codec: Compression) -> (Range<usize>, Option<(Range<usize>, usize)>) {
    let h = &p.header;
    let body = p.body.clone();
    if codec == Compression::UNCOMPRESSED || matches!(h.kind, PageKind::Index | PageKind::Other(_))
    {
        return (body, None);
    }
    let levels = if h.kind == PageKind::DataV2 {
        (h.def_levels_len.max(0) as usize + h.rep_levels_len.max(0) as usize).min(body.len())
    } else {
        0
    };
    if h.kind == PageKind::DataV2 && !h.is_compressed {
        return (body, None);
    }
    let expect = (h.uncompressed_size as usize).saturating_sub(levels);
    let prefix = body.start..body.start + levels;
    (prefix, Some((body.start + levels..body.end, expect)))
}

/// Decompresses every page of `chunks` (whose bytes are in `raw`).
///
/// With `defer_crc`, a GZIP page whose size matches its header and trailer
/// is taken as one member and its CRC32 is left in [`Pages::unchecked`]
/// for [`verify`], which the reader runs beside the decode rounds (a pass
/// over every inflated byte: on the GPU backend it was 10-15% of a read's
/// wall time). When that check fails, the reader runs this again without
/// `defer_crc`, where a page failing it is inflated member by member or
/// reported.
pub fn run(
    raw: &[u8],
    chunks: &[RawChunk],
    codecs: &[Compression],
    backend: &dyn Backend,
    defer_crc: bool,
) -> Result<Pages> {
    let mut batch = StageBatch::new(raw);
    let mut plan: Vec<Vec<(Range<usize>, Piece, Location)>> = Vec::with_capacity(chunks.len());
    for (chunk, &codec) in chunks.iter().zip(codecs) {
        let op = stage_op(codec, &chunk.location)?;
        let mut pages = Vec::with_capacity(chunk.pages.len());
        for p in &chunk.pages {
            let at = chunk
                .location
                .clone()
                .with_page(p.index as u64)
                .at(p.file_offset);
            let (prefix, rest) = split(p, codec);
            let piece = match (rest, op) {
                (None, _) | (_, None) => Piece::Raw,
                (Some((r, 0)), _) if r.is_empty() => Piece::Raw,
                (Some((r, expect)), Some(StageOp::Inflate)) => {
                    let m = gzip::single_member(&raw[r.clone()])
                        .map_err(|e| Error::parquet(&at, format!("GZIP page: {e}")))?;
                    let body = r.start + m.body.start..r.start + m.body.end;
                    let id = batch.add(StageOp::Inflate, body, expect as u64, at.clone());
                    Piece::Job {
                        id,
                        expect,
                        gzip: Some((m, r)),
                    }
                }
                (Some((r, expect)), Some(op)) => Piece::Job {
                    id: batch.add(op, r, expect as u64, at.clone()),
                    expect,
                    gzip: None,
                },
            };
            pages.push((prefix, piece, at));
        }
        plan.push(pages);
    }
    let span = crate::trace::span("pq.decompress.stage");
    let out = batch.run(backend)?;
    drop(span);
    let span = crate::trace::span("pq.trailer_checks");

    // Each GZIP page's size against its header and trailer, and (unless
    // deferred) its CRC32: a pass over every inflated byte, so one task per
    // page (serial, it cost as much as the GPU inflate of the whole group).
    let whole: Vec<Vec<bool>> = plan
        .par_iter()
        .map(|pages| {
            pages
                .par_iter()
                .map(|(_, piece, _)| match piece {
                    Piece::Job {
                        id,
                        expect,
                        gzip: Some((m, _)),
                    } => {
                        let produced = out.produced(*id)[0] as usize;
                        produced == *expect
                            && if defer_crc {
                                produced as u32 == m.isize
                            } else {
                                gzip::check(m, &out.bytes(*id)[..produced])
                            }
                    }
                    _ => true,
                })
                .collect()
        })
        .collect();

    drop(span);
    // Pages whose gzip trailer did not match one member: find the members
    // on the CPU and inflate each as its own job.
    let mut fallback = StageBatch::new(raw);
    for (pages, whole) in plan.iter_mut().zip(&whole) {
        for ((_, piece, at), &whole) in pages.iter_mut().zip(whole) {
            let Piece::Job {
                expect,
                gzip: Some((_, r)),
                ..
            } = piece
            else {
                continue;
            };
            if whole {
                continue;
            }
            let members = gzip::members(&raw[r.clone()], *expect).map_err(|e| {
                Error::parquet(at, format!("GZIP page does not inflate to its size: {e}"))
            })?;
            let ids = members
                .into_iter()
                .map(|m| {
                    let body = r.start + m.body.start..r.start + m.body.end;
                    (
                        fallback.add(StageOp::Inflate, body, *expect as u64, at.clone()),
                        m,
                    )
                })
                .collect();
            *piece = Piece::Members(ids, *expect);
        }
    }
    let out2 = if fallback.is_empty() {
        None
    } else {
        Some(fallback.run(backend)?)
    };

    // Pieces are gathered into one buffer in a single parallel copy (as the
    // ORC streams are), after every size is checked.
    let mut pages_out = Pages::default();
    let mut parts: Vec<&[u8]> = Vec::new();
    let mut len = 0usize;
    // Whether every non-empty part is the first stage's output at the
    // offset it takes in the gathered buffer: then that output is the
    // buffer and the copy is skipped (the usual case: v1 pages, one codec).
    let mut in_stage = true;
    for (pages, chunk) in plan.into_iter().zip(chunks) {
        let mut list = Vec::with_capacity(pages.len());
        for ((prefix, piece, at), rp) in pages.into_iter().zip(&chunk.pages) {
            let start = len;
            let check = |got: usize, expect: usize| {
                if got == expect {
                    Ok(())
                } else {
                    Err(Error::parquet(
                        &at,
                        format!("page decompresses to {got} bytes, header says {expect}"),
                    ))
                }
            };
            let part = &raw[prefix.clone()];
            in_stage &= part.is_empty();
            len += part.len();
            parts.push(part);
            match piece {
                Piece::Raw => {}
                Piece::Job { id, expect, gzip } => {
                    let n = out.produced(id)[0] as usize;
                    check(n, expect)?;
                    if let (true, Some((m, _))) = (defer_crc, gzip) {
                        pages_out.unchecked.push((len..len + n, m));
                    }
                    in_stage &= out.place(id) == (0, len..len + n);
                    len += n;
                    parts.push(&out.bytes(id)[..n]);
                }
                Piece::Members(ids, expect) => {
                    in_stage = false;
                    let out2 = out2.as_ref().expect("fallback batch ran");
                    let mut total = 0;
                    for (id, m) in ids {
                        let n = out2.produced(id)[0] as usize;
                        let bytes = &out2.bytes(id)[..n];
                        if !gzip::check(&m, bytes) {
                            return Err(Error::parquet(
                                &at,
                                "GZIP member fails its CRC32 or size check",
                            ));
                        }
                        total += n;
                        if total > expect {
                            break;
                        }
                        len += n;
                        parts.push(bytes);
                    }
                    check(total, expect)?;
                }
            }
            list.push(Page {
                header: rp.header.clone(),
                data: start..len,
                location: at,
            });
        }
        pages_out.chunks.push(list);
    }
    let _span = crate::trace::span("pq.gather");
    pages_out.buf = if in_stage && len > 0 {
        drop(parts);
        PageBytes::Stage(out.into_data(0))
    } else {
        PageBytes::Gathered(crate::exec::copy::gather(&parts)?)
    };
    Ok(pages_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::CpuBackend;

    fn member(bytes: &[u8]) -> gzip::Member {
        let mut crc = flate2::Crc::new();
        crc.update(bytes);
        gzip::Member {
            body: 0..0,
            crc: crc.sum(),
            isize: bytes.len() as u32,
        }
    }

    fn pages(buf: Vec<u8>, ranges: &[Range<usize>]) -> Pages {
        let unchecked = ranges
            .iter()
            .map(|r| (r.clone(), member(&buf[r.clone()])))
            .collect();
        Pages {
            buf: PageBytes::Gathered(buf),
            chunks: Vec::new(),
            unchecked,
        }
    }

    #[test]
    fn device_checks_agree_with_host_checks() {
        let cpu = CpuBackend::new();
        let buf: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let ranges = [0..0, 3..1000, 1000..1001, 1001..4999];
        let mut p = pages(buf, &ranges);
        assert!(verify(&p) && verify_on_device(&p, &cpu));
        // A wrong sum, a wrong size, a page past the buffer: each fails both.
        let good = p.unchecked.clone();
        p.unchecked[1].1.crc ^= 1;
        assert!(!verify(&p) && !verify_on_device(&p, &cpu));
        p.unchecked = good.clone();
        p.unchecked[3].1.isize += 1;
        assert!(!verify(&p) && !verify_on_device(&p, &cpu));
        p.unchecked = good;
        p.unchecked.push((4990..5010, member(&[0; 20])));
        assert!(!verify(&p) && !verify_on_device(&p, &cpu));
        p.unchecked.clear();
        assert!(verify(&p) && verify_on_device(&p, &cpu));
    }
}
