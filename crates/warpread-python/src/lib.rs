//! The native module of the `warpread` Python package
//! (`warpread._warpread`): files opened for their metadata and streamed
//! reads handed to Python through the Arrow PyCapsule interface, decode
//! backends, and a DataFusion table provider exported through
//! `datafusion-ffi`. The Python package (`python/warpread/`) wraps these
//! in the public API; nothing here imports pyarrow.
//!
//! Like the library crates, the module reads no environment variable and
//! keeps no process-global state: a backend, a file, a reader and a table
//! provider are Python objects owning what they use.

#![warn(missing_docs)]

mod backend;
mod device;
mod errors;
mod export;
mod file;
mod filter;
mod provider;
mod read;

use pyo3::prelude::*;

/// Registers the module's classes.
#[pymodule]
fn _warpread(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<backend::Backend>()?;
    m.add_class::<file::NativeFile>()?;
    m.add_class::<read::NativeReader>()?;
    m.add_class::<export::NativeBatch>()?;
    m.add_class::<device::NativeDeviceReader>()?;
    m.add_class::<device::NativeDeviceBatch>()?;
    m.add_class::<device::NativeDeviceTable>()?;
    m.add_class::<device::DeviceColumn>()?;
    m.add_class::<export::NativeSchema>()?;
    m.add_class::<provider::TableProvider>()?;
    m.add_function(wrap_pyfunction!(file::open_file, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("FFI_VERSION", datafusion_ffi::version())?;
    Ok(())
}
