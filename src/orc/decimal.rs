//! ORC decimals: DATA holds unbounded zigzag varints, SECONDARY each value's
//! scale; values are rescaled to the column's scale as the ORC C++ reader
//! does (multiplying up, truncating down).

/// Decodes `n` decimals, rescaled to `scale`. Errors carry the DATA offset.
pub fn decode(
    data: &[u8],
    scales: &[i32],
    n: usize,
    scale: u32,
) -> Result<Vec<i128>, (u64, String)> {
    if scales.len() != n {
        return Err((0, format!("{} scales for {n} values", scales.len())));
    }
    let mut out = Vec::with_capacity(n);
    let mut pos = 0usize;
    for &s in scales {
        let start = pos;
        let mut v: u128 = 0;
        let mut shift = 0u32;
        loop {
            let Some(&b) = data.get(pos) else {
                return Err((start as u64, "decimal varint truncated".into()));
            };
            pos += 1;
            if shift >= 128 || (shift == 126 && (b & 0x7f) > 3) {
                return Err((start as u64, "decimal longer than 128 bits".into()));
            }
            v |= u128::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        let mut x = (v >> 1) as i128 ^ -((v & 1) as i128);
        let diff = scale as i64 - i64::from(s);
        if diff > 0 {
            x = x.wrapping_mul(10i128.wrapping_pow(diff.min(38) as u32));
        } else if diff < 0 {
            x /= 10i128.pow((-diff).min(38) as u32);
        }
        out.push(x);
    }
    Ok(out)
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
}
