//! Reading a deflate stream's bits least significant first, at any bit
//! offset, with zeros past the end: a read never fails, and whether the
//! stream ran out is judged once from the position
//! ([`BitReader::past_end`]), as the CUDA kernels do.

/// A bit position in a byte slice.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BitReader<'a> {
    input: &'a [u8],
    /// Bits consumed from the start of `input`.
    pub(crate) pos: u64,
}

impl<'a> BitReader<'a> {
    pub(crate) fn new(input: &'a [u8], pos: u64) -> Self {
        Self { input, pos }
    }

    /// The next 32 bits (fewer are real past the end; the rest are zeros).
    #[inline]
    pub(crate) fn peek32(&self) -> u32 {
        let byte = (self.pos >> 3) as usize;
        let shift = (self.pos & 7) as u32;
        if let Some(w) = self.input.get(byte..byte.wrapping_add(8)) {
            let w: [u8; 8] = w.try_into().expect("8 bytes");
            return (u64::from_le_bytes(w) >> shift) as u32;
        }
        let mut w = [0u8; 8];
        if byte < self.input.len() {
            let n = (self.input.len() - byte).min(8);
            w[..n].copy_from_slice(&self.input[byte..byte + n]);
        }
        (u64::from_le_bytes(w) >> shift) as u32
    }

    /// Consumes `n` (at most 32) bits and returns them.
    #[inline]
    pub(crate) fn take(&mut self, n: u32) -> u32 {
        let v = if n == 0 {
            0
        } else {
            self.peek32() & (u32::MAX >> (32 - n))
        };
        self.pos += u64::from(n);
        v
    }

    /// Skips to the next byte boundary.
    #[inline]
    pub(crate) fn align(&mut self) {
        self.pos = self.pos.div_ceil(8) * 8;
    }

    /// Whether more bits were consumed than the input holds.
    #[inline]
    pub(crate) fn past_end(&self) -> bool {
        self.pos > 8 * self.input.len() as u64
    }

    /// The byte at `at`, or 0 past the end.
    #[inline]
    pub(crate) fn byte(&self, at: u64) -> u8 {
        usize::try_from(at)
            .ok()
            .and_then(|i| self.input.get(i))
            .copied()
            .unwrap_or(0)
    }

    /// The input's length in bits.
    #[inline]
    pub(crate) fn len_bits(&self) -> u64 {
        8 * self.input.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lsb_first_across_bytes_and_zeros_past_the_end() {
        let data = [0b1010_1100u8, 0xff, 0x01];
        let mut r = BitReader::new(&data, 2);
        assert_eq!(r.take(3), 0b011);
        assert_eq!(r.take(5), 0b11101);
        assert_eq!(r.take(8), 0x7f);
        assert_eq!(r.take(12), 0);
        assert!(r.past_end());
        let mut r = BitReader::new(&data, 0);
        r.take(1);
        r.align();
        assert_eq!(r.pos, 8);
        r.align();
        assert_eq!(r.pos, 8);
    }
}
