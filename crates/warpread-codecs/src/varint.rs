//! Base-128 little-endian varints and zigzag, as ORC and Parquet use them.

use crate::plan::{IntType, StatusCode};

/// Most bytes a varint for a `bits`-wide value may take.
#[inline]
pub fn max_bytes(bits: u32) -> usize {
    bits.div_ceil(7) as usize
}

/// Decodes the varint at `input[at..]` for a value of `ty`'s width: returns
/// the raw (still zigzagged) payload and its length. Errors in the order the
/// GPU kernels check them: length limit, end of input, value width.
pub fn read(input: &[u8], at: usize, ty: IntType) -> Result<(u64, usize), StatusCode> {
    let bits = ty.bits();
    let max = max_bytes(bits);
    let mut v = 0u64;
    for i in 0.. {
        if i == max {
            return Err(StatusCode::VarintOverlong);
        }
        let Some(&b) = input.get(at + i) else {
            return Err(StatusCode::InputTruncated);
        };
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            // The 10th byte of a 64-bit varint may only carry bit 63.
            let top_overflows = bits == 64 && i == max - 1 && b > 1;
            let fits = bits == 64 || v >> bits == 0;
            if top_overflows || !fits {
                return Err(StatusCode::ValueOutOfRange);
            }
            return Ok((v, i + 1));
        }
    }
    unreachable!("the loop returns by i == max")
}

/// Appends `v` as a varint.
#[inline]
pub fn write(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Zigzag-encodes a signed value.
#[inline]
pub fn zigzag(x: i64) -> u64 {
    ((x << 1) ^ (x >> 63)) as u64
}

/// Undoes [`zigzag`].
#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_extremes() {
        for v in [0, 1, 127, 128, 16383, 16384, u64::MAX >> 1, u64::MAX] {
            let mut b = Vec::new();
            write(&mut b, v);
            assert_eq!(read(&b, 0, IntType::U64), Ok((v, b.len())));
        }
        for x in [0, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(x)), x);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn rejects_bad_varints() {
        assert_eq!(
            read(&[0x80], 0, IntType::U64),
            Err(StatusCode::InputTruncated)
        );
        assert_eq!(
            read(&[0x80, 0x80, 0x80], 0, IntType::U8),
            Err(StatusCode::VarintOverlong)
        );
        assert_eq!(
            read(&[0x80, 0x02], 0, IntType::U8),
            Err(StatusCode::ValueOutOfRange)
        );
        let mut ten = vec![0xff; 9];
        ten.push(0x02);
        assert_eq!(
            read(&ten, 0, IntType::U64),
            Err(StatusCode::ValueOutOfRange)
        );
        ten[9] = 0x01;
        assert_eq!(read(&ten, 0, IntType::U64), Ok((u64::MAX, 10)));
    }
}
