//! Bytes in device memory handed to a caller: a decode stage's output left
//! where its kernel wrote it (a view of a pinned block's device mirror), or
//! bytes the host built and uploaded, or bytes a kernel of ours made from
//! other device bytes. Each buffer holds a reference to its allocation, so
//! it outlives the read that made it; the memory is freed (stream-ordered,
//! on the allocation's stream) when the last buffer over it drops.

use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaView, DevicePtr};

/// Where a device buffer's bytes came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A decode stage's output, left on the device where its kernel (or the
    /// host share of the stage, uploaded with it) wrote it.
    Decoded,
    /// Built on the host (validity from levels, offsets, values gathered
    /// through a dictionary, decoders without a kernel) and uploaded.
    Uploaded,
    /// Made on the device from other device buffers (bytes from bits,
    /// chunks concatenated).
    Derived,
}

/// A range of a device allocation (see the module docs).
#[derive(Clone)]
pub struct DeviceBuffer {
    mem: Arc<CudaSlice<u8>>,
    range: Range<usize>,
    origin: Origin,
}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("device_ptr", &format_args!("{:#x}", self.device_ptr()))
            .field("len", &self.len())
            .field("origin", &self.origin)
            .finish()
    }
}

impl DeviceBuffer {
    /// `range` of `mem`; `None` when `mem` does not hold it.
    pub fn new(mem: Arc<CudaSlice<u8>>, range: Range<usize>, origin: Origin) -> Option<Self> {
        (range.start <= range.end && range.end <= mem.len()).then_some(Self { mem, range, origin })
    }

    /// Bytes in the buffer.
    pub fn len(&self) -> usize {
        self.range.len()
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }

    /// Where the bytes came from.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// The device address of the first byte.
    pub fn device_ptr(&self) -> u64 {
        let (ptr, _record) = self.mem.device_ptr(self.mem.stream());
        ptr + self.range.start as u64
    }

    /// The ordinal of the device the bytes lie on.
    pub fn device_ordinal(&self) -> usize {
        self.mem.ordinal()
    }

    /// `range` of this buffer (relative to its start); `None` past its end.
    pub fn slice(&self, range: Range<usize>) -> Option<Self> {
        if range.start > range.end || range.end > self.len() {
            return None;
        }
        let start = self.range.start + range.start;
        Some(Self {
            mem: self.mem.clone(),
            range: start..start + range.len(),
            origin: self.origin,
        })
    }

    /// The bytes as a view for a copy or a kernel argument.
    pub(crate) fn view(&self) -> CudaView<'_, u8> {
        self.mem.slice(self.range.clone())
    }

    /// Whether two buffers share one allocation (a zero-copy view of the
    /// same decode output, for instance).
    pub fn shares_allocation_with(&self, other: &DeviceBuffer) -> bool {
        Arc::ptr_eq(&self.mem, &other.mem)
    }
}

/// A CUDA event recorded after the work that made some device buffers:
/// what Arrow's C Device Data Interface hands a consumer to wait on. The
/// interface passes a pointer to the event handle (`cudaEvent_t *`), so
/// the handle is kept at a stable address for as long as this lives.
pub struct DeviceEvent {
    // Declared before `event`: the handle copy goes first, the event it
    // names is destroyed after.
    handle: Box<cudarc::driver::sys::CUevent>,
    event: cudarc::driver::CudaEvent,
}

impl std::fmt::Debug for DeviceEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceEvent")
            .field("handle", &format_args!("{:p}", *self.handle))
            .finish()
    }
}

impl DeviceEvent {
    /// Wraps a recorded event.
    pub fn new(event: cudarc::driver::CudaEvent) -> Self {
        Self {
            handle: Box::new(event.cu_event()),
            event,
        }
    }

    /// The address of the event handle (a `CUevent *`, which is a
    /// `cudaEvent_t *`), valid while `self` lives.
    pub fn handle_ptr(&self) -> *mut std::ffi::c_void {
        std::ptr::from_ref::<cudarc::driver::sys::CUevent>(&self.handle)
            .cast_mut()
            .cast()
    }

    /// Blocks until the recorded work is complete.
    pub fn synchronize(&self) -> crate::error::Result<()> {
        self.event
            .synchronize()
            .map_err(|e| crate::error::Error::cuda("waiting for an event", e))
    }
}

// SAFETY: the handle names a driver event, which the driver lets any
// thread of the process record, query or wait on; `event` owns it.
unsafe impl Send for DeviceEvent {}
// SAFETY: as above; nothing here mutates through `&self`.
unsafe impl Sync for DeviceEvent {}
