//! CPU reference decoder for ORC RLE v1.

use crate::int::{IntElem, in_range, orc_wire_type};
use crate::plan::{ChunkStatus, StatusCode};
use crate::varint;

/// Decodes one chunk into `out`, which must be filled exactly: decoding stops
/// once `out.len()` values are produced and trailing input is not examined.
/// A run that holds more values than are still wanted is cut short, as ORC
/// readers do (ORC C++ pads a union's first child stream with junk values).
///
/// Signed values are decoded at 64 bits and truncated to `T`; unsigned ones
/// must fit `T` ([`orc_wire_type`] says why).
///
/// Errors are reported, never panicked on: the returned status names the
/// byte offset of the run that failed and the values produced before it.
pub fn decode<T: IntElem>(input: &[u8], out: &mut [T]) -> ChunkStatus {
    let ty = orc_wire_type(T::TYPE);
    let count = out.len();
    let mut pos = 0usize;
    let mut produced = 0usize;
    let fail =
        |code, at: usize, produced: usize| ChunkStatus::failed(code, at as u64, produced as u64);
    while produced < count {
        let run_at = pos;
        let Some(&header) = input.get(pos) else {
            return fail(StatusCode::OutputShort, run_at, produced);
        };
        let h = header as i8;
        if h >= 0 {
            let n = (h as usize + 3).min(count - produced);
            if input.len() - pos < 2 {
                return fail(StatusCode::InputTruncated, run_at, produced);
            }
            let delta = i64::from(input[pos + 1] as i8);
            let (v, nb) = match varint::read(input, pos + 2, ty) {
                Ok(x) => x,
                Err(code) => return fail(code, run_at, produced),
            };
            let base = if ty.is_signed() {
                varint::unzigzag(v)
            } else {
                v as i64
            };
            // For narrow (unsigned) types base fits in 32 bits here, so the endpoint
            // cannot wrap in i64 and linearity makes two checks enough.
            let last = base.wrapping_add((n as i64 - 1) * delta);
            if !in_range(ty, base) || !in_range(ty, last) {
                return fail(StatusCode::ValueOutOfRange, run_at, produced);
            }
            for (k, slot) in out[produced..produced + n].iter_mut().enumerate() {
                *slot =
                    T::from_bits((base as u64).wrapping_add((k as u64).wrapping_mul(delta as u64)));
            }
            produced += n;
            pos += 2 + nb;
        } else {
            let n = (-(h as isize) as usize).min(count - produced);
            let mut p = pos + 1;
            for slot in &mut out[produced..produced + n] {
                let (v, nb) = match varint::read(input, p, ty) {
                    Ok(x) => x,
                    Err(code) => return fail(code, run_at, produced),
                };
                *slot = T::from_bits(if ty.is_signed() {
                    varint::unzigzag(v) as u64
                } else {
                    v
                });
                p += nb;
            }
            produced += n;
            pos = p;
        }
    }
    ChunkStatus::ok(produced as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orc_rle_v1::encode;

    fn dec<T: IntElem>(input: &[u8], n: usize) -> (Vec<T>, ChunkStatus) {
        let mut out = vec![T::default(); n];
        let st = decode(input, &mut out);
        (out, st)
    }

    #[test]
    fn spec_examples() {
        // ORC spec: [0x61, 0x00, 0x07] is 100 sevens (unsigned).
        let (v, st) = dec::<u32>(&[0x61, 0x00, 0x07], 100);
        assert!(st.is_ok(), "{st}");
        assert!(v.iter().all(|&x| x == 7));
        // [0x61, 0xff, 0x64] is 100, 99, ..., 1.
        let (v, st) = dec::<u32>(&[0x61, 0xff, 0x64], 100);
        assert!(st.is_ok());
        assert_eq!(v, (1..=100).rev().collect::<Vec<u32>>());
        // [0xfb, 0x02, 0x03, 0x06, 0x07, 0xb] is 2, 3, 6, 7, 11.
        let (v, st) = dec::<u32>(&[0xfb, 0x02, 0x03, 0x06, 0x07, 0x0b], 5);
        assert!(st.is_ok());
        assert_eq!(v, vec![2, 3, 6, 7, 11]);
    }

    #[test]
    fn signed_values_are_zigzagged() {
        let (v, st) = dec::<i64>(&[0xfe, 0x01, 0x02], 2);
        assert!(st.is_ok());
        assert_eq!(v, vec![-1, 1]);
    }

    #[test]
    fn errors_name_the_failing_run() {
        // A run of 3, then a literal header promising 2 values with one byte.
        let input = [0x00, 0x01, 0x02, 0xfe, 0x05];
        let (_, st) = dec::<u16>(&input, 5);
        assert_eq!(st, ChunkStatus::failed(StatusCode::InputTruncated, 3, 3));
        // Wanting fewer values than the stream holds cuts the last run short.
        let (v, st) = dec::<u16>(&input, 4);
        assert_eq!((v, st), (vec![2, 3, 4, 5], ChunkStatus::ok(4)));
        let (_, st) = dec::<u16>(&input[..3], 4);
        assert_eq!(st, ChunkStatus::failed(StatusCode::OutputShort, 3, 3));
        let (_, st) = dec::<u16>(&[0x00], 3);
        assert_eq!(st, ChunkStatus::failed(StatusCode::InputTruncated, 0, 0));
        // Run base 250 with delta +3 leaves u8 at its third value.
        let (_, st) = dec::<u8>(&[0x00, 0x03, 0xfa, 0x01], 3);
        assert_eq!(st, ChunkStatus::failed(StatusCode::ValueOutOfRange, 0, 0));
        // Trailing bytes after the last wanted value are not examined.
        let (_, st) = dec::<u8>(&[0x00, 0x00, 0x01, 0xff, 0xff], 3);
        assert!(st.is_ok());
    }

    #[test]
    fn signed_values_wrap_unsigned_are_checked() {
        // zigzag(40000) = 80000 is a 3-byte varint; zigzag(2^40) takes 6.
        let lit = [0xfe, 0x80, 0xf1, 0x04, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40];
        let (v, st) = dec::<i16>(&lit, 2);
        assert_eq!((v, st), (vec![-25536, 0], ChunkStatus::ok(2)));
        let run = [0x00, 0x01, 0x80, 0xf1, 0x04];
        let (v, st) = dec::<i16>(&run, 3);
        assert_eq!((v, st), (vec![-25536, -25535, -25534], ChunkStatus::ok(3)));
        let (v, st) = dec::<i32>(&lit, 2);
        assert_eq!((v, st), (vec![40000, 0], ChunkStatus::ok(2)));
        // Unsigned 80000 is no u16 length.
        let (_, st) = dec::<u16>(&run, 3);
        assert_eq!(st, ChunkStatus::failed(StatusCode::ValueOutOfRange, 0, 0));
        // Even a signed varint is at most 10 bytes.
        let (_, st) = dec::<i8>(
            &[
                0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
            ],
            1,
        );
        assert_eq!(st, ChunkStatus::failed(StatusCode::VarintOverlong, 0, 0));
    }

    #[test]
    fn round_trip_every_type() {
        fn check<T: IntElem>(vals: &[T]) {
            let enc = encode(vals);
            let (out, st) = dec::<T>(&enc, vals.len());
            assert!(st.is_ok(), "{:?}: {st}", T::TYPE);
            assert_eq!(out, vals);
        }
        check::<i8>(&[i8::MIN, i8::MAX, 0, 0, 0, 0, -1, 5, 5, 5]);
        check::<u8>(&(0..=255).collect::<Vec<u8>>());
        check::<i16>(&[i16::MIN, i16::MAX, -2, -2, -2]);
        check::<u16>(&[u16::MAX; 300]);
        check::<i32>(&(0..1000).map(|i| i * -7).collect::<Vec<i32>>());
        check::<u32>(&[u32::MAX, 0, u32::MAX]);
        check::<i64>(&[i64::MIN, i64::MAX, i64::MIN + 1, 0, i64::MAX - 3]);
        check::<u64>(&[u64::MAX, u64::MAX - 1, u64::MAX - 2, u64::MAX - 3, 0]);
    }
}
