//! Symbol counts for code construction: exact, over every symbol, or
//! E²MC-style, over a sample of the data.

use super::format::SymbolWidth;

/// Bytes of one sampled window: large enough that 16-bit symbols see their
/// neighbours, small enough that a sample of a few percent still spreads
/// over the whole input.
pub const SAMPLE_WINDOW: usize = 4096;

/// How the encoder counts symbols before building its code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// Every symbol is counted; only symbols that occur get codes.
    Exact,
    /// One window of [`SAMPLE_WINDOW`] bytes in every `every` (at least 2)
    /// is counted, as E²MC samples a part of the data; every symbol of the
    /// alphabet then gets a count of at least 1, so symbols the sample
    /// missed still have a (long) code.
    Every(u32),
}

/// Per symbol value (256 or 65,536 of them), how often it occurs in `data`
/// read as `width` symbols (16-bit symbols little-endian; a trailing odd
/// byte is not a symbol: the stream stores it raw).
pub fn exact(data: &[u8], width: SymbolWidth) -> Vec<u64> {
    let mut counts = vec![0u64; width.alphabet()];
    match width {
        SymbolWidth::U8 => {
            // Four tables break the store-to-load dependency on runs of one
            // byte value.
            let mut t = [[0u32; 256]; 4];
            let mut flush = |t: &mut [[u32; 256]; 4]| {
                for row in t.iter_mut() {
                    for (c, x) in counts.iter_mut().zip(row.iter_mut()) {
                        *c += u64::from(*x);
                        *x = 0;
                    }
                }
            };
            for piece in data.chunks(1 << 30) {
                let mut quads = piece.chunks_exact(4);
                for q in &mut quads {
                    t[0][q[0] as usize] += 1;
                    t[1][q[1] as usize] += 1;
                    t[2][q[2] as usize] += 1;
                    t[3][q[3] as usize] += 1;
                }
                for &b in quads.remainder() {
                    t[0][b as usize] += 1;
                }
                flush(&mut t);
            }
        }
        SymbolWidth::U16 => {
            for p in data.chunks_exact(2) {
                counts[usize::from(u16::from_le_bytes([p[0], p[1]]))] += 1;
            }
        }
    }
    counts
}

/// The windows a sampled count reads from `len` bytes: byte `p` is
/// counted when `p >= first` and `(p - first) % step < SAMPLE_WINDOW`
/// (`first` and `step` even, so 16-bit symbols stay whole); `None` when
/// every byte is counted.
pub fn sample_windows(len: usize, sampling: Sampling) -> Option<(usize, usize)> {
    match sampling {
        Sampling::Exact | Sampling::Every(0..=1) => None,
        Sampling::Every(every) => {
            let step = SAMPLE_WINDOW * every as usize;
            // Windows spread evenly, starting mid-stride so a short input
            // with a distinctive head is not all the sample sees.
            Some(((step / 2).min(len.saturating_sub(SAMPLE_WINDOW)) & !1, step))
        }
    }
}

/// Symbol counts for `data` under `sampling` (see [`Sampling`]).
pub fn counts(data: &[u8], width: SymbolWidth, sampling: Sampling) -> Vec<u64> {
    match sample_windows(data.len(), sampling) {
        None => exact(data, width),
        Some((first, step)) => {
            // Every symbol of the alphabet gets a code.
            let mut counts = vec![1u64; width.alphabet()];
            let mut at = first;
            loop {
                let end = (at + SAMPLE_WINDOW).min(data.len());
                for (c, x) in counts.iter_mut().zip(exact(&data[at..end], width)) {
                    *c += x;
                }
                at += step;
                if at >= data.len() {
                    break;
                }
            }
            counts
        }
    }
}

/// The bits `data`'s exact counts would take at their order-0 entropy
/// (the bound no symbol code beats).
pub fn entropy_bits(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return 0.0;
    }
    let t = total as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let c = c as f64;
            -c * (c / t).log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_counts_bytes_and_pairs() {
        let data = b"abracadabra!";
        let c = exact(data, SymbolWidth::U8);
        assert_eq!(c[b'a' as usize], 5);
        assert_eq!(c[b'!' as usize], 1);
        assert_eq!(c.iter().sum::<u64>(), 12);
        let p = exact(b"abab\x01", SymbolWidth::U16);
        assert_eq!(p[usize::from(u16::from_le_bytes(*b"ab"))], 2);
        assert_eq!(p.iter().sum::<u64>(), 2);
    }

    #[test]
    fn sampling_covers_the_alphabet_and_sees_part_of_the_data() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 7) as u8).collect();
        let c = counts(&data, SymbolWidth::U8, Sampling::Every(4));
        assert!(c.iter().all(|&x| x >= 1));
        let seen: u64 = c.iter().sum::<u64>() - 256;
        assert!(seen > 0 && seen < data.len() as u64 / 2, "{seen}");
        assert_eq!(
            counts(&data, SymbolWidth::U8, Sampling::Every(1)),
            exact(&data, SymbolWidth::U8)
        );
        // A tiny input is still sampled somewhere.
        let c = counts(b"zz", SymbolWidth::U8, Sampling::Every(8));
        assert_eq!(c[b'z' as usize], 3);
    }

    #[test]
    fn entropy_of_uniform_bytes() {
        let c = vec![10u64; 256];
        assert!((entropy_bits(&c) - 2560.0 * 8.0).abs() < 1e-6);
        assert_eq!(entropy_bits(&[0, 0]), 0.0);
    }
}
