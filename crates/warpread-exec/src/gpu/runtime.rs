//! An open CUDA device: context, stream, loaded modules, and reusable device
//! and pinned host buffers.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{CUctx_flags, CUdevice_attribute};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, PinnedHostSlice,
};
use cudarc::nvrtc::Ptx;

use super::kernels::KernelSource;
use super::launch::GsstShape;
use super::{CudaOptions, DeviceInfo, SyncMode, nvrtc, probe};
use crate::error::{Error, Result};

/// Lets the device's default memory pool (which stream-ordered
/// allocations come from) keep what is freed instead of returning it to the
/// driver at every synchronization, its default: device mirrors hand their
/// lane's output buffer over, so the next stage allocates a new one of
/// gigabytes, and mapping that afresh each time costs more than the stage.
/// Best effort: a device without memory pools allocates synchronously.
fn keep_freed_memory(ctx: &CudaContext) {
    use cudarc::driver::sys;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: plain driver calls on the context's own device; `pool` and
    // `threshold` outlive the calls that write or read them.
    unsafe {
        if ctx.bind_to_thread().is_err()
            || sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device())
                != sys::CUresult::CUDA_SUCCESS
        {
            return;
        }
        let mut threshold = u64::MAX;
        let r = sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        );
        if r != sys::CUresult::CUDA_SUCCESS {
            tracing::debug!("memory pool release threshold not set: {r:?}");
        }
    }
}

/// A CUDA device ready to run warpread kernels.
pub struct GpuRuntime {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    modules: Mutex<HashMap<&'static str, Arc<CudaModule>>>,
    /// Entry points looked up once: every stage asks for its kernel, and
    /// looking it up in the driver each time (under the module lock) took
    /// 4 s of wall time over a TPC-H SF 10 run's 4,440 stages.
    functions: Mutex<HashMap<(&'static str, String), CudaFunction>>,
    /// How kernels are compiled and where they are cached.
    compile: nvrtc::Compile,
}

impl std::fmt::Debug for GpuRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuRuntime")
            .field("info", &self.info)
            .finish()
    }
}

/// The context flag of a wait mode (`None`: CUDA's own choice).
fn sync_flags(mode: SyncMode) -> Option<CUctx_flags> {
    match mode {
        SyncMode::Auto => None,
        SyncMode::Spin => Some(CUctx_flags::CU_CTX_SCHED_SPIN),
        SyncMode::Yield => Some(CUctx_flags::CU_CTX_SCHED_YIELD),
        SyncMode::Blocking => Some(CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC),
    }
}

/// Sets the context's wait mode, keeping its other flags. A tuning knob:
/// where the driver cannot (`cuCtxSetFlags` needs CUDA 12.1), the context
/// keeps CUDA's choice and a warning says so.
fn set_sync_mode(ctx: &CudaContext, mode: SyncMode) {
    use cudarc::driver::sys;
    let Some(flags_of_mode) = sync_flags(mode) else {
        return;
    };
    let set = || -> std::result::Result<(), String> {
        ctx.bind_to_thread().map_err(|e| e.to_string())?;
        let mut flags: std::ffi::c_uint = 0;
        // SAFETY: the context is current on this thread (bound above) and
        // `flags` outlives the call that writes it.
        unsafe { sys::cuCtxGetFlags(&mut flags) }
            .result()
            .map_err(|e| e.to_string())?;
        let mask = CUctx_flags::CU_CTX_SCHED_MASK as std::ffi::c_uint;
        let flags = (flags & !mask) | flags_of_mode as std::ffi::c_uint;
        // SAFETY: as above; the flags are the context's own with only the
        // scheduling bits replaced.
        unsafe { sys::cuCtxSetFlags(flags) }
            .result()
            .map_err(|e| e.to_string())
    };
    // A driver without the symbol makes cudarc's dynamic loading panic.
    match catch_unwind(AssertUnwindSafe(set)) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!("sync mode {mode}: the host's wait mode was not set: {e}"),
        Err(_) => tracing::warn!("sync mode {mode}: this driver cannot set the host's wait mode"),
    }
}

impl GpuRuntime {
    /// Opens device `ordinal` after probing that CUDA is usable, with the
    /// default [`CudaOptions`].
    pub fn open(ordinal: usize) -> Result<Self> {
        Self::open_with(ordinal, &CudaOptions::default())
    }

    /// Opens device `ordinal` after probing that CUDA is usable: its wait
    /// mode, kernel sources, kernel cache and GSST shape from `options`.
    pub fn open_with(ordinal: usize, options: &CudaOptions) -> Result<Self> {
        options.validate()?;
        probe().map_err(Error::CudaUnavailable)?;
        let ctx = catch_unwind(AssertUnwindSafe(|| CudaContext::new(ordinal)))
            .map_err(|_| Error::CudaUnavailable("CUDA context creation panicked".into()))?
            .map_err(|e| Error::cuda("creating the CUDA context", e))?;
        set_sync_mode(&ctx, options.sync);
        // One stream, so cudarc's per-buffer event tracking only costs time.
        // SAFETY: warpread orders all work on `stream` itself.
        unsafe { ctx.disable_event_tracking() };
        let attr = |a| {
            ctx.attribute(a)
                .map_err(|e| Error::cuda("querying the device", e))
        };
        let info = DeviceInfo {
            ordinal,
            name: ctx
                .name()
                .map_err(|e| Error::cuda("querying the device", e))?,
            compute_capability: (
                attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
            ),
            sm_count: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
            total_memory: ctx
                .total_mem()
                .map_err(|e| Error::cuda("querying the device", e))?,
            free_memory: ctx
                .mem_get_info()
                .map_err(|e| Error::cuda("querying the device", e))?
                .0,
            shared_mem_per_sm: attr(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            )? as u32,
            max_threads_per_sm: attr(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            )? as u32,
        };
        let stream = ctx
            .new_stream()
            .map_err(|e| Error::cuda("creating a stream", e))?;
        keep_freed_memory(&ctx);
        Ok(Self {
            ctx,
            stream,
            info,
            modules: Mutex::new(HashMap::new()),
            functions: Mutex::new(HashMap::new()),
            compile: nvrtc::Compile {
                cache: options.kernel_cache.clone(),
                kernel_dir: options.kernel_dir.clone(),
                gsst_shape: options.gsst_shape,
            },
        })
    }

    /// The device.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The GSST launch shape the kernels are compiled with.
    pub fn gsst_shape(&self) -> GsstShape {
        self.compile.gsst_shape
    }

    /// The context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Bytes that live allocations hold in the device's default memory
    /// pool, where the stream allocates, once the device has finished its
    /// queued work (frees are stream-ordered). Memory the pool keeps for
    /// reuse after a free does not count.
    pub fn pool_bytes_in_use(&self) -> Result<u64> {
        use cudarc::driver::sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT;
        self.pool_attribute(CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
    }

    /// Bytes the device's default memory pool has mapped from the device
    /// (live allocations and what it keeps for reuse after frees; see
    /// `keep_freed_memory`), once the device has finished its queued
    /// work: the pool's share of the process's device memory (the context
    /// and loaded modules hold the rest).
    pub fn pool_bytes_reserved(&self) -> Result<u64> {
        use cudarc::driver::sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT;
        self.pool_attribute(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
    }

    fn pool_attribute(&self, attr: cudarc::driver::sys::CUmemPool_attribute) -> Result<u64> {
        use cudarc::driver::sys;
        let err = |e| Error::cuda("querying the memory pool", e);
        self.ctx.synchronize().map_err(err)?;
        let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
        let mut value = 0u64;
        // SAFETY: plain driver calls on the context's own device, bound to
        // this thread by `synchronize`; `pool` and `value` outlive the calls
        // that write them, and both attributes are 64-bit.
        unsafe {
            sys::cuDeviceGetDefaultMemPool(&mut pool, self.ctx.cu_device())
                .result()
                .map_err(err)?;
            sys::cuMemPoolGetAttribute(pool, attr, (&mut value as *mut u64).cast())
                .result()
                .map_err(err)?;
        }
        Ok(value)
    }

    /// The stream all work is ordered on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Loads (compiling on first use, through the disk cache) an entry point.
    pub fn function(&self, src: &'static KernelSource, entry: &str) -> Result<CudaFunction> {
        let mut functions = self.functions.lock().unwrap_or_else(|p| p.into_inner());
        let key = (src.file, entry.to_string());
        if let Some(f) = functions.get(&key) {
            return Ok(f.clone());
        }
        let f = self.load_function(src, entry)?;
        functions.insert(key, f.clone());
        Ok(f)
    }

    fn load_function(&self, src: &'static KernelSource, entry: &str) -> Result<CudaFunction> {
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        let module = match modules.get(src.file) {
            Some(m) => m.clone(),
            None => {
                let bin = nvrtc::cubin(src, &self.info.arch(), &self.compile)?;
                let m = self
                    .ctx
                    .load_module(Ptx::from_binary(bin))
                    .map_err(|e| Error::cuda("loading a kernel module", e))?;
                modules.insert(src.file, m.clone());
                m
            }
        };
        module
            .load_function(entry)
            .map_err(|e| Error::cuda("looking up a kernel entry point", e))
    }
}

/// A device buffer that grows (to the next power of two) and is reused
/// across batches, so steady-state decoding allocates nothing.
#[derive(Default)]
pub struct DeviceScratch {
    buf: Option<CudaSlice<u8>>,
}

impl DeviceScratch {
    /// A buffer of at least `bytes` bytes (at least 1).
    pub fn get(&mut self, stream: &Arc<CudaStream>, bytes: usize) -> Result<&mut CudaSlice<u8>> {
        let need = bytes.max(1);
        if self.buf.as_ref().is_none_or(|b| b.len() < need) {
            self.buf = None;
            // SAFETY: every byte is written (copy or memset) before a kernel reads it.
            let b = unsafe { stream.alloc::<u8>(need.next_power_of_two()) }
                .map_err(|e| Error::cuda("allocating device memory", e))?;
            self.buf = Some(b);
        }
        Ok(self.buf.as_mut().expect("allocated above"))
    }

    /// Bytes of the buffer held now.
    pub fn bytes(&self) -> usize {
        self.buf.as_ref().map_or(0, |b| b.len())
    }

    /// Hands the buffer over (the next `get` allocates a new one).
    pub fn take(&mut self) -> Option<CudaSlice<u8>> {
        self.buf.take()
    }

    /// Takes back a buffer handed over by [`take`](Self::take).
    pub fn put(&mut self, buf: CudaSlice<u8>) {
        self.buf = Some(buf);
    }
}

/// A page-locked host buffer for fast, asynchronous transfers, reused.
#[derive(Default)]
pub struct PinnedScratch {
    buf: Option<PinnedHostSlice<u8>>,
}

impl PinnedScratch {
    /// A pinned buffer of at least `bytes` bytes (at least 1).
    pub fn get(
        &mut self,
        ctx: &Arc<CudaContext>,
        bytes: usize,
    ) -> Result<&mut PinnedHostSlice<u8>> {
        let need = bytes.max(1);
        if self.buf.as_ref().is_none_or(|b| b.len() < need) {
            self.buf = None;
            // Flags 0, not write-combined: the CPU reads these buffers back.
            // SAFETY: bytes are written before they are read.
            let b = unsafe { ctx.alloc_pinned_with_flags::<u8>(need.next_power_of_two(), 0) }
                .map_err(|e| Error::cuda("allocating pinned host memory", e))?;
            self.buf = Some(b);
        }
        Ok(self.buf.as_mut().expect("allocated above"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_blocks_unless_told_otherwise() {
        assert_eq!(
            sync_flags(SyncMode::default()),
            Some(CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC)
        );
        assert_eq!(sync_flags(SyncMode::Auto), None);
        assert_eq!(
            sync_flags(SyncMode::Spin),
            Some(CUctx_flags::CU_CTX_SCHED_SPIN)
        );
        assert_eq!(
            sync_flags(SyncMode::Yield),
            Some(CUctx_flags::CU_CTX_SCHED_YIELD)
        );
    }
}
