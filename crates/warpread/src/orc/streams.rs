//! Reads the streams a projection needs from a group of stripes and
//! decompresses them: every compressed chunk of every stream becomes one job
//! of a single decompression stage, and each stream becomes one contiguous
//! byte range for the decode stages: in place in the stage's output when
//! the writer filled every chunk but the last (the usual case), otherwise
//! compacted end to end. Every
//! stream starts 8-byte aligned in the buffer, so float data and string
//! bytes can become Arrow buffers without a copy.
//!
//! A window of a stripe ([`StripeLayout::windowed`]) reads its positioned
//! streams from the compression chunk holding its first row group's
//! position: the decompressed bytes before the position are dropped here
//! (the first byte kept is the aligned one), the values before it in the
//! decode rounds.

use std::collections::HashMap;
use std::ops::Range;

use arrow::buffer::Buffer;

use super::compression::{self, Compression};
use super::stripe::{StreamKind, StripeLayout};
use super::tail::Source;
use crate::error::{Error, Location, Result};
use crate::exec::Backend;
use crate::exec::batch::{BatchOutput, RequestId, StageBatch};
use crate::plan::StageOp;

/// Identifies a stream within a group of stripes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamKey {
    /// Position of the stripe in the group.
    pub stripe: usize,
    /// Column id.
    pub column: u32,
    /// Stream kind.
    pub kind: StreamKind,
}

/// Decompressed streams of a stripe group.
#[derive(Debug, Default)]
pub struct Streams {
    /// Every stream's bytes, each starting at a multiple of 8: end to end,
    /// or in place in the decompression stage's output (with the unused
    /// tail of each stream's last chunk slot between them).
    pub buf: Buffer,
    ranges: HashMap<StreamKey, Range<usize>>,
    /// Bytes read from the file.
    pub file_bytes: u64,
    /// Seconds spent reading the file.
    pub io_s: f64,
    /// Seconds spent decompressing (stage and compaction).
    pub decompress_s: f64,
}

impl Streams {
    /// A stream's range in `buf`, if the stripe has that stream.
    pub fn range(&self, key: StreamKey) -> Option<Range<usize>> {
        self.ranges.get(&key).cloned()
    }

    /// Bytes of all streams (without the space between them).
    pub fn stream_bytes(&self) -> u64 {
        self.ranges.values().map(|r| r.len() as u64).sum()
    }

    /// A stream's bytes (empty when absent).
    pub fn bytes(&self, key: StreamKey) -> &[u8] {
        self.range(key).map_or(&[], |r| &self.buf[r])
    }

    /// A stream's bytes as an Arrow buffer sharing the group's storage
    /// (empty when absent).
    pub fn buffer(&self, key: StreamKey) -> Buffer {
        self.range(key).map_or_else(Buffer::default, |r| {
            self.buf.slice_with_length(r.start, r.len())
        })
    }
}

/// Where streams start in the buffer: the widest Arrow element ORC data
/// is copied from (doubles).
const STREAM_ALIGN: usize = 8;

/// Zero bytes put before a stream to align it.
const PADDING: [u8; STREAM_ALIGN] = [0; STREAM_ALIGN];

/// Stream kinds the readers decode (indexes and Bloom filters are not read).
const DATA_KINDS: [StreamKind; 5] = [
    StreamKind::Present,
    StreamKind::Data,
    StreamKind::Length,
    StreamKind::DictionaryData,
    StreamKind::Secondary,
];

/// Bytes of the data streams of `columns` (a column and its subtree) in
/// the given stripes, as stored in the file: what reading them costs.
pub fn column_bytes(layouts: &[&StripeLayout], columns: &[&super::schema::Column]) -> u64 {
    layouts
        .iter()
        .flat_map(|l| {
            columns.iter().flat_map(move |c| {
                DATA_KINDS
                    .iter()
                    .filter_map(move |&k| l.stream(c.id, k))
                    .map(|s| s.range.end - s.range.start)
            })
        })
        .sum()
}

/// The `skip` bytes a window drops from the front of a stream whose first
/// chunk has `len` decompressed bytes, checked: a row index position past
/// its chunk is an error, which the reader answers by reading the whole
/// stripe.
fn front(skip: u64, len: usize, at: &Location) -> Result<usize> {
    usize::try_from(skip)
        .ok()
        .filter(|&s| s <= len)
        .ok_or_else(|| {
            Error::orc(
                at,
                format!("row index position {skip} is past its chunk's {len} bytes"),
            )
        })
}

/// One compression chunk of a stream: stored as it is, or a request of the
/// decompression stage.
enum Piece {
    Original(Range<usize>),
    Compressed(RequestId),
}

/// Each stream's range in the decompression stage's output itself, when
/// that output already lays every stream out end to end: the stage gives
/// each chunk a slot of `block` bytes, one stream's chunks in consecutive
/// slots, and writers fill every chunk but a stream's last to the block
/// size. Then the streams need no compacting copy (a pass over every
/// decompressed byte). `None` when a stream has a stored chunk, a short
/// chunk before its last, a start that would not be 8-byte aligned, or
/// streams filling less than half of the output; the caller then compacts.
fn in_place(
    pieces: &[(StreamKey, Vec<Piece>)],
    skips: &[u64],
    block: u64,
    out: &BatchOutput,
) -> Option<HashMap<StreamKey, Range<usize>>> {
    // Nothing decompressed (an empty projection, streams without bytes):
    // the stage has no output to keep.
    let chunks = pieces.iter().map(|(_, ps)| ps.len()).sum::<usize>();
    if chunks == 0 || !block.is_multiple_of(STREAM_ALIGN as u64) {
        return None;
    }
    let mut ranges = HashMap::with_capacity(pieces.len());
    for ((key, ps), &skip) in pieces.iter().zip(skips) {
        let mut range: Option<Range<usize>> = None;
        for (i, p) in ps.iter().enumerate() {
            let Piece::Compressed(id) = p else {
                return None;
            };
            let (stage, slot) = out.place(*id);
            let n = *out.produced(*id).first()? as usize;
            let full = n == slot.len();
            if stage != 0 || (i + 1 < ps.len() && !full) {
                return None;
            }
            range = match range {
                None => Some(slot.start..slot.start + n),
                Some(r) if r.end == slot.start => Some(r.start..slot.start + n),
                Some(_) => return None,
            };
        }
        let r = range.unwrap_or(0..0);
        let skip = usize::try_from(skip).ok()?;
        // A window's skip must lie in the first chunk (as `front` checks)
        // and keep the start aligned.
        let first = match ps.first() {
            Some(Piece::Compressed(id)) => *out.produced(*id).first()? as usize,
            _ => 0,
        };
        if skip > first || !skip.is_multiple_of(STREAM_ALIGN) {
            return None;
        }
        ranges.insert(*key, r.start + skip..r.end);
    }
    // The buffer stays alive as long as any array made from it, slack
    // included (each stream's last slot is mostly empty when streams are
    // short): keep it only when the streams fill at least half of it.
    let used: usize = ranges.values().map(|r| r.len()).sum();
    let (_, last) = out.place(
        match pieces.iter().rev().flat_map(|(_, ps)| ps.last()).next()? {
            Piece::Compressed(id) => *id,
            Piece::Original(_) => return None,
        },
    );
    (used >= last.end / 2).then_some(ranges)
}

/// Largest stored DEFLATE block.
const STORED_BLOCK: usize = 65_535;

/// Bytes [`frame_stored`] appends for the stored ("original") chunks of
/// `chunks`: each chunk's bytes and a 5-byte header per stored block.
fn stored_framing_bytes(chunks: &[Vec<compression::Chunk>]) -> usize {
    chunks
        .iter()
        .flatten()
        .filter(|c| c.original)
        .map(|c| {
            let n = (c.data.end - c.data.start) as usize;
            n + 5 * n.div_ceil(STORED_BLOCK).max(1)
        })
        .sum()
}

/// Gives every stored ("original") chunk of a ZLIB stream a copy framed as
/// stored DEFLATE blocks in `raw` from `tail` on (`raw` ends exactly
/// [`stored_framing_bytes`] after `tail`), so it inflates as a job of the
/// decompression stage like its neighbours: the stage output then still
/// lays each stream out end to end ([`in_place`]) instead of every stream
/// of the group being compacted for one incompressible chunk (pyarrow's
/// writer stores some timestamp chunks that way).
fn frame_stored(
    raw: &mut [u8],
    tail: usize,
    raw_ranges: &[(StreamKey, Range<usize>, Location)],
    chunks: &mut [Vec<compression::Chunk>],
) {
    let mut w = tail;
    for ((_, range, _), chunks) in raw_ranges.iter().zip(chunks) {
        for c in chunks.iter_mut().filter(|c| c.original) {
            let data = range.start + c.data.start as usize..range.start + c.data.end as usize;
            let start = w;
            let mut at = data.start;
            loop {
                let n = (data.end - at).min(STORED_BLOCK);
                let last = at + n == data.end;
                raw[w] = u8::from(last);
                raw[w + 1..w + 3].copy_from_slice(&(n as u16).to_le_bytes());
                raw[w + 3..w + 5].copy_from_slice(&(!(n as u16)).to_le_bytes());
                raw.copy_within(at..at + n, w + 5);
                w += 5 + n;
                at += n;
                if last {
                    break;
                }
            }
            c.framed = Some(start..w);
        }
    }
    debug_assert_eq!(w, raw.len(), "framing fills the tail exactly");
}

/// Reads and decompresses the data streams of `columns` in each stripe.
pub fn load(
    src: &Source,
    layouts: &[StripeLayout],
    columns: &[u32],
    compression: &Compression,
    backend: &dyn Backend,
) -> Result<Streams> {
    let file = Location::file(src.path());
    let started = std::time::Instant::now();
    let io = crate::trace::span("orc.io");
    // Every stream's place in one buffer first (aligned starts), then all
    // of them read at once, in pieces, on all cores: one thread copying
    // from the page cache (and faulting the buffer in) was a bound.
    let mut raw_ranges: Vec<(StreamKey, Range<usize>, Location)> = Vec::new();
    let mut file_ranges: Vec<Range<u64>> = Vec::new();
    // Decompressed bytes to drop from each stream's front (windows).
    let mut skips: Vec<u64> = Vec::new();
    let mut total = 0usize;
    for (g, layout) in layouts.iter().enumerate() {
        let mut wanted: Vec<_> = columns
            .iter()
            .flat_map(|&c| DATA_KINDS.iter().filter_map(move |&k| layout.stream(c, k)))
            .collect();
        wanted.sort_by_key(|s| s.range.start);
        for s in wanted {
            let at = file
                .clone()
                .with_stripe(layout.info.index as u64)
                .with_column(s.column.to_string())
                .with_stream(s.kind.name());
            let len = usize::try_from(s.range.end - s.range.start)
                .map_err(|_| Error::orc(&at, "stream larger than memory"))?;
            let start = total.next_multiple_of(STREAM_ALIGN);
            total = start
                .checked_add(len)
                .ok_or_else(|| Error::orc(&at, "streams larger than memory"))?;
            let key = StreamKey {
                stripe: g,
                column: s.column,
                kind: s.kind,
            };
            raw_ranges.push((key, start..total, at.at(s.range.start)));
            file_ranges.push(s.range.clone());
            skips.push(layout.seek(s.column, s.kind).bytes);
        }
    }
    let reads: Vec<_> = raw_ranges
        .iter()
        .zip(&file_ranges)
        .map(|((_, r, at), f)| (f.start, r.clone(), at))
        .collect();
    let file_bytes = raw_ranges.iter().map(|(_, r, _)| r.len() as u64).sum();
    let Some(op) = compression.kind.stage_op() else {
        let raw = src.read_many(&reads, total)?;
        let io_s = started.elapsed().as_secs_f64();
        // Uncompressed windows start their file range at the position
        // itself, so nothing is dropped; a skip is honoured all the same.
        let mut ranges = HashMap::with_capacity(raw_ranges.len());
        for ((key, r, at), &skip) in raw_ranges.iter().zip(&skips) {
            ranges.insert(*key, r.start + front(skip, r.len(), at)?..r.end);
        }
        return Ok(Streams {
            ranges,
            buf: Buffer::from_vec(raw),
            file_bytes,
            io_s,
            decompress_s: 0.0,
        });
    };
    let mut raw = src.read_many_for(backend, &reads, total)?;
    drop(io);
    let io_s = started.elapsed().as_secs_f64();
    let started = std::time::Instant::now();
    let _decompress = crate::trace::span("orc.decompress");

    // One job per compressed chunk, all streams in one stage.
    let mut chunks = raw_ranges
        .iter()
        .map(|(_, range, at)| compression::chunks(&raw[range.clone()], compression, at))
        .collect::<Result<Vec<_>>>()?;
    let extra = if op == StageOp::Inflate {
        stored_framing_bytes(&chunks)
    } else {
        0
    };
    if extra > 0 {
        // Rare (stored chunks): one copy into a buffer with room for them.
        let len = total
            .checked_add(extra)
            .ok_or_else(|| Error::orc(&file, "streams larger than memory"))?;
        let mut framed = src.input_buffer(backend, len)?;
        framed[..total].copy_from_slice(&raw);
        frame_stored(&mut framed, total, &raw_ranges, &mut chunks);
        raw = framed;
    }
    let mut batch = StageBatch::new(&raw);
    let mut pieces: Vec<(StreamKey, Vec<Piece>)> = Vec::with_capacity(raw_ranges.len());
    for ((key, range, at), chunks) in raw_ranges.iter().zip(&chunks) {
        let mut ps = Vec::with_capacity(chunks.len());
        for (i, c) in chunks.iter().enumerate() {
            let abs = match &c.framed {
                Some(f) => f.clone(),
                None => range.start + c.data.start as usize..range.start + c.data.end as usize,
            };
            if c.original && c.framed.is_none() {
                ps.push(Piece::Original(abs));
            } else {
                let loc = at.clone().with_chunk(i as u64, c.data.start - 3);
                ps.push(Piece::Compressed(batch.add(
                    op,
                    abs,
                    compression.block_size,
                    loc,
                )));
            }
        }
        pieces.push((*key, ps));
    }
    let out = batch.run(backend)?;
    if let Some(ranges) = in_place(&pieces, &skips, compression.block_size, &out) {
        return Ok(Streams {
            buf: out.into_data(0),
            ranges,
            file_bytes,
            io_s,
            decompress_s: started.elapsed().as_secs_f64(),
        });
    }
    let mut parts: Vec<&[u8]> = Vec::new();
    let mut ranges = HashMap::with_capacity(pieces.len());
    let mut at = 0usize;
    for (((key, ps), &skip), (_, _, loc)) in pieces.iter().zip(&skips).zip(&raw_ranges) {
        let stream: Vec<&[u8]> = ps
            .iter()
            .map(|p| match p {
                Piece::Original(r) => &raw[r.clone()],
                Piece::Compressed(id) => {
                    let n = out.produced(*id)[0] as usize;
                    &out.bytes(*id)[..n]
                }
            })
            .collect();
        let len: usize = stream.iter().map(|p| p.len()).sum();
        // A position is inside its chunk (its end included: reading then
        // starts with the next chunk).
        let skip = front(skip, stream.first().map_or(0, |p| p.len()), loc)?;
        // Aligned where the kept bytes start, which is the stream's start
        // unless a window drops a prefix.
        let pad = (at + skip).next_multiple_of(STREAM_ALIGN) - (at + skip);
        parts.push(&PADDING[..pad]);
        at += pad;
        let start = at;
        at += len;
        parts.extend(stream);
        ranges.insert(*key, start + skip..at);
    }
    let buf = crate::exec::copy::gather(&parts)
        .map_err(|_| Error::orc(&file, format!("cannot allocate {at} bytes for streams")))?;
    Ok(Streams {
        buf: Buffer::from_vec(buf),
        ranges,
        file_bytes,
        io_s,
        decompress_s: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codecs::deflate::inflate;

    fn chunk(data: Range<u64>, original: bool) -> compression::Chunk {
        compression::Chunk {
            data,
            original,
            framed: None,
        }
    }

    /// Stored chunks (one of several blocks, one empty) framed after the
    /// streams fill exactly the room counted for them and inflate back to
    /// their bytes; compressed chunks are left alone.
    #[test]
    fn stored_chunks_frame_as_stored_deflate_blocks() {
        let big: Vec<u8> = (0..STORED_BLOCK * 2 + 10).map(|i| (i * 7) as u8).collect();
        let key = |column| StreamKey {
            stripe: 0,
            column,
            kind: StreamKind::Data,
        };
        let at = Location::file(std::path::Path::new("t.orc"));
        // Stream 1 at 0..: a stored chunk of `big` after a 3-byte header;
        // stream 2 at 200_000..: a compressed chunk, then an empty stored one.
        let mut streams = vec![0u8; 200_010];
        streams[3..3 + big.len()].copy_from_slice(&big);
        let raw_ranges = vec![
            (key(1), 0..3 + big.len(), at.clone()),
            (key(2), 200_000..200_010, at.clone()),
        ];
        let mut chunks = vec![
            vec![chunk(3..3 + big.len() as u64, true)],
            vec![chunk(3..7, false), chunk(10..10, true)],
        ];
        let extra = stored_framing_bytes(&chunks);
        assert_eq!(extra, big.len() + 5 * 3 + 5);
        let tail = streams.len();
        let mut raw = streams.clone();
        raw.resize(tail + extra, 0xEE);
        frame_stored(&mut raw, tail, &raw_ranges, &mut chunks);
        assert_eq!(&raw[..tail], &streams[..], "the streams are untouched");
        assert_eq!(chunks[1][0].framed, None);
        let first = chunks[0][0].framed.clone().unwrap();
        let mut out = vec![0u8; big.len()];
        let st = inflate(&raw[first.clone()], &mut out);
        assert_eq!(st.produced, big.len() as u64);
        assert_eq!(out, big);
        let empty = chunks[1][1].framed.clone().unwrap();
        assert_eq!((empty.start, empty.end), (first.end, raw.len()));
        assert_eq!(&raw[empty], &[1, 0, 0, 0xFF, 0xFF]);
    }
}
