//! Reading a stripe from its kept row groups only. The kept row groups
//! form runs; each run (after joining runs, below) is read as a *window*: a
//! [`StripeLayout`] whose rows are the run's and whose positioned streams
//! are cut to the bytes the run needs, found through the row index
//! positions of its first row group and of the row group after it. Pruned
//! row groups outside the windows are neither read from the file,
//! decompressed nor decoded (up to the compression chunks and runs shared
//! with a kept neighbour); pruned groups inside a joined window are decoded
//! and sliced off the assembled batch. The reader checks every row group of
//! a window against its statistics ([`row_index::check`]) and reads the
//! stripe whole if a window fails.
//!
//! Positions (ORC specification, "Row Group Index"): per stream of the
//! column, in the writer's fixed order — PRESENT (if the stripe has it),
//! then DATA, LENGTH or SECONDARY as the type stores them — the compressed
//! chunk's offset in the stream (compressed files only), the offset in the
//! decompressed chunk (or in the stream), then the run fields of the
//! stream's encoding: integer RLE v1/v2 and byte RLE one (values of the run
//! to skip), boolean RLE two (bytes of the byte run to skip, then bits),
//! plain bytes (floats, string bytes, decimal varints) none.
//!
//! What is windowed: top-level BOOLEAN, TINYINT, SMALLINT, INT, BIGINT,
//! DATE, FLOAT, DOUBLE, STRING, VARCHAR, CHAR, BINARY (direct or dictionary;
//! dictionaries are read whole in every window), TIMESTAMP (both kinds) and
//! DECIMAL columns. A stripe is read whole and sliced to its kept row groups
//! instead ([`plan`] answers `None`) when a projected column is a STRUCT,
//! LIST, MAP or UNION, has an unknown encoding or no usable row index, or
//! when its positions are not what the layout implies: another count per
//! entry, moving backwards, a skip longer than a run, an offset past its
//! chunk, a chunk offset that is not a chunk header of the stream.
//!
//! Where a window's byte range ends: at the position of the row group after
//! it, plus, for run-length streams, the most bytes one run can take (the
//! window's last values may lie in the run that group starts in). For
//! compressed streams the chunks from that position's chunk on are counted
//! at the block size each (what ORC writers emit, except for a stream's
//! last chunk); a writer with shorter chunks leaves the window short, its
//! decoding fails and the reader reads the stripe whole again, so a wrong
//! guess costs time, never rows.
//!
//! Which kept runs become separate windows: neighbours are joined when one
//! window would read no more bytes than the two (their ranges share
//! compression chunks, or the gap is smaller than what a second window
//! reads again: its dictionaries); the pruned row groups between are then
//! decoded and sliced off. So a stripe whose streams are one chunk each is
//! one window, from its first kept row group to its last. At most
//! [`MAX_WINDOWS`] remain, joined across the smallest gaps.

use std::collections::HashMap;
use std::ops::Range;

use super::compression::{Compression, CompressionKind};
use super::proto::{ColumnStatistics, RowIndexEntry};
use super::row_index::{self, StripeIndex};
use super::schema::{Column, Kind};
use super::stripe::{Encoding, Seek, StreamInfo, StreamKind, StripeLayout};
use super::tail::Source;
use crate::error::{Location, Result};

/// Most windows one stripe is read in, however scattered its kept row
/// groups: past it, windows are joined across the smallest gaps.
pub const MAX_WINDOWS: usize = 8;

/// Decompressed bytes past a row group's position that the previous row
/// group's last values may still need, because they lie in the run that
/// starts at (or before) the position: one run at most. Byte and boolean
/// RLE runs take 129 bytes; an RLE v1 literal run 1 + 128 varints of up to
/// 10 bytes; RLE v2 PATCHED_BASE, the longest, a 4-byte header, an 8-byte
/// base, 512 values of 64 bits and 31 patches of 64 bits (4356 bytes).
/// Plain bytes (floats, string bytes, decimal varints) end exactly at the
/// position.
const TAIL_BYTE_RLE: u64 = 130;
/// See [`TAIL_BYTE_RLE`].
const TAIL_RLE_V1: u64 = 1300;
/// See [`TAIL_BYTE_RLE`].
const TAIL_RLE_V2: u64 = 4608;

/// Most values of a run that a position may skip: RLE v2 runs hold 512.
const MAX_SKIP_VALUES: u64 = 512;

/// Most bytes of a byte run a boolean position may skip (runs hold 130).
const MAX_SKIP_BYTES: u64 = 130;

/// The run fields that follow a stream's offsets in a position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    /// Plain bytes: none.
    Bytes,
    /// Integer or byte RLE: values to skip.
    Values,
    /// Boolean RLE: bytes of the byte run to skip, then bits.
    Bools,
}

impl Run {
    fn fields(self) -> usize {
        match self {
            Self::Bytes => 0,
            Self::Values => 1,
            Self::Bools => 2,
        }
    }
}

/// One stream's position at the start of one row group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Position {
    /// Offset of the compression chunk in the stream (0 uncompressed).
    chunk: u64,
    /// Offset in the decompressed chunk (uncompressed: in the stream).
    offset: u64,
    /// Decoded values of the run at `offset` to skip (booleans: bits).
    skip: u64,
}

/// A layout to decode and the rows of it the read returns.
#[derive(Debug, Clone)]
pub struct Part {
    /// A whole stripe or a window of one.
    pub layout: StripeLayout,
    /// Row ranges of the layout's rows to return (`None`: all of them).
    pub keep: Option<Vec<Range<usize>>>,
    /// The row index statistics of each row group of the window, per
    /// top-level column (id), with the group's rows in the layout: the
    /// decoded values must agree ([`row_index::check`]), a check that the
    /// positions led to the right place.
    pub expect: Vec<(u32, Range<usize>, ColumnStatistics)>,
    /// Pruned row groups that are decoded all the same (then sliced off).
    pub sliced_groups: u64,
}

/// A stream whose positions a column's index entries hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Positioned {
    kind: StreamKind,
    run: Run,
    /// Bytes past a position that one run can take ([`TAIL_BYTE_RLE`]).
    tail: u64,
}

/// The streams whose positions a top-level column's index entries hold, in
/// their order; `None` for columns read whole (nested, unknown encodings).
fn positioned(col: &Column, layout: &StripeLayout, decimal64: bool) -> Option<Vec<Positioned>> {
    use StreamKind::{Data, Length, Present, Secondary};
    let enc = layout.encoding(col.id).0;
    if let Encoding::Unknown(_) = enc {
        return None;
    }
    let at = |kind, run, tail| Positioned { kind, run, tail };
    let int_tail = if enc.is_v2() {
        TAIL_RLE_V2
    } else {
        TAIL_RLE_V1
    };
    let ints = |kind| at(kind, Run::Values, int_tail);
    let plain = |kind| at(kind, Run::Bytes, 0);
    let mut out = Vec::with_capacity(3);
    if layout.stream(col.id, Present).is_some() {
        out.push(at(Present, Run::Bools, TAIL_BYTE_RLE));
    }
    match col.kind {
        Kind::Boolean => out.push(at(Data, Run::Bools, TAIL_BYTE_RLE)),
        Kind::Byte => out.push(at(Data, Run::Values, TAIL_BYTE_RLE)),
        Kind::Short | Kind::Int | Kind::Long | Kind::Date => out.push(ints(Data)),
        Kind::Float | Kind::Double => out.push(plain(Data)),
        // The decode rounds read BINARY as direct whatever the encoding.
        Kind::String | Kind::Varchar | Kind::Char if enc.is_dictionary() => out.push(ints(Data)),
        Kind::String | Kind::Varchar | Kind::Char | Kind::Binary => {
            out.extend([plain(Data), ints(Length)])
        }
        Kind::Timestamp | Kind::TimestampInstant => out.extend([ints(Data), ints(Secondary)]),
        // RLE v2 whatever the encoding says, as the decode rounds read it.
        Kind::Decimal if decimal64 && (1..=18).contains(&col.precision) => {
            out.push(at(Data, Run::Values, TAIL_RLE_V2))
        }
        Kind::Decimal => out.extend([plain(Data), ints(Secondary)]),
        Kind::Struct | Kind::List | Kind::Map | Kind::Union => return None,
    }
    Some(out)
}

/// Each stream's position per row group, checked for shape: the count per
/// entry, run skips within a run, never moving backwards (in chunk, offset,
/// then skip order).
fn parse(
    entries: &[RowIndexEntry],
    streams: &[Positioned],
    compressed: bool,
) -> Option<Vec<Vec<Position>>> {
    let head = if compressed { 2 } else { 1 };
    let width: usize = streams.iter().map(|p| head + p.run.fields()).sum();
    let mut out = vec![Vec::with_capacity(entries.len()); streams.len()];
    for (g, e) in entries.iter().enumerate() {
        // Old Java writers leave the first entry's positions empty: the
        // stream starts, which is where a read of the first group starts
        // anyway (its positions are never used).
        if g == 0 && e.positions.is_empty() {
            for p in &mut out {
                p.push(Position {
                    chunk: 0,
                    offset: 0,
                    skip: 0,
                });
            }
            continue;
        }
        if e.positions.len() != width {
            return None;
        }
        let mut f = e.positions.iter().copied();
        for (k, stream) in streams.iter().enumerate() {
            let chunk = if compressed { f.next()? } else { 0 };
            let offset = f.next()?;
            let skip = match stream.run {
                Run::Bytes => 0,
                Run::Values => Some(f.next()?).filter(|&v| v <= MAX_SKIP_VALUES)?,
                Run::Bools => {
                    let bytes = Some(f.next()?).filter(|&b| b <= MAX_SKIP_BYTES)?;
                    let bits = Some(f.next()?).filter(|&b| b < 8)?;
                    bytes * 8 + bits
                }
            };
            out[k].push(Position {
                chunk,
                offset,
                skip,
            });
        }
    }
    // Within one run the skip grows; a later run starts further on.
    let forward = |p: &[Position]| {
        p.windows(2)
            .all(|w| (w[0].chunk, w[0].offset, w[0].skip) <= (w[1].chunk, w[1].offset, w[1].skip))
    };
    out.iter().all(|p| forward(p)).then_some(out)
}

/// A run of row groups read as one layout: the cut of each positioned
/// stream (stream, file range, seek), in the same order for every window
/// of a stripe.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Window {
    groups: Range<usize>,
    cuts: Vec<((u32, StreamKind), Range<u64>, Seek)>,
}

impl Window {
    fn bytes(&self) -> u64 {
        self.cuts.iter().map(|c| c.1.end - c.1.start).sum()
    }

    /// Bytes of `self` and `next` read as one window.
    fn joined_bytes(&self, next: &Window) -> u64 {
        self.cuts
            .iter()
            .zip(&next.cuts)
            .map(|(a, b)| b.1.end.saturating_sub(a.1.start))
            .sum()
    }

    /// Extends `self` over `next` (which follows it): `self`'s starts and
    /// seeks, `next`'s ends.
    fn join(&mut self, next: Window) {
        self.groups.end = next.groups.end;
        for (a, b) in self.cuts.iter_mut().zip(next.cuts) {
            a.1.end = a.1.end.max(b.1.end);
        }
    }
}

/// Joins neighbouring windows when one reads no more bytes than the two
/// (`again`: the bytes every window reads whole, its dictionaries), then
/// across the smallest gaps until at most `max` remain.
fn merge(windows: Vec<Window>, again: u64, max: usize) -> Vec<Window> {
    let mut out: Vec<Window> = Vec::with_capacity(windows.len());
    for w in windows {
        match out.last_mut() {
            Some(last) if last.joined_bytes(&w) <= last.bytes() + w.bytes() + again => last.join(w),
            _ => out.push(w),
        }
    }
    while out.len() > max.max(1) {
        let i = (1..out.len())
            .min_by_key(|&i| out[i].groups.start - out[i - 1].groups.end)
            .expect("at least two windows");
        let w = out.remove(i);
        out[i - 1].join(w);
    }
    out
}

/// The compression chunks of one stream, found by walking their 3-byte
/// headers from the stream's start (a few bytes read per chunk, nothing
/// decompressed), as far as asked: a position's chunk offset is trusted
/// only if it is one of them.
struct Chunks<'a> {
    src: &'a Source,
    stream: Range<u64>,
    block: u64,
    at: Location,
    /// Start, end (in the stream) and decompressed size bound of each chunk.
    found: Vec<(u64, u64, u64)>,
    /// Where the next header is.
    next: u64,
    /// A header overran the stream or the block size.
    broken: bool,
}

impl<'a> Chunks<'a> {
    fn new(src: &'a Source, s: &StreamInfo, c: &Compression, at: Location) -> Self {
        Self {
            src,
            stream: s.range.clone(),
            block: c.block_size,
            at,
            found: Vec::new(),
            next: 0,
            broken: false,
        }
    }

    fn len(&self) -> u64 {
        self.stream.end - self.stream.start
    }

    /// Walks one more header; false at the end of the stream or on a bad
    /// header (then the stripe is read whole, which reports it).
    fn extend(&mut self) -> Result<bool> {
        if self.broken || self.next >= self.len() {
            return Ok(false);
        }
        if self.len() - self.next < 3 {
            self.broken = true;
            return Ok(false);
        }
        let h = self.src.read(self.stream.start + self.next, 3, &self.at)?;
        let h = u64::from(h[0]) | u64::from(h[1]) << 8 | u64::from(h[2]) << 16;
        let (original, len) = (h & 1 == 1, h >> 1);
        let end = self.next + 3 + len;
        if end > self.len() || (original && len > self.block) {
            self.broken = true;
            return Ok(false);
        }
        let bound = if original { len } else { self.block };
        self.found.push((self.next, end, bound));
        self.next = end;
        Ok(true)
    }

    /// The index of the chunk starting at `offset`, if one does.
    fn starting_at(&mut self, offset: u64) -> Result<Option<usize>> {
        while self.found.last().is_none_or(|c| c.0 < offset) {
            if !self.extend()? {
                break;
            }
        }
        Ok(self.found.binary_search_by_key(&offset, |c| c.0).ok())
    }

    /// Chunk `i`, walking to it if needed.
    fn get(&mut self, i: usize) -> Result<Option<(u64, u64, u64)>> {
        while self.found.len() <= i {
            if !self.extend()? {
                return Ok(None);
            }
        }
        Ok(Some(self.found[i]))
    }
}

/// One stream's file range and seek for the row groups `groups` of
/// `positions.len()`, reading `tail` bytes past the next group's position;
/// `None` when the positions do not fit the stream.
fn cut(
    s: &StreamInfo,
    positions: &[Position],
    groups: Range<usize>,
    tail: u64,
    chunks: Option<&mut Chunks<'_>>,
) -> Result<Option<(Range<u64>, Seek)>> {
    let len = s.range.end - s.range.start;
    if len == 0 {
        // An empty stream (a column null in the whole stripe): nothing to
        // cut, whatever its positions say.
        return Ok(Some((s.range.clone(), Seek::default())));
    }
    let first = (groups.start > 0).then(|| positions[groups.start]);
    let next = positions.get(groups.end).copied();
    let Some(chunks) = chunks else {
        // Uncompressed: positions are stream offsets.
        let start = first.map_or(0, |p| p.offset);
        let end = next.map_or(len, |p| p.offset.saturating_add(tail).min(len));
        if start > end {
            return Ok(None);
        }
        let seek = Seek {
            bytes: 0,
            values: first.map_or(0, |p| p.skip),
        };
        return Ok(Some((s.range.start + start..s.range.start + end, seek)));
    };
    let (start, seek) = match first {
        None => (0, Seek::default()),
        Some(p) => {
            let Some(i) = chunks.starting_at(p.chunk)? else {
                return Ok(None);
            };
            if p.offset > chunks.found[i].2 {
                return Ok(None);
            }
            let seek = Seek {
                bytes: p.offset,
                values: p.skip,
            };
            (p.chunk, seek)
        }
    };
    let end = match next {
        None => len,
        Some(p) => {
            let Some(mut i) = chunks.starting_at(p.chunk)? else {
                return Ok(None);
            };
            // Chunks from the next group's one until, at the block size
            // each, they hold the position and a run after it.
            let need = p.offset.saturating_add(tail);
            let mut held = 0u64;
            loop {
                match chunks.get(i)? {
                    None if chunks.broken => return Ok(None),
                    None => break len,
                    Some((_, end, bound)) => {
                        held += bound;
                        i += 1;
                        if held >= need {
                            break end;
                        }
                    }
                }
            }
        }
    };
    if start > end {
        return Ok(None);
    }
    Ok(Some((s.range.start + start..s.range.start + end, seek)))
}

/// The windows a stripe is read in, given which row groups are kept (at
/// least one); `None` when some projected column cannot be windowed (the
/// stripe is then read whole and sliced). `layout` is the whole stripe.
pub fn plan(
    src: &Source,
    layout: &StripeLayout,
    compression: &Compression,
    index: &StripeIndex,
    cols: &[&Column],
    keep: &[bool],
    decimal64: bool,
) -> Result<Option<Vec<Part>>> {
    let file = Location::file(src.path());
    let compressed = compression.kind != CompressionKind::None;
    // Per column: its entries, positioned streams and their positions.
    let mut columns = Vec::with_capacity(cols.len());
    for col in cols {
        let Some(entries) = index.entries(col.id) else {
            return Ok(None);
        };
        let Some(streams) = positioned(col, layout, decimal64) else {
            return Ok(None);
        };
        let Some(positions) = parse(entries, &streams, compressed) else {
            tracing::warn!(
                "{}: row index positions do not fit the column's streams; stripe read whole",
                row_index::column_location(&file, layout, col)
            );
            return Ok(None);
        };
        columns.push((*col, entries, streams, positions));
    }
    // Each run of kept row groups as a window of its own first.
    let kept = row_index::runs(keep);
    let mut walks: HashMap<(u32, StreamKind), Chunks<'_>> = HashMap::new();
    let mut windows = Vec::with_capacity(kept.len());
    for run in &kept {
        let mut cuts = Vec::new();
        for (col, _, streams, positions) in &columns {
            for (stream, pos) in streams.iter().zip(positions) {
                let Some(s) = layout.stream(col.id, stream.kind) else {
                    continue;
                };
                let at = || {
                    row_index::column_location(&file, layout, col).with_stream(stream.kind.name())
                };
                let chunks = compressed.then(|| {
                    walks
                        .entry((col.id, stream.kind))
                        .or_insert_with(|| Chunks::new(src, s, compression, at()))
                });
                let Some((range, seek)) = cut(s, pos, run.clone(), stream.tail, chunks)? else {
                    tracing::warn!(
                        "{}: row index positions do not fit the stream; stripe read whole",
                        at()
                    );
                    return Ok(None);
                };
                cuts.push(((col.id, stream.kind), range, seek));
            }
        }
        windows.push(Window {
            groups: run.clone(),
            cuts,
        });
    }
    // Projected streams without positions (dictionaries), which every
    // window reads whole.
    let cut: std::collections::HashSet<(u32, StreamKind)> =
        windows[0].cuts.iter().map(|c| c.0).collect();
    let again: u64 = layout
        .streams
        .iter()
        .filter(|s| cols.iter().any(|c| c.id == s.column))
        .filter(|s| s.kind != StreamKind::RowIndex && !cut.contains(&(s.column, s.kind)))
        .map(|s| s.range.end - s.range.start)
        .sum();
    let parts = merge(windows, again, MAX_WINDOWS)
        .into_iter()
        .map(|w| {
            let rows = index.rows(w.groups.clone(), layout.info.rows);
            let inside: Vec<&Range<usize>> = kept
                .iter()
                .filter(|r| r.start >= w.groups.start && r.end <= w.groups.end)
                .collect();
            let kept_groups: usize = inside.iter().map(|r| r.len()).sum();
            let mut expect = Vec::new();
            for (col, entries, _, _) in &columns {
                for g in w.groups.clone() {
                    if let Some(stats) = &entries[g].statistics {
                        let r = index.rows(g..g + 1, layout.info.rows);
                        let r = (r.start - rows.start) as usize..(r.end - rows.start) as usize;
                        expect.push((col.id, r, stats.clone()));
                    }
                }
            }
            let keep = (inside.len() > 1).then(|| {
                inside
                    .iter()
                    .map(|r| {
                        let k = index.rows((*r).clone(), layout.info.rows);
                        (k.start - rows.start) as usize..(k.end - rows.start) as usize
                    })
                    .collect()
            });
            Part {
                layout: layout.windowed(rows, w.cuts),
                keep,
                expect,
                sliced_groups: (w.groups.len() - kept_groups) as u64,
            }
        })
        .collect();
    Ok(Some(parts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(positions: &[u64]) -> RowIndexEntry {
        RowIndexEntry {
            positions: positions.to_vec(),
            statistics: None,
        }
    }

    #[test]
    fn parses_positions_per_stream() {
        let at = |kind, run| Positioned { kind, run, tail: 0 };
        let streams = [
            at(StreamKind::Present, Run::Bools),
            at(StreamKind::Data, Run::Bytes),
            at(StreamKind::Length, Run::Values),
        ];
        let e = [
            entry(&[0, 0, 0, 0, 0, 0, 0, 0, 0]),
            entry(&[0, 40, 2, 3, 10, 7, 12, 5, 4]),
        ];
        let p = parse(&e, &streams, true).unwrap();
        assert_eq!(
            p[0][1],
            Position {
                chunk: 0,
                offset: 40,
                skip: 19
            }
        );
        assert_eq!(
            p[1][1],
            Position {
                chunk: 10,
                offset: 7,
                skip: 0
            }
        );
        assert_eq!(
            p[2][1],
            Position {
                chunk: 12,
                offset: 5,
                skip: 4
            }
        );
        // Uncompressed: no chunk offsets.
        let u = parse(
            &[entry(&[0, 0, 0, 0, 0, 0]), entry(&[9, 1, 2, 30, 40, 3])],
            &streams,
            false,
        )
        .unwrap();
        assert_eq!(u[0][1].skip, 10);
        assert_eq!((u[1][1].offset, u[2][1].offset, u[2][1].skip), (30, 40, 3));
        // An empty first entry (old Java writers) is the streams' starts.
        let p = parse(&[entry(&[]), e[1].clone()], &streams, true).unwrap();
        assert_eq!(
            p[2][0],
            Position {
                chunk: 0,
                offset: 0,
                skip: 0
            }
        );
        assert!(parse(&[e[0].clone(), entry(&[])], &streams, true).is_none());
        // Wrong count, a bit offset of 8, a skip past a run, going back.
        assert!(parse(&[entry(&[0; 8])], &streams, true).is_none());
        assert!(parse(&[entry(&[0, 0, 0, 8, 0, 0, 0, 0, 0])], &streams, true).is_none());
        assert!(parse(&[entry(&[0, 0, 0, 0, 0, 0, 0, 0, 513])], &streams, true).is_none());
        assert!(
            parse(
                &[
                    entry(&[0, 9, 0, 0, 0, 0, 0, 0, 0]),
                    entry(&[0, 8, 0, 0, 0, 0, 0, 0, 0])
                ],
                &streams,
                true
            )
            .is_none()
        );
    }

    #[test]
    fn cuts_streams_at_chunk_headers() {
        // A stream of three original chunks of 10, 20 and 30 bytes, at 0,
        // 13 and 36, in a file of its own.
        let mut bytes = Vec::new();
        for n in [10u32, 20, 30] {
            let h = n << 1 | 1;
            bytes.extend_from_slice(&[h as u8, (h >> 8) as u8, (h >> 16) as u8]);
            bytes.extend(std::iter::repeat_n(7u8, n as usize));
        }
        let path = std::env::temp_dir().join(format!("warpread-seek-{}.bin", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let src = Source::open(&path, "ORC").unwrap();
        let s = StreamInfo {
            column: 1,
            kind: StreamKind::Data,
            range: 0..bytes.len() as u64,
        };
        let c = Compression {
            kind: CompressionKind::Zlib,
            block_size: 64,
        };
        let pos = |chunk, offset, skip| Position {
            chunk,
            offset,
            skip,
        };
        let run = |p: &[Position], groups: Range<usize>, tail| {
            let mut chunks = Chunks::new(&src, &s, &c, Location::default());
            cut(&s, p, groups, tail, Some(&mut chunks)).unwrap()
        };
        let good = [pos(0, 0, 0), pos(13, 5, 2), pos(36, 0, 0)];
        let seek = |bytes, values| Seek { bytes, values };
        // The middle group: from chunk 1, to the end of chunk 2 (an
        // original chunk's size is known: 30 bytes hold a tail of 30).
        assert_eq!(run(&good, 1..2, 30), Some((13..69, seek(5, 2))));
        // The first group ends with the chunk holding the next position
        // (plain bytes: no tail).
        assert_eq!(run(&good, 0..1, 0), Some((0..36, seek(0, 0))));
        // A chunk offset that is no chunk header, an offset past its chunk.
        assert_eq!(run(&[good[0], pos(14, 0, 0), good[2]], 1..3, 0), None);
        assert_eq!(run(&[good[0], pos(13, 21, 0), good[2]], 1..3, 0), None);
        // Uncompressed: offsets in the stream, the tail past the next one.
        let flat = [pos(0, 0, 0), pos(0, 20, 3), pos(0, 40, 0)];
        let got = cut(&s, &flat, 1..2, 5, None).unwrap();
        assert_eq!(got, Some((20..45, seek(0, 3))));
        // An empty stream is not cut.
        let empty = StreamInfo {
            range: 5..5,
            ..s.clone()
        };
        assert_eq!(
            cut(&empty, &good, 1..2, 0, None).unwrap(),
            Some((5..5, Seek::default()))
        );
        std::fs::remove_file(&path).ok();
    }

    fn window(groups: Range<usize>, ranges: &[Range<u64>]) -> Window {
        Window {
            groups,
            cuts: ranges
                .iter()
                .enumerate()
                .map(|(k, r)| ((k as u32, StreamKind::Data), r.clone(), Seek::default()))
                .collect(),
        }
    }

    #[test]
    fn windows_sharing_chunks_are_joined() {
        // Two streams; windows 0 and 1 share their chunks, 2 is far away.
        let w = vec![
            window(0..1, &[0..100, 0..50]),
            window(2..3, &[80..200, 40..90]),
            window(6..7, &[900..1000, 500..600]),
        ];
        let m = merge(w.clone(), 0, 8);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0], window(0..3, &[0..200, 0..90]));
        assert_eq!(m[1], w[2]);
        // Dictionaries read again by each window make joining cheaper.
        assert_eq!(merge(w.clone(), 2000, 8).len(), 1);
        // At most `max` windows: across the smallest gap first.
        let far: Vec<Window> = [(0..1, 0), (3..4, 100), (5..6, 200), (9..10, 300)]
            .into_iter()
            .map(|(g, at)| window(g, std::slice::from_ref(&(at..at + 10))))
            .collect();
        let m = merge(far, 0, 2);
        assert_eq!(
            m.iter().map(|w| w.groups.clone()).collect::<Vec<_>>(),
            vec![0..6, 9..10]
        );
        assert_eq!(m[0].cuts[0].1, 0..210);
    }
}
