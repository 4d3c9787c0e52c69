//! Fault injection: a CUDA backend told to fail its Nth device allocation
//! or its Nth kernel launch does so once, with the driver's own error,
//! so tests can check that the read fails cleanly and the backend reads
//! on afterwards; told to fault after its Nth launch, it runs a kernel
//! that stores through an invalid address, which leaves the device's
//! context unusable as a real kernel fault does
//! ([`CudaOptions::faults`](super::CudaOptions::faults)).

use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::driver::DriverError;
use cudarc::driver::sys::CUresult;

/// Which operations fail (counted from 1 over the backend's life; `None`:
/// none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Faults {
    /// The stage upload whose device allocation fails with
    /// `CUDA_ERROR_OUT_OF_MEMORY`.
    pub alloc: Option<u64>,
    /// The kernel launch that fails with `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`
    /// (an error that leaves the context usable).
    pub launch: Option<u64>,
    /// The decode-stage launch after which a kernel stores through an
    /// invalid address on the same stream: the stage fails with
    /// `CUDA_ERROR_ILLEGAL_ADDRESS` and the context can no longer be used.
    pub sticky: Option<u64>,
}

impl Faults {
    /// Fails the `n`th stage allocation.
    pub fn with_alloc(mut self, n: Option<u64>) -> Self {
        self.alloc = n;
        self
    }

    /// Fails the `n`th kernel launch.
    pub fn with_launch(mut self, n: Option<u64>) -> Self {
        self.launch = n;
        self
    }

    /// Faults the device after the `n`th decode-stage launch.
    pub fn with_sticky(mut self, n: Option<u64>) -> Self {
        self.sticky = n;
        self
    }
}

/// A backend's counts of the operations [`Faults`] may fail.
#[derive(Debug, Default)]
pub struct FaultCounters {
    allocs: AtomicU64,
    launches: AtomicU64,
    stickies: AtomicU64,
}

impl FaultCounters {
    /// Counts a stage allocation; the driver's out-of-memory error when it
    /// is the one `faults` fails.
    pub fn alloc(&self, faults: &Faults) -> Result<(), DriverError> {
        Self::count(
            &self.allocs,
            faults.alloc,
            CUresult::CUDA_ERROR_OUT_OF_MEMORY,
        )
    }

    /// Counts a kernel launch; the driver's launch failure when it is the
    /// one `faults` fails.
    pub fn launch(&self, faults: &Faults) -> Result<(), DriverError> {
        Self::count(
            &self.launches,
            faults.launch,
            CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
        )
    }

    /// Counts a decode-stage launch; whether it is the one after which
    /// `faults` faults the device.
    pub fn sticky(&self, faults: &Faults) -> bool {
        Self::count(
            &self.stickies,
            faults.sticky,
            CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
        )
        .is_err()
    }

    fn count(n: &AtomicU64, fail: Option<u64>, error: CUresult) -> Result<(), DriverError> {
        let Some(fail) = fail else {
            return Ok(());
        };
        if n.fetch_add(1, Ordering::Relaxed) + 1 == fail {
            return Err(DriverError(error));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_nth_operation_fails() {
        let c = FaultCounters::default();
        let f = Faults::default().with_alloc(Some(3)).with_launch(Some(1));
        let allocs: Vec<bool> = (0..5).map(|_| c.alloc(&f).is_ok()).collect();
        assert_eq!(allocs, [true, true, false, true, true]);
        assert!(c.launch(&f).is_err());
        assert!(c.launch(&f).is_ok());
        let s = Faults::default().with_sticky(Some(2));
        let faulted: Vec<bool> = (0..4).map(|_| c.sticky(&s)).collect();
        assert_eq!(faulted, [false, true, false, false]);
        let none = Faults::default();
        assert!((0..10).all(|_| c.alloc(&none).is_ok() && c.launch(&none).is_ok()));
    }
}
