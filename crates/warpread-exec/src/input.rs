//! Host buffers a reader fills for stages to read: the compressed bytes
//! read from a file, inputs assembled on the host. On the CUDA backend they
//! are page-locked pool blocks, so the upload reads them where they are
//! instead of first copying them into a staging buffer (for TPC-H lineitem
//! SF 10 Parquet that copy was 4 GB per read).

use std::ops::{Deref, DerefMut};

use crate::error::Result;
use crate::gpu::PinnedBlock;

/// A writable host buffer of a fixed length (see the module docs). Its
/// bytes start zeroed on the CPU backend and unspecified in a pinned block:
/// whoever fills it writes every byte it hands to a stage.
pub struct InputBuffer {
    storage: Storage,
    len: usize,
}

enum Storage {
    Owned(Vec<u8>),
    Pinned {
        /// Kept for its memory, which `ptr` points into, and returned to
        /// its pool when the buffer is dropped.
        _block: PinnedBlock,
        ptr: *mut u8,
    },
}

// SAFETY: `ptr` points into the pinned block the buffer owns and nothing
// else aliases it; access follows Rust's borrow rules through `&self` /
// `&mut self`, as for the Vec.
unsafe impl Send for InputBuffer {}
// SAFETY: as above; shared access only reads.
unsafe impl Sync for InputBuffer {}

impl InputBuffer {
    /// `len` zero bytes in ordinary memory, or an error when they cannot be
    /// had (sizes come from file metadata, which may lie).
    pub fn zeroed(len: usize) -> Result<Self> {
        Ok(Self {
            storage: Storage::Owned(super::copy::try_zeroed_vec::<u8>(len)?),
            len,
        })
    }

    /// The first `len` bytes of a pinned block (at least that long).
    pub fn pinned(mut block: PinnedBlock, len: usize) -> Result<Self> {
        let ptr = block.prefix_ptr(len)?;
        Ok(Self {
            storage: Storage::Pinned { _block: block, ptr },
            len,
        })
    }

    /// Whether the bytes are page-locked.
    pub fn is_pinned(&self) -> bool {
        matches!(self.storage, Storage::Pinned { .. })
    }
}

impl Deref for InputBuffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.storage {
            Storage::Owned(v) => v,
            // SAFETY: `ptr` addresses `len` bytes of the owned block, alive
            // as long as `self`.
            Storage::Pinned { ptr, .. } => unsafe { std::slice::from_raw_parts(*ptr, self.len) },
        }
    }
}

impl DerefMut for InputBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        match &mut self.storage {
            Storage::Owned(v) => v,
            // SAFETY: as in `deref`, and `&mut self` makes the access unique.
            Storage::Pinned { ptr, .. } => unsafe {
                std::slice::from_raw_parts_mut(*ptr, self.len)
            },
        }
    }
}

impl std::fmt::Debug for InputBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "InputBuffer({} bytes{})",
            self.len,
            if self.is_pinned() { ", pinned" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_buffers_are_writable_slices() {
        let mut b = InputBuffer::zeroed(5).unwrap();
        assert_eq!(&b[..], &[0; 5]);
        b[2] = 7;
        assert_eq!(&b[..], &[0, 0, 7, 0, 0]);
        assert!(!b.is_pinned());
        assert!(InputBuffer::zeroed(0).unwrap().is_empty());
    }
}
