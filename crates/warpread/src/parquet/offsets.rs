//! End offsets of a chunk's byte-array values into their data, built in
//! the width the Arrow array will hold: 32 bits whenever the chunk's
//! bytes fit (Utf8 and Binary, the common case: the vector then becomes
//! the array's offsets without a pass), 64 bits past 2 GiB. Offsets built
//! as `usize` and narrowed afterwards had cost SF 10 lineitem's five
//! string columns ~3.6 GB of fresh memory per read.

use std::ops::Range;

use arrow::array::OffsetSizeTrait;
use arrow::buffer::{OffsetBuffer, ScalarBuffer};

/// `n + 1` offsets, the first 0, never decreasing.
#[derive(Debug, Clone, PartialEq)]
pub enum Offsets {
    /// The data is under 2 GiB.
    Small(Vec<i32>),
    /// The data may reach past 2 GiB.
    Large(Vec<i64>),
    /// 32-bit offsets a stage wrote (`ParquetOp::ByteDictOffsets`), in its
    /// output buffer; checked by [`Offsets::staged`].
    Staged(ScalarBuffer<i32>),
}

impl Offsets {
    /// Room for `n` values whose bytes are at most `bound` (the width
    /// follows from the bound), holding the leading 0.
    pub fn with_bound(n: usize, bound: u64) -> Self {
        if bound <= i32::MAX as u64 {
            let mut v = Vec::with_capacity(n + 1);
            v.push(0);
            Offsets::Small(v)
        } else {
            let mut v = Vec::with_capacity(n + 1);
            v.push(0);
            Offsets::Large(v)
        }
    }

    /// Offsets a stage wrote, once checked: a leading 0, never decreasing,
    /// ending at `data_len`; `None` otherwise.
    pub fn staged(v: ScalarBuffer<i32>, data_len: usize) -> Option<Self> {
        let ok = v.first() == Some(&0)
            && v.windows(2).all(|w| w[0] <= w[1])
            && v.last().is_some_and(|&o| o as usize == data_len);
        ok.then_some(Offsets::Staged(v))
    }

    /// Number of values.
    pub fn values(&self) -> usize {
        match self {
            Offsets::Small(v) => v.len() - 1,
            Offsets::Large(v) => v.len() - 1,
            Offsets::Staged(v) => v.len() - 1,
        }
    }

    /// Each value's byte range.
    pub fn ranges(&self) -> Box<dyn Iterator<Item = Range<usize>> + '_> {
        match self {
            Offsets::Small(v) => Box::new(v.windows(2).map(|w| w[0] as usize..w[1] as usize)),
            Offsets::Large(v) => Box::new(v.windows(2).map(|w| w[0] as usize..w[1] as usize)),
            Offsets::Staged(v) => Box::new(v.windows(2).map(|w| w[0] as usize..w[1] as usize)),
        }
    }

    /// As 32-bit Arrow offsets; an error past 2 GiB.
    pub fn into_small(self) -> Result<OffsetBuffer<i32>, String> {
        let v = match self {
            // SAFETY: checked when made (`Offsets::staged`).
            Offsets::Staged(v) => return Ok(unsafe { OffsetBuffer::new_unchecked(v) }),
            Offsets::Small(v) => v,
            Offsets::Large(v) => {
                if v.last().is_some_and(|&o| i32::try_from(o).is_err()) {
                    return Err("byte array column over 2 GiB".to_string());
                }
                v.into_iter().map(|o| o as i32).collect()
            }
        };
        Ok(checked(v))
    }

    /// As 64-bit Arrow offsets.
    pub fn into_large(self) -> OffsetBuffer<i64> {
        checked(match self {
            Offsets::Small(v) => v.into_iter().map(i64::from).collect(),
            Offsets::Staged(v) => v.iter().map(|&o| i64::from(o)).collect(),
            Offsets::Large(v) => v,
        })
    }
}

/// Offsets built by [`push_lengths`] and `ByteDict::gather` start at 0 and
/// never decrease; `OffsetBuffer::new` checks both again in one pass
/// (0.6% of a CPU read's profile), kept for a debug build.
fn checked<O: OffsetSizeTrait>(v: Vec<O>) -> OffsetBuffer<O> {
    debug_assert!(v.first().is_some_and(|o| o.is_zero()) && v.windows(2).all(|w| w[0] <= w[1]));
    let v = ScalarBuffer::from(v);
    // SAFETY: see above; every constructor of `Offsets` pushes 0 first and
    // every later offset adds a length to the one before, within the
    // bound the width was chosen for.
    unsafe { OffsetBuffer::new_unchecked(v) }
}

/// Pushes the end offsets of values of `lengths`, the first starting where
/// the last offset ends (the caller's bound covers them).
pub fn push_lengths<O: OffsetSizeTrait>(offsets: &mut Vec<O>, lengths: &[u32]) {
    let mut last = offsets.last().map_or(0, |o| o.as_usize());
    offsets.extend(lengths.iter().map(|&l| {
        last += l as usize;
        O::usize_as(last)
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_picks_the_width() {
        assert!(matches!(Offsets::with_bound(3, 10), Offsets::Small(_)));
        assert!(matches!(
            Offsets::with_bound(3, i32::MAX as u64),
            Offsets::Small(_)
        ));
        assert!(matches!(
            Offsets::with_bound(3, i32::MAX as u64 + 1),
            Offsets::Large(_)
        ));
    }

    #[test]
    fn both_widths_give_the_same_ranges_and_arrays() {
        let lengths = [3u32, 0, 5, 1];
        let mut small = Offsets::with_bound(4, 9);
        let mut large = Offsets::with_bound(4, u64::MAX);
        let (Offsets::Small(s), Offsets::Large(l)) = (&mut small, &mut large) else {
            unreachable!()
        };
        push_lengths(s, &lengths);
        push_lengths(l, &lengths);
        assert_eq!(small.values(), 4);
        assert_eq!(
            small.ranges().collect::<Vec<_>>(),
            large.ranges().collect::<Vec<_>>()
        );
        assert_eq!(small.clone().into_small(), large.clone().into_small());
        assert_eq!(small.into_large(), large.into_large());
    }

    #[test]
    fn staged_offsets_are_checked_once() {
        let v = |o: &[i32]| ScalarBuffer::from(o.to_vec());
        assert!(Offsets::staged(v(&[0, 2, 2, 5]), 5).is_some());
        assert!(Offsets::staged(v(&[0, 2, 2, 5]), 6).is_none());
        assert!(Offsets::staged(v(&[1, 2]), 2).is_none());
        assert!(Offsets::staged(v(&[0, 3, 2]), 2).is_none());
        assert!(Offsets::staged(v(&[]), 0).is_none());
        let s = Offsets::staged(v(&[0, 1, 4]), 4).unwrap();
        assert_eq!(s.ranges().collect::<Vec<_>>(), [0..1, 1..4]);
        assert_eq!(s.clone().into_small().unwrap().as_ref(), &[0, 1, 4]);
        assert_eq!(s.into_large().as_ref(), &[0i64, 1, 4]);
    }

    #[test]
    fn large_offsets_past_2_gib_do_not_narrow() {
        let big = Offsets::Large(vec![0, 1 << 31]);
        assert!(big.clone().into_small().is_err());
        assert_eq!(big.into_large().last(), Some(&(1i64 << 31)));
    }
}
