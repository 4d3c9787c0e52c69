//! Finds out whether CUDA can run here without letting cudarc panic.
//!
//! cudarc loads the driver and NVRTC lazily and panics when a symbol is
//! missing, so the libraries' presence is checked first and the first driver
//! call is made under `catch_unwind`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use cudarc::driver::CudaContext;

/// Facts about the device a context was opened on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub ordinal: usize,
    /// Marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Device memory in bytes.
    pub total_memory: usize,
    /// Device memory free when the context was opened, in bytes (other
    /// processes' and the context's own allocations taken).
    pub free_memory: usize,
    /// Shared memory per SM in bytes.
    pub shared_mem_per_sm: u32,
    /// Resident threads per SM.
    pub max_threads_per_sm: u32,
}

impl DeviceInfo {
    /// The facts GSST's compression defaults are derived from.
    pub fn gsst_target(&self) -> warpread_codecs::gsst::TargetDevice {
        warpread_codecs::gsst::TargetDevice {
            sm_count: self.sm_count.max(1),
            shared_mem_per_sm: self.shared_mem_per_sm.max(1),
            max_threads_per_sm: self.max_threads_per_sm.max(1),
        }
    }

    /// The NVRTC architecture name, e.g. `sm_90`.
    pub fn arch(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }
}

/// Checks for the CUDA driver and NVRTC libraries and at least one device.
/// Returns why not when CUDA cannot be used; never panics.
pub fn probe() -> Result<(), String> {
    // SAFETY: these only try to dlopen the libraries.
    let driver = unsafe { cudarc::driver::sys::is_culib_present() };
    if !driver {
        return Err("no CUDA device (libcuda not found)".into());
    }
    let nvrtc = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    if !nvrtc {
        return Err("CUDA driver present but NVRTC (libnvrtc) not found".into());
    }
    match catch_unwind(AssertUnwindSafe(CudaContext::device_count)) {
        Ok(Ok(n)) if n > 0 => Ok(()),
        Ok(Ok(_)) => Err("no CUDA device (driver reports 0 devices)".into()),
        Ok(Err(e)) => Err(format!("no CUDA device ({e})")),
        Err(_) => Err("no CUDA device (driver failed to initialise)".into()),
    }
}

/// How many CUDA devices the driver reports, after [`probe`] has found the
/// libraries and at least one; never panics.
pub fn device_count() -> Result<usize, String> {
    probe()?;
    match catch_unwind(AssertUnwindSafe(CudaContext::device_count)) {
        Ok(Ok(n)) => usize::try_from(n).map_err(|_| format!("driver reports {n} devices")),
        Ok(Err(e)) => Err(format!("no CUDA device ({e})")),
        Err(_) => Err("no CUDA device (driver failed to initialise)".into()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn probe_never_panics() {
        match super::probe() {
            Ok(()) => println!("CUDA present"),
            Err(why) => println!("skipped: {why}"),
        }
    }

    #[test]
    fn arch_name() {
        let d = super::DeviceInfo {
            ordinal: 0,
            name: "x".into(),
            compute_capability: (9, 0),
            sm_count: 132,
            total_memory: 1,
            free_memory: 1,
            shared_mem_per_sm: 228 << 10,
            max_threads_per_sm: 2048,
        };
        assert_eq!(d.arch(), "sm_90");
    }
}
