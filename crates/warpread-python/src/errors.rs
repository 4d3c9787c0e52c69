//! warpread's `Error` as a Python exception of the `warpread.errors`
//! hierarchy, carrying the file, the place in it and the cause as
//! attributes besides the message.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use warpread::{Error, Location};

/// The Python module that defines the exception classes.
const ERRORS_MODULE: &str = "warpread.errors";

/// The exception class of `err` (a name in `warpread.errors`).
fn class_of(err: &Error) -> &'static str {
    match err {
        Error::Device { source, .. } => class_of(source),
        Error::Corrupt { .. } | Error::InvalidPlan(_) => "CorruptDataError",
        Error::Format { .. } | Error::Parquet { .. } => "FileFormatError",
        Error::Arrow { .. } => "ArrowConversionError",
        Error::CudaUnavailable(_)
        | Error::Cuda { .. }
        | Error::DeviceMemory { .. }
        | Error::KernelCompile { .. } => "CudaError",
        Error::Mismatch { .. } => "MismatchError",
        Error::HostMemory { .. } => "HostMemoryError",
        Error::Unsupported(_) => "UnsupportedError",
        Error::Io { .. } | Error::ObjectStore { .. } => "WarpreadIOError",
        Error::DataFusion { .. } => "QueryError",
    }
}

/// The place an error names, if any, and the file.
fn place_of(err: &Error) -> (Option<&Location>, Option<String>) {
    match err {
        Error::Corrupt { location, .. }
        | Error::Format { location, .. }
        | Error::Device { location, .. } => (
            Some(&**location),
            location.file.as_ref().map(|p| p.display().to_string()),
        ),
        Error::Io { path, .. } | Error::Parquet { path, .. } => {
            (None, Some(path.display().to_string()))
        }
        Error::ObjectStore { location, .. } => (None, Some(location.clone())),
        _ => (None, None),
    }
}

/// What went wrong, without the place: the decoder's status, the
/// metadata problem, or the underlying library's error.
fn cause_of(err: &Error) -> String {
    match err {
        Error::Device { source, .. } => cause_of(source),
        Error::Corrupt { status, .. } => status.to_string(),
        Error::Format { message, .. } => message.clone(),
        Error::Arrow { source, .. } => source.to_string(),
        Error::Io { source, .. } => source.to_string(),
        Error::ObjectStore { source, .. } => source.to_string(),
        Error::Parquet { source, .. } => source.to_string(),
        Error::InvalidPlan(m) | Error::CudaUnavailable(m) | Error::Unsupported(m) => m.clone(),
        Error::KernelCompile { log, .. } => log.clone(),
        Error::Cuda { message, .. } => message.clone(),
        e @ Error::DeviceMemory { .. } => e.to_string(),
        Error::HostMemory { why, .. } => why.clone(),
        Error::Mismatch { detail, .. } => detail.clone(),
        Error::DataFusion { source, .. } => source.to_string(),
    }
}

/// The location's fields that are set, by name.
fn location_dict<'py>(py: Python<'py>, at: Option<&Location>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let Some(at) = at else {
        return Ok(d);
    };
    if let Some(f) = &at.file {
        d.set_item("file", f.display().to_string())?;
    }
    for (key, value) in [
        ("stripe", at.stripe),
        ("row_group", at.row_group),
        ("page_index", at.page_index),
        ("chunk", at.chunk),
        ("offset", at.offset),
    ] {
        if let Some(v) = value {
            d.set_item(key, v)?;
        }
    }
    if let Some(s) = &at.page {
        d.set_item("stream", s)?;
    }
    if let Some(c) = &at.column {
        d.set_item("column", c)?;
    }
    Ok(d)
}

fn build(py: Python<'_>, err: &Error) -> PyResult<PyErr> {
    let class = py.import(ERRORS_MODULE)?.getattr(class_of(err))?;
    let (at, file) = place_of(err);
    let exc = class.call1((err.to_string(),))?;
    exc.setattr("file", file)?;
    exc.setattr("location", location_dict(py, at)?)?;
    exc.setattr("cause", cause_of(err))?;
    Ok(PyErr::from_value(exc))
}

/// `err` as an exception of the `warpread.errors` hierarchy (a
/// `RuntimeError` with the same message where that module cannot be
/// imported: the native module used on its own).
pub fn to_py(err: Error) -> PyErr {
    Python::attach(|py| {
        build(py, &err)
            .unwrap_or_else(|_| pyo3::exceptions::PyRuntimeError::new_err(err.to_string()))
    })
}

/// `Result` of warpread, raised as [`to_py`] gives.
pub trait IntoPy<T> {
    /// The value, or the error as a Python exception.
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for warpread::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
