//! Helpers for unit tests (and the integration tests of the crates above).

/// A xorshift64 generator from `seed` (not 0): small, fast, and enough to
/// shape random test streams reproducibly.
pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// Huffman frames made by hand for status tests, over the code 'a' = 0,
/// 'b' = 10 (the pattern 11 starts no code).
pub mod huffman_ab {
    use crate::huffman::format::{CodeSection, write_frame_head};
    use crate::huffman::{CanonicalCode, SymbolWidth};

    /// The code: 'a' one bit, 'b' two, bound 4.
    pub fn code() -> CanonicalCode {
        let mut lengths = vec![0u32; 256];
        lengths[b'a' as usize] = 1;
        lengths[b'b' as usize] = 2;
        CanonicalCode::from_lengths(&lengths, 4).expect("a valid code")
    }

    /// The code's section, with `ways_log2` ways and no gap arrays.
    pub fn section(ways_log2: u8) -> CodeSection {
        CodeSection {
            width: SymbolWidth::U8,
            len: CodeSection::bytes_for(SymbolWidth::U8, 4, 2),
            code: code(),
            sub_log2: 0,
            ways_log2,
        }
    }

    /// One way's stream bits: "ab" eight times (24 bits).
    pub fn way() -> String {
        "010".repeat(8)
    }

    /// Payload words (little-endian bytes) holding `bits` ('0' and '1')
    /// from stream bit 0, zeros after.
    pub fn pack(bits: &str) -> Vec<u8> {
        let mut words = vec![0u32; bits.len().div_ceil(32)];
        for (i, c) in bits.bytes().enumerate() {
            if c == b'1' {
                words[i / 32] |= 1 << (31 - i % 32);
            }
        }
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// A frame of 32 bytes ("ab" x 16 when valid) in one block of two ways:
    /// the block header claims `bits` payload bits, the directory gives way
    /// 0 `dir` bits, and the payload holds `payload`.
    pub fn two_ways(bits: u32, dir: u16, payload: &str) -> Vec<u8> {
        let mut f = Vec::new();
        write_frame_head(32, 1024, &section(1), &[20], &mut f);
        f.extend_from_slice(&[0, 0, 0, 0]);
        f.extend_from_slice(&bits.to_le_bytes());
        f.extend_from_slice(&dir.to_le_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(&pack(payload));
        f
    }
}
