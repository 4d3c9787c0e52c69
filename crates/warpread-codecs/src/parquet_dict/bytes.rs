//! CPU reference of the byte-array dictionary gathers
//! ([`ParquetOp::ByteDictOffsets`](crate::plan::ParquetOp::ByteDictOffsets)
//! and [`ParquetOp::ByteDictData`](crate::plan::ParquetOp::ByteDictData)):
//! a column chunk whose data pages are all dictionary-encoded becomes one
//! job, whose first pass writes the Arrow offsets of the gathered strings
//! and whose second pass, sized by the last offset, writes their bytes.
//! Both passes decode the pages' RLE/bit-packed indices themselves, so no
//! array of indices ever reaches the host.
//!
//! A job's input, every part starting 4-aligned, integers little-endian:
//!
//! ```text
//! u32 entries n | u32 pages m | u32 offsets[n + 1] | dictionary bytes (offsets[n])
//! then m times: u32 count | u32 len | len bytes: the bit width, then the runs
//! ```
//!
//! Statuses (the kernels in `kernels/parquet_hybrid.cu` give the same):
//! `InputCorrupt` at 0 for a header, offsets table or dictionary that does
//! not fit the input, offsets that do not start at 0 or decrease;
//! `InputCorrupt` at a page's header when it or its bytes run past the
//! input; `OutputOverflow` there when the offsets pass has no room for the
//! page's values (or none for the leading 0, at 0); `InputTruncated` at its
//! bytes for values without a bit width, `InputCorrupt` there for a width
//! over 32; the hybrid decoder's statuses; `ValueOutOfRange` at the run's
//! header for an index past the dictionary, an offset past `i32::MAX` or,
//! in the data pass, bytes past the output; and `OutputShort` at the input's
//! end for fewer values (offsets) or bytes (data) than the output holds.
//! `produced` counts the values before the failure; on success it is the
//! output's length.

use crate::parquet_hybrid::{self, MAX_BIT_WIDTH};
use crate::plan::{ChunkStatus, StatusCode};

/// The most an offset may reach (Arrow's 32-bit offsets).
const MAX_OFFSET: u64 = i32::MAX as u64;

fn align4(x: usize) -> usize {
    x.next_multiple_of(4)
}

/// The bytes of one job's input for a dictionary of `offsets.len() - 1`
/// entries over `dict` and pages of `(count, section)`.
#[inline]
pub fn job_len(entries: usize, dict_len: usize, sections: impl Iterator<Item = usize>) -> usize {
    let mut len = align4(8 + 4 * (entries + 1) + dict_len);
    for s in sections {
        len = align4(len + 8 + s);
    }
    len
}

/// Writes one job's input into `dst` (exactly [`job_len`] bytes): the
/// dictionary's `offsets` (starting at 0) over its bytes `dict`, then each
/// page's value count and values section (bit width, runs).
pub fn write_job<'a>(
    dst: &mut [u8],
    offsets: &[u32],
    dict: &[u8],
    pages: impl Iterator<Item = (u32, &'a [u8])>,
) {
    dst.fill(0);
    let put = |dst: &mut [u8], at: usize, v: u32| dst[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let n = offsets.len().saturating_sub(1);
    put(dst, 0, n as u32);
    for (i, &o) in offsets.iter().enumerate() {
        put(dst, 8 + 4 * i, o);
    }
    let mut at = 8 + 4 * offsets.len();
    dst[at..at + dict.len()].copy_from_slice(dict);
    at = align4(at + dict.len());
    let mut m = 0u32;
    for (count, section) in pages {
        put(dst, at, count);
        put(dst, at + 4, section.len() as u32);
        dst[at + 8..at + 8 + section.len()].copy_from_slice(section);
        at = align4(at + 8 + section.len());
        m += 1;
    }
    put(dst, 4, m);
    debug_assert_eq!(at, dst.len());
}

/// A job input for tests: [`write_job`] into a vector.
#[inline]
pub fn encode_job(entries: &[&[u8]], pages: &[(u32, &[u8])]) -> Vec<u8> {
    let mut offsets = vec![0u32];
    for e in entries {
        offsets.push(offsets.last().expect("non-empty") + e.len() as u32);
    }
    let dict = entries.concat();
    let mut v = vec![0; job_len(entries.len(), dict.len(), pages.iter().map(|p| p.1.len()))];
    write_job(&mut v, &offsets, &dict, pages.iter().copied());
    v
}

fn le32(input: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(input[at..at + 4].try_into().expect("4 bytes"))
}

/// Where a gathered value goes.
trait Put {
    /// Value `index` (of the job), entry bytes `entry`, ending at byte
    /// `end` of the job's strings; `false` refuses it.
    fn put(&mut self, index: usize, entry: &[u8], end: u64) -> bool;
    /// Whether every value is written (the offsets pass), or only bytes
    /// are (the data pass, where a run of an empty entry writes nothing).
    const EACH_VALUE: bool = true;
}

/// Offsets pass: end offsets after the leading 0.
struct Ends<'a>(&'a mut [u32]);

impl Put for Ends<'_> {
    fn put(&mut self, index: usize, _: &[u8], end: u64) -> bool {
        if end > MAX_OFFSET {
            return false;
        }
        self.0[1 + index] = end as u32;
        true
    }
}

/// Data pass: the entries' bytes end to end.
struct Bytes<'a>(&'a mut [u8]);

impl Put for Bytes<'_> {
    const EACH_VALUE: bool = false;

    fn put(&mut self, _: usize, entry: &[u8], end: u64) -> bool {
        if end > self.0.len() as u64 {
            return false;
        }
        let end = end as usize;
        self.0[end - entry.len()..end].copy_from_slice(entry);
        true
    }
}

/// The walk's sink over one page: `first` values of the job before it.
struct Gather<'a, P> {
    offsets: &'a [u8],
    dict: &'a [u8],
    entries: usize,
    first: usize,
    pos: &'a mut u64,
    put: &'a mut P,
}

impl<P: Put> Gather<'_, P> {
    fn one(&mut self, at: usize, v: u32, run_at: usize) -> Option<ChunkStatus> {
        let k = v as usize;
        let bad = || {
            Some(ChunkStatus::failed(
                StatusCode::ValueOutOfRange,
                run_at as u64,
                at as u64,
            ))
        };
        if k >= self.entries {
            return bad();
        }
        let (s, e) = (le32(self.offsets, 4 * k), le32(self.offsets, 4 * k + 4));
        let entry = &self.dict[s as usize..e as usize];
        let end = *self.pos + entry.len() as u64;
        if !self.put.put(self.first + at, entry, end) {
            return bad();
        }
        *self.pos = end;
        None
    }
}

impl<P: Put> parquet_hybrid::Sink for Gather<'_, P> {
    fn repeat(&mut self, at: usize, v: u32, take: usize, run_at: usize) -> Option<ChunkStatus> {
        // In the data pass (no cap on values) a run of an empty entry adds
        // no byte, and every value of it would check the same: one check
        // stands for the run. Looping instead, a run of 2^31 - 1 of them
        // ran for seconds (a fuzzed `parquet_ops` timeout).
        let k = v as usize;
        if !P::EACH_VALUE
            && take > 0
            && k < self.entries
            && le32(self.offsets, 4 * k) == le32(self.offsets, 4 * k + 4)
        {
            return self.one(at, v, run_at);
        }
        (0..take).find_map(|i| self.one(at + i, v, run_at))
    }

    fn block(&mut self, at: usize, values: &[u32], run_at: usize) -> Option<ChunkStatus> {
        values
            .iter()
            .enumerate()
            .find_map(|(i, &v)| self.one(at + i, v, run_at))
    }
}

/// Walks a job's pages into `put`; `room` caps the values (offsets pass).
/// Returns the values and bytes gathered, or the failure.
fn walk(
    input: &[u8],
    room: Option<usize>,
    put: &mut impl Put,
) -> Result<(usize, u64), ChunkStatus> {
    let corrupt =
        |at: usize, n: usize| ChunkStatus::failed(StatusCode::InputCorrupt, at as u64, n as u64);
    if input.len() < 8 {
        return Err(corrupt(0, 0));
    }
    let n = le32(input, 0) as usize;
    let m = le32(input, 4) as usize;
    let off_end = 8 + 4 * (n as u64 + 1);
    if off_end > input.len() as u64 {
        return Err(corrupt(0, 0));
    }
    let offsets = &input[8..off_end as usize];
    let ok =
        le32(offsets, 0) == 0 && (0..n).all(|i| le32(offsets, 4 * i) <= le32(offsets, 4 * i + 4));
    let dict_len = le32(offsets, 4 * n) as u64;
    if !ok || off_end + dict_len > input.len() as u64 {
        return Err(corrupt(0, 0));
    }
    let dict = &input[off_end as usize..(off_end + dict_len) as usize];
    let mut p = align4((off_end + dict_len) as usize);
    let (mut values, mut pos) = (0usize, 0u64);
    for _ in 0..m {
        if p + 8 > input.len() {
            return Err(corrupt(p, values));
        }
        let count = le32(input, p) as usize;
        let slen = le32(input, p + 4) as usize;
        if (p + 8 + slen) as u64 > input.len() as u64 {
            return Err(corrupt(p, values));
        }
        if count > 0 {
            if room.is_some_and(|r| values + count > r) {
                return Err(ChunkStatus::failed(
                    StatusCode::OutputOverflow,
                    p as u64,
                    values as u64,
                ));
            }
            if slen == 0 {
                return Err(ChunkStatus::failed(
                    StatusCode::InputTruncated,
                    (p + 8) as u64,
                    values as u64,
                ));
            }
            let bw = input[p + 8];
            if bw > MAX_BIT_WIDTH {
                return Err(corrupt(p + 8, values));
            }
            let base = p + 9;
            let mut sink = Gather {
                offsets,
                dict,
                entries: n,
                first: values,
                pos: &mut pos,
                put: &mut *put,
            };
            let st = parquet_hybrid::walk(bw, &input[base..p + 8 + slen], count, &mut sink);
            if !st.is_ok() {
                return Err(ChunkStatus::failed(
                    st.status(),
                    u64::from(st.detail) + base as u64,
                    st.produced + values as u64,
                ));
            }
            values += count;
        }
        p = align4(p + 8 + slen);
    }
    Ok((values, pos))
}

/// The offsets pass: `out` holds the leading 0 and one end offset per
/// value of the job.
pub fn offsets(input: &[u8], out: &mut [u32]) -> ChunkStatus {
    let Some(first) = out.first_mut() else {
        return ChunkStatus::failed(StatusCode::OutputOverflow, 0, 0);
    };
    *first = 0;
    let room = out.len() - 1;
    match walk(input, Some(room), &mut Ends(out)) {
        Ok((values, _)) if values < room => {
            ChunkStatus::failed(StatusCode::OutputShort, input.len() as u64, values as u64)
        }
        Ok(_) => ChunkStatus::ok(out.len() as u64),
        Err(st) => st,
    }
}

/// The data pass: `out` holds the job's gathered bytes, end to end.
#[inline]
pub fn data(input: &[u8], out: &mut [u8]) -> ChunkStatus {
    let cap = out.len() as u64;
    match walk(input, None, &mut Bytes(out)) {
        Ok((values, bytes)) if bytes < cap => {
            ChunkStatus::failed(StatusCode::OutputShort, input.len() as u64, values as u64)
        }
        Ok(_) => ChunkStatus::ok(cap),
        Err(st) => st,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parquet_hybrid::encode;

    fn both(
        input: &[u8],
        values: usize,
        bytes: usize,
    ) -> (ChunkStatus, Vec<u32>, ChunkStatus, Vec<u8>) {
        let mut o = vec![u32::MAX; values + 1];
        let so = offsets(input, &mut o);
        let mut d = vec![0xee; bytes];
        let sd = data(input, &mut d);
        (so, o, sd, d)
    }

    /// A fuzzed `parquet_ops` timeout: one RLE run of 2^31 - 1 values (the
    /// longest a run header holds) of an empty entry. The data pass, which has no cap on values, looped over
    /// every one of them; it now checks the run once, and the offsets pass
    /// refuses the values it has no room for, both at once.
    #[test]
    fn a_run_of_billions_of_empty_entries_is_checked_once() {
        // Bit width 1, an RLE header (varint of len << 1), the value 0.
        let mut section = vec![1u8];
        let len = (1u32 << 31) - 1;
        let mut h = len << 1;
        while h >= 0x80 {
            section.push(h as u8 | 0x80);
            h >>= 7;
        }
        section.extend([h as u8, 0]);
        let input = encode_job(&[b"", b"x"], &[(len, &section)]);
        let t = std::time::Instant::now();
        assert_eq!(data(&input, &mut []), ChunkStatus::ok(0));
        let mut o = vec![0u32; 5];
        assert_eq!(offsets(&input, &mut o).status(), StatusCode::OutputOverflow);
        assert!(
            t.elapsed() < std::time::Duration::from_secs(1),
            "{:?}",
            t.elapsed()
        );
        // A run of a non-empty entry still fills the output byte by byte.
        let input = encode_job(&[b"", b"x"], &[(3, &[1, 6, 1])]);
        let mut d = [0u8; 3];
        assert_eq!(data(&input, &mut d), ChunkStatus::ok(3));
        assert_eq!(&d, b"xxx");
    }

    #[test]
    fn pages_gather_like_the_host() {
        let entries: Vec<&[u8]> = vec![b"AIR", b"", b"DELIVER IN PERSON", b"R"];
        let a: Vec<u32> = (0..300).map(|i| (i * 7 % 4) as u32).collect();
        let b: Vec<u32> = vec![2; 70];
        let sa = [&[2u8][..], &encode(&a, 2)].concat();
        let sb = [&[2u8][..], &encode(&b, 2)].concat();
        let input = encode_job(&entries, &[(300, &sa), (0, &[]), (70, &sb)]);
        let want: Vec<u8> = a
            .iter()
            .chain(&b)
            .flat_map(|&k| entries[k as usize].to_vec())
            .collect();
        let mut want_off = vec![0u32];
        for &k in a.iter().chain(&b) {
            want_off.push(want_off.last().unwrap() + entries[k as usize].len() as u32);
        }
        let (so, o, sd, d) = both(&input, 370, want.len());
        assert_eq!(
            (so, sd),
            (ChunkStatus::ok(371), ChunkStatus::ok(want.len() as u64))
        );
        assert_eq!((o, d), (want_off, want));
    }

    #[test]
    fn bad_inputs_are_statuses() {
        use StatusCode::*;
        let entries: Vec<&[u8]> = vec![b"x", b"yz"];
        let idx = [&[1u8][..], &encode(&[0, 1, 1], 1)].concat();
        let good = encode_job(&entries, &[(3, &idx)]);
        let code = |st: ChunkStatus| (st.status(), st.detail, st.produced);
        // Sizes: one value short, one too many, bytes short.
        assert_eq!(code(both(&good, 2, 5).0), (OutputOverflow, 24, 0));
        assert_eq!(code(both(&good, 4, 5).0).0, OutputShort);
        assert_eq!(
            code(both(&good, 3, 6).2),
            (OutputShort, good.len() as u32, 3)
        );
        assert_eq!(code(both(&good, 3, 4).2).0, ValueOutOfRange);
        // An index past the dictionary.
        let far = [&[2u8][..], &encode(&[0, 3], 2)].concat();
        let st = both(&encode_job(&entries, &[(2, &far)]), 2, 1).0;
        assert_eq!((st.status(), st.produced), (ValueOutOfRange, 1));
        // Headers: truncated, offsets decreasing, a page past the input.
        assert_eq!(code(both(&good[..6], 3, 5).0), (InputCorrupt, 0, 0));
        let mut bad = good.clone();
        bad[12..16].copy_from_slice(&5u32.to_le_bytes());
        assert_eq!(code(both(&bad, 3, 5).0), (InputCorrupt, 0, 0));
        assert_eq!(
            code(both(&good[..good.len() - 4], 3, 5).2),
            (InputCorrupt, 24, 0)
        );
        // A page without a bit width, and one of 33 bits.
        assert_eq!(
            code(both(&encode_job(&entries, &[(1, &[])]), 1, 1).0),
            (InputTruncated, 32, 0)
        );
        assert_eq!(
            code(both(&encode_job(&entries, &[(1, &[33])]), 1, 1).0),
            (InputCorrupt, 32, 0)
        );
        // No room for the leading 0.
        assert_eq!(code(offsets(&good, &mut [])), (OutputOverflow, 0, 0));
        // Nothing at all: one leading 0, no bytes.
        let empty = encode_job(&[], &[]);
        assert_eq!(both(&empty, 0, 0).0, ChunkStatus::ok(1));
        assert_eq!(both(&empty, 0, 0).2, ChunkStatus::ok(0));
    }
}
