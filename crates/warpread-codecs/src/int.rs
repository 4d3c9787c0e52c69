//! Integer element types shared by the integer codecs, and dispatch from a
//! run-time [`IntType`] to generic code.

use crate::plan::IntType;

/// A fixed-width integer an integer codec can produce.
pub trait IntElem: Copy + Send + Sync + Default + PartialEq + std::fmt::Debug + 'static {
    /// The run-time tag.
    const TYPE: IntType;
    /// Truncates a 64-bit two's complement value to this type.
    fn from_bits(v: u64) -> Self;
    /// Sign- or zero-extends to 64 bits.
    fn to_bits(self) -> u64;
}

macro_rules! int_elem {
    ($($t:ty => $tag:ident, $wide:ty);*) => {$(
        impl IntElem for $t {
            const TYPE: IntType = IntType::$tag;
            #[inline]
            fn from_bits(v: u64) -> Self {
                v as $t
            }
            #[inline]
            fn to_bits(self) -> u64 {
                self as $wide as u64
            }
        }
    )*};
}
int_elem!(i8 => I8, i64; u8 => U8, u64; i16 => I16, i64; u16 => U16, u64;
          i32 => I32, i64; u32 => U32, u64; i64 => I64, i64; u64 => U64, u64);

/// Runs a generic expression with `$T` bound to the Rust type of an
/// [`IntType`].
#[macro_export]
macro_rules! with_int_type {
    ($ty:expr, $T:ident => $body:expr) => {
        match $ty {
            $crate::plan::IntType::I8 => {
                type $T = i8;
                $body
            }
            $crate::plan::IntType::U8 => {
                type $T = u8;
                $body
            }
            $crate::plan::IntType::I16 => {
                type $T = i16;
                $body
            }
            $crate::plan::IntType::U16 => {
                type $T = u16;
                $body
            }
            $crate::plan::IntType::I32 => {
                type $T = i32;
                $body
            }
            $crate::plan::IntType::U32 => {
                type $T = u32;
                $body
            }
            $crate::plan::IntType::I64 => {
                type $T = i64;
                $body
            }
            $crate::plan::IntType::U64 => {
                type $T = u64;
                $body
            }
        }
    };
}

/// The type an ORC integer stream's values are decoded at before they are
/// stored as `ty`: signed streams are 64-bit on the wire, whatever the column
/// width, and a narrower column keeps the low bits, as ORC C++ (and so
/// pyarrow) and Java narrow the decoded `long`. Valid writers rely on that:
/// cudf's `TestOrcFile.int16.rle.size.orc` stores SHORT values as their
/// 16-bit two's complement patterns. Unsigned streams (lengths, dictionary
/// indexes, nanoseconds) are strict: a value past the width cannot be a
/// length or an index, so it is reported as corrupt instead of wrapping.
#[inline]
pub fn orc_wire_type(ty: IntType) -> IntType {
    if ty.is_signed() { IntType::I64 } else { ty }
}

/// Whether the 64-bit two's complement value `x` is representable in `ty`.
#[inline]
pub fn in_range(ty: IntType, x: i64) -> bool {
    let bits = ty.bits();
    if bits == 64 {
        return true;
    }
    if ty.is_signed() {
        let half = 1i64 << (bits - 1);
        (-half..half).contains(&x)
    } else {
        (0..(1i64 << bits)).contains(&x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_and_extension() {
        assert_eq!(i8::from_bits((-3i64) as u64), -3);
        assert_eq!((-3i8).to_bits(), (-3i64) as u64);
        assert_eq!(u8::from_bits(0x1ff), 0xff);
        assert_eq!(0xffu8.to_bits(), 0xff);
    }

    #[test]
    fn ranges() {
        assert!(in_range(IntType::I8, -128) && !in_range(IntType::I8, -129));
        assert!(in_range(IntType::U16, 65535) && !in_range(IntType::U16, 65536));
        assert!(!in_range(IntType::U32, -1));
        assert!(in_range(IntType::I64, i64::MIN) && in_range(IntType::U64, -1));
    }

    #[test]
    fn orc_wire_types() {
        assert_eq!(orc_wire_type(IntType::I16), IntType::I64);
        assert_eq!(orc_wire_type(IntType::I32), IntType::I64);
        assert_eq!(orc_wire_type(IntType::U32), IntType::U32);
    }
}
