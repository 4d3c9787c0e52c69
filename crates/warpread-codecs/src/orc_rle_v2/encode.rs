//! ORC RLE v2 encoder for tests and benchmarks, choosing sub-encodings the
//! way the Java writer does: repeats become SHORT_REPEAT (3 to 10) or a
//! constant DELTA, monotonic groups DELTA, groups with a few wide outliers
//! PATCHED_BASE, the rest DIRECT. [`encode_run`] forces one sub-encoding.

use super::bits::{bits_of, closest_fixed, encode_width, pack, packed_len};
use super::{MAX_PATCHES, MAX_RUN};
use crate::int::IntElem;
use crate::plan::ChunkJob;
use crate::varint;

/// A run's sub-encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubEncoding {
    /// 3 to 10 copies of one value.
    ShortRepeat,
    /// Bit-packed values.
    Direct,
    /// Base, narrow offsets and a patch list.
    PatchedBase,
    /// Base, first delta and packed delta magnitudes.
    Delta,
}

/// Encodes `values` as one RLE v2 stream.
pub fn encode<T: IntElem>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() + 16);
    encode_into(values, &mut out);
    out
}

/// Encodes `values` as independent streams of `chunk_values` values each
/// (the last may be shorter), concatenated; returns the bytes and one job per
/// chunk, the layout of the CODAG benchmarks.
pub fn encode_chunks<T: IntElem>(values: &[T], chunk_values: usize) -> (Vec<u8>, Vec<ChunkJob>) {
    crate::encode_chunks_with(values, chunk_values, encode_into)
}

/// Encodes `values` (1..=512 of them) as one run of `sub`, or returns
/// `None` when that sub-encoding cannot represent them.
pub fn encode_run<T: IntElem>(values: &[T], sub: SubEncoding) -> Option<Vec<u8>> {
    if values.is_empty() || values.len() > MAX_RUN {
        return None;
    }
    let mut out = Vec::new();
    let ok = match sub {
        SubEncoding::ShortRepeat => short_repeat(values, &mut out),
        SubEncoding::Direct => {
            direct(values, &mut out);
            true
        }
        SubEncoding::PatchedBase => patched_base(values, &mut out),
        SubEncoding::Delta => delta(values, &mut out),
    };
    ok.then_some(out)
}

fn payload<T: IntElem>(v: T) -> u64 {
    if T::TYPE.is_signed() {
        varint::zigzag(v.to_bits() as i64)
    } else {
        v.to_bits()
    }
}

/// Value as a mathematical integer (for choosing encodings without wrap).
fn wide<T: IntElem>(v: T) -> i128 {
    if T::TYPE.is_signed() {
        i128::from(v.to_bits() as i64)
    } else {
        i128::from(v.to_bits())
    }
}

fn encode_into<T: IntElem>(values: &[T], out: &mut Vec<u8>) {
    let mut lit_start = 0;
    let mut i = 0;
    while i < values.len() {
        let mut n = 1;
        while i + n < values.len() && values[i + n] == values[i] && n < MAX_RUN {
            n += 1;
        }
        if n >= 3 {
            literals(&values[lit_start..i], out);
            if n <= 10 {
                short_repeat(&values[i..i + n], out);
            } else {
                delta(&values[i..i + n], out);
            }
            i += n;
            lit_start = i;
        } else {
            i += n;
        }
    }
    literals(&values[lit_start..], out);
}

fn literals<T: IntElem>(values: &[T], out: &mut Vec<u8>) {
    for group in values.chunks(MAX_RUN) {
        let monotone = group.len() >= 3
            && (group.windows(2).all(|w| wide(w[1]) >= wide(w[0]))
                || group.windows(2).all(|w| wide(w[1]) <= wide(w[0])));
        if monotone && delta(group, out) {
            continue;
        }
        if group.len() >= 3 && patched_base(group, out) {
            continue;
        }
        direct(group, out);
    }
}

fn header2(tag: u8, code: u8, n: usize) -> [u8; 2] {
    let len = n - 1;
    [tag << 6 | code << 1 | (len >> 8) as u8, len as u8]
}

fn short_repeat<T: IntElem>(values: &[T], out: &mut Vec<u8>) -> bool {
    if !(3..=10).contains(&values.len()) || values.iter().any(|&v| v != values[0]) {
        return false;
    }
    let p = payload(values[0]);
    let bytes = bits_of(p).div_ceil(8).max(1);
    out.push(((bytes - 1) << 3) as u8 | (values.len() - 3) as u8);
    out.extend_from_slice(&p.to_be_bytes()[8 - bytes as usize..]);
    true
}

fn direct<T: IntElem>(values: &[T], out: &mut Vec<u8>) {
    let width = closest_fixed(
        values
            .iter()
            .map(|&v| bits_of(payload(v)))
            .max()
            .unwrap_or(0),
    );
    out.extend_from_slice(&header2(1, encode_width(width), values.len()));
    pack(out, values.iter().map(|&v| payload(v)), width);
}

fn delta<T: IntElem>(values: &[T], out: &mut Vec<u8>) -> bool {
    let n = values.len();
    let step = if n > 1 {
        wide(values[1]) - wide(values[0])
    } else {
        0
    };
    if i64::try_from(step).is_err() {
        return false;
    }
    let fixed = values.windows(2).all(|w| wide(w[1]) - wide(w[0]) == step);
    let mags: Vec<u128> = values
        .windows(2)
        .skip(1)
        .map(|w| (wide(w[1]) - wide(w[0])).unsigned_abs())
        .collect();
    let same_sign = values.windows(2).skip(1).all(|w| {
        let d = wide(w[1]) - wide(w[0]);
        d == 0 || (d < 0) == (step < 0)
    });
    if !fixed && (!same_sign || n < 3 || mags.iter().any(|&m| m > u128::from(u64::MAX))) {
        return false;
    }
    // Code 0 means "no delta bits" in a DELTA header, so one-bit deltas
    // are packed at two bits, as the Java writer does.
    let width = if fixed {
        0
    } else {
        closest_fixed(mags.iter().map(|&m| bits_of(m as u64)).max().unwrap_or(0)).max(2)
    };
    let code = if fixed { 0 } else { encode_width(width) };
    out.extend_from_slice(&header2(3, code, n));
    varint::write(out, payload(values[0]));
    varint::write(out, varint::zigzag(step as i64));
    if !fixed {
        pack(out, mags.iter().map(|&m| m as u64), width);
    }
    true
}

/// PATCHED_BASE when the widest 10% of offsets from the minimum need more
/// bits than the rest, there are few enough of them and the base fits its
/// sign-magnitude field.
fn patched_base<T: IntElem>(values: &[T], out: &mut Vec<u8>) -> bool {
    let n = values.len();
    let min = values.iter().map(|&v| wide(v)).min().unwrap_or(0);
    let offsets: Vec<u128> = values.iter().map(|&v| (wide(v) - min) as u128).collect();
    if offsets.iter().any(|&o| o > u128::from(u64::MAX)) || min.unsigned_abs() >= 1u128 << 63 {
        return false;
    }
    let mut widths: Vec<u32> = offsets.iter().map(|&o| bits_of(o as u64)).collect();
    widths.sort_unstable();
    let w100 = widths[n - 1];
    let w90 = widths[(n * 9 / 10).min(n - 1)];
    let width = closest_fixed(w90);
    if w100 <= width {
        return false;
    }
    let patch_width = closest_fixed(w100 - width);
    let mut entries: Vec<(u64, u64)> = Vec::new();
    let mut last = 0usize;
    for (i, &o) in offsets.iter().enumerate() {
        let hi = (o as u64) >> width;
        if hi == 0 {
            continue;
        }
        let mut gap = i - last;
        while gap > 255 {
            entries.push((255, 0));
            gap -= 255;
        }
        entries.push((gap as u64, hi));
        last = i;
    }
    let gap_bits = entries
        .iter()
        .map(|e| bits_of(e.0))
        .max()
        .unwrap_or(1)
        .max(1);
    if entries.len() > MAX_PATCHES || gap_bits > 8 || gap_bits + patch_width > 64 {
        return false;
    }
    // Sign-magnitude base in as few bytes as hold magnitude and sign bit.
    let mag = min.unsigned_abs() as u64;
    let base_bytes = (bits_of(mag) + 1).div_ceil(8).max(1);
    let mut base = mag;
    if min < 0 {
        base |= 1u64 << (base_bytes * 8 - 1);
    }
    out.extend_from_slice(&header2(2, encode_width(width), n));
    out.push(((base_bytes - 1) << 5) as u8 | encode_width(patch_width));
    out.push(((gap_bits - 1) << 5) as u8 | entries.len() as u8);
    out.extend_from_slice(&base.to_be_bytes()[8 - base_bytes as usize..]);
    let low_mask = (1u64 << width).wrapping_sub(1) | if width == 64 { u64::MAX } else { 0 };
    pack(out, offsets.iter().map(|&o| o as u64 & low_mask), width);
    let entry_width = closest_fixed(gap_bits + patch_width);
    let before = out.len();
    pack(
        out,
        entries.iter().map(|&(g, p)| g << patch_width | p),
        entry_width,
    );
    debug_assert_eq!(out.len() - before, packed_len(entries.len(), entry_width));
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orc_rle_v2::decode;

    fn round_trip<T: IntElem>(vals: &[T]) {
        let enc = encode(vals);
        let mut out = vec![T::default(); vals.len()];
        let st = decode(&enc, &mut out);
        assert!(st.is_ok(), "{:?}: {st}", T::TYPE);
        assert_eq!(out, vals);
    }

    fn forced<T: IntElem>(vals: &[T], sub: SubEncoding) {
        let enc = encode_run(vals, sub).unwrap_or_else(|| panic!("{sub:?} refused {vals:?}"));
        let mut out = vec![T::default(); vals.len()];
        let st = decode(&enc, &mut out);
        assert!(st.is_ok(), "{sub:?} {:?}: {st}", T::TYPE);
        assert_eq!(out, vals, "{sub:?}");
    }

    #[test]
    fn spec_examples_encode_as_the_spec_shows() {
        assert_eq!(encode(&[10000u32; 5]), vec![0x0a, 0x27, 0x10]);
        // The spec packs these deltas at 4 bits; 3 suffice, which is what
        // this encoder (and the Java writer's minimal width) picks.
        let primes = [2u32, 3, 5, 7, 11, 13, 17, 19, 23, 29];
        let enc = encode(&primes);
        assert_eq!(enc[..4], [0xc4, 0x09, 0x02, 0x02]);
        round_trip(&primes);
    }

    #[test]
    fn every_sub_encoding_every_type() {
        forced(&[-5i8; 7], SubEncoding::ShortRepeat);
        forced(&[u64::MAX; 10], SubEncoding::ShortRepeat);
        forced(&[i64::MIN, i64::MAX, 0, -1], SubEncoding::Direct);
        forced(&[u64::MAX, 0, 1 << 63], SubEncoding::Direct);
        forced(&[i16::MIN, i16::MAX, 7], SubEncoding::Direct);
        forced(
            &(0..200).map(|i| i * 3 - 100).collect::<Vec<i32>>(),
            SubEncoding::Delta,
        );
        forced(
            &(0..512u64).rev().map(|i| i * i).collect::<Vec<_>>(),
            SubEncoding::Delta,
        );
        forced(&[250u8, 251, 253, 255], SubEncoding::Delta);
        forced(&[i64::MAX, i64::MAX - 1, i64::MIN + 5], SubEncoding::Direct);
        let mut spiky: Vec<i64> = (0..300).map(|i| 2000 + i % 50).collect();
        spiky[3] = 1_000_000;
        spiky[290] = 7_000_000_000;
        forced(&spiky, SubEncoding::PatchedBase);
        let mut far: Vec<u32> = (0..512).map(|i| i % 13).collect();
        far[0] = u32::MAX;
        far[511] = u32::MAX - 1;
        forced(&far, SubEncoding::PatchedBase);
    }

    #[test]
    fn short_random_groups_round_trip() {
        // xorshift: short groups of every shape reach the encoder's edge
        // cases (one-bit deltas, two-value groups, sign changes).
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..5000 {
            let n = 1 + (next() % 24) as usize;
            let shape = next() % 4;
            let vals: Vec<i64> = (0..n as i64)
                .map(|i| match shape {
                    0 => next() as i64 >> (next() % 64),
                    1 => i * (next() % 5) as i64,
                    2 => (next() % 3) as i64 - 1,
                    _ => i * i,
                })
                .collect();
            round_trip(&vals);
            round_trip(&vals.iter().map(|&v| v as i8).collect::<Vec<_>>());
            round_trip(&vals.iter().map(|&v| v as u16).collect::<Vec<_>>());
        }
    }

    #[test]
    fn mixed_streams_round_trip() {
        let vals: Vec<i64> = (0..5000)
            .map(|i: i64| match i % 1000 {
                0..=199 => 42,
                200..=399 => i * 17,
                400..=599 => (i * 7919) % 1000 - 500,
                600..=609 => 1 << 40,
                _ => i.wrapping_mul(0x5851_f42d_4c95_7f2d) >> (i % 60),
            })
            .collect();
        round_trip(&vals);
        round_trip(&vals.iter().map(|&v| v as u8).collect::<Vec<_>>());
        round_trip(&vals.iter().map(|&v| v as i16).collect::<Vec<_>>());
        round_trip(&vals.iter().map(|&v| v as u64).collect::<Vec<_>>());
        round_trip::<u32>(&[]);
        round_trip(&[1u32]);
        round_trip(&[1u32, 2]);
    }
}
