//! A byte-array dictionary and the gather of its entries by index: the
//! host-side step of RLE_DICTIONARY / PLAIN_DICTIONARY byte-array pages
//! (the indices come from a hybrid decoding stage).
//!
//! The dictionary borrows its entries from the stage output that decoded
//! them: copying them (a padded copy, up to 1 MiB per chunk) meant fresh
//! memory for every chunk, and with a read's other threads faulting pages
//! in too, those copies took ~0.3 s of one thread's time per SF 10 group.
//! Short entries (TPC-H flags, ship modes: 1 to 25 bytes) are copied as
//! fixed 32-byte blocks wherever the dictionary has 32 bytes from the
//! entry's start, the output advancing by the entry's length: one
//! unconditional copy per value instead of a length-dependent `memcpy`
//! call. The dictionary is checked for UTF-8 once, so strings gathered
//! from it need no second check.

use std::mem::MaybeUninit;

use arrow::array::OffsetSizeTrait;
use rayon::prelude::*;

/// Entries up to this long take the fixed-block copy.
const BLOCK: usize = 32;

/// A byte-array dictionary page, decoded.
#[derive(Debug)]
pub struct ByteDict<'a> {
    /// `n + 1` offsets into `data` (a page's values fit 32 bits: page
    /// sizes are 32-bit in the format).
    offsets: Vec<u32>,
    /// The entries end to end.
    data: &'a [u8],
    /// The longest entry.
    max_len: usize,
    /// Whether every entry is `max_len` long (flags, codes, fixed-width
    /// keys): a gather's offsets are then a progression and its bytes a
    /// fixed-width copy.
    same_len: bool,
    /// Whether every entry is valid UTF-8.
    utf8: bool,
}

impl<'a> ByteDict<'a> {
    /// From the entries' lengths and bytes (as a PLAIN byte-array page
    /// gives them); `None` when the lengths do not add up to the bytes.
    pub fn new(lengths: &[u32], data: &'a [u8]) -> Option<Self> {
        let mut offsets = Vec::with_capacity(lengths.len() + 1);
        offsets.push(0u32);
        let (mut end, mut max_len, mut min_len) = (0u64, 0u32, u32::MAX);
        for &l in lengths {
            end += u64::from(l);
            max_len = max_len.max(l);
            min_len = min_len.min(l);
            offsets.push(u32::try_from(end).ok()?);
        }
        if end != data.len() as u64 {
            return None;
        }
        // Every entry is valid UTF-8 exactly when the whole is and every
        // entry starts on a character boundary (not on a continuation
        // byte): one vectorized check instead of one call per entry.
        let utf8 = std::str::from_utf8(data).is_ok()
            && offsets[..offsets.len() - 1]
                .iter()
                .all(|&o| data.get(o as usize).is_none_or(|&b| b & 0xc0 != 0x80));
        Some(Self {
            offsets,
            data,
            max_len: max_len as usize,
            same_len: min_len == max_len,
            utf8,
        })
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether every entry is valid UTF-8 (then so is any gather).
    pub fn utf8(&self) -> bool {
        self.utf8
    }

    /// The `len() + 1` offsets of the entries in [`ByteDict::data`].
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// The entries end to end.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The longest entry's length (bounds a gather's bytes).
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Length of entry `k` (`k < len()`).
    pub fn entry_len(&self, k: usize) -> usize {
        (self.offsets[k + 1] - self.offsets[k]) as usize
    }

    /// Appends the entries `indices` name (each `< len()`, checked by the
    /// caller) to `out`, pushing each value's end offset (in `out`), which
    /// the caller made sure fits `O` (at most `out.len()` plus
    /// `indices.len() * max_len()`). Long index arrays are gathered in
    /// pieces on all cores (pyarrow writes a million indices into one taxi
    /// page: gathered serially they were 15 ms of a 65 ms read): each
    /// piece's bytes are summed first, so every piece knows where its
    /// values start.
    pub fn gather<O: OffsetSizeTrait>(
        &self,
        indices: &[u32],
        out: &mut Vec<u8>,
        offsets: &mut Vec<O>,
    ) {
        let n = indices.len();
        let pieces: Vec<&[u32]> = indices.chunks(PIECE).collect();
        let totals: Vec<usize> = if self.same_len {
            pieces.iter().map(|p| p.len() * self.max_len).collect()
        } else {
            pieces
                .par_iter()
                .map(|p| p.iter().map(|&k| self.entry_len(k as usize)).sum())
                .collect()
        };
        let total: usize = totals.iter().sum();
        let (base, first) = (out.len(), offsets.len());
        out.reserve(total);
        offsets.reserve(n);
        // Each piece's slice of the data and where it starts in `out`.
        let mut data = Vec::with_capacity(pieces.len());
        let (mut rest, mut at) = (&mut out.spare_capacity_mut()[..total], base);
        for &t in &totals {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(t);
            data.push((head, at));
            (rest, at) = (tail, at + t);
        }
        let ends = offsets.spare_capacity_mut()[..n].chunks_mut(PIECE);
        let work: Vec<_> = pieces.into_iter().zip(data).zip(ends).collect();
        work.into_par_iter().for_each(|((idx, (d, start)), e)| {
            if self.same_len {
                self.fill_same_len(idx, d, e, start)
            } else {
                self.fill(idx, d, e, start)
            }
        });
        // SAFETY: `fill` (or `fill_same_len`) wrote every byte of each
        // piece's data slice (its values are consecutive and their lengths
        // sum to the slice) and every slot of its offsets slice; the slices
        // cover `total` bytes and `n` offsets end to end.
        unsafe {
            out.set_len(base + total);
            offsets.set_len(first + n);
        }
    }

    /// Bytes the entries `indices` name (each `< len()`).
    pub fn bytes_of(&self, indices: &[u32]) -> u64 {
        if self.same_len {
            return indices.len() as u64 * self.max_len as u64;
        }
        indices
            .par_chunks(PIECE)
            .map(|p| {
                p.iter()
                    .map(|&k| self.entry_len(k as usize) as u64)
                    .sum::<u64>()
            })
            .sum()
    }

    /// [`ByteDict::fill`] where every entry is `max_len` long: entry `k`
    /// starts at `k * max_len`, the ends step by it.
    fn fill_same_len<O: OffsetSizeTrait>(
        &self,
        indices: &[u32],
        out: &mut [MaybeUninit<u8>],
        ends: &mut [MaybeUninit<O>],
        pos: usize,
    ) {
        let l = self.max_len;
        for (i, end) in ends.iter_mut().enumerate() {
            end.write(O::usize_as(pos + (i + 1) * l));
        }
        match l {
            0 => {}
            1 => {
                for (o, &k) in out.iter_mut().zip(indices) {
                    o.write(self.data[k as usize]);
                }
            }
            _ => {
                for (o, &k) in out.chunks_exact_mut(l).zip(indices) {
                    let s = k as usize * l;
                    o.write_copy_of_slice(&self.data[s..s + l]);
                }
            }
        }
    }

    /// Writes the entries `indices` name to `out` (exactly their bytes
    /// long) and each one's end offset, counted from `pos`, to `ends`.
    fn fill<O: OffsetSizeTrait>(
        &self,
        indices: &[u32],
        out: &mut [MaybeUninit<u8>],
        ends: &mut [MaybeUninit<O>],
        mut pos: usize,
    ) {
        let (off, data) = (&self.offsets, self.data);
        let mut at = 0;
        for (end, &k) in ends.iter_mut().zip(indices) {
            let s = off[k as usize] as usize;
            let l = off[k as usize + 1] as usize - s;
            // A fixed block where both the dictionary and the slice have
            // room for it: later values overwrite its tail.
            if l <= BLOCK && s + BLOCK <= data.len() && at + BLOCK <= out.len() {
                out[at..at + BLOCK].write_copy_of_slice(&data[s..s + BLOCK]);
            } else {
                out[at..at + l].write_copy_of_slice(&data[s..s + l]);
            }
            at += l;
            pos += l;
            end.write(O::usize_as(pos));
        }
        debug_assert_eq!(at, out.len());
    }
}

/// Indices gathered per task (fewer under Miri, so that its tests reach
/// several pieces in minutes rather than hours).
const PIECE: usize = if cfg!(miri) { 256 } else { 64 * 1024 };

#[cfg(test)]
mod tests {
    use super::*;

    /// A dictionary of `entries`, its bytes leaked (tests only).
    fn dict(entries: &[&[u8]]) -> ByteDict<'static> {
        let lengths: Vec<u32> = entries.iter().map(|e| e.len() as u32).collect();
        ByteDict::new(&lengths, entries.concat().leak()).unwrap()
    }

    fn gathered(d: &ByteDict, idx: &[u32], prefix: &[u8]) -> (Vec<u8>, Vec<usize>) {
        let mut out = prefix.to_vec();
        let mut offsets = vec![prefix.len() as i64];
        d.gather(idx, &mut out, &mut offsets);
        let small: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
        let mut out32 = prefix.to_vec();
        let mut offsets32 = vec![prefix.len() as i32];
        d.gather(idx, &mut out32, &mut offsets32);
        assert_eq!(
            (&out32, &offsets32),
            (&out, &small),
            "32-bit offsets differ"
        );
        (out, offsets.iter().map(|&o| o as usize).collect())
    }

    #[test]
    fn short_and_long_entries_gather_to_their_bytes() {
        let long = [b'x'; 100];
        for entries in [
            vec![&b"AIR"[..], b"", b"DELIVER IN PERSON", b"R"],
            vec![&b"a"[..], &long[..], b"bc"],
            // Entries of one length take the fixed-width gather.
            vec![&b"N"[..], b"Y"],
            vec![&b"abc"[..], b"def", b"ghi"],
            vec![&b""[..], b""],
        ] {
            let d = dict(&entries);
            let idx: Vec<u32> = (0..50).map(|i| (i * 7 % entries.len()) as u32).collect();
            let (out, offsets) = gathered(&d, &idx, b"pre");
            let mut want = b"pre".to_vec();
            let mut want_off = vec![3];
            for &k in &idx {
                want.extend_from_slice(entries[k as usize]);
                want_off.push(want.len());
            }
            assert_eq!(out, want);
            assert_eq!(offsets, want_off);
            assert_eq!(out.len(), *offsets.last().unwrap());
        }
    }

    #[test]
    fn long_index_arrays_gather_in_pieces_alike() {
        let long = [b'y'; 70];
        for entries in [
            vec![&b"N"[..], b"Y", b"", &long[..], b"MAIL"],
            vec![&b"N"[..], b"Y", b"A"],
        ] {
            let d = dict(&entries);
            let idx: Vec<u32> = (0..5 * PIECE as u32 + 17)
                .map(|i| (i / 3 + i % 11) % entries.len() as u32)
                .collect();
            let (out, offsets) = gathered(&d, &idx, b"xy");
            let mut want = b"xy".to_vec();
            let mut want_off = vec![2];
            for &k in &idx {
                want.extend_from_slice(entries[k as usize]);
                want_off.push(want.len());
            }
            assert_eq!(out, want);
            assert_eq!(offsets, want_off);
        }
    }

    #[test]
    fn utf8_is_checked_per_entry_and_lengths_must_match() {
        assert!(dict(&[b"caf\xc3\xa9", b"ok"]).utf8());
        // Each entry alone is invalid although the concatenation is not.
        assert!(!dict(&[b"caf\xc3", b"\xa9"]).utf8());
        assert!(!dict(&[b"\xc3", b"\xa9ok"]).utf8());
        assert!(dict(&[b"", b"\xc3\xa9", b"", b"x"]).utf8());
        assert!(!dict(&[b"ok", b"\xff"]).utf8());
        assert!(ByteDict::new(&[2, 2], b"abc").is_none());
        assert_eq!(dict(&[]).len(), 0);
        let (out, offsets) = gathered(&dict(&[b"a"]), &[], b"");
        assert!(out.is_empty() && offsets == [0]);
    }
}
