//! FSST symbol tables: training (the `fsst-rs` crate's generational
//! algorithm) and encoding into codes whose token boundaries are known, so
//! that splits can be cut where no escape is separated from its byte.

use super::format::{ESCAPE, MAX_SYMBOLS};

/// A trained table of at most 255 symbols of 1 to 8 bytes.
#[derive(Clone)]
pub struct SymbolTable {
    compressor: fsst::Compressor,
}

impl std::fmt::Debug for SymbolTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymbolTable")
            .field("symbols", &self.len())
            .finish()
    }
}

impl SymbolTable {
    /// Trains a table on `data` (fsst samples about 16 KiB of it).
    #[inline]
    pub fn train(data: &[u8]) -> Self {
        let values: Vec<&[u8]> = if data.is_empty() {
            Vec::new()
        } else {
            vec![data]
        };
        Self {
            compressor: fsst::Compressor::train(&values),
        }
    }

    /// Symbols in the table.
    #[inline]
    pub fn len(&self) -> usize {
        self.compressor.n_symbols().min(MAX_SYMBOLS)
    }

    /// True for a table without symbols (every byte is escaped).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Symbol `code` as a little-endian word (bytes past its length zero)
    /// and its length.
    #[inline]
    pub fn symbol(&self, code: usize) -> (u64, u8) {
        let len = self.compressor.symbol_lengths()[code];
        let word = self.compressor.symbol_table()[code].to_u64();
        let mask = if len >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * u32::from(len))) - 1
        };
        (word & mask, len)
    }

    /// Appends the codes of `data` to `codes`: one code per symbol, or
    /// [`ESCAPE`] and the raw byte.
    pub fn encode(&self, data: &[u8], codes: &mut Vec<u8>) {
        codes.reserve(data.len() * 2);
        let mut pos = 0usize;
        let mut scratch = [0u8; 2];
        while pos < data.len() {
            let rest = &data[pos..];
            let (word, avail) = if rest.len() >= 8 {
                (
                    u64::from_le_bytes(rest[..8].try_into().expect("8 bytes")),
                    8,
                )
            } else {
                let mut w = [0u8; 8];
                w[..rest.len()].copy_from_slice(rest);
                (u64::from_le_bytes(w), rest.len())
            };
            // SAFETY: `scratch` holds the two bytes compress_word may write.
            let (advance_in, advance_out) =
                unsafe { self.compressor.compress_word(word, scratch.as_mut_ptr()) };
            // Near the end the word is zero-padded, and a symbol ending in
            // zero bytes could match past the data: escape the byte instead.
            if advance_in == 0 || advance_in > avail {
                codes.extend_from_slice(&[ESCAPE, rest[0]]);
                pos += 1;
            } else {
                codes.extend_from_slice(&scratch[..advance_out]);
                pos += advance_in;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(t: &SymbolTable, codes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < codes.len() {
            if codes[i] == ESCAPE {
                out.push(codes[i + 1]);
                i += 2;
            } else {
                let (w, l) = t.symbol(codes[i] as usize);
                out.extend_from_slice(&w.to_le_bytes()[..l as usize]);
                i += 1;
            }
        }
        out
    }

    #[test]
    fn encodes_text_compactly_and_exactly() {
        let text = b"the quick brown fox jumps over the lazy dog; ".repeat(200);
        let t = SymbolTable::train(&text);
        assert!(!t.is_empty());
        let mut codes = Vec::new();
        t.encode(&text, &mut codes);
        assert!(codes.len() * 3 < text.len(), "{} codes", codes.len());
        assert_eq!(decode(&t, &codes), text);
    }

    #[test]
    fn zero_bytes_at_the_end_never_overrun() {
        let mut data = Vec::new();
        for i in 0..4000u32 {
            data.extend_from_slice(&[b'a', 0, 0, (i % 7) as u8]);
        }
        let t = SymbolTable::train(&data);
        for cut in [1, 2, 3, 5, 9, 4001] {
            let mut codes = Vec::new();
            t.encode(&data[..cut], &mut codes);
            assert_eq!(decode(&t, &codes), &data[..cut], "cut {cut}");
        }
    }

    #[test]
    fn empty_training_gives_escapes() {
        let t = SymbolTable::train(&[]);
        let mut codes = Vec::new();
        t.encode(b"xy", &mut codes);
        assert_eq!(decode(&t, &codes), b"xy");
    }
}
