//! Dense stream values (one per present slot) to Arrow buffers of one
//! element per slot. Without nulls the values already are the Arrow buffer
//! and are shared, not copied; with nulls they are spread once. Validity
//! bitmaps come from the decoded PRESENT bytes.

use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, ScalarBuffer};
use arrow::datatypes::ArrowNativeType;

/// The validity bitmap of decoded PRESENT bytes (one 0/1 byte per slot).
pub fn nulls(present: Option<&[u8]>) -> Option<NullBuffer> {
    present.map(|p| NullBuffer::new(BooleanBuffer::collect_bool(p.len(), |i| p[i] != 0)))
}

/// Places `values` (one per present slot) into `present.len()` slots, a
/// default value in null slots. Values missing at the end (which the decode
/// rounds' counts rule out) read as defaults rather than panicking.
pub fn spread<T: Copy + Default>(values: &[T], present: &[u8]) -> Vec<T> {
    let mut out = Vec::with_capacity(present.len());
    let mut k = 0usize;
    for &b in present {
        out.push(if b != 0 {
            k += 1;
            values.get(k - 1).copied().unwrap_or_default()
        } else {
            T::default()
        });
    }
    out
}

/// The first `n` elements of `bytes` as a typed buffer, sharing the storage
/// when it is aligned for `T` (decoded streams and stream starts are),
/// copied into Arrow's aligned storage otherwise. `bytes` holds at least `n`
/// elements.
pub fn typed<T: ArrowNativeType>(bytes: Buffer, n: usize) -> ScalarBuffer<T> {
    let len = n * std::mem::size_of::<T>();
    let bytes = bytes.slice_with_length(0, len);
    let bytes = if bytes.as_ptr().align_offset(std::mem::align_of::<T>()) == 0 {
        bytes
    } else {
        Buffer::from_slice_ref(bytes.as_slice())
    };
    ScalarBuffer::new(bytes, 0, n)
}

/// One element per slot from `n` dense values in `bytes`: the values
/// themselves when every slot is present, spread over the slots otherwise.
pub fn slot_values<T: ArrowNativeType>(
    bytes: Buffer,
    n: usize,
    present: Option<&[u8]>,
) -> ScalarBuffer<T> {
    let dense = typed::<T>(bytes, n);
    match present {
        None => dense,
        Some(p) => ScalarBuffer::from(spread(&dense, p)),
    }
}

/// [`slot_values`] for values computed on the host (timestamps, decimals).
pub fn owned_slot_values<T: ArrowNativeType>(
    values: Vec<T>,
    present: Option<&[u8]>,
) -> ScalarBuffer<T> {
    match present {
        None => ScalarBuffer::from(values),
        Some(p) => ScalarBuffer::from(spread(&values, p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_and_shares() {
        let b = Buffer::from_vec(vec![1i32, 2, 3, 4]);
        let shared = slot_values::<i32>(b.clone(), 3, None);
        assert_eq!(&shared[..], &[1, 2, 3]);
        assert_eq!(shared.inner().as_ptr(), b.as_ptr());
        let spread = slot_values::<i32>(b.clone(), 2, Some(&[0, 1, 0, 1]));
        assert_eq!(&spread[..], &[0, 1, 0, 2]);
        // Misaligned storage is copied, not a panic.
        let odd = Buffer::from_vec(vec![0u8; 9]).slice(1);
        assert_eq!(&typed::<i64>(odd, 1)[..], &[0]);
        assert_eq!(spread_short(), vec![5, 0, 0]);
        let n = nulls(Some(&[1, 0, 1])).unwrap();
        assert_eq!(n.null_count(), 1);
    }

    fn spread_short() -> Vec<u8> {
        spread(&[5u8], &[1, 0, 1])
    }
}
