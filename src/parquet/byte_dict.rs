//! A byte-array dictionary and the gather of its entries by index: the
//! host-side step of RLE_DICTIONARY / PLAIN_DICTIONARY byte-array pages
//! (the indices come from a hybrid decoding stage).
//!
//! Short entries (TPC-H flags, ship modes: 1 to 25 bytes) are copied as
//! fixed 32-byte blocks from a padded copy of the dictionary, the output
//! advancing by the entry's length: one unconditional copy per value
//! instead of a length-dependent `memcpy` call. The dictionary is checked
//! for UTF-8 once, so strings gathered from it need no second check.

/// Entries up to this long take the fixed-block copy.
const BLOCK: usize = 32;

/// A byte-array dictionary page, decoded.
#[derive(Debug)]
pub struct ByteDict {
    /// `n + 1` offsets into `data`.
    offsets: Vec<usize>,
    /// The entries end to end, then `BLOCK` zero bytes.
    data: Vec<u8>,
    /// Longest entry.
    max_len: usize,
    /// Whether every entry is valid UTF-8.
    utf8: bool,
}

impl ByteDict {
    /// From the entries' lengths and bytes (as a PLAIN byte-array page
    /// gives them); `None` when the lengths do not add up to the bytes.
    pub fn new(lengths: &[u32], bytes: &[u8]) -> Option<Self> {
        let mut offsets = Vec::with_capacity(lengths.len() + 1);
        offsets.push(0usize);
        let mut max_len = 0;
        for &l in lengths {
            let l = l as usize;
            max_len = max_len.max(l);
            offsets.push(offsets.last().expect("non-empty") + l);
        }
        if *offsets.last().expect("non-empty") != bytes.len() {
            return None;
        }
        let utf8 = offsets
            .windows(2)
            .all(|w| std::str::from_utf8(&bytes[w[0]..w[1]]).is_ok());
        let mut data = Vec::with_capacity(bytes.len() + BLOCK);
        data.extend_from_slice(bytes);
        data.resize(bytes.len() + BLOCK, 0);
        Some(Self {
            offsets,
            data,
            max_len,
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

    /// Length of entry `k` (`k < len()`).
    pub fn entry_len(&self, k: usize) -> usize {
        self.offsets[k + 1] - self.offsets[k]
    }

    /// Appends the entries `indices` name (each `< len()`, checked by the
    /// caller) to `out`, pushing each value's end offset (in `out`).
    pub fn gather(&self, indices: &[u32], out: &mut Vec<u8>, offsets: &mut Vec<usize>) {
        let off = &self.offsets;
        let mut pos = out.len();
        offsets.reserve(indices.len());
        if self.max_len <= BLOCK {
            let total: usize = indices.iter().map(|&k| self.entry_len(k as usize)).sum();
            // Written in place of zero-filling first (a second pass over
            // fresh memory); slack for the last block.
            out.reserve(total + BLOCK);
            let start = pos;
            let spare = &mut out.spare_capacity_mut()[..total + BLOCK];
            let mut at = 0;
            for &k in indices {
                let s = off[k as usize];
                let l = off[k as usize + 1] - s;
                spare[at..at + BLOCK].write_copy_of_slice(&self.data[s..s + BLOCK]);
                at += l;
                pos += l;
                offsets.push(pos);
            }
            // SAFETY: the loop wrote every byte of `start..start + total`
            // (each value's block covers its own bytes, values are
            // consecutive and `at` ends at `total`).
            debug_assert_eq!(at, total);
            unsafe { out.set_len(start + total) };
        } else {
            for &k in indices {
                let s = off[k as usize];
                let e = off[k as usize + 1];
                out.extend_from_slice(&self.data[s..e]);
                pos += e - s;
                offsets.push(pos);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict(entries: &[&[u8]]) -> ByteDict {
        let lengths: Vec<u32> = entries.iter().map(|e| e.len() as u32).collect();
        ByteDict::new(&lengths, &entries.concat()).unwrap()
    }

    fn gathered(d: &ByteDict, idx: &[u32], prefix: &[u8]) -> (Vec<u8>, Vec<usize>) {
        let mut out = prefix.to_vec();
        let mut offsets = vec![prefix.len()];
        d.gather(idx, &mut out, &mut offsets);
        (out, offsets)
    }

    #[test]
    fn short_and_long_entries_gather_to_their_bytes() {
        let long = [b'x'; 100];
        for entries in [
            vec![&b"AIR"[..], b"", b"DELIVER IN PERSON", b"R"],
            vec![&b"a"[..], &long[..], b"bc"],
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
    fn utf8_is_checked_per_entry_and_lengths_must_match() {
        assert!(dict(&[b"caf\xc3\xa9", b"ok"]).utf8());
        // Each entry alone is invalid although the concatenation is not.
        assert!(!dict(&[b"caf\xc3", b"\xa9"]).utf8());
        assert!(ByteDict::new(&[2, 2], b"abc").is_none());
        assert_eq!(dict(&[]).len(), 0);
        let (out, offsets) = gathered(&dict(&[b"a"]), &[], b"");
        assert!(out.is_empty() && offsets == [0]);
    }
}
