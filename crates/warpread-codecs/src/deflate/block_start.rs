//! Finding where deflate blocks may start inside a stream, without
//! decoding what comes before (rapidgzip's block finder, Knespel and Brunst
//! 2023). Only dynamic and stored blocks are searched for: a fixed block's
//! three header bits match almost anywhere. A dynamic candidate must be a
//! whole header zlib accepts (code-length code, lengths, both codes); a
//! stored candidate needs zero padding, LEN = !NLEN and its bytes inside
//! the input. A candidate is a guess: the span decoded from it is kept only
//! once the previous span has been seen to end exactly there.

use super::bits::BitReader;
use super::header;

/// A block start's identity, for telling whether a span ended where the
/// next one began: the bit offset (times 4) for a compressed block; for a
/// stored block, which may be entered from any of the zero bits before its
/// byte boundary with the same result, the byte where LEN lies and the
/// final-block bit (odd keys).
pub fn block_key(input: &[u8], bit: u64) -> u64 {
    let r = BitReader::new(input, bit);
    let head = r.peek32();
    if (head >> 1) & 3 == 0 {
        let len_byte = (bit + 3).div_ceil(8);
        (len_byte << 3) | (u64::from(head & 1) << 1) | 1
    } else {
        bit << 2
    }
}

/// The first bit offset in `from..to` where a dynamic block could start,
/// else the first where a stored block could. Dynamic candidates come
/// first because stored ones are far weaker: about one bit offset in 3
/// million of random bits passes the stored checks (three zero header bits,
/// zero padding, LEN = !NLEN), one span in 30 of 64 KiB, while a whole
/// dynamic header that zlib accepts almost never appears by chance.
pub fn find_block_start(input: &[u8], from: u64, to: u64) -> Option<u64> {
    let end = to.min(8 * input.len() as u64);
    let mut stored = None;
    for bit in from..end {
        if is_dynamic_start(input, bit) {
            return Some(bit);
        }
        if stored.is_none() && is_stored_start(input, bit) {
            stored = Some(bit);
        }
    }
    stored
}

/// Whether a dynamic block whose header zlib accepts starts at `bit`.
pub fn is_dynamic_start(input: &[u8], bit: u64) -> bool {
    let mut r = BitReader::new(input, bit);
    let head = r.peek32();
    // BTYPE 2 with HLIT <= 29 and HDIST <= 29: then the whole header.
    if (head >> 1) & 3 != 2 || (head >> 3) & 31 > 29 || (head >> 8) & 31 > 29 {
        return false;
    }
    // The code-length code must be complete (Kraft sum 1): checked from
    // two peeks before anything is decoded; most offsets fail here.
    let ncode = ((head >> 13) & 15) as usize + 4;
    let lo = BitReader::new(input, bit + 17).peek32();
    let hi = BitReader::new(input, bit + 17 + 30).peek32();
    let sum: u32 = (0..ncode)
        .map(|i| {
            let l = if i < 10 {
                lo >> (3 * i)
            } else {
                hi >> (3 * (i - 10))
            } & 7;
            if l == 0 { 0 } else { 128 >> l }
        })
        .sum();
    if sum != 128 {
        return false;
    }
    r.take(3);
    header::is_valid_dynamic(&mut r)
}

/// Whether a stored block starts at `bit`: zero padding to the byte
/// boundary, LEN = !NLEN, its bytes inside the input.
pub fn is_stored_start(input: &[u8], bit: u64) -> bool {
    let r = BitReader::new(input, bit);
    let head = r.peek32();
    if (head >> 1) & 3 != 0 {
        return false;
    }
    let pad = (8 - ((bit + 3) & 7)) & 7;
    if (head >> 3) & ((1 << pad) - 1) != 0 {
        return false;
    }
    let at = (bit + 3).div_ceil(8);
    let b = |i: u64| u16::from(r.byte(at + i));
    let len = b(0) | b(1) << 8;
    let nlen = b(2) | b(3) << 8;
    len == !nlen && at + 4 + u64::from(len) <= input.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deflate::deflate;

    #[test]
    fn finds_the_first_dynamic_block_of_a_stream() {
        let text = b"a deflate stream of text long enough for a dynamic block ".repeat(40);
        let z = deflate(&text, 6);
        // zlib starts this stream with a dynamic block.
        assert!(is_dynamic_start(&z, 0));
        assert_eq!(find_block_start(&z, 0, 64), Some(0));
        assert_eq!(block_key(&z, 0), 0);
    }

    #[test]
    fn stored_blocks_match_from_any_zero_bit_before_their_length() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7919 % 251) as u8).collect();
        let z = deflate(&data, 0);
        assert!(is_stored_start(&z, 0));
        // The same final stored block with its header at bit 2 instead of
        // bit 0 (zeros up to the byte boundary either way): the same key.
        let k0 = block_key(&z, 0);
        assert_eq!(k0, 1 << 3 | 1 << 1 | 1);
        let mut shifted = z.clone();
        shifted[0] = z[0] << 2;
        assert!(is_stored_start(&shifted, 2));
        assert_eq!(block_key(&shifted, 2), k0);
        // From bit 1 of the original: a stored block too, but not final.
        assert_ne!(block_key(&z, 1), k0);
        // LEN != !NLEN is no stored block.
        let mut bad = z.clone();
        bad[3] ^= 1;
        assert!(!is_stored_start(&bad, 0));
    }
}
