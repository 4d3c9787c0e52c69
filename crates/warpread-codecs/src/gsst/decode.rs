//! The CPU reference decoder of one GSST block, and whole-frame helpers.
//!
//! Splits are decoded in order and the first failure ends the block, so the
//! status names the first bad code in sequential order; the kernels, which
//! decode splits concurrently, report the failure of the lowest-numbered
//! failing split and so agree.

use super::format::{ALIGN, BlockHeader, ESCAPE, check_block};
use crate::plan::{ChunkStatus, GsstLayout, StatusCode};

/// The table of a checked block, indexed by code.
struct Table {
    words: [u64; 256],
    lengths: [u8; 256],
    symbols: usize,
}

/// Decoding state of one split.
struct SplitOut<'a> {
    /// The whole block's output; the split owns `start..end`.
    out: &'a mut [u8],
    start: usize,
    end: usize,
    /// Next output byte (absolute in the block).
    at: usize,
    /// Block offset of an escape whose byte is still to come.
    escape: Option<usize>,
}

impl SplitOut<'_> {
    fn fail(&self, code: StatusCode, pos: usize) -> ChunkStatus {
        ChunkStatus::failed(code, pos as u64, self.at as u64)
    }

    /// Decodes a run of contiguous codes whose first byte is at block
    /// offset `pos`.
    fn run(&mut self, t: &Table, codes: &[u8], pos: usize) -> Result<(), ChunkStatus> {
        let mut i = 0;
        if let Some(esc) = self.escape.take() {
            if let Some(&b) = codes.first() {
                self.put_literal(b, esc)?;
                i = 1;
            } else {
                self.escape = Some(esc);
            }
        }
        while i < codes.len() {
            let c = codes[i];
            if c == ESCAPE {
                match codes.get(i + 1) {
                    Some(&b) => self.put_literal(b, pos + i)?,
                    None => {
                        self.escape = Some(pos + i);
                        return Ok(());
                    }
                }
                i += 2;
                continue;
            }
            let c = usize::from(c);
            if c >= t.symbols {
                return Err(self.fail(StatusCode::InputCorrupt, pos + i));
            }
            let len = usize::from(t.lengths[c]);
            if self.at + len > self.end {
                return Err(self.fail(StatusCode::OutputOverflow, pos + i));
            }
            let word = t.words[c].to_le_bytes();
            if self.at + 8 <= self.out.len() {
                // Bytes past the symbol land in the next split's space (or
                // this one's), which later codes overwrite.
                self.out[self.at..self.at + 8].copy_from_slice(&word);
            } else {
                self.out[self.at..self.at + len].copy_from_slice(&word[..len]);
            }
            self.at += len;
            i += 1;
        }
        Ok(())
    }

    fn put_literal(&mut self, b: u8, esc_pos: usize) -> Result<(), ChunkStatus> {
        if self.at >= self.end {
            return Err(self.fail(StatusCode::OutputOverflow, esc_pos));
        }
        self.out[self.at] = b;
        self.at += 1;
        Ok(())
    }

    /// Checks the end of the split; `end_pos` is the block offset of the
    /// code slot after the split's last code.
    fn finish(&self, end_pos: usize) -> Result<(), ChunkStatus> {
        if let Some(esc) = self.escape {
            return Err(self.fail(StatusCode::InputTruncated, esc));
        }
        if self.at < self.end {
            return Err(self.fail(StatusCode::OutputShort, end_pos));
        }
        debug_assert!(self.at == self.end && self.start <= self.end);
        Ok(())
    }
}

/// Decodes one block into `out` (exactly its uncompressed size).
/// `stage_offset` is the block's offset in the stage input (blocks must be
/// 16-byte aligned there). Failures are classified as in
/// [`check_block`] and, per split, as: a code naming no symbol →
/// `InputCorrupt`; an escape as a split's last code → `InputTruncated`; a
/// symbol past the split's output end → `OutputOverflow`; codes ending
/// before it → `OutputShort` at the slot after the split's last code.
pub fn decode_block(
    block: &[u8],
    stage_offset: u64,
    layout: GsstLayout,
    out: &mut [u8],
) -> ChunkStatus {
    let h = match check_block(block, stage_offset, out.len() as u64, layout) {
        Ok(h) => h,
        Err(s) => return s,
    };
    let mut t = Table {
        words: [0; 256],
        lengths: [0; 256],
        symbols: h.symbols,
    };
    for c in 0..h.symbols {
        let (w, l) = h.symbol(block, c);
        t.words[c] = w;
        t.lengths[c] = l as u8;
    }
    let (mut code_prev, mut out_prev) = (0usize, 0usize);
    for s in 0..h.splits {
        let (code_end, out_end) = BlockHeader::split_end(block, s);
        let (code_end, out_end) = (code_end as usize, out_end as usize);
        let count = code_end - code_prev;
        let mut st = SplitOut {
            out: &mut *out,
            start: out_prev,
            end: out_end,
            at: out_prev,
            escape: None,
        };
        let done = match layout {
            GsstLayout::Splits => {
                let pos = h.codes_at + code_prev;
                st.run(&t, &block[pos..pos + count], pos)
                    .and_then(|()| st.finish(pos + count))
            }
            GsstLayout::Coalesced => {
                let slot = |i: usize| h.codes_at + ((i / ALIGN) * h.splits + s) * ALIGN + i % ALIGN;
                let mut r = Ok(());
                for x in 0..count.div_ceil(ALIGN) {
                    let pos = slot(x * ALIGN);
                    let n = (count - x * ALIGN).min(ALIGN);
                    r = st.run(&t, &block[pos..pos + n], pos);
                    if r.is_err() {
                        break;
                    }
                }
                r.and_then(|()| st.finish(slot(count)))
            }
        };
        if let Err(status) = done {
            return status;
        }
        (code_prev, out_prev) = (code_end, out_end);
    }
    ChunkStatus::ok(h.uncompressed as u64)
}

#[cfg(test)]
mod tests {
    use super::super::compress::compress_block;
    use super::*;

    fn text(n: usize) -> Vec<u8> {
        let words = [
            "carefully ",
            "final ",
            "deposits ",
            "sleep ",
            "quickly ",
            "\n",
            "ironic ",
        ];
        let mut s = Vec::new();
        let mut x = 7u64;
        while s.len() < n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s.extend_from_slice(words[(x >> 60) as usize % words.len()].as_bytes());
        }
        s.truncate(n);
        s
    }

    #[test]
    fn blocks_round_trip_in_both_layouts() {
        for layout in GsstLayout::ALL {
            for (n, splits) in [(0, 1), (1, 1), (17, 3), (5000, 7), (100_000, 192)] {
                let data = text(n);
                let block = compress_block(&data, splits, layout);
                let mut out = vec![0u8; n];
                let st = decode_block(&block, 0, layout, &mut out);
                assert!(st.is_ok(), "{layout:?} {n}: {st}");
                assert_eq!(out, data, "{layout:?} {n}");
            }
        }
    }

    #[test]
    fn statuses_name_the_first_bad_code() {
        let data = text(4000);
        let block = compress_block(&data, 4, GsstLayout::Splits);
        let mut out = vec![0u8; data.len()];
        // wrong layout, misaligned, wrong size
        assert_eq!(
            decode_block(&block, 0, GsstLayout::Coalesced, &mut out).detail,
            11
        );
        assert_eq!(
            decode_block(&block, 8, GsstLayout::Splits, &mut out).status(),
            StatusCode::InputCorrupt
        );
        assert_eq!(
            decode_block(&block, 0, GsstLayout::Splits, &mut out[1..]).detail,
            4
        );
        // a code naming no symbol in split 2 (symbols < 255 here)
        let h = check_block(&block, 0, data.len() as u64, GsstLayout::Splits).unwrap();
        assert!(h.symbols < 255);
        let (c1, o1) = BlockHeader::split_end(&block, 1);
        let mut bad = block.clone();
        let at = h.codes_at + c1 as usize;
        bad[at] = 254;
        let st = decode_block(&bad, 0, GsstLayout::Splits, &mut out);
        assert_eq!(st.status(), StatusCode::InputCorrupt);
        assert_eq!(st.detail as usize, at);
        assert_eq!(st.produced, u64::from(o1));
    }
}
