//! Page-locked host blocks that stage outputs are downloaded into and then
//! handed to Arrow as they are, without the copy into pageable memory that
//! a reused staging buffer needs (a pass over every output byte, on the
//! critical path of a read). A block goes back to the pool when the last
//! Arrow buffer holding it is dropped, so steady-state reads allocate no
//! pinned memory.
//!
//! Pinned memory is a scarce resource of the host (the kernel cannot page
//! it out), so the pool holds at most a cap in all; a stage output that does
//! not fit goes through the lane's staging buffer and a copy as before.

use std::panic::AssertUnwindSafe;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow::buffer::Buffer;
use cudarc::driver::{CudaContext, PinnedHostSlice};

use crate::error::{Error, Result};

/// The least cap on the pool's pinned bytes, and the cap when the host's
/// memory size is unknown.
pub const MIN_CAP: usize = 8 << 30;

/// The most the default cap grows to.
pub const MAX_CAP: usize = 64 << 30;

/// Overrides [`default_cap`], in MiB (0 turns the pool off).
pub const ENV_CAP_MIB: &str = "WARPREAD_PINNED_POOL_MIB";

/// Smallest block: smaller outputs share size classes of at least this.
const MIN_BLOCK: usize = 1 << 20;

struct Inner {
    ctx: Arc<CudaContext>,
    free: Mutex<Vec<PinnedHostSlice<u8>>>,
    /// Bytes of every block allocated (free or in use).
    held: AtomicUsize,
    /// Address ranges of every block allocated (blocks are only freed with
    /// the pool), to recognise inputs that already lie in pinned memory.
    ranges: Mutex<Vec<std::ops::Range<usize>>>,
    cap: usize,
}

/// A pool of pinned host blocks (see the module docs).
#[derive(Clone)]
pub struct PinnedPool {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PinnedPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedPool")
            .field("held", &self.inner.held.load(Ordering::Relaxed))
            .field("cap", &self.inner.cap)
            .finish()
    }
}

/// One block taken from the pool; returns to it when dropped.
pub struct PinnedBlock {
    slice: Option<PinnedHostSlice<u8>>,
    pool: Arc<Inner>,
}

impl PinnedPool {
    /// A pool for `ctx` holding at most `cap` bytes.
    pub fn new(ctx: Arc<CudaContext>, cap: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                ctx,
                free: Mutex::new(Vec::new()),
                held: AtomicUsize::new(0),
                ranges: Mutex::new(Vec::new()),
                cap,
            }),
        }
    }

    /// A pool with the cap of [`ENV_CAP_MIB`], or [`default_cap`].
    pub fn from_env(ctx: Arc<CudaContext>) -> Self {
        let cap = std::env::var(ENV_CAP_MIB)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .map_or_else(
                || default_cap(host_memory()),
                |mib| mib.saturating_mul(1 << 20),
            );
        Self::new(ctx, cap)
    }

    /// A block of at least `bytes`: a free one of its size class (a power
    /// of two), else a new one while the pool stays under its cap, else the
    /// smallest larger free one; `None` when there is none, or when pinned
    /// memory cannot be had (the caller then stages and copies).
    pub fn take(&self, bytes: usize) -> Result<Option<PinnedBlock>> {
        let size = bytes.max(MIN_BLOCK).next_power_of_two();
        let inner = &self.inner;
        let from_free = |exact: bool| {
            let mut free = inner.free.lock().unwrap_or_else(|p| p.into_inner());
            let best = free
                .iter()
                .enumerate()
                .filter(|(_, b)| {
                    if exact {
                        b.len() == size
                    } else {
                        b.len() >= size
                    }
                })
                .min_by_key(|(_, b)| b.len())
                .map(|(i, _)| i);
            best.map(|i| PinnedBlock {
                slice: Some(free.swap_remove(i)),
                pool: inner.clone(),
            })
        };
        if let Some(b) = from_free(true) {
            return Ok(Some(b));
        }
        let reserved = inner
            .held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |h| {
                h.checked_add(size).filter(|&n| n <= inner.cap)
            });
        if reserved.is_err() {
            return Ok(from_free(false));
        }
        // Flags 0, not write-combined: the CPU reads these blocks.
        // SAFETY: a block's bytes are written by a download before anything
        // reads them, and only the downloaded prefix is handed out.
        match unsafe { inner.ctx.alloc_pinned_with_flags::<u8>(size, 0) } {
            Ok(mut slice) => {
                let at = slice
                    .as_mut_ptr()
                    .map_err(|e| Error::cuda("allocating pinned host memory", e))?
                    as usize;
                inner
                    .ranges
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(at..at + size);
                Ok(Some(PinnedBlock {
                    slice: Some(slice),
                    pool: inner.clone(),
                }))
            }
            Err(e) => {
                inner.held.fetch_sub(size, Ordering::Relaxed);
                tracing::debug!("pinned pool: cannot allocate {size} bytes ({e}); staging instead");
                Ok(None)
            }
        }
    }
}

/// The default cap for a host with `memory` bytes of RAM: a quarter of it,
/// between [`MIN_CAP`] and [`MAX_CAP`]. A read keeps every output it hands
/// out, so a cap below the Arrow size of one large read (TPC-H lineitem at
/// scale 10 is 9.6 GB) sends the rest of it through staging and a copy;
/// a quarter leaves the host most of its memory unpinned.
pub fn default_cap(memory: Option<u64>) -> usize {
    memory.map_or(MIN_CAP, |m| {
        usize::try_from(m / 4)
            .unwrap_or(usize::MAX)
            .clamp(MIN_CAP, MAX_CAP)
    })
}

/// The host's physical memory in bytes (`MemTotal` of /proc/meminfo),
/// `None` where that cannot be read.
fn host_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

impl PinnedPool {
    /// Whether `bytes` lie inside one of the pool's blocks: pinned memory a
    /// transfer can read directly, without staging it first.
    pub fn contains(&self, bytes: &[u8]) -> bool {
        let start = bytes.as_ptr() as usize;
        let end = start + bytes.len();
        self.inner
            .ranges
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|r| r.start <= start && end <= r.end)
    }
}

impl PinnedBlock {
    /// The block's pinned memory.
    pub fn slice_mut(&mut self) -> &mut PinnedHostSlice<u8> {
        self.slice.as_mut().expect("present until drop")
    }

    /// The first `len` bytes as an Arrow buffer that owns the block; the
    /// block returns to the pool when the last clone of the buffer is
    /// dropped. Call only once the transfers into it are complete.
    pub fn into_buffer(mut self, len: usize) -> Result<Buffer> {
        let slice = self.slice_mut();
        assert!(
            len <= slice.len(),
            "{len} bytes of a {} byte block",
            slice.len()
        );
        let ptr = slice
            .as_mut_ptr()
            .map_err(|e| Error::cuda("waiting for a download", e))?;
        let ptr = NonNull::new(ptr).expect("pinned allocations are not null");
        // SAFETY: `ptr` points at `len` initialised bytes of the block (the
        // download wrote them), which stays allocated and unmoved until the
        // owner — the block itself — is dropped with the last buffer clone.
        // AssertUnwindSafe: the block's state is a pointer and an Arc; a
        // panic cannot leave it half-updated.
        Ok(unsafe { Buffer::from_custom_allocation(ptr, len, Arc::new(AssertUnwindSafe(self))) })
    }
}

impl Drop for PinnedBlock {
    fn drop(&mut self) {
        if let Some(slice) = self.slice.take() {
            self.pool
                .free
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(slice);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_cap_is_a_quarter_of_memory_within_bounds() {
        assert_eq!(default_cap(None), MIN_CAP);
        assert_eq!(default_cap(Some(16 << 30)), MIN_CAP);
        assert_eq!(default_cap(Some(128 << 30)), 32 << 30);
        assert_eq!(default_cap(Some(1 << 40)), MAX_CAP);
        assert!(host_memory().is_none_or(|m| m > 0));
    }
}
