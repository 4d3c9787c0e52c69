//! The CUDA runtime: probing for a driver without touching it, the device
//! context and stream, NVRTC compilation of `kernels/` with an on-disk cache,
//! and launch constants shared with the kernels.

pub mod kernels;
pub mod launch;
mod nvrtc;
pub mod pinned_pool;
mod probe;
mod runtime;

pub use pinned_pool::{PinnedBlock, PinnedPool};
pub use probe::{DeviceInfo, probe};
pub use runtime::{DeviceScratch, GpuRuntime, PinnedScratch};
