//! ORC decimals: DATA holds unbounded zigzag varints, SECONDARY each value's
//! scale; values are rescaled to the column's scale as the ORC C++ reader
//! does (multiplying up, truncating down).
//!
//! Hive 0.11 decimals declare neither precision nor scale. ORC C++ reads
//! them at scale [`HIVE11_SCALE`] (its `forcedScaleOnHive11Decimal`
//! default), which is why pyarrow types them decimal128(38, 6), and fails
//! the read when a value needs more than 38 digits at that scale (its
//! `throwOnHive11DecimalOverflow` default).

use rayon::prelude::*;

/// The scale Hive 0.11 decimals are read at.
pub const HIVE11_SCALE: u32 = 6;

/// The largest magnitude of 38 decimal digits.
const MAX_38_DIGITS: i128 = 10i128.pow(38) - 1;

/// Decodes `n` Hive 0.11 decimals (no declared precision) at
/// [`HIVE11_SCALE`]; a value beyond 38 digits at that scale is an error.
/// (ORC C++ range-checks after a wrapping multiply, so a value that wraps
/// back into range would read as junk there; we reject it too.)
pub fn decode_hive11(data: &[u8], scales: &[i32], n: usize) -> Result<Vec<i128>, (u64, String)> {
    decode_at(data, scales, n, HIVE11_SCALE, true)
}

/// Decodes `n` decimals, rescaled to `scale`. Errors carry the DATA offset.
pub fn decode(
    data: &[u8],
    scales: &[i32],
    n: usize,
    scale: u32,
) -> Result<Vec<i128>, (u64, String)> {
    decode_at(data, scales, n, scale, false)
}

/// Bytes of DATA one task decodes: varints end at a byte below 0x80, so a
/// piece's values are found without decoding the pieces before it.
const PIECE_BYTES: usize = 256 << 10;

fn decode_at(
    data: &[u8],
    scales: &[i32],
    n: usize,
    scale: u32,
    at_most_38_digits: bool,
) -> Result<Vec<i128>, (u64, String)> {
    if scales.len() != n {
        return Err((0, format!("{} scales for {n} values", scales.len())));
    }
    let one = |pos: usize, s: i32| decode_one(data, pos, s, scale, at_most_38_digits);
    // Value k + 1 starts after the first terminator byte (< 0x80) at or
    // after value k's start, so the values starting in a piece are the
    // piece's terminators shifted by one: counting them gives each piece
    // its first value's index, and the pieces decode side by side into
    // their own part of the output exactly as one pass would (an error
    // ends the pass at its value, and the first error in piece order is
    // that value's).
    let pieces: Vec<std::ops::Range<usize>> = (0..data.len())
        .step_by(PIECE_BYTES)
        .map(|a| a..(a + PIECE_BYTES).min(data.len()))
        .collect();
    let counts: Vec<usize> = pieces
        .par_iter()
        .map(|r| {
            let from = r.start.saturating_sub(1);
            let terminators = data[from..r.end - 1].iter().filter(|&&b| b < 0x80).count();
            terminators + usize::from(r.start == 0)
        })
        .collect();
    let mut out = vec![0i128; counts.iter().sum::<usize>().min(n)];
    let mut parts = Vec::with_capacity(pieces.len());
    let (mut rest, mut first) = (out.as_mut_slice(), 0usize);
    for (r, &count) in pieces.iter().zip(&counts) {
        let take = count.min(n.saturating_sub(first));
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(take);
        parts.push((r.clone(), first, mine));
        rest = tail;
        first += count;
    }
    let ends: Vec<Result<usize, (u64, String)>> = parts
        .into_par_iter()
        .map(|(r, first, dst)| {
            if dst.is_empty() {
                return Ok(r.start);
            }
            // The first value starting at or after the piece's start.
            let mut pos = r.start;
            while pos > 0 && data[pos - 1] >= 0x80 {
                pos += 1;
            }
            for (d, &s) in dst.iter_mut().zip(&scales[first..]) {
                let (x, next) = one(pos, s)?;
                *d = x;
                pos = next;
            }
            Ok(pos)
        })
        .collect();
    let mut end = 0;
    for e in ends {
        end = end.max(e?);
    }
    if out.len() < n {
        return Err((end as u64, "decimal varint truncated".to_string()));
    }
    Ok(out)
}

/// The value at `pos` rescaled to `scale` from its own scale `s`, and the
/// position after it.
fn decode_one(
    data: &[u8],
    pos: usize,
    s: i32,
    scale: u32,
    at_most_38_digits: bool,
) -> Result<(i128, usize), (u64, String)> {
    let (v, next) = varint(data, pos).map_err(|m| (pos as u64, m.to_string()))?;
    let mut x = (v >> 1) as i128 ^ -((v & 1) as i128);
    let diff = scale as i64 - i64::from(s);
    if diff > 0 {
        let p = POW10[diff.min(38) as usize];
        x = if at_most_38_digits {
            x.checked_mul(p).unwrap_or(i128::MAX)
        } else {
            x.wrapping_mul(p)
        };
    } else if diff < 0 {
        x /= POW10[(-diff).min(38) as usize];
    }
    if at_most_38_digits && !(-MAX_38_DIGITS..=MAX_38_DIGITS).contains(&x) {
        return Err((
            pos as u64,
            format!("Hive 0.11 decimal has more than 38 digits at scale {scale}"),
        ));
    }
    Ok((x, next))
}

/// Powers of ten up to 10^38 (the largest in an i128), so rescaling is a
/// table lookup rather than a power per value.
const POW10: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// One unbounded varint of at most 128 bits at `pos`: the value and the
/// position after it. A value whose last byte is among the eight at `pos`
/// (56 bits: every decimal of up to 16 digits) is read as one word, its
/// 7-bit groups packed without a loop; others take [`varint_bytes`].
#[inline]
fn varint(data: &[u8], pos: usize) -> Result<(u128, usize), &'static str> {
    if let Some(w) = data.get(pos..pos.wrapping_add(8)) {
        let word = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        let ends = !word & 0x8080_8080_8080_8080;
        if ends != 0 {
            let len = ends.trailing_zeros() / 8 + 1;
            let kept = if len == 8 {
                word
            } else {
                word & ((1u64 << (8 * len)) - 1)
            };
            // Byte i's 7 payload bits to bit 7i: pairs into 14-bit groups,
            // pairs of those into 28, then the two halves into 56.
            let x = kept & 0x7f7f_7f7f_7f7f_7f7f;
            let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
            let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
            let x = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
            return Ok((u128::from(x), pos + len as usize));
        }
    }
    varint_bytes(data, pos)
}

/// [`varint`] a byte at a time. Nine bytes (63 bits) accumulate in a u64,
/// which is every decimal of up to 18 digits; longer ones continue in a
/// u128.
fn varint_bytes(data: &[u8], mut pos: usize) -> Result<(u128, usize), &'static str> {
    let mut v = 0u64;
    for shift in (0..63).step_by(7) {
        let Some(&b) = data.get(pos) else {
            return Err("decimal varint truncated");
        };
        pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok((u128::from(v), pos));
        }
    }
    let mut v = u128::from(v);
    let mut shift = 63u32;
    loop {
        let Some(&b) = data.get(pos) else {
            return Err("decimal varint truncated");
        };
        pos += 1;
        if shift >= 128 || (shift == 126 && (b & 0x7f) > 3) {
            return Err("decimal longer than 128 bits");
        }
        v |= u128::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok((v, pos));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time varint reads what the byte loop reads, for values
    /// of every length from 1 to 19 bytes, at every distance from the end
    /// of the data (where the word no longer fits) and truncated.
    #[test]
    fn word_varints_match_the_byte_loop() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for len in 1..=19usize {
            for _ in 0..200 {
                let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8 | 0x80).collect();
                // The last byte ends the value; 128-bit overflows included.
                bytes[len - 1] &= 0x7f;
                for tail in 0..10 {
                    let mut data = bytes.clone();
                    data.extend((0..tail).map(|_| next() as u8));
                    assert_eq!(varint(&data, 0), varint_bytes(&data, 0), "{data:02x?}");
                    let mut at = vec![0xffu8; 3];
                    at.extend(&data);
                    assert_eq!(varint(&at, 3), varint_bytes(&at, 3));
                }
                let cut = &bytes[..len - 1];
                assert_eq!(varint(cut, 0), varint_bytes(cut, 0));
            }
        }
        assert_eq!(varint(&[], 0), Err("decimal varint truncated"));
        assert_eq!(varint(&[0x05], 1), Err("decimal varint truncated"));
    }

    #[test]
    fn decodes_and_rescales() {
        // 12345 zigzag = 24690 = 0xb2 0xc0 0x01; -1 zigzag = 1.
        let data = [0xf2, 0xc0, 0x01, 0x01];
        let v = decode(&data, &[2, 0], 2, 2).unwrap();
        assert_eq!(v, vec![12345, -100]);
        let v = decode(&data, &[3, 0], 2, 2).unwrap();
        assert_eq!(v[0], 1234);
        assert!(decode(&data[..2], &[2], 1, 2).is_err());
        assert!(decode(&[0xff; 30], &[0], 1, 0).is_err());
    }

    /// One value at a time, as the format describes it: the reference the
    /// piecewise decoder must match, errors included.
    fn reference(data: &[u8], scales: &[i32], scale: u32) -> Result<Vec<i128>, (u64, String)> {
        let mut out = Vec::new();
        let mut pos = 0;
        for &s in scales {
            let (x, next) = decode_one(data, pos, s, scale, false)?;
            out.push(x);
            pos = next;
        }
        Ok(out)
    }

    #[test]
    fn pieces_decode_as_one_pass() {
        // Varints of 1 to 19 bytes (values up to 2^127), well past one piece.
        let mut data = Vec::new();
        let mut scales = Vec::new();
        let mut next = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15);
        while data.len() < 3 * PIECE_BYTES + 12345 {
            let x = next();
            let bits = x % 126;
            let mut z = (u128::from(x) << 64 | u128::from(x.rotate_left(17))) >> (127 - bits);
            while z >= 0x80 {
                data.push((z as u8 & 0x7f) | 0x80);
                z >>= 7;
            }
            data.push(z as u8);
            scales.push((x % 5) as i32);
        }
        let n = scales.len();
        let want = reference(&data, &scales, 2).unwrap();
        assert_eq!(decode(&data, &scales, n, 2).unwrap(), want);
        // Fewer values than the stream holds: the rest is ignored.
        assert_eq!(
            decode(&data, &scales[..n / 2], n / 2, 2).unwrap(),
            want[..n / 2]
        );
        // Truncated streams, and a byte that makes a varint too long, fail
        // at the same value as the one-pass reference.
        for cut in [
            PIECE_BYTES - 1,
            PIECE_BYTES,
            2 * PIECE_BYTES + 7,
            data.len() - 1,
        ] {
            let got = decode(&data[..cut], &scales, n, 2).unwrap_err();
            assert_eq!(
                got,
                reference(&data[..cut], &scales, 2).unwrap_err(),
                "cut {cut}"
            );
        }
        let mut bad = data.clone();
        let at = 2 * PIECE_BYTES + 99;
        bad[at..at + 20].fill(0xff);
        assert_eq!(
            decode(&bad, &scales, n, 2).unwrap_err(),
            reference(&bad, &scales, 2).unwrap_err()
        );
    }

    #[test]
    fn hive11_reads_at_scale_6() {
        // 12 at scale 1 is 1.2: 1200000 at scale 6, whatever the column says.
        let v = decode_hive11(&[0x18], &[1], 1).unwrap();
        assert_eq!(v, vec![1_200_000]);
        // 10^33 at scale 0 needs 40 digits at scale 6.
        let mut big = Vec::new();
        let mut z = 2 * 10u128.pow(33);
        while z >= 0x80 {
            big.push((z as u8 & 0x7f) | 0x80);
            z >>= 7;
        }
        big.push(z as u8);
        assert!(decode_hive11(&big, &[0], 1).is_err());
        assert_eq!(decode_hive11(&big, &[2], 1).unwrap(), vec![10i128.pow(37)]);
    }

    /// The pieces give what decoding value by value gives at other column
    /// scales and for Hive 0.11 (rescaling both ways, the range check), over
    /// data of several pieces.
    #[test]
    fn pieces_match_value_by_value_decoding_at_every_scale() {
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1d);
        let (mut data, mut scales) = (Vec::new(), Vec::new());
        for i in 0..300_000u64 {
            // Mostly short values, some of 120 bits.
            let bits = if i % 97 == 0 { 120 } else { 1 + next() % 50 };
            let mut z = (u128::from(next()) << 64 | u128::from(next())) >> (128 - bits);
            while z >= 0x80 {
                data.push((z as u8 & 0x7f) | 0x80);
                z >>= 7;
            }
            data.push(z as u8);
            scales.push(if i % 5 == 0 { (next() % 8) as i32 } else { 2 });
        }
        assert!(data.len() > 3 * PIECE_BYTES);
        let one_by_one = |scale: u32, hive: bool| {
            let mut pos = 0;
            let mut out = Vec::new();
            for &s in &scales {
                let (x, next) = decode_one(&data, pos, s, scale, hive)?;
                out.push(x);
                pos = next;
            }
            Ok::<_, (u64, String)>(out)
        };
        for (scale, hive) in [(2, false), (5, false), (0, false), (HIVE11_SCALE, true)] {
            let got = decode_at(&data, &scales, scales.len(), scale, hive);
            assert_eq!(got, one_by_one(scale, hive), "scale {scale}, hive {hive}");
        }
    }
}
