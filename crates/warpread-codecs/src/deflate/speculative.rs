//! Inflating one deflate stream in parallel, speculatively (the method of
//! rapidgzip, Knespel and Brunst 2023): the stream is cut into spans of
//! compressed bytes; in each span after the first the first candidate block
//! start is found ([`super::block_start`]); every span is decoded from its
//! candidate at once, with references into the unknown bytes before it kept
//! as markers ([`super::span`]); then the spans are chained: a span is kept
//! only if the span before it (itself kept) ended exactly where it starts.
//! A span that did not is decoded again from where its predecessor really
//! ended, so a false candidate costs a redo, never a wrong byte. Last, the
//! markers are replaced by the bytes they name, the spans' last 32 KiB in
//! stream order and the rest in parallel.
//!
//! [`Speculation`] is the bookkeeping both backends share: the CPU here
//! ([`inflate_speculative`]) and the CUDA backend (`warpread-exec`), which
//! decodes the spans and replaces the markers on the device.

use rayon::prelude::*;

use super::block_start::{block_key, find_block_start};
use super::inflate;
use super::span::{MARKER, NO_STOP, SpanEnd, SpanResult, SpanTask, WINDOW, decode_span};
use crate::plan::{ChunkStatus, StatusCode};

/// How one stream is cut into spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SpanOptions {
    /// Compressed bytes per span (at least 1 KiB). Smaller spans mean more
    /// parallel decoders but more spans without a block start of their own
    /// (zlib starts a block every ~16,000 symbols, 10-40 KiB of input).
    pub span_bytes: u64,
    /// Rounds of redone spans after which the stream is decoded
    /// sequentially instead.
    pub max_rounds: u32,
    /// Shortest stream (compressed bytes) a backend cuts into spans.
    /// Shorter ones are inflated whole: with several of them in a stage,
    /// one warp (or core) per stream is as parallel and has no rounds to
    /// wait for. Default 4 MiB: on the H200 host, Parquet and ORC reads of
    /// lineitem and taxi (pages and blocks up to ~1 MiB) were 10-25%
    /// slower with their longest pages cut into 64 KiB spans.
    pub min_stream_bytes: u64,
}

impl Default for SpanOptions {
    fn default() -> Self {
        Self {
            span_bytes: 64 * 1024,
            max_rounds: 32,
            min_stream_bytes: 4 << 20,
        }
    }
}

impl SpanOptions {
    /// Sets [`SpanOptions::min_stream_bytes`].
    pub fn with_min_stream_bytes(mut self, bytes: u64) -> Self {
        self.min_stream_bytes = bytes;
        self
    }

    /// Sets [`SpanOptions::span_bytes`].
    pub fn with_span_bytes(mut self, bytes: u64) -> Self {
        self.span_bytes = bytes.max(1024);
        self
    }

    /// How many spans a stream of `input_bytes` is cut into.
    pub fn spans(&self, input_bytes: u64) -> u64 {
        input_bytes.div_ceil(self.span_bytes.max(1024)).max(1)
    }

    /// Output slots for a stream of `spans` spans: one per span and spares
    /// for spans split when a slot fills (a split frees the slots of the
    /// spans it passes, so a quarter more, at least 16, is plenty).
    pub fn slots(&self, spans: u64) -> u64 {
        spans + (spans / 4).max(16)
    }

    /// Symbols one span's slot holds for a stream whose output is at most
    /// `capacity` bytes: four times an even share (spans without a block
    /// start of their own are decoded by the span before, and a full slot
    /// costs a round of redone spans), at least 64 Ki, and never more than
    /// the whole output could need.
    pub fn slot_symbols(&self, capacity: u64, spans: u64) -> u64 {
        (4 * capacity / spans.max(1))
            .max(64 * 1024)
            .min(capacity + 258)
    }
}

/// What the chain of decoded spans says to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Walk {
    /// Tasks `0..count` are the stream, in order.
    Done {
        /// Tasks in the chain.
        count: usize,
    },
    /// Decode these tasks (indices into [`Speculation::tasks`]) and walk
    /// again.
    Redo(Vec<usize>),
    /// The stream is corrupt or truncated in the chained task `task`.
    Failed {
        /// Corrupt or truncated.
        code: StatusCode,
        /// The task that failed.
        task: usize,
    },
    /// A block does not fit a slot or no slot is left: decode the stream
    /// the sequential way.
    Sequential,
}

/// The spans of one stream, their decode results and the slots their
/// symbols go to.
#[derive(Debug, Clone)]
pub struct Speculation {
    /// The spans to decode, in stream order.
    pub tasks: Vec<SpanTask>,
    /// Each task's last result (placeholder until decoded).
    pub results: Vec<SpanResult>,
    free: Vec<u32>,
}

impl Speculation {
    /// One task per span with a candidate (`candidates[s]`: the first
    /// block start found in span `s`; span 0 always starts at bit 0), and
    /// `slots` output slots (at least as many as tasks; the spare ones
    /// serve spans that are split when a slot fills).
    pub fn new(input: &[u8], candidates: &[Option<u64>], slots: u32) -> Self {
        let mut starts = vec![0u64];
        starts.extend(candidates.iter().skip(1).flatten().copied());
        let tasks: Vec<SpanTask> = starts
            .iter()
            .enumerate()
            .map(|(i, &start_bit)| {
                let (stop_bit, stop_key) = match starts.get(i + 1) {
                    Some(&s) => (s, block_key(input, s)),
                    None => (NO_STOP, NO_STOP),
                };
                SpanTask {
                    start_bit,
                    stop_bit,
                    stop_key,
                    slot: i as u32,
                    first: u32::from(i == 0),
                }
            })
            .collect();
        let used = tasks.len() as u32;
        Self {
            results: vec![PENDING; tasks.len()],
            tasks,
            free: (used..slots.max(used)).rev().collect(),
        }
    }

    /// Chains the results from the stream's start and says what next.
    /// Every break in the chain whose predecessor ended at a block boundary
    /// gets a task starting at that boundary (tasks starting before it are
    /// dropped); a break after the last confirmed task is certain to be
    /// repaired by it, the others are themselves speculative.
    pub fn walk(&mut self, input: &[u8]) -> Walk {
        let mut i = 0;
        loop {
            let r = self.results[i];
            match r.end() {
                SpanEnd::Final => return Walk::Done { count: i + 1 },
                SpanEnd::Corrupt => {
                    return Walk::Failed {
                        code: StatusCode::InputCorrupt,
                        task: i,
                    };
                }
                SpanEnd::Truncated => {
                    return Walk::Failed {
                        code: StatusCode::InputTruncated,
                        task: i,
                    };
                }
                SpanEnd::BlockTooLarge => return Walk::Sequential,
                SpanEnd::Stopped => {}
            }
            if !self.starts_at(input, i + 1, r.end_key) {
                break;
            }
            i += 1;
        }
        let mut redo: Vec<usize> = Vec::new();
        let mut k = i;
        while k < self.tasks.len() {
            let r = self.results[k];
            let stale = redo.last() == Some(&k);
            if stale || r.end() != SpanEnd::Stopped || self.starts_at(input, k + 1, r.end_key) {
                k += 1;
                continue;
            }
            while k + 1 < self.tasks.len() && self.tasks[k + 1].start_bit <= r.end_bit {
                self.free.push(self.tasks[k + 1].slot);
                self.tasks.remove(k + 1);
                self.results.remove(k + 1);
            }
            let Some(slot) = self.free.pop() else {
                return Walk::Sequential;
            };
            let (stop_bit, stop_key) = match self.tasks.get(k + 1) {
                Some(t) => (t.start_bit, block_key(input, t.start_bit)),
                None => (NO_STOP, NO_STOP),
            };
            self.tasks.insert(
                k + 1,
                SpanTask {
                    start_bit: r.end_bit,
                    stop_bit,
                    stop_key,
                    slot,
                    first: 0,
                },
            );
            self.results.insert(k + 1, PENDING);
            redo.push(k + 1);
            k += 1;
        }
        Walk::Redo(redo)
    }

    fn starts_at(&self, input: &[u8], task: usize, key: u64) -> bool {
        self.tasks
            .get(task)
            .is_some_and(|t| block_key(input, t.start_bit) == key)
    }

    /// The output offset of each of the chain's first `count` tasks and the
    /// total.
    pub fn offsets(&self, count: usize) -> (Vec<u64>, u64) {
        let mut at = 0u64;
        let starts = self.results[..count]
            .iter()
            .map(|r| {
                let s = at;
                at += r.produced;
                s
            })
            .collect();
        (starts, at)
    }
}

/// A result no decode wrote.
const PENDING: SpanResult = SpanResult {
    end_bit: 0,
    end_key: 0,
    produced: 0,
    end: SpanEnd::Corrupt as u32,
    capped: 0,
};

/// The first candidate block start of every span (`None` for span 0,
/// which starts at bit 0, and for spans without one), searched in
/// parallel.
pub fn candidates(input: &[u8], options: &SpanOptions) -> Vec<Option<u64>> {
    let spans = options.spans(input.len() as u64);
    let bits = 8 * options.span_bytes.max(1024);
    (0..spans)
        .into_par_iter()
        .map(|s| (s > 0).then(|| find_block_start(input, s * bits, (s + 1) * bits))?)
        .collect()
}

/// Inflates `input` (one raw deflate stream) into `out` with the spans
/// decoded on the host's threads; the same result as [`inflate`]
/// (identical bytes, size and acceptance), which it falls back to for
/// streams of one span and streams the spans cannot cut.
pub fn inflate_speculative(input: &[u8], out: &mut [u8], options: &SpanOptions) -> ChunkStatus {
    let spans = options.spans(input.len() as u64);
    if spans < 2 {
        return inflate(input, out);
    }
    let t0 = std::time::Instant::now();
    let cands = candidates(input, options);
    let t_find = t0.elapsed();
    let slot_len = options.slot_symbols(out.len() as u64, spans) as usize;
    let slot_count = options.slots(spans) as u32;
    let mut spec = Speculation::new(input, &cands, slot_count);
    let mut slots: Vec<Vec<u16>> = vec![Vec::new(); slot_count as usize];
    let mut todo: Vec<usize> = (0..spec.tasks.len()).collect();
    let mut rounds = 0;
    let mut redone = 0;
    let count = loop {
        let mut bufs: Vec<Vec<u16>> = todo
            .iter()
            .map(|&i| std::mem::take(&mut slots[spec.tasks[i].slot as usize]))
            .collect();
        let results: Vec<SpanResult> = todo
            .par_iter()
            .zip(bufs.par_iter_mut())
            .map(|(&i, buf)| {
                if buf.len() < slot_len {
                    // Zeroed by the allocator: untouched pages cost nothing.
                    *buf = vec![0u16; slot_len];
                }
                decode_span(input, &spec.tasks[i], &mut buf[..slot_len])
            })
            .collect();
        for ((&i, buf), r) in todo.iter().zip(bufs).zip(results) {
            slots[spec.tasks[i].slot as usize] = buf;
            spec.results[i] = r;
        }
        match spec.walk(input) {
            Walk::Done { count } => break count,
            Walk::Redo(ids) if rounds < options.max_rounds => {
                rounds += 1;
                redone += ids.len();
                todo = ids;
            }
            Walk::Redo(_) | Walk::Sequential => {
                tracing::debug!(spans, rounds, "span inflate: sequential fallback");
                return inflate(input, out);
            }
            Walk::Failed { code, task } => {
                let (_, before) = spec.offsets(task);
                let at = spec.results[task].end_bit / 8;
                return ChunkStatus::failed(code, at, before + spec.results[task].produced);
            }
        }
    };
    let t_decode = t0.elapsed();
    tracing::debug!(
        spans,
        found = cands.iter().flatten().count(),
        chain = count,
        rounds,
        redone,
        find_ms = t_find.as_secs_f64() * 1e3,
        decode_ms = (t_decode - t_find).as_secs_f64() * 1e3,
        "span inflate on the CPU"
    );
    let (starts, total) = spec.offsets(count);
    if total > out.len() as u64 {
        return ChunkStatus::failed(
            StatusCode::OutputOverflow,
            input.len() as u64,
            out.len() as u64,
        );
    }
    let chain: Vec<(&[u16], u64)> = (0..count)
        .map(|t| {
            let slot = &slots[spec.tasks[t].slot as usize];
            (&slot[..spec.results[t].produced as usize], starts[t])
        })
        .collect();
    match resolve(&chain, out) {
        Ok(()) => {
            out[total as usize..].fill(0);
            ChunkStatus::ok(total)
        }
        Err(at) => ChunkStatus::failed(StatusCode::InputCorrupt, input.len() as u64, at),
    }
}

/// Writes the chain's symbols (each span's and its output offset) as bytes,
/// markers replaced; `Err(offset)` if a marker reaches before the stream's
/// start (a distance too far back). The spans' last [`WINDOW`] symbols go
/// first, in order, so every marker then reads finished bytes.
fn resolve(chain: &[(&[u16], u64)], out: &mut [u8]) -> Result<(), u64> {
    let head_len = |syms: &[u16]| syms.len().saturating_sub(WINDOW as usize);
    for &(syms, start) in chain {
        let from = head_len(syms);
        for (e, &v) in syms.iter().enumerate().skip(from) {
            let at = start + e as u64;
            out[at as usize] = byte_of(v, start, out).ok_or(at)?;
        }
    }
    // The heads read only finished tails: copy each span's window out so
    // the heads can be written in parallel.
    let windows: Vec<Vec<u8>> = chain
        .iter()
        .map(|&(syms, start)| {
            if head_len(syms) == 0 {
                return Vec::new();
            }
            out[start.saturating_sub(WINDOW) as usize..start as usize].to_vec()
        })
        .collect();
    let mut heads: Vec<&mut [u8]> = Vec::with_capacity(chain.len());
    let mut rest = &mut *out;
    let mut at = 0u64;
    for &(syms, start) in chain {
        let (_, from_start) = rest.split_at_mut((start - at) as usize);
        let (head, after) = from_start.split_at_mut(head_len(syms));
        heads.push(head);
        rest = after;
        at = start + head_len(syms) as u64;
    }
    heads
        .into_par_iter()
        .zip(chain.par_iter().zip(windows.par_iter()))
        .try_for_each(|(head, (&(syms, start), window))| {
            // window[w] is the byte at start - window.len() + w.
            let base = WINDOW - window.len() as u64;
            for (e, o) in head.iter_mut().enumerate() {
                let v = syms[e];
                *o = if v < MARKER {
                    v as u8
                } else {
                    let w = u64::from(v - MARKER);
                    let Some(i) = w.checked_sub(base) else {
                        return Err(start + e as u64);
                    };
                    window[i as usize]
                };
            }
            Ok(())
        })
}

/// The byte a symbol of a span starting at `start` stands for, reading
/// `out` for markers; `None` before the stream's start.
#[inline]
fn byte_of(v: u16, start: u64, out: &[u8]) -> Option<u8> {
    if v < MARKER {
        return Some(v as u8);
    }
    let g = (start + u64::from(v - MARKER)).checked_sub(WINDOW)?;
    Some(out[g as usize])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deflate::deflate;

    fn text(n: usize, seed: u64) -> Vec<u8> {
        let words = [
            "deflate",
            "stream",
            "span",
            "marker",
            "window",
            "block",
            "huffman",
            "the",
            "of",
            "warp",
            "device",
            "candidate",
            "rapid",
            "zlib",
            "and",
            "a",
        ];
        let mut x = seed | 1;
        let mut v = Vec::with_capacity(n + 16);
        while v.len() < n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.extend_from_slice(words[(x % 16) as usize].as_bytes());
            v.push(if x.is_multiple_of(11) { b'\n' } else { b' ' });
        }
        v.truncate(n);
        v
    }

    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    fn check(data: &[u8], level: u32, span_bytes: u64) {
        let z = deflate(data, level);
        let options = SpanOptions::default().with_span_bytes(span_bytes);
        for extra in [0usize, 100] {
            let mut want = vec![0u8; data.len() + extra];
            let mut got = vec![7u8; data.len() + extra];
            let a = inflate(&z, &mut want);
            let b = inflate_speculative(&z, &mut got, &options);
            assert!(a.is_ok());
            assert_eq!(b, a, "level {level}, span {span_bytes}");
            assert_eq!(got, want, "level {level}, span {span_bytes}");
        }
    }

    #[test]
    fn text_at_every_level_and_span_size() {
        let data = text(600_000, 3);
        for level in [1, 6, 9] {
            for span in [1024, 4096, 20_000] {
                check(&data, level, span);
            }
        }
    }

    #[test]
    fn stored_fixed_and_long_match_streams() {
        // All stored blocks (level 0), incompressible bytes, runs whose
        // 258-byte matches cross every span edge, and a mix.
        check(&noise(300_000, 5), 0, 1024);
        check(&noise(300_000, 5), 6, 2048);
        let runs: Vec<u8> = (0..2_000_000u32).map(|i| (i / 5000) as u8).collect();
        check(&runs, 9, 1024);
        let mut mix = text(200_000, 9);
        mix.extend(noise(100_000, 11));
        mix.extend(std::iter::repeat_n(b'z', 300_000));
        mix.extend(text(200_000, 13));
        check(&mix, 6, 1500);
        // Level 1 writes fixed blocks for short inputs: one span's worth.
        check(b"short", 1, 1024);
    }

    /// Decodes `todo`'s tasks into their slots and records the results.
    fn decode_tasks(z: &[u8], spec: &mut Speculation, slots: &mut [Vec<u16>], todo: &[usize]) {
        for &i in todo {
            let t = spec.tasks[i];
            spec.results[i] = decode_span(z, &t, &mut slots[t.slot as usize]);
        }
    }

    #[test]
    fn a_false_candidate_is_redone_from_where_its_predecessor_ended() {
        let data = text(2_000_000, 17);
        let z = deflate(&data, 6);
        // The true block starts, from one sequential span.
        let mut all = vec![0u16; data.len() + 1];
        let whole = SpanTask {
            start_bit: 0,
            stop_bit: NO_STOP,
            stop_key: NO_STOP,
            slot: 0,
            first: 1,
        };
        assert_eq!(decode_span(&z, &whole, &mut all).end(), SpanEnd::Final);
        // A block start a quarter in: not the final block's.
        let mid = 8 * z.len() as u64 / 4;
        let true_start = find_block_start(&z, mid, 8 * z.len() as u64).unwrap();
        // A candidate a few bits past a true block start is no block start:
        // the chain must notice and decode that span again.
        let bogus = true_start + 5;
        assert_ne!(block_key(&z, bogus), block_key(&z, true_start));
        let mut spec = Speculation::new(&z, &[None, Some(bogus)], 8);
        let mut slots = vec![vec![0u16; data.len() + 300]; 8];
        decode_tasks(&z, &mut spec, &mut slots, &[0, 1]);
        let walk = spec.walk(&z);
        let Walk::Redo(ids) = walk else {
            panic!("a false start must be redone: {walk:?}, {:?}", spec.results);
        };
        assert_eq!(ids, vec![1]);
        assert_eq!(spec.tasks[1].start_bit, spec.results[0].end_bit);
        decode_tasks(&z, &mut spec, &mut slots, &ids);
        let Walk::Done { count } = spec.walk(&z) else {
            panic!("the redone span chains");
        };
        assert_eq!(count, 2);
        let (starts, total) = spec.offsets(count);
        assert_eq!(total, data.len() as u64);
        let chain: Vec<(&[u16], u64)> = (0..count)
            .map(|t| {
                let slot = &slots[spec.tasks[t].slot as usize];
                (&slot[..spec.results[t].produced as usize], starts[t])
            })
            .collect();
        let mut out = vec![0u8; data.len()];
        resolve(&chain, &mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn slots_smaller_than_a_span_split_it() {
        // Highly compressible: each span's output far exceeds an even share,
        // so slots fill and spans are split at block boundaries.
        let mut data = vec![0u8; 4_000_000];
        data[1_000_000..1_000_100].copy_from_slice(&noise(100, 1));
        check(&data, 6, 1024);
    }

    #[test]
    fn damaged_streams_are_rejected_like_zlib_rejects_them() {
        let data = text(400_000, 21);
        let z = deflate(&data, 6);
        let options = SpanOptions::default().with_span_bytes(1024);
        let mut out = vec![0u8; data.len()];
        let mut want = vec![0u8; data.len()];
        for cut in [z.len() / 3, z.len() - 1] {
            let b = inflate_speculative(&z[..cut], &mut out, &options);
            assert!(!b.is_ok(), "truncated at {cut}");
        }
        let mut x = 77u64;
        for _ in 0..40 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut bad = z.clone();
            let at = (x >> 33) as usize % bad.len();
            bad[at] ^= 1 << (x % 8);
            let a = inflate(&bad, &mut want);
            let b = inflate_speculative(&bad, &mut out, &options);
            assert_eq!(a.is_ok(), b.is_ok(), "flip at byte {at}: {a} vs {b}");
            if a.is_ok() {
                assert_eq!(out, want);
            }
        }
        // Smaller output than the stream holds.
        let mut small = vec![0u8; data.len() - 1];
        let b = inflate_speculative(&z, &mut small, &options);
        assert_eq!(b.status(), StatusCode::OutputOverflow);
    }
}
