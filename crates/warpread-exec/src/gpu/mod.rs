//! The CUDA runtime: probing for a driver without touching it, the device
//! context and stream, NVRTC compilation of `kernels/` with an on-disk cache,
//! launch constants shared with the kernels, and the options of a backend
//! ([`CudaOptions`]).

pub mod device_buffer;
pub mod faults;
mod host_block;
pub mod kernels;
pub mod launch;
mod nvrtc;
pub mod options;
pub mod pinned_pool;
mod probe;
mod runtime;

pub use device_buffer::{DeviceBuffer, DeviceEvent, Origin};
pub use faults::Faults;
pub use options::{CudaOptions, SyncMode};
pub use pinned_pool::{PinnedBlock, PinnedPool};
pub use probe::{DeviceInfo, device_count, probe};
pub use runtime::{DeviceScratch, GpuRuntime, PinnedScratch};
