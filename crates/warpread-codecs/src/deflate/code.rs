//! Huffman codes of a deflate block from their code lengths, accepted and
//! rejected exactly as zlib's `inflate_table` does, and decoded through a
//! 2^10-entry table with a canonical walk for longer codes. The CUDA kernel
//! `kernels/inflate_span.cu` builds and reads the same tables.

use super::bits::BitReader;

/// Bits of a code's lookup table.
pub(crate) const TABLE_BITS: u32 = 10;
const MAX_BITS: usize = 15;

/// Which of a block's three codes: zlib's rule for incomplete codes differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CodeKind {
    /// The code-length code of a dynamic block's header.
    CodeLengths,
    /// The literal/length code.
    LitLen,
    /// The distance code.
    Dist,
}

/// One Huffman code: a lookup table for codes of at most [`TABLE_BITS`]
/// bits (entry: symbol << 16 | length, 0 where no short code starts) and
/// the counts and sorted symbols for the canonical walk.
pub(crate) struct Code {
    table: Vec<u32>,
    count: [u16; MAX_BITS + 1],
    sorted: Vec<u16>,
}

/// Why code lengths do not form a code zlib accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CodeError {
    OverSubscribed,
    Incomplete,
}

impl Code {
    /// Builds the code of `lens` (one length per symbol, 0 = unused).
    pub(crate) fn build(lens: &[u8], kind: CodeKind) -> Result<Self, CodeError> {
        let mut count = [0u16; MAX_BITS + 1];
        for &l in lens {
            count[l as usize] += 1;
        }
        let max = (1..=MAX_BITS).rev().find(|&l| count[l] != 0).unwrap_or(0);
        let mut code = Code {
            table: vec![0; 1 << TABLE_BITS],
            count,
            sorted: Vec::new(),
        };
        if max == 0 {
            // zlib builds a table that fails every lookup and lets decoding
            // report the error; for the code-length code that error always
            // follows (the end-of-block symbol would get length 0).
            return match kind {
                CodeKind::CodeLengths => Err(CodeError::Incomplete),
                _ => {
                    code.count[0] = 0;
                    Ok(code)
                }
            };
        }
        let mut left: i32 = 1;
        for &c in &count[1..] {
            left = (left << 1) - i32::from(c);
            if left < 0 {
                return Err(CodeError::OverSubscribed);
            }
        }
        if left > 0 && (kind == CodeKind::CodeLengths || max != 1) {
            return Err(CodeError::Incomplete);
        }
        // Canonical codes: first code of each length, symbols in order.
        let mut next = [0u32; MAX_BITS + 2];
        let mut offs = [0u16; MAX_BITS + 2];
        for l in 1..=MAX_BITS {
            next[l + 1] = (next[l] + u32::from(count[l])) << 1;
            offs[l + 1] = offs[l] + count[l];
        }
        code.sorted = vec![0; usize::from(offs[MAX_BITS + 1])];
        for (sym, &l) in lens.iter().enumerate() {
            let l = usize::from(l);
            if l == 0 {
                continue;
            }
            code.sorted[usize::from(offs[l])] = sym as u16;
            offs[l] += 1;
            let c = next[l];
            next[l] += 1;
            if l as u32 <= TABLE_BITS {
                let rev = c.reverse_bits() >> (32 - l);
                let entry = (sym as u32) << 16 | l as u32;
                let mut i = rev;
                while i < 1 << TABLE_BITS {
                    code.table[i as usize] = entry;
                    i += 1 << l;
                }
            }
        }
        code.count[0] = 0;
        Ok(code)
    }

    /// Decodes one symbol; `None` for a bit pattern that is no code (of an
    /// incomplete or empty code).
    #[inline]
    pub(crate) fn decode(&self, r: &mut BitReader<'_>) -> Option<u16> {
        let bits = r.peek32();
        let e = self.table[(bits & ((1 << TABLE_BITS) - 1)) as usize];
        if e != 0 {
            r.pos += u64::from(e & 0x1f);
            return Some((e >> 16) as u16);
        }
        self.decode_long(bits, r)
    }

    /// The canonical walk, one bit at a time (codes longer than the table).
    #[cold]
    fn decode_long(&self, bits: u32, r: &mut BitReader<'_>) -> Option<u16> {
        let (mut code, mut first, mut index) = (0i32, 0i32, 0i32);
        for len in 1..=MAX_BITS {
            code |= ((bits >> (len - 1)) & 1) as i32;
            let count = i32::from(self.count[len]);
            if code - count < first {
                r.pos += len as u64;
                return self.sorted.get((index + code - first) as usize).copied();
            }
            index += count;
            first = (first + count) << 1;
            code <<= 1;
        }
        None
    }
}

/// The code lengths of the fixed literal/length code.
pub(crate) fn fixed_litlen_lens() -> [u8; 288] {
    let mut l = [8u8; 288];
    l[144..256].fill(9);
    l[256..280].fill(7);
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zlib_rules_for_over_subscribed_and_incomplete_codes() {
        assert_eq!(
            Code::build(&[1, 1, 1], CodeKind::LitLen).err(),
            Some(CodeError::OverSubscribed)
        );
        assert_eq!(
            Code::build(&[2, 2, 2], CodeKind::LitLen).err(),
            Some(CodeError::Incomplete)
        );
        // A single code of one bit is allowed except for the code-length code.
        assert!(Code::build(&[0, 1], CodeKind::Dist).is_ok());
        assert!(Code::build(&[0, 1], CodeKind::LitLen).is_ok());
        assert_eq!(
            Code::build(&[0, 1], CodeKind::CodeLengths).err(),
            Some(CodeError::Incomplete)
        );
        assert!(Code::build(&[0, 0], CodeKind::Dist).is_ok());
        assert!(Code::build(&[0, 0], CodeKind::CodeLengths).is_err());
    }

    #[test]
    fn decodes_short_and_long_codes() {
        // Lengths 1, 2, ..., 14, 15, 15: complete, with codes past the table.
        let mut lens: Vec<u8> = (1..=15).collect();
        lens.push(15);
        let code = Code::build(&lens, CodeKind::LitLen).unwrap();
        // Symbol s has canonical code 1...10 (s ones then a zero), written
        // most significant bit first into the LSB-first stream.
        for sym in 0..16u16 {
            let len = u32::from(lens[sym as usize]);
            let canon: u32 = if sym == 15 {
                (1 << 15) - 1
            } else {
                ((1 << len) - 1) & !1
            };
            let word = canon.reverse_bits() >> (32 - len);
            let bytes = (word as u64).to_le_bytes();
            let mut r = BitReader::new(&bytes, 0);
            assert_eq!(code.decode(&mut r), Some(sym), "symbol {sym}");
            assert_eq!(r.pos, u64::from(len));
        }
        // An incomplete single code: the unused pattern is no code.
        let one = Code::build(&[0, 1], CodeKind::Dist).unwrap();
        let mut r = BitReader::new(&[0b10], 0);
        assert_eq!(one.decode(&mut r), Some(1));
        assert_eq!(one.decode(&mut r), None);
    }
}
