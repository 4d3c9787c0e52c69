//! ORC decimals: DATA holds unbounded zigzag varints, SECONDARY each value's
//! scale; values are rescaled to the column's scale as the ORC C++ reader
//! does (multiplying up, truncating down).
//!
//! Hive 0.11 decimals declare neither precision nor scale. ORC C++ reads
//! them at scale [`HIVE11_SCALE`] (its `forcedScaleOnHive11Decimal`
//! default), which is why pyarrow types them decimal128(38, 6), and fails
//! the read when a value needs more than 38 digits at that scale (its
//! `throwOnHive11DecimalOverflow` default).

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
    let mut out = Vec::with_capacity(n);
    let mut pos = 0usize;
    for &s in scales {
        let start = pos;
        let (v, next) = varint(data, pos).map_err(|m| (start as u64, m.to_string()))?;
        pos = next;
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
                start as u64,
                format!("Hive 0.11 decimal has more than 38 digits at scale {scale}"),
            ));
        }
        out.push(x);
    }
    Ok(out)
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
/// position after it. Nine bytes (63 bits) accumulate in a u64, which is
/// every decimal of up to 18 digits; longer ones continue in a u128.
fn varint(data: &[u8], mut pos: usize) -> Result<(u128, usize), &'static str> {
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
}
