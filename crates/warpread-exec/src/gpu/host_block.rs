//! Page-locked host memory made by registering ordinary anonymous pages with
//! the driver (`cuMemHostRegister`), backed by transparent huge pages where
//! the kernel grants them, instead of allocating it with `cuMemHostAlloc`.
//!
//! Why: filling the pinned pool is a fixed cost of every process that
//! streams through the GPU. On the H200 host (`scripts/pinned_alloc_bench.py`,
//! 2 GiB in 64 MiB blocks) `cuMemHostAlloc` page-locks 3.2 GB/s; anonymous
//! memory asked for huge pages (`madvise`), touched and then registered,
//! 7.0 GB/s, and transfers from either run at the same 55 GB/s. Nine tenths
//! of that time is the kernel handing out zeroed pages on first touch, which
//! holds no driver lock, so other lanes' transfers go on meanwhile; the
//! registration itself is short.

use std::ptr::NonNull;
use std::sync::Arc;

use cudarc::driver::{CudaContext, sys};

use crate::error::{Error, Result};

/// The huge page size the mapping is aligned to (x86-64 and most arm64
/// kernels), so that every 2 MiB of the block can be one page.
const HUGE_PAGE: usize = 2 << 20;

/// A page-locked host block, unregistered and freed when dropped.
pub struct HostBlock {
    /// The block's first byte (huge-page aligned).
    ptr: NonNull<u8>,
    len: usize,
    /// Whether the driver has the block registered.
    registered: bool,
    ctx: Arc<CudaContext>,
}

// SAFETY: the block owns its mapping exclusively; the raw pointers are
// never shared outside the borrows its methods hand out.
unsafe impl Send for HostBlock {}
// SAFETY: as above; `&HostBlock` only gives shared reads.
unsafe impl Sync for HostBlock {}

impl HostBlock {
    /// Maps `len` bytes of zeroed memory (a multiple of 4 KiB), asks for
    /// huge pages, touches every page and registers the block with `ctx`.
    pub fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        let fail = |what: &str, why: String| {
            Error::Unsupported(format!(
                "cannot page-lock {len} bytes of host memory: {what} failed ({why})"
            ))
        };
        let ptr = pages::map(len).map_err(|e| fail("mapping", e.to_string()))?;
        let mut block = Self {
            ptr,
            len,
            registered: false,
            ctx: ctx.clone(),
        };
        block.touch();
        ctx.bind_to_thread()
            .map_err(|e| Error::cuda("binding the context to register host memory", e))?;
        // SAFETY: the range is mapped, writable and stays so until drop,
        // which unregisters it first.
        let code = unsafe { sys::cuMemHostRegister_v2(ptr.as_ptr().cast(), len, 0) };
        if code != sys::CUresult::CUDA_SUCCESS {
            return Err(fail("cuMemHostRegister", format!("{code:?}")));
        }
        block.registered = true;
        Ok(block)
    }

    /// Writes one byte of every 4 KiB page, so the kernel hands out the
    /// pages (huge where it can) now rather than during a transfer.
    fn touch(&mut self) {
        let bytes = self.as_mut_slice();
        for i in (0..bytes.len()).step_by(4096) {
            // Volatile: the store of the zero that is already there must
            // happen, to fault the page in.
            // SAFETY: `i` is inside the slice.
            unsafe { std::ptr::write_volatile(bytes.as_mut_ptr().add(i), 0) };
        }
    }

    /// Bytes in the block.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the block holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The block's bytes (zeroed when new, else its last use's).
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` mapped, initialised bytes owned by the block.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The block's bytes, to write. Transfers into the block are issued on
    /// streams the caller synchronizes before it reads.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, borrowed exclusively through `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The address of the block's first byte.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        if self.registered {
            let unregistered = self.ctx.bind_to_thread().is_ok()
                // SAFETY: registered in `new` at this address.
                && unsafe { sys::cuMemHostUnregister(self.ptr.as_ptr().cast()) }
                    == sys::CUresult::CUDA_SUCCESS;
            if !unregistered {
                tracing::debug!("host block of {} bytes: unregistering failed", self.len);
                // Freeing pages the driver may still map is worse than
                // losing them.
                return;
            }
        }
        // SAFETY: mapped by `pages::map(self.len)`, no longer registered
        // or borrowed.
        unsafe { pages::unmap(self.ptr, self.len) };
    }
}

/// Zeroed, huge-page aligned memory outside the allocator: pinned pages
/// are never shared with the allocator's own.
#[cfg(unix)]
mod pages {
    use std::ptr::NonNull;

    use super::HUGE_PAGE;

    /// Maps `len` bytes at a huge-page boundary and asks for huge pages
    /// (a hint: without them the block works the same, slower to set up).
    pub(super) fn map(len: usize) -> std::io::Result<NonNull<u8>> {
        let too_large = || std::io::Error::other("too large");
        let map_len = len.checked_add(HUGE_PAGE).ok_or_else(too_large)?;
        // SAFETY: an anonymous private mapping of fresh pages; checked below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let base = map as usize;
        let start = base.next_multiple_of(HUGE_PAGE);
        // The unaligned head and the tail past the block go back now, so
        // that `unmap` needs only the block's own address and length.
        // SAFETY: both ranges lie inside the mapping and are page-aligned
        // (mmap gives page-aligned addresses; `len` is whole pages).
        unsafe {
            if start > base {
                libc::munmap(map, start - base);
            }
            let end = start + len;
            if base + map_len > end {
                libc::munmap(end as *mut libc::c_void, base + map_len - end);
            }
            libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
            Ok(NonNull::new_unchecked(start as *mut u8))
        }
    }

    /// Unmaps what [`map`] gave.
    ///
    /// # Safety
    /// `ptr` and `len` come from one `map(len)`, and nothing uses the bytes.
    pub(super) unsafe fn unmap(ptr: NonNull<u8>, len: usize) {
        // SAFETY: the caller's promise.
        unsafe { libc::munmap(ptr.as_ptr().cast(), len) };
    }
}

/// Elsewhere: zeroed memory from the allocator, aligned the same.
#[cfg(not(unix))]
mod pages {
    use std::alloc::Layout;
    use std::ptr::NonNull;

    use super::HUGE_PAGE;

    pub(super) fn map(len: usize) -> std::io::Result<NonNull<u8>> {
        let layout = Layout::from_size_align(len.max(1), HUGE_PAGE)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        // SAFETY: the layout has a non-zero size.
        NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })
            .ok_or_else(|| std::io::Error::other("out of memory"))
    }

    /// # Safety
    /// `ptr` and `len` come from one `map(len)`, and nothing uses the bytes.
    pub(super) unsafe fn unmap(ptr: NonNull<u8>, len: usize) {
        let layout = Layout::from_size_align(len.max(1), HUGE_PAGE).expect("as in map");
        // SAFETY: the caller's promise; the same layout as the allocation.
        unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) };
    }
}
