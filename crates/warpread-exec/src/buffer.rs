//! Host buffers aligned for any element type the decoders produce.

use crate::codecs::int::IntElem;
use crate::error::{Error, Result};

/// A zero-initialised byte buffer whose storage is 8-byte aligned, so that it
/// can be viewed as a slice of any integer element type.
#[derive(Clone, Default)]
pub struct HostBuffer {
    words: Vec<u64>,
    /// Storage owned elsewhere (pinned memory a download landed in), used
    /// instead of `words` when present; read-only, 8-byte aligned.
    shared: Option<arrow::buffer::Buffer>,
    len: usize,
}

impl PartialEq for HostBuffer {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for HostBuffer {}

impl std::fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostBuffer({} bytes)", self.len)
    }
}

impl HostBuffer {
    /// A buffer of `len` zero bytes.
    pub fn zeroed(len: usize) -> Self {
        Self {
            words: vec![0; len.div_ceil(8)],
            shared: None,
            len,
        }
    }

    /// A buffer of `len` zero bytes, or an error when the memory cannot be
    /// had: sizes come from file metadata, which may lie, and an allocation
    /// failure must be an error rather than an abort.
    pub fn try_zeroed(len: usize) -> Result<Self> {
        let words = super::copy::try_zeroed_vec::<u64>(len.div_ceil(8))
            .map_err(|_| Error::InvalidPlan(format!("cannot allocate {len} bytes of output")))?;
        Ok(Self {
            words,
            shared: None,
            len,
        })
    }

    /// A buffer over `bytes` as they are, without a copy (8-byte aligned,
    /// as Arrow allocations and pinned blocks are).
    pub fn shared(bytes: arrow::buffer::Buffer) -> Self {
        assert_eq!(
            bytes.as_ptr().align_offset(8),
            0,
            "shared storage must be 8-aligned"
        );
        Self {
            words: Vec::new(),
            len: bytes.len(),
            shared: Some(bytes),
        }
    }

    /// Makes shared storage owned (a copy) before a write.
    fn own(&mut self) {
        if let Some(b) = self.shared.take() {
            let mut words = vec![0u64; self.len.div_ceil(8)];
            // SAFETY: the words cover at least `len` bytes.
            let dst = unsafe {
                std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), self.len)
            };
            dst.copy_from_slice(b.as_slice());
            self.words = words;
        }
    }

    /// A buffer holding a copy of `src`, written once, on all cores.
    pub fn copy_of(src: &[u8]) -> Result<Self> {
        let mut b = Self::try_zeroed(0)?;
        let n = src.len().div_ceil(8);
        b.words
            .try_reserve_exact(n)
            .map_err(|_| Error::InvalidPlan(format!("cannot allocate {} bytes", src.len())))?;
        let spare = &mut b.words.spare_capacity_mut()[..n];
        if let Some(last) = spare.last_mut() {
            last.write(0);
        }
        // SAFETY: the spare words are viewed as bytes (u8 has alignment 1 and
        // no invalid patterns); `src.len() <= 8 * n`.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast::<u8>(), src.len()) };
        super::copy::par_copy(bytes, src);
        // SAFETY: bytes [0, src.len()) were copied and the last word's
        // padding zeroed before, so all n words are initialised.
        unsafe { b.words.set_len(n) };
        b.len = src.len();
        Ok(b)
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        if let Some(b) = &self.shared {
            return b.as_slice();
        }
        // SAFETY: the u64 storage covers at least `len` initialised bytes.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast(), self.len) }
    }

    /// The bytes, mutably.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        self.own();
        // SAFETY: as above; the borrow is unique.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast(), self.len) }
    }

    /// The buffer as elements of `T` (trailing bytes that do not fill an
    /// element are left out).
    pub fn typed<T: IntElem>(&self) -> &[T] {
        let n = self.len / std::mem::size_of::<T>();
        // SAFETY: storage (owned words or the shared buffer, checked at
        // construction) is 8-aligned, T is a plain integer of alignment <= 8
        // for which every bit pattern is valid.
        unsafe { std::slice::from_raw_parts(self.as_bytes().as_ptr().cast(), n) }
    }

    /// The buffer as an Arrow buffer of `len` bytes, without copying: Arrow
    /// arrays can then reference stage outputs directly. The storage stays
    /// 8-byte aligned.
    pub fn into_arrow(self) -> arrow::buffer::Buffer {
        if let Some(b) = self.shared {
            return b;
        }
        arrow::buffer::Buffer::from_vec(self.words).slice_with_length(0, self.len)
    }

    /// The buffer as elements of `T`, mutably.
    pub fn typed_mut<T: IntElem>(&mut self) -> &mut [T] {
        typed_mut(self.as_bytes_mut())
    }
}

/// `bytes` as elements of `T` (trailing bytes that do not fill an element
/// are left out): a stage output being written, owned or pinned.
///
/// # Panics
/// When `bytes` is not aligned for `T` (stage outputs are 8-byte aligned).
pub(crate) fn typed_mut<T: IntElem>(bytes: &mut [u8]) -> &mut [T] {
    assert_eq!(
        bytes.as_ptr().align_offset(std::mem::align_of::<T>()),
        0,
        "stage outputs are 8-byte aligned"
    );
    let n = bytes.len() / std::mem::size_of::<T>();
    // SAFETY: aligned (checked), in bounds (n elements fit), T is a plain
    // integer for which every bit pattern is valid; the borrow is unique.
    unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast(), n) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_share_storage() {
        let mut b = HostBuffer::zeroed(10);
        b.typed_mut::<u16>()[1] = 0x0201;
        assert_eq!(&b.as_bytes()[..4], &[0, 0, 1, 2]);
        assert_eq!(b.typed::<u32>().len(), 2);
        assert_eq!(b.len(), 10);
        assert!(HostBuffer::zeroed(0).is_empty());
        assert!(HostBuffer::try_zeroed(usize::MAX / 2).is_err());
        assert_eq!(HostBuffer::try_zeroed(3).unwrap().as_bytes(), &[0, 0, 0]);
        let c = HostBuffer::copy_of(&[1, 2, 3, 4, 5, 6, 7, 8, 9]).unwrap();
        assert_eq!(c.as_bytes(), &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(c.typed::<u64>().len(), 1);
        let a = c.into_arrow();
        assert_eq!(a.as_slice(), &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(a.as_ptr().align_offset(8), 0);
        // Shared storage reads the same, compares by bytes, and is copied
        // before a write.
        let mut s = HostBuffer::shared(a.clone());
        assert_eq!(s.as_bytes(), &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(
            s,
            HostBuffer::copy_of(&[1, 2, 3, 4, 5, 6, 7, 8, 9]).unwrap()
        );
        assert_eq!(s.typed::<u64>().len(), 1);
        s.as_bytes_mut()[0] = 9;
        assert_eq!(s.as_bytes()[..2], [9, 2]);
        assert_eq!(a.as_slice()[0], 1);
        assert_eq!(
            HostBuffer::shared(a.clone()).into_arrow().as_ptr(),
            a.as_ptr()
        );
    }
}
