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
//!
//! A block may also keep a *device mirror*: the device buffer its bytes
//! were downloaded from (or uploaded to), registered by host address for as
//! long as the block is out of the pool. Decompressed pages and streams are
//! read by the host (headers, level prefixes) and then decoded by later
//! stages; with a mirror those stages read them where they already lie on
//! the device instead of uploading them again. The mirror is dropped before
//! the block is reused, so an address can never find stale bytes.

use std::panic::AssertUnwindSafe;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow::buffer::Buffer;
use cudarc::driver::{CudaContext, CudaSlice};

use super::CudaOptions;
use super::host_block::HostBlock;
use crate::error::Result;

/// The least cap on the pool's pinned bytes, and the cap when the host's
/// memory size is unknown.
pub const MIN_CAP: usize = 8 << 30;

/// The most the default cap grows to.
pub const MAX_CAP: usize = 64 << 30;

/// Smallest block: smaller outputs share size classes of at least this.
const MIN_BLOCK: usize = 1 << 20;

/// A block's bytes on the device.
struct Mirror {
    /// Host address range of the mirrored bytes.
    host: std::ops::Range<usize>,
    device: Arc<CudaSlice<u8>>,
    /// Device bytes it holds (its allocation, at least `host.len()`).
    held: usize,
}

/// The host addresses `bytes` occupy.
fn span(bytes: &[u8]) -> std::ops::Range<usize> {
    let start = bytes.as_ptr() as usize;
    start..start + bytes.len()
}

/// Whether `outer` holds all of `inner`.
fn holds(outer: &std::ops::Range<usize>, inner: &std::ops::Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

struct Inner {
    ctx: Arc<CudaContext>,
    free: Mutex<Vec<HostBlock>>,
    /// Bytes of every block allocated (free or in use).
    held: AtomicUsize,
    /// Address ranges of every block allocated (blocks are only freed with
    /// the pool), to recognise inputs that already lie in pinned memory.
    ranges: Mutex<Vec<std::ops::Range<usize>>>,
    cap: usize,
    /// Mirrors of blocks out of the pool.
    mirrors: Mutex<Vec<Mirror>>,
    /// Device bytes the mirrors hold, and the most they may.
    mirrored: AtomicUsize,
    mirror_cap: usize,
    /// How many times its size a free block may be to serve a request for
    /// which no block of its own size is free, before a new one is
    /// allocated (1: only the request's own size).
    larger: usize,
}

impl Inner {
    fn mirrors(&self) -> std::sync::MutexGuard<'_, Vec<Mirror>> {
        self.mirrors.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Drops the first mirror `which` picks and releases its device bytes.
    fn drop_mirror(&self, which: impl Fn(&Mirror) -> bool) {
        let mut mirrors = self.mirrors();
        if let Some(i) = mirrors.iter().position(which) {
            let m = mirrors.swap_remove(i);
            self.mirrored.fetch_sub(m.held, Ordering::Relaxed);
        }
    }
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
    slice: Option<HostBlock>,
    pool: Arc<Inner>,
    /// Host address of the block's mirror, while it has one.
    mirrored_at: Option<usize>,
}

impl PinnedPool {
    /// A pool for `ctx` holding at most `cap` pinned bytes, and mirrors of
    /// at most `mirror_cap` device bytes.
    pub fn new(ctx: Arc<CudaContext>, cap: usize, mirror_cap: usize) -> Self {
        Self::build(ctx, cap, mirror_cap, super::options::PINNED_LARGER)
    }

    fn build(ctx: Arc<CudaContext>, cap: usize, mirror_cap: usize, larger: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                ctx,
                free: Mutex::new(Vec::new()),
                held: AtomicUsize::new(0),
                ranges: Mutex::new(Vec::new()),
                cap,
                mirrors: Mutex::new(Vec::new()),
                mirrored: AtomicUsize::new(0),
                mirror_cap,
                larger: larger.max(1),
            }),
        }
    }

    /// A pool sized by `options` ([`CudaOptions::pinned_pool_bytes`],
    /// else [`default_cap`]; [`CudaOptions::device_mirror_bytes`], else
    /// half of `device_memory`; [`CudaOptions::pinned_larger`]).
    pub fn with_options(
        ctx: Arc<CudaContext>,
        device_memory: usize,
        options: &CudaOptions,
    ) -> Self {
        let cap = options
            .pinned_pool_bytes
            .unwrap_or_else(|| default_cap(host_memory()));
        let mirror_cap = options.device_mirror_bytes.unwrap_or(device_memory / 2);
        Self::build(ctx, cap, mirror_cap, options.pinned_larger)
    }

    /// A block of at least `bytes`: a free one of its size class (a power
    /// of two), else a free one at most 4 times that size
    /// ([`CudaOptions::pinned_larger`]),
    /// else a new one while the pool stays under its cap, else the smallest
    /// larger free one; `None` when there is none, or when pinned memory
    /// cannot be had (the caller then stages and copies).
    pub fn take(&self, bytes: usize) -> Result<Option<PinnedBlock>> {
        let size = bytes.max(MIN_BLOCK).next_power_of_two();
        let inner = &self.inner;
        // The smallest free block of at least `size` and at most `most`
        // (its own class first, being the smallest).
        let from_free = |most: usize| {
            let mut free = inner.free.lock().unwrap_or_else(|p| p.into_inner());
            let best = free
                .iter()
                .enumerate()
                .filter(|(_, b)| (size..=most).contains(&b.len()))
                .min_by_key(|(_, b)| b.len())
                .map(|(i, _)| i);
            best.map(|i| PinnedBlock {
                slice: Some(free.swap_remove(i)),
                pool: inner.clone(),
                mirrored_at: None,
            })
        };
        // Page-locking a new block costs time (host_block.rs), and once
        // taken pinned memory stays with the pool; a free block a few
        // classes larger is lent instead.
        if let Some(b) = from_free(size.saturating_mul(inner.larger)) {
            return Ok(Some(b));
        }
        let reserved = inner
            .held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |h| {
                h.checked_add(size).filter(|&n| n <= inner.cap)
            });
        if reserved.is_err() {
            return Ok(from_free(usize::MAX));
        }
        let span = crate::trace::span_with(|| format!("pinned.alloc {} MiB", size >> 20));
        let allocated = HostBlock::new(&inner.ctx, size);
        drop(span);
        match allocated {
            Ok(mut slice) => {
                let at = slice.as_mut_ptr() as usize;
                inner
                    .ranges
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(at..at + size);
                Ok(Some(PinnedBlock {
                    slice: Some(slice),
                    pool: inner.clone(),
                    mirrored_at: None,
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

/// [`default_cap`] of this host's memory: what one backend's pool holds
/// at most when its options leave the cap unset.
pub fn host_default_cap() -> usize {
    default_cap(host_memory())
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
    /// Pinned bytes the pool has allocated (its blocks free or in use).
    pub fn held(&self) -> usize {
        self.inner.held.load(Ordering::Relaxed)
    }

    /// Pinned bytes lent out: blocks taken and not yet back (Arrow buffers
    /// still holding them, or reads still running).
    pub fn in_use(&self) -> usize {
        let free: usize = self
            .inner
            .free
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|b| b.len())
            .sum();
        self.held().saturating_sub(free)
    }

    /// Device bytes the mirrors of lent blocks hold.
    pub fn mirrored(&self) -> usize {
        self.inner.mirrored.load(Ordering::Relaxed)
    }

    /// Whether `bytes` lie inside one of the pool's blocks: pinned memory a
    /// transfer can read directly, without staging it first.
    pub fn contains(&self, bytes: &[u8]) -> bool {
        let bytes = span(bytes);
        self.inner
            .ranges
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|r| holds(r, &bytes))
    }

    /// Frees the device mirror `bytes` lie in, if any (stages reading it
    /// hold their own reference until their stream is done).
    pub fn release_mirror(&self, bytes: &[u8]) {
        let bytes = span(bytes);
        self.inner.drop_mirror(|m| holds(&m.host, &bytes));
    }

    /// The device mirror `bytes` lie in, and their offset in it.
    pub fn mirror_of(&self, bytes: &[u8]) -> Option<(Arc<CudaSlice<u8>>, usize)> {
        let bytes = span(bytes);
        self.inner
            .mirrors()
            .iter()
            .find(|m| holds(&m.host, &bytes))
            .map(|m| (m.device.clone(), bytes.start - m.host.start))
    }
}

impl PinnedBlock {
    /// The block's page-locked memory.
    pub fn slice_mut(&mut self) -> &mut HostBlock {
        self.slice.as_mut().expect("present until drop")
    }

    /// The first `len` bytes as an Arrow buffer that owns the block; the
    /// block returns to the pool when the last clone of the buffer is
    /// dropped. Call only once the transfers into it are complete.
    pub fn into_buffer(mut self, len: usize) -> Result<Buffer> {
        let ptr = NonNull::new(self.prefix_ptr(len)?).expect("pinned allocations are not null");
        // SAFETY: `ptr` points at `len` initialised bytes of the block (the
        // download wrote them, or, for bytes a stage left on the device
        // alone, an earlier use did), which stays allocated and unmoved until the
        // owner — the block itself — is dropped with the last buffer clone.
        // AssertUnwindSafe: the block's state is a pointer and an Arc; a
        // panic cannot leave it half-updated.
        Ok(unsafe { Buffer::from_custom_allocation(ptr, len, Arc::new(AssertUnwindSafe(self))) })
    }

    /// The address of the block's first byte, checking that it holds at
    /// least `len` bytes (a caller's bug otherwise).
    pub fn prefix_ptr(&mut self, len: usize) -> Result<*mut u8> {
        let slice = self.slice_mut();
        assert!(
            len <= slice.len(),
            "{len} bytes of a {} byte block",
            slice.len()
        );
        Ok(slice.as_mut_ptr())
    }

    /// [`mirror`](Self::mirror) of `device`, handing it back when the
    /// block is not mirrored (the pool's cap), so that a caller that left
    /// part of the block unfilled can still download it. A block mirrored
    /// already keeps its old mirror, which holds other bytes, so `device`
    /// comes back then too.
    pub fn mirror_or_return(
        &mut self,
        len: usize,
        device: CudaSlice<u8>,
    ) -> Result<Option<CudaSlice<u8>>> {
        if self.mirrored_at.is_some() {
            return Ok(Some(device));
        }
        if len == 0 {
            return Ok(None);
        }
        self.keep_mirror(len, device)
    }

    /// Keeps the device buffer `device` returns (given the block, it holds
    /// the block's first `len` bytes, or more) as the block's mirror while
    /// the pool's mirror cap has room; `device` is only called then.
    /// Returns whether the block is mirrored.
    pub fn mirror(
        &mut self,
        len: usize,
        device: impl FnOnce(&HostBlock) -> Option<CudaSlice<u8>>,
    ) -> Result<bool> {
        if self.mirrored_at.is_some() || len == 0 {
            return Ok(self.mirrored_at.is_some());
        }
        // Checked before `device` is asked (it may hand over a lane's
        // buffer), reserved once its size is known.
        if self
            .pool
            .mirrored
            .load(Ordering::Relaxed)
            .saturating_add(len)
            > self.pool.mirror_cap
        {
            return Ok(false);
        }
        let host = self.slice.as_ref().expect("present until drop");
        let Some(device) = device(host) else {
            return Ok(false);
        };
        Ok(self.keep_mirror(len, device)?.is_none())
    }

    /// Makes `device` the block's mirror if it holds `len` bytes and the
    /// pool's cap has room for it; hands it back otherwise.
    fn keep_mirror(&mut self, len: usize, device: CudaSlice<u8>) -> Result<Option<CudaSlice<u8>>> {
        let inner = self.pool.clone();
        if device.len() < len {
            return Ok(Some(device));
        }
        let held = device.len();
        let reserved = inner
            .mirrored
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |h| {
                h.checked_add(held).filter(|&t| t <= inner.mirror_cap)
            });
        if reserved.is_err() {
            return Ok(Some(device));
        }
        let at = match self.prefix_ptr(len) {
            Ok(p) => p as usize,
            Err(e) => {
                inner.mirrored.fetch_sub(held, Ordering::Relaxed);
                return Err(e);
            }
        };
        inner.mirrors().push(Mirror {
            host: at..at + len,
            device: Arc::new(device),
            held,
        });
        self.mirrored_at = Some(at);
        Ok(None)
    }
}

impl Drop for PinnedBlock {
    fn drop(&mut self) {
        // The mirror goes first: once the block is free, its address may
        // hold other bytes.
        if let Some(at) = self.mirrored_at.take() {
            self.pool.drop_mirror(|m| m.host.start == at);
        }
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
