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
///
/// `host_reads` (per chunk, per page: `decode::host_reads_pages`) says
/// which pages the host will read. The others are inflated and left on
/// the device alone where the backend keeps the pages there (a CUDA device
/// mirror: TPC-H lineitem's pages were 3.6 GB of an SF 10 read's 12.6 GB of
/// downloads) — when every page is one GZIP job of the one stage whose
/// output is the pages buffer as it is; otherwise, or when a page turns out
/// to hold several members, the pages come down whole.
pub fn run(
    raw: &[u8],
    chunks: &[RawChunk],
    codecs: &[Compression],
    backend: &dyn Backend,
    defer_crc: bool,
    host_reads: Option<&[Vec<bool>]>,
) -> Result<Pages> {
    let mut batch = StageBatch::new(raw);
    let mut plan: Vec<Vec<(Range<usize>, Piece, Location)>> = Vec::with_capacity(chunks.len());
    // Inflate jobs of pages the host does not read, and whether every page
    // is a job of one stage with nothing before it (the stage output is
    // then the pages buffer).
    let mut unread: Vec<RequestId> = Vec::new();
    let mut one_stage = true;
    let mut ops: Option<StageOp> = None;
    for (c, (chunk, &codec)) in chunks.iter().zip(codecs).enumerate() {
        let op = stage_op(codec, &chunk.location)?;
        let mut pages = Vec::with_capacity(chunk.pages.len());
        for (k, p) in chunk.pages.iter().enumerate() {
            let at = chunk
                .location
                .clone()
                .with_page(p.index as u64)
                .at(p.file_offset);
            let (prefix, rest) = split(p, codec);
            one_stage &= prefix.is_empty()
                && rest.as_ref().is_some_and(|(r, _)| !r.is_empty())
                && op.is_some()
                && ops.is_none_or(|o| Some(o) == op);
            ops = ops.or(op);
            let unread_page = host_reads.is_some_and(|h| {
                h.get(c)
                    .and_then(|pages| pages.get(k))
                    .is_some_and(|&reads| !reads)
            });
            let piece = match (rest, op) {
                (None, _) | (_, None) => Piece::Raw,
                (Some((r, 0)), _) if r.is_empty() => Piece::Raw,
                (Some((r, expect)), Some(StageOp::Inflate)) => {
                    let m = gzip::single_member(&raw[r.clone()])
                        .map_err(|e| Error::parquet(&at, format!("GZIP page: {e}")))?;
                    let body = r.start + m.body.start..r.start + m.body.end;
                    let id = batch.add(StageOp::Inflate, body, expect as u64, at.clone());
                    if unread_page {
                        unread.push(id);
                    }
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
    let marked = one_stage && ops == Some(StageOp::Inflate) && !unread.is_empty();
    if marked {
        for &id in &unread {
            batch.leave_on_device(id);
        }
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
    if marked && !fallback.is_empty() {
        // Pages of several members are gathered on the host, from bytes
        // that may not have come down: the group again, every page whole.
        return run(raw, chunks, codecs, backend, defer_crc, None);
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
    if marked && !(in_stage && len > 0) {
        drop(parts);
        return run(raw, chunks, codecs, backend, defer_crc, None);
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

    /// A backend that keeps the output of a stage whose caller reads only
    /// part of it "on its device": the host copy's other bytes are poisoned,
    /// the real ones kept aside and handed to later stages reading that
    /// buffer, as a CUDA device mirror would. Any host read of a page the
    /// reader said it would not read sees the poison.
    struct MirrorSim {
        cpu: CpuBackend,
        mirrors: std::sync::Mutex<Vec<(usize, Vec<u8>)>>,
        poisoned: std::sync::atomic::AtomicUsize,
    }

    impl MirrorSim {
        fn real(&self, input: &[u8]) -> Option<Vec<u8>> {
            let at = input.as_ptr() as usize;
            let mirrors = self.mirrors.lock().unwrap();
            mirrors.iter().find_map(|(start, real)| {
                (at >= *start && at + input.len() <= start + real.len())
                    .then(|| real[at - start..at - start + input.len()].to_vec())
            })
        }
    }

    impl Backend for MirrorSim {
        fn name(&self) -> &'static str {
            "mirror-sim"
        }
        fn describe(&self) -> String {
            "CPU with simulated device mirrors".into()
        }
        fn reads_host_input(&self, op: &StageOp) -> bool {
            self.cpu.reads_host_input(op)
        }
        fn holds_on_device(&self, source: &[u8]) -> bool {
            !source.is_empty() && self.real(source).is_some()
        }
        fn run_stage(
            &self,
            stage: &crate::plan::Stage,
            input: &[u8],
        ) -> Result<crate::exec::StageOutput> {
            self.run_stage_reading(stage, input, None)
        }
        fn run_stage_reading(
            &self,
            stage: &crate::plan::Stage,
            input: &[u8],
            host_reads: Option<&[Range<usize>]>,
        ) -> Result<crate::exec::StageOutput> {
            let out = match self.real(input) {
                Some(real) => self.cpu.run_stage(stage, &real)?,
                None => self.cpu.run_stage(stage, input)?,
            };
            let Some(reads) = host_reads else {
                return Ok(out);
            };
            let real = out.data.as_bytes().to_vec();
            let mut host = vec![0xEEu8; real.len()];
            for r in reads {
                host[r.clone()].copy_from_slice(&real[r.clone()]);
            }
            let kept: usize = reads.iter().map(|r| r.len()).sum();
            self.poisoned
                .fetch_add(real.len() - kept, std::sync::atomic::Ordering::Relaxed);
            let buf = arrow::buffer::Buffer::from_vec(host);
            self.mirrors
                .lock()
                .unwrap()
                .push((buf.as_ptr() as usize, real));
            Ok(crate::exec::StageOutput {
                data: crate::exec::HostBuffer::shared(buf),
                statuses: out.statuses,
            })
        }
    }

    /// Every kind of column the reader decodes on the host or on the
    /// device, GZIP pages: read through a backend that leaves the pages
    /// the reader does not read on its "device", the batches are the CPU's.
    #[test]
    fn pages_left_on_the_device_read_alike() {
        use crate::parquet::ParquetFile;
        use crate::read::ReadOptions;
        use arrow::array::*;
        use arrow::datatypes::{Field, Schema};
        use parquet::arrow::ArrowWriter;
        use parquet::file::properties::WriterProperties;
        use std::sync::Arc;

        let rows = 20_000usize;
        let cols: Vec<(&str, ArrayRef, bool)> = vec![
            (
                "key",
                Arc::new(Int64Array::from_iter_values(
                    (0..rows as i64).map(|i| i / 3),
                )),
                false,
            ),
            (
                "date",
                Arc::new(Date32Array::from_iter_values(
                    (0..rows as i32).map(|i| 8000 + i % 2500),
                )),
                false,
            ),
            (
                "price",
                Arc::new(Float64Array::from_iter_values(
                    (0..rows).map(|i| i as f64 * 1.25),
                )),
                false,
            ),
            (
                "flag",
                Arc::new(StringArray::from_iter_values(
                    (0..rows).map(|i| ["A", "N", "R"][i % 3]),
                )),
                false,
            ),
            (
                "comment",
                Arc::new(StringArray::from_iter_values(
                    (0..rows).map(|i| format!("comment {i} {}", "x".repeat(i % 40))),
                )),
                false,
            ),
            (
                "maybe",
                Arc::new(Int64Array::from_iter(
                    (0..rows).map(|i| (i % 11 != 0).then_some(i as i64)),
                )),
                true,
            ),
            (
                "bits",
                Arc::new(BooleanArray::from_iter((0..rows).map(|i| Some(i % 5 == 0)))),
                false,
            ),
            (
                "dec",
                Arc::new(
                    Decimal128Array::from_iter_values((0..rows).map(|i| i as i128 % 977))
                        .with_precision_and_scale(15, 2)
                        .unwrap(),
                ),
                false,
            ),
        ];
        let schema = Arc::new(Schema::new(
            cols.iter()
                .map(|(n, a, null)| Field::new(*n, a.data_type().clone(), *null))
                .collect::<Vec<_>>(),
        ));
        let batch =
            RecordBatch::try_new(schema.clone(), cols.into_iter().map(|c| c.1).collect()).unwrap();
        let dir =
            std::env::temp_dir().join(format!("warpread-pages-on-device-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("mixed.parquet");
        let props = WriterProperties::builder()
            .set_compression(parquet::basic::Compression::GZIP(Default::default()))
            .set_data_page_row_count_limit(3000)
            .set_write_batch_size(1000)
            .set_max_row_group_row_count(Some(8000))
            .set_column_dictionary_enabled("price".into(), false)
            .set_column_dictionary_enabled("comment".into(), false)
            .build();
        let mut w =
            ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, Some(props))
                .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();

        let file = ParquetFile::open(&path).unwrap();
        let options = ReadOptions::default();
        let want = file.read(&options, &CpuBackend::new()).unwrap();
        let sim = MirrorSim {
            cpu: CpuBackend::new(),
            mirrors: Default::default(),
            poisoned: Default::default(),
        };
        let got = file.read(&options, &sim).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(got, want);
        // Pages were left on the "device" (all but the levels, booleans,
        // byte-array indices and decimals).
        let poisoned = sim.poisoned.load(std::sync::atomic::Ordering::Relaxed);
        assert!(poisoned > 100_000, "{poisoned} bytes left on the device");
    }
}
