//! Bulk host copies spread over all cores. Stage inputs and outputs are
//! hundreds of MiB; one thread copies (and page-faults) at a few GB/s, which
//! made host copies, not kernels, the bound of a GPU read.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::error::{Error, Result};

/// Bytes one task copies.
const PIECE: usize = 1 << 20;

/// Copies `src` into `dst` (equal lengths) on all cores.
pub fn par_copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "par_copy needs equal lengths");
    dst.par_chunks_mut(PIECE)
        .zip(src.par_chunks(PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// Fills uninitialised storage with bytes of `src` (same length) on all
/// cores.
fn fill_uninit(dst: &mut [MaybeUninit<u8>], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    dst.par_chunks_mut(PIECE)
        .zip(src.par_chunks(PIECE))
        .for_each(|(d, s)| {
            // SAFETY: `d` and `s` have equal lengths, do not overlap (one is
            // fresh spare capacity), and u8 has no invalid bit patterns.
            unsafe { std::ptr::copy_nonoverlapping(s.as_ptr(), d.as_mut_ptr().cast(), s.len()) }
        });
}

/// The concatenation of `pieces`, copied on all cores into one allocation
/// (an error, not an abort, when the memory cannot be had: sizes come from
/// file metadata).
pub fn gather(pieces: &[&[u8]]) -> Result<Vec<u8>> {
    let total: usize = pieces.iter().map(|p| p.len()).sum();
    let mut out = Vec::new();
    out.try_reserve_exact(total)
        .map_err(|_| Error::InvalidPlan(format!("cannot allocate {total} bytes")))?;
    let mut slots = Vec::with_capacity(pieces.len());
    let mut rest = &mut out.spare_capacity_mut()[..total];
    for p in pieces {
        let (head, tail) = rest.split_at_mut(p.len());
        slots.push(head);
        rest = tail;
    }
    slots
        .into_par_iter()
        .zip(pieces.par_iter())
        .for_each(|(d, s)| fill_uninit(d, s));
    // SAFETY: every byte of [0, total) was written by exactly one piece.
    unsafe { out.set_len(total) };
    Ok(out)
}

/// `n` zero elements, or an error when the memory cannot be had. The
/// allocator's zeroed allocation (calloc) hands out fresh pages that are
/// already zero, so nothing is written here: the pages are first touched by
/// whoever fills them, on whichever cores do that.
pub fn try_zeroed_vec<T: crate::codecs::int::IntElem>(n: usize) -> Result<Vec<T>> {
    let bytes = || n.saturating_mul(std::mem::size_of::<T>());
    let layout = std::alloc::Layout::array::<T>(n)
        .map_err(|_| Error::InvalidPlan(format!("cannot allocate {} bytes", bytes())))?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(Error::InvalidPlan(format!(
            "cannot allocate {} bytes",
            bytes()
        )));
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout
    // of `n` elements of T, and all-zero bytes are a valid integer.
    Ok(unsafe { Vec::from_raw_parts(ptr.cast::<T>(), n, n) })
}

/// Zeroes `dst` on all cores.
pub fn par_zero(dst: &mut [MaybeUninit<u64>]) {
    dst.par_chunks_mut(PIECE / 8).for_each(|d| {
        for w in d {
            w.write(0);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_concatenates() {
        let a = vec![1u8; 3 * PIECE + 5];
        let b: Vec<u8> = (0..1000).map(|i| i as u8).collect();
        let g = gather(&[&a, &[], &b]).unwrap();
        assert_eq!(g.len(), a.len() + b.len());
        assert_eq!(&g[..a.len()], &a[..]);
        assert_eq!(&g[a.len()..], &b[..]);
        let mut d = vec![0u8; b.len()];
        par_copy(&mut d, &b);
        assert_eq!(d, b);
        let z = try_zeroed_vec::<u64>(1 << 20).unwrap();
        assert!(z.iter().all(|&w| w == 0));
        assert!(try_zeroed_vec::<u8>(0).unwrap().is_empty());
        assert!(try_zeroed_vec::<u64>(usize::MAX / 4).is_err());
    }
}
