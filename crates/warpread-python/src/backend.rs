//! `warpread.Backend`: the device reads decode on. A CUDA backend owns a
//! context and compiles its kernels once, so an application creates one
//! and passes it to every read; a backend named by a string is created per
//! call.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use warpread::exec::{self, BackendChoice, CudaOptions};

use crate::errors::IntoPy;

/// Where reads decode: `"cpu"` (the reference decoders), `"cuda"` (an
/// error where no device is usable) or `"auto"` (CUDA when usable, else
/// the CPU).
#[pyclass(module = "warpread", frozen)]
pub struct Backend {
    pub(crate) inner: Arc<dyn exec::Backend>,
}

#[pymethods]
impl Backend {
    /// Creates a backend of `kind`; a CUDA backend keeps compiled kernels
    /// in `kernel_cache` (a folder) across processes when given.
    #[new]
    #[pyo3(signature = (kind = "auto", kernel_cache = None))]
    fn new(py: Python<'_>, kind: &str, kernel_cache: Option<PathBuf>) -> PyResult<Self> {
        let choice: BackendChoice = kind.parse().py_err()?;
        let options = CudaOptions::default().with_kernel_cache(kernel_cache);
        // Probing a device and creating a context can take a while; other
        // Python threads run meanwhile.
        let inner = py.detach(|| exec::select_with(choice, &options)).py_err()?;
        Ok(Self {
            inner: Arc::from(inner),
        })
    }

    /// `"cpu"` or `"cuda"`: what the backend is, `"auto"` resolved.
    #[getter]
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    /// The backend in words (the device, for CUDA).
    #[getter]
    fn description(&self) -> String {
        self.inner.describe()
    }

    fn __repr__(&self) -> String {
        format!(
            "warpread.Backend({:?}: {})",
            self.inner.name(),
            self.inner.describe()
        )
    }
}
