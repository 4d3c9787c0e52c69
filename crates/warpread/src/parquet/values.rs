//! Dense decoded values of a leaf column to an Arrow array of the type the
//! parquet crate gives the field: the same reinterpretations and
//! conversions (unsigned integers as bit casts, INT96 to timestamps with
//! wrapping arithmetic, big-endian two's complement decimals, FLBA float16
//! and intervals, dates widened to milliseconds).

use std::sync::Arc;

use arrow::array::*;
use arrow::buffer::{Buffer, ScalarBuffer};
use arrow::datatypes::*;

use super::decode::Dense;
use super::offsets::Offsets;

const JULIAN_DAY_OF_EPOCH: i64 = 2_440_588;

type F16 = <Float16Type as ArrowPrimitiveType>::Native;

type R<T> = std::result::Result<T, String>;

fn fixed<const N: usize>(bytes: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
    bytes
        .chunks_exact(N)
        .map(|c| c.try_into().expect("chunk of N bytes"))
}

fn sign_extend<const N: usize>(b: &[u8]) -> R<[u8; N]> {
    if b.len() > N {
        return Err(format!(
            "decimal of {} bytes does not fit {N} bytes",
            b.len()
        ));
    }
    if b.is_empty() {
        return Ok([0; N]);
    }
    let mut out = if b[0] & 0x80 != 0 { [0xff; N] } else { [0; N] };
    out[N - b.len()..].copy_from_slice(b);
    Ok(out)
}

fn int96_days_nanos(v: [u8; 12]) -> (i64, i64) {
    let lo = u32::from_le_bytes(v[0..4].try_into().expect("4")) as i64;
    let hi = u32::from_le_bytes(v[4..8].try_into().expect("4")) as i64;
    let day = i32::from_le_bytes(v[8..12].try_into().expect("4")) as i64;
    (day, (hi << 32) + lo)
}

/// Each value's bytes (fixed or variable width).
fn each_bytes(d: &Dense) -> Box<dyn Iterator<Item = &[u8]> + '_> {
    match d {
        Dense::Fixed { width, bytes } => Box::new(bytes.chunks_exact((*width).max(1))),
        Dense::Bytes { offsets, data, .. } => Box::new(offsets.ranges().map(|r| &data[r])),
        Dense::Bool(v) => Box::new(v.chunks_exact(1)),
    }
}

/// Big-endian two's-complement values of `W` bytes each (1 ≤ W ≤ 16),
/// sign-extended: `W` known at compile time makes each value a load, a
/// byte swap and two shifts.
fn be_fixed<const W: usize>(bytes: &[u8]) -> impl Iterator<Item = i128> + '_ {
    bytes.chunks_exact(W).map(|b| {
        if W <= 8 {
            let mut x = [0u8; 8];
            x[8 - W..].copy_from_slice(b);
            let shift = 64 - 8 * W as u32;
            ((i64::from_be_bytes(x) << shift) >> shift) as i128
        } else {
            let mut x = [0u8; 16];
            x[16 - W..].copy_from_slice(b);
            let shift = 128 - 8 * W as u32;
            (i128::from_be_bytes(x) << shift) >> shift
        }
    })
}

/// [`be_fixed`] for a width known at run time (1..=16), each value made
/// a native by `narrow`.
fn be_values<T: Copy>(width: usize, bytes: &[u8], narrow: impl Fn(i128) -> T) -> Vec<T> {
    macro_rules! by_width {
        ($($w:literal)*) => {
            match width {
                $($w => be_fixed::<$w>(bytes).map(&narrow).collect(),)*
                _ => unreachable!("decimal width {width} checked by the caller"),
            }
        };
    }
    by_width!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

fn decimal<T: DecimalType, const N: usize>(
    d: &Dense,
    p: u8,
    s: i8,
    from: impl Fn([u8; N]) -> T::Native,
    narrow: impl Fn(i128) -> T::Native,
) -> R<ArrayRef> {
    let vals = match d {
        // The common case (FLBA decimals of up to 16 bytes): one width
        // check, then a loop specialised to the width; sign extension
        // to the native type gives what `from` gives on the bytes
        // sign-extended to N (wider values take the checked path).
        Dense::Fixed { width, bytes } if (1..=N.min(16)).contains(width) => {
            be_values(*width, bytes, narrow)
        }
        _ => each_bytes(d)
            .map(|b| sign_extend::<N>(b).map(&from))
            .collect::<R<Vec<_>>>()?,
    };
    let a = PrimitiveArray::<T>::new(ScalarBuffer::from(vals), None)
        .with_precision_and_scale(p, s)
        .map_err(|e| e.to_string())?;
    Ok(Arc::new(a))
}

fn ints<N: Copy>(bytes: &[u8], f: impl Fn([u8; 4]) -> N) -> Vec<N> {
    fixed::<4>(bytes).map(f).collect()
}

fn longs<N: Copy>(bytes: &[u8], f: impl Fn([u8; 8]) -> N) -> Vec<N> {
    fixed::<8>(bytes).map(f).collect()
}

fn prim<T: ArrowPrimitiveType>(v: Vec<T::Native>) -> ArrayRef {
    Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(v), None))
}

fn ts<T: ArrowTimestampType>(v: Vec<i64>, tz: &Option<Arc<str>>) -> ArrayRef {
    Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(v), None).with_timezone_opt(tz.clone()))
}

fn i32v(b: [u8; 4]) -> i32 {
    i32::from_le_bytes(b)
}

fn i64v(b: [u8; 8]) -> i64 {
    i64::from_le_bytes(b)
}

/// The values as Arrow's native type of the same width, without a copy
/// (`bytes` is an aligned Arrow buffer).
fn native<T: ArrowPrimitiveType>(bytes: Buffer) -> ArrayRef {
    let n = bytes.len() / std::mem::size_of::<T::Native>();
    Arc::new(PrimitiveArray::<T>::new(
        ScalarBuffer::new(bytes, 0, n),
        None,
    ))
}

fn native_ts<T: ArrowTimestampType>(bytes: Buffer, tz: &Option<Arc<str>>) -> ArrayRef {
    let n = bytes.len() / 8;
    Arc::new(
        PrimitiveArray::<T>::new(ScalarBuffer::new(bytes, 0, n), None)
            .with_timezone_opt(tz.clone()),
    )
}

/// Converts the dense values of a leaf with physical type `physical` into
/// an array of `dt` (no nulls). Takes the values by value: where the Arrow
/// type has the stored layout their buffers become the array's.
pub fn to_arrow(d: Dense, physical: parquet::basic::Type, dt: &DataType) -> R<ArrayRef> {
    use parquet::basic::Type as P;
    if let DataType::Dictionary(_, value) = dt {
        let values = to_arrow(d, physical, value)?;
        return arrow::compute::cast(&values, dt).map_err(|e| e.to_string());
    }
    let n = d.len();
    if *dt == DataType::Null {
        return Ok(Arc::new(NullArray::new(n)));
    }
    let bad = || format!("cannot read {physical} as {dt}");
    // Same-layout types: the buffer moves into the array.
    let d = match (d, physical, dt) {
        (Dense::Fixed { bytes, .. }, P::INT32, DataType::Int32) => {
            return Ok(native::<Int32Type>(bytes));
        }
        (Dense::Fixed { bytes, .. }, P::INT32, DataType::Date32) => {
            return Ok(native::<Date32Type>(bytes));
        }
        (Dense::Fixed { bytes, .. }, P::INT64, DataType::Int64) => {
            return Ok(native::<Int64Type>(bytes));
        }
        // Decimals read at their stored width (`ReadOptions::narrow_decimals`).
        (Dense::Fixed { bytes, .. }, P::INT64, DataType::Decimal64(p, s)) => {
            return dec(native::<Decimal64Type>(bytes), *p, *s);
        }
        (Dense::Fixed { bytes, .. }, P::INT32, DataType::Decimal32(p, s)) => {
            return dec(native::<Decimal32Type>(bytes), *p, *s);
        }
        (Dense::Fixed { bytes, .. }, P::INT64, DataType::Timestamp(u, tz)) => {
            return Ok(match u {
                TimeUnit::Second => native_ts::<TimestampSecondType>(bytes, tz),
                TimeUnit::Millisecond => native_ts::<TimestampMillisecondType>(bytes, tz),
                TimeUnit::Microsecond => native_ts::<TimestampMicrosecondType>(bytes, tz),
                TimeUnit::Nanosecond => native_ts::<TimestampNanosecondType>(bytes, tz),
            });
        }
        (Dense::Fixed { bytes, .. }, P::FLOAT, DataType::Float32) => {
            return Ok(native::<Float32Type>(bytes));
        }
        (Dense::Fixed { bytes, .. }, P::DOUBLE, DataType::Float64) => {
            return Ok(native::<Float64Type>(bytes));
        }
        // Gathered from a dictionary widened to 16 bytes (`decode`).
        (Dense::Fixed { width: 16, bytes }, P::INT32 | P::INT64, DataType::Decimal128(p, s)) => {
            // i128 buffers must be 16-aligned; a CPU stage's output is
            // 8-aligned, so its slice may not be.
            let bytes = if bytes.as_ptr().align_offset(16) == 0 {
                bytes
            } else {
                Buffer::from_slice_ref(bytes.as_slice())
            };
            return dec(native::<Decimal128Type>(bytes), *p, *s);
        }
        (
            Dense::Bytes {
                offsets,
                data,
                utf8,
            },
            P::BYTE_ARRAY,
            DataType::Utf8
            | DataType::Binary
            | DataType::LargeUtf8
            | DataType::LargeBinary
            | DataType::Utf8View
            | DataType::BinaryView,
        ) => return byte_array(offsets, data, utf8, dt),
        (d, _, _) => d,
    };
    let d = &d;
    Ok(match (d, physical) {
        (Dense::Bool(v), _) => match dt {
            DataType::Boolean => Arc::new(BooleanArray::from(
                v.iter().map(|&b| b != 0).collect::<Vec<_>>(),
            )),
            _ => return Err(bad()),
        },
        (Dense::Fixed { bytes, .. }, P::INT32) => match dt {
            DataType::Int32 => prim::<Int32Type>(ints(bytes, i32v)),
            DataType::Int8 => prim::<Int8Type>(ints(bytes, |b| i32v(b) as i8)),
            DataType::Int16 => prim::<Int16Type>(ints(bytes, |b| i32v(b) as i16)),
            DataType::UInt8 => prim::<UInt8Type>(ints(bytes, |b| i32v(b) as u8)),
            DataType::UInt16 => prim::<UInt16Type>(ints(bytes, |b| i32v(b) as u16)),
            DataType::UInt32 => prim::<UInt32Type>(ints(bytes, |b| i32v(b) as u32)),
            DataType::Date32 => prim::<Date32Type>(ints(bytes, i32v)),
            DataType::Date64 => prim::<Date64Type>(ints(bytes, |b| i32v(b) as i64 * 86_400_000)),
            DataType::Time32(TimeUnit::Second) => prim::<Time32SecondType>(ints(bytes, i32v)),
            DataType::Time32(TimeUnit::Millisecond) => {
                prim::<Time32MillisecondType>(ints(bytes, i32v))
            }
            DataType::Timestamp(u, tz) => {
                let v = ints(bytes, |b| i32v(b) as i64);
                match u {
                    TimeUnit::Second => ts::<TimestampSecondType>(v, tz),
                    TimeUnit::Millisecond => ts::<TimestampMillisecondType>(v, tz),
                    TimeUnit::Microsecond => ts::<TimestampMicrosecondType>(v, tz),
                    TimeUnit::Nanosecond => ts::<TimestampNanosecondType>(v, tz),
                }
            }
            DataType::Decimal32(p, s) => dec(prim::<Decimal32Type>(ints(bytes, i32v)), *p, *s)?,
            DataType::Decimal64(p, s) => dec(
                prim::<Decimal64Type>(ints(bytes, |b| i32v(b) as i64)),
                *p,
                *s,
            )?,
            DataType::Decimal128(p, s) => dec(
                prim::<Decimal128Type>(ints(bytes, |b| i32v(b) as i128)),
                *p,
                *s,
            )?,
            DataType::Decimal256(p, s) => dec(
                prim::<Decimal256Type>(ints(bytes, |b| i256::from_i128(i32v(b) as i128))),
                *p,
                *s,
            )?,
            _ => return Err(bad()),
        },
        (Dense::Fixed { bytes, .. }, P::INT64) => match dt {
            DataType::Int64 => prim::<Int64Type>(longs(bytes, i64v)),
            DataType::UInt64 => prim::<UInt64Type>(longs(bytes, |b| i64v(b) as u64)),
            DataType::Date64 => prim::<Date64Type>(longs(bytes, i64v)),
            DataType::Time64(TimeUnit::Microsecond) => {
                prim::<Time64MicrosecondType>(longs(bytes, i64v))
            }
            DataType::Time64(TimeUnit::Nanosecond) => {
                prim::<Time64NanosecondType>(longs(bytes, i64v))
            }
            DataType::Duration(u) => {
                let v = longs(bytes, i64v);
                match u {
                    TimeUnit::Second => prim::<DurationSecondType>(v),
                    TimeUnit::Millisecond => prim::<DurationMillisecondType>(v),
                    TimeUnit::Microsecond => prim::<DurationMicrosecondType>(v),
                    TimeUnit::Nanosecond => prim::<DurationNanosecondType>(v),
                }
            }
            DataType::Timestamp(u, tz) => {
                let v = longs(bytes, i64v);
                match u {
                    TimeUnit::Second => ts::<TimestampSecondType>(v, tz),
                    TimeUnit::Millisecond => ts::<TimestampMillisecondType>(v, tz),
                    TimeUnit::Microsecond => ts::<TimestampMicrosecondType>(v, tz),
                    TimeUnit::Nanosecond => ts::<TimestampNanosecondType>(v, tz),
                }
            }
            DataType::Decimal64(p, s) => dec(prim::<Decimal64Type>(longs(bytes, i64v)), *p, *s)?,
            DataType::Decimal128(p, s) => dec(
                prim::<Decimal128Type>(longs(bytes, |b| i64v(b) as i128)),
                *p,
                *s,
            )?,
            DataType::Decimal256(p, s) => dec(
                prim::<Decimal256Type>(longs(bytes, |b| i256::from_i128(i64v(b) as i128))),
                *p,
                *s,
            )?,
            _ => return Err(bad()),
        },
        (Dense::Fixed { bytes, .. }, P::INT96) => match dt {
            DataType::Timestamp(u, tz) => {
                let (per_day, div) = match u {
                    TimeUnit::Second => (86_400i64, 1_000_000_000i64),
                    TimeUnit::Millisecond => (86_400_000, 1_000_000),
                    TimeUnit::Microsecond => (86_400_000_000, 1_000),
                    TimeUnit::Nanosecond => (86_400_000_000_000, 1),
                };
                let v = fixed::<12>(bytes)
                    .map(|b| {
                        let (day, nanos) = int96_days_nanos(b);
                        (day - JULIAN_DAY_OF_EPOCH)
                            .wrapping_mul(per_day)
                            .wrapping_add(nanos / div)
                    })
                    .collect();
                match u {
                    TimeUnit::Second => ts::<TimestampSecondType>(v, tz),
                    TimeUnit::Millisecond => ts::<TimestampMillisecondType>(v, tz),
                    TimeUnit::Microsecond => ts::<TimestampMicrosecondType>(v, tz),
                    TimeUnit::Nanosecond => ts::<TimestampNanosecondType>(v, tz),
                }
            }
            _ => return Err(bad()),
        },
        (Dense::Fixed { bytes, .. }, P::FLOAT) => match dt {
            DataType::Float32 => prim::<Float32Type>(ints(bytes, f32::from_le_bytes)),
            _ => return Err(bad()),
        },
        (Dense::Fixed { bytes, .. }, P::DOUBLE) => match dt {
            DataType::Float64 => prim::<Float64Type>(longs(bytes, f64::from_le_bytes)),
            _ => return Err(bad()),
        },
        (Dense::Fixed { width, bytes }, P::FIXED_LEN_BYTE_ARRAY) => match dt {
            DataType::FixedSizeBinary(w) if *w as usize == *width => Arc::new(
                FixedSizeBinaryArray::try_new(*w, bytes.clone(), None)
                    .map_err(|e| e.to_string())?,
            ),
            DataType::Float16 if *width >= 2 => prim::<Float16Type>(
                bytes
                    .chunks_exact(*width)
                    .map(|b| F16::from_le_bytes([b[0], b[1]]))
                    .collect(),
            ),
            DataType::Interval(IntervalUnit::YearMonth) if *width >= 4 => {
                prim::<IntervalYearMonthType>(
                    bytes
                        .chunks_exact(*width)
                        .map(|b| i32::from_le_bytes(b[..4].try_into().expect("4")))
                        .collect(),
                )
            }
            DataType::Interval(IntervalUnit::DayTime) if *width >= 12 => {
                prim::<IntervalDayTimeType>(
                    bytes
                        .chunks_exact(*width)
                        .map(|b| {
                            IntervalDayTime::new(
                                i32::from_le_bytes(b[4..8].try_into().expect("4")),
                                i32::from_le_bytes(b[8..12].try_into().expect("4")),
                            )
                        })
                        .collect(),
                )
            }
            _ => decimal_or_bad(d, dt).ok_or_else(bad)??,
        },
        (Dense::Bytes { .. }, P::BYTE_ARRAY) => decimal_or_bad(d, dt).ok_or_else(bad)??,
        _ => return Err(bad()),
    })
}

/// Byte-array values as a string or binary array of `dt` (one of the six
/// Arrow byte types); offsets of the array's width move into it.
fn byte_array(offsets: Offsets, data: Buffer, utf8: bool, dt: &DataType) -> R<ArrayRef> {
    let e = |e: arrow::error::ArrowError| e.to_string();
    Ok(match dt {
        DataType::Utf8 => {
            let off = offsets.into_small()?;
            if utf8 && off.last() == Some(&(data.len() as i32)) {
                // SAFETY: offsets start at 0, never decrease and end at the
                // data's length (`OffsetBuffer`, the check above), and each
                // value is a whole dictionary entry checked as UTF-8.
                Arc::new(unsafe { StringArray::new_unchecked(off, data, None) })
            } else {
                Arc::new(StringArray::try_new(off, data, None).map_err(e)?)
            }
        }
        DataType::Binary => {
            Arc::new(BinaryArray::try_new(offsets.into_small()?, data, None).map_err(e)?)
        }
        DataType::LargeUtf8 => {
            Arc::new(LargeStringArray::try_new(offsets.into_large(), data, None).map_err(e)?)
        }
        DataType::LargeBinary => {
            Arc::new(LargeBinaryArray::try_new(offsets.into_large(), data, None).map_err(e)?)
        }
        DataType::Utf8View => {
            let a = LargeStringArray::try_new(offsets.into_large(), data, None).map_err(e)?;
            Arc::new(StringViewArray::from_iter_values(
                a.iter().map(|s| s.unwrap_or("")),
            ))
        }
        DataType::BinaryView => {
            let a = LargeBinaryArray::try_new(offsets.into_large(), data, None).map_err(e)?;
            Arc::new(BinaryViewArray::from_iter_values(
                a.iter().map(|s| s.unwrap_or(&[])),
            ))
        }
        _ => return Err(format!("cannot read BYTE_ARRAY as {dt}")),
    })
}

fn dec(a: ArrayRef, p: u8, s: i8) -> R<ArrayRef> {
    let e = |e: arrow::error::ArrowError| e.to_string();
    Ok(match a.data_type() {
        DataType::Decimal32(_, _) => Arc::new(
            a.as_primitive::<Decimal32Type>()
                .clone()
                .with_precision_and_scale(p, s)
                .map_err(e)?,
        ),
        DataType::Decimal64(_, _) => Arc::new(
            a.as_primitive::<Decimal64Type>()
                .clone()
                .with_precision_and_scale(p, s)
                .map_err(e)?,
        ),
        DataType::Decimal128(_, _) => Arc::new(
            a.as_primitive::<Decimal128Type>()
                .clone()
                .with_precision_and_scale(p, s)
                .map_err(e)?,
        ),
        _ => Arc::new(
            a.as_primitive::<Decimal256Type>()
                .clone()
                .with_precision_and_scale(p, s)
                .map_err(e)?,
        ),
    })
}

fn decimal_or_bad(d: &Dense, dt: &DataType) -> Option<R<ArrayRef>> {
    Some(match dt {
        DataType::Decimal32(p, s) => {
            decimal::<Decimal32Type, 4>(d, *p, *s, i32::from_be_bytes, |v| v as i32)
        }
        DataType::Decimal64(p, s) => {
            decimal::<Decimal64Type, 8>(d, *p, *s, i64::from_be_bytes, |v| v as i64)
        }
        DataType::Decimal128(p, s) => {
            decimal::<Decimal128Type, 16>(d, *p, *s, i128::from_be_bytes, |v| v)
        }
        DataType::Decimal256(p, s) => {
            decimal::<Decimal256Type, 32>(d, *p, *s, i256::from_be_bytes, i256::from_i128)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The width-specialised decimal loop gives, at every width, what
    /// sign-extending each value's bytes and reading them big-endian gives,
    /// for every native width it narrows to.
    #[test]
    fn fixed_width_decimals_match_the_checked_path() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let bytes: Vec<u8> = (0..16 * 64)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Every value's leading byte both signs, and the extremes.
                match i % 37 {
                    0 => 0x80,
                    1 => 0x7f,
                    2 => 0xff,
                    3 => 0,
                    _ => x as u8,
                }
            })
            .collect();
        // Each value's bytes sign-extended to N, then read big-endian.
        fn checked<const N: usize, T>(data: &[u8], w: usize, from: fn([u8; N]) -> T) -> Vec<T> {
            let each = |b: &[u8]| from(sign_extend::<N>(b).unwrap());
            data.chunks_exact(w).map(each).collect()
        }
        for w in 1..=16 {
            let data = &bytes[..w * 64];
            let want16 = checked(data, w, i128::from_be_bytes);
            assert_eq!(be_values(w, data, |v| v), want16, "width {w}");
            let want32 = checked(data, w, i256::from_be_bytes);
            assert_eq!(be_values(w, data, i256::from_i128), want32, "width {w}");
            if w <= 8 {
                let want8 = checked(data, w, i64::from_be_bytes);
                assert_eq!(be_values(w, data, |v| v as i64), want8, "width {w}");
            }
            if w <= 4 {
                let want4 = checked(data, w, i32::from_be_bytes);
                assert_eq!(be_values(w, data, |v| v as i32), want4, "width {w}");
            }
        }
    }

    /// A value wider than the decimal's native type is an error, not a
    /// truncation.
    #[test]
    fn decimals_wider_than_their_type_are_errors() {
        let d = Dense::Fixed {
            width: 5,
            bytes: Buffer::from(vec![1u8; 10]),
        };
        assert!(
            decimal_or_bad(&d, &DataType::Decimal32(9, 2))
                .unwrap()
                .is_err()
        );
        let a = decimal_or_bad(&d, &DataType::Decimal64(18, 2))
            .unwrap()
            .unwrap();
        assert_eq!(a.as_primitive::<Decimal64Type>().value(1), 0x01_0101_0101);
    }

    fn offsets(v: &[i32], data_len: usize) -> Offsets {
        Offsets::staged(ScalarBuffer::from(v.to_vec()), data_len).expect("valid offsets")
    }

    /// Values the decoder checked as UTF-8 become a string array without a
    /// second check (the module's `unsafe`); unchecked bytes are checked.
    #[test]
    fn byte_arrays_become_strings_checked_once() {
        let text = "abéxyz".as_bytes();
        let off = [0, 2, 4, 4, 7];
        let a = byte_array(offsets(&off, 7), Buffer::from(text), true, &DataType::Utf8).unwrap();
        let s = a.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            [Some("ab"), Some("é"), Some(""), Some("xyz")]
        );
        // The same bytes unchecked go through Arrow's check; a value that
        // splits a character fails it.
        let bad = [0, 3, 3, 4, 7];
        let e = byte_array(offsets(&bad, 7), Buffer::from(text), false, &DataType::Utf8);
        assert!(e.is_err());
        // Offsets that do not end at the data's end never take the
        // unchecked path.
        let short = byte_array(
            offsets(&[0, 2], 2),
            Buffer::from(text),
            true,
            &DataType::Utf8,
        )
        .unwrap();
        assert_eq!(short.len(), 1);
    }
}
