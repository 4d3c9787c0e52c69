//! LZO1X decompression into a bounded slice, every read and write checked.
//!
//! lzokay-native, the crate used before, indexes and subtracts unchecked: a
//! match reaching before the start of the output or a truncated length run
//! panics inside it, and a long run grows its output vector without bound.
//! Damaged ORC files reach this decoder with hostile bytes, so it follows
//! the same format (liblzo's `lzo1x_decompress_safe` semantics, the stream
//! lzokay-native accepts) with errors instead.
//!
//! The stream is a sequence of instructions; `state` is the number of
//! literals the previous instruction copied (4 meaning "4 or more"), which
//! selects how the short opcodes 0..15 read:
//!
//! | opcode    | meaning                                                  |
//! |-----------|----------------------------------------------------------|
//! | 0..15     | state 0: literal run of 3 + L (L = 0: long length)       |
//! | 0..15     | state 1..3: 2-byte match, distance (H << 2) + D + 1       |
//! | 0..15     | state 4: 3-byte match, distance (H << 2) + D + 2049       |
//! | 16..31    | M4 match, distance 16384 + (H << 14) + D; D = 0 ends     |
//! | 32..63    | M3 match, distance D + 1                                  |
//! | 64..255   | M2 match, length 3..8, distance (H << 3) + D + 1          |
//!
//! Each match carries in its low two bits the count of literals (0..3)
//! that follow it.

use crate::plan::StatusCode;

/// Why a stream was rejected: the code, the input byte where decoding
/// stopped and the bytes produced until then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LzoError {
    pub code: StatusCode,
    pub at: usize,
    pub produced: usize,
}

struct Decoder<'a> {
    input: &'a [u8],
    ip: usize,
    out: &'a mut [u8],
    op: usize,
}

impl Decoder<'_> {
    fn fail(&self, code: StatusCode) -> LzoError {
        LzoError {
            code,
            at: self.ip,
            produced: self.op,
        }
    }

    fn byte(&mut self) -> Result<u8, LzoError> {
        let b = *self
            .input
            .get(self.ip)
            .ok_or_else(|| self.fail(StatusCode::InputTruncated))?;
        self.ip += 1;
        Ok(b)
    }

    fn le16(&mut self) -> Result<usize, LzoError> {
        let lo = self.byte()?;
        let hi = self.byte()?;
        Ok(usize::from(u16::from_le_bytes([lo, hi])))
    }

    /// A length whose opcode bits were zero: 255 per zero byte, then the
    /// first non-zero byte, on top of `base`.
    fn long_length(&mut self, base: usize) -> Result<usize, LzoError> {
        let mut zeros = 0usize;
        loop {
            match self.byte()? {
                0 => zeros += 1,
                b => {
                    return zeros
                        .checked_mul(255)
                        .and_then(|n| n.checked_add(base + usize::from(b)))
                        .ok_or_else(|| self.fail(StatusCode::InputCorrupt));
                }
            }
        }
    }

    fn literals(&mut self, n: usize) -> Result<(), LzoError> {
        if n > self.out.len() - self.op {
            return Err(self.fail(StatusCode::OutputOverflow));
        }
        let src = self
            .input
            .get(self.ip..self.ip + n)
            .ok_or_else(|| self.fail(StatusCode::InputTruncated))?;
        self.out[self.op..self.op + n].copy_from_slice(src);
        self.ip += n;
        self.op += n;
        Ok(())
    }

    /// Copies `len` bytes from `dist` back; byte by byte, since a match
    /// may overlap the bytes it writes (a run).
    fn copy_match(&mut self, dist: usize, len: usize) -> Result<(), LzoError> {
        if dist == 0 || dist > self.op {
            return Err(self.fail(StatusCode::InputCorrupt));
        }
        if len > self.out.len() - self.op {
            return Err(self.fail(StatusCode::OutputOverflow));
        }
        let from = self.op - dist;
        if dist >= len {
            self.out.copy_within(from..from + len, self.op);
        } else {
            for i in 0..len {
                self.out[self.op + i] = self.out[from + i];
            }
        }
        self.op += len;
        Ok(())
    }
}

/// Decompresses one LZO1X block into `out`; the decompressed size on
/// success. Input after the end-of-stream marker is ignored, as
/// lzokay-native did.
pub(crate) fn decompress(input: &[u8], out: &mut [u8]) -> Result<usize, LzoError> {
    let mut d = Decoder {
        input,
        ip: 0,
        out,
        op: 0,
    };
    // The first byte may open with a literal run that no instruction
    // precedes: byte b >= 18 copies b - 17 literals (1..238).
    let mut state = 0usize;
    match input.first() {
        None => return Err(d.fail(StatusCode::InputTruncated)),
        Some(&b) if b >= 18 => {
            d.ip = 1;
            let n = usize::from(b - 17);
            d.literals(n)?;
            state = n.min(4);
        }
        Some(_) => {}
    }
    loop {
        let inst = d.byte()?;
        let op = usize::from(inst);
        let (dist, len, next) = if inst >= 0x40 {
            let h = usize::from(d.byte()?);
            ((h << 3) + ((op >> 2) & 7) + 1, (op >> 5) + 1, op & 3)
        } else if inst >= 0x20 {
            let len = match op & 0x1f {
                0 => d.long_length(31)?,
                l => l,
            } + 2;
            let v = d.le16()?;
            ((v >> 2) + 1, len, v & 3)
        } else if inst >= 0x10 {
            let len = match op & 7 {
                0 => d.long_length(7)?,
                l => l,
            } + 2;
            let v = d.le16()?;
            let dist = ((op & 8) << 11) + (v >> 2);
            if dist == 0 {
                // The end marker is always 0x11 0x00 0x00 (length 3).
                return if len == 3 {
                    Ok(d.op)
                } else {
                    Err(d.fail(StatusCode::InputCorrupt))
                };
            }
            (dist + 0x4000, len, v & 3)
        } else if state == 0 {
            let len = match op {
                0 => d.long_length(15)?,
                l => l,
            } + 3;
            d.literals(len)?;
            state = 4;
            continue;
        } else {
            let h = usize::from(d.byte()?);
            let dist = (op >> 2) + (h << 2) + 1;
            if state == 4 {
                (dist + 2048, 3, op & 3)
            } else {
                (dist, 2, op & 3)
            }
        };
        d.copy_match(dist, len)?;
        d.literals(next)?;
        state = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize, seed: u64) -> Vec<u8> {
        // Repetitive text with noise: every match kind and long runs occur.
        let words: [&[u8]; 6] = [
            b"alpha ",
            b"beta ",
            b"gamma ",
            b"\0\0\0\0",
            b"zzzzzzzzzz",
            b"x",
        ];
        let mut s = seed;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            match (s >> 60) as usize {
                0..=9 => out.extend_from_slice(words[(s >> 33) as usize % words.len()]),
                10..=12 => out.push((s >> 20) as u8),
                13 => out.extend(std::iter::repeat_n(b'r', (s >> 40) as usize % 600)),
                _ => {
                    let back = (s >> 24) as usize % (out.len() + 1);
                    let from = out.len() - back;
                    let take = ((s >> 44) as usize % 70).min(back);
                    out.extend_from_within(from..from + take);
                }
            }
        }
        out.truncate(n);
        out
    }

    #[test]
    fn matches_lzokay_on_valid_streams() {
        for (i, n) in [1usize, 3, 4, 17, 238, 239, 1000, 70_000, 300_000]
            .into_iter()
            .enumerate()
        {
            let data = sample(n, i as u64);
            let packed = lzokay_native::compress(&data).unwrap();
            let mut out = vec![0u8; n + 64];
            let got = decompress(&packed, &mut out).unwrap();
            assert_eq!(&out[..got], &data[..], "{n} bytes");
            let theirs = lzokay_native::decompress_all(&packed, Some(n)).unwrap();
            assert_eq!(theirs, data);
            // Exactly the decompressed size fits; one byte less overflows.
            let mut exact = vec![0u8; n];
            assert_eq!(decompress(&packed, &mut exact), Ok(n));
            if n > 0 {
                let mut short = vec![0u8; n - 1];
                assert_eq!(
                    decompress(&packed, &mut short).unwrap_err().code,
                    StatusCode::OutputOverflow
                );
            }
        }
    }

    /// Damaged streams: the first five made lzokay-native panic (a match
    /// reaching before the start of the output).
    #[test]
    fn rejects_damaged_streams() {
        let cases: [(&[u8], StatusCode); 8] = [
            // Four literals, then an M2 match 9 bytes back.
            (&[21, 1, 2, 3, 4, 0x40, 0x01], StatusCode::InputCorrupt),
            // Four literals, then a 3-byte match 2049 bytes back.
            (&[21, 1, 2, 3, 4, 0x00, 0x00], StatusCode::InputCorrupt),
            // One literal, then a 2-byte match 1024 bytes back.
            (&[18, 1, 0x0c, 0xff], StatusCode::InputCorrupt),
            // Four literals, then an M3 match 16384 bytes back.
            (
                &[21, 1, 2, 3, 4, 0x21, 0xff, 0xff],
                StatusCode::InputCorrupt,
            ),
            // Four literals, then an M4 match 32769 bytes back.
            (
                &[21, 1, 2, 3, 4, 0x19, 0x04, 0x00],
                StatusCode::InputCorrupt,
            ),
            // A long literal length whose zero run reaches the end.
            (&[0x00, 0x00, 0x00], StatusCode::InputTruncated),
            // No end marker.
            (&[21, 1, 2, 3, 4], StatusCode::InputTruncated),
            // An end marker of length 4 rather than 3.
            (
                &[21, 1, 2, 3, 4, 0x12, 0x00, 0x00],
                StatusCode::InputCorrupt,
            ),
        ];
        for (input, code) in cases {
            let mut out = vec![0u8; 4096];
            assert_eq!(
                decompress(input, &mut out).unwrap_err().code,
                code,
                "{input:?}"
            );
        }
        // A long run that claims far more than the output holds stops at the
        // output's end instead of growing a vector.
        let mut run = vec![21, 1, 2, 3, 4, 0x20];
        run.extend(std::iter::repeat_n(0u8, 10_000));
        run.extend_from_slice(&[1, 0x04, 0x00]);
        let mut out = vec![0u8; 4096];
        assert_eq!(
            decompress(&run, &mut out).unwrap_err().code,
            StatusCode::OutputOverflow
        );
    }

    #[test]
    fn damaged_streams_give_errors_or_bytes_within_bounds() {
        let data = sample(20_000, 7);
        let packed = lzokay_native::compress(&data).unwrap();
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut out = vec![0u8; data.len()];
        for _ in 0..3000 {
            let mut b = packed.clone();
            match next() % 3 {
                0 => b.truncate(next() as usize % b.len()),
                1 => {
                    for _ in 0..1 + next() % 4 {
                        let k = next() as usize % b.len();
                        b[k] ^= 1 << (next() % 8);
                    }
                }
                _ => {
                    let k = next() as usize % b.len();
                    b[k] = next() as u8;
                }
            }
            if let Ok(n) = decompress(&b, &mut out) {
                assert!(n <= out.len());
            }
        }
    }
}
