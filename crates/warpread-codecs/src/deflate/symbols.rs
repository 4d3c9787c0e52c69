//! The length and distance symbols of RFC 1951 (section 3.2.5): the base
//! value and the number of extra bits of length symbol 257 + i and of
//! distance symbol i. The decoders read them; test encoders pick a
//! symbol as the last base at or below the value.

/// Base length of length symbol 257 + i.
pub const LEN_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
/// Extra bits after length symbol 257 + i.
pub const LEN_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
/// Base distance of distance symbol i.
pub const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
/// Extra bits after distance symbol i.
pub const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_symbol_ends_where_the_next_begins() {
        for i in 0..27 {
            let end = u32::from(LEN_BASE[i]) + (1 << LEN_EXTRA[i]);
            assert_eq!(end, u32::from(LEN_BASE[i + 1]), "length symbol {}", 257 + i);
        }
        // Symbol 284's extra bits reach 258, which has its own symbol (285).
        assert_eq!(u32::from(LEN_BASE[27]) + (1 << LEN_EXTRA[27]), 259);
        for i in 0..29 {
            let end = u32::from(DIST_BASE[i]) + (1 << DIST_EXTRA[i]);
            assert_eq!(end, u32::from(DIST_BASE[i + 1]), "distance symbol {i}");
        }
        assert_eq!(u32::from(DIST_BASE[29]) + (1 << DIST_EXTRA[29]), 32769);
    }
}
