//! Device-resident reads for Python: batches whose buffers stay in GPU
//! memory, handed over through the Arrow PyCapsule interface's device
//! half (`__arrow_c_device_array__`, `__arrow_c_device_stream__`) and,
//! per fixed-width column, DLPack (`__dlpack__`), which `torch.from_dlpack`
//! and `cupy.from_dlpack` take without a copy.

use std::sync::{Arc, Mutex};

use arrow::datatypes::SchemaRef;
use pyo3::exceptions::{PyIndexError, PyKeyError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};
use warpread::device::dlpack::{DLManagedTensor, delete_unconsumed};
use warpread::device::{
    ArrowDeviceArrayStream, DeviceBatch, DeviceBatchSource, DeviceBytes, DeviceTensor,
    column_validity, column_values,
};
use warpread::exec::{Backend, CudaBackend};
use warpread::{Error, Result};

use crate::errors::IntoPy;
use crate::export::{NativeBatch, NativeSchema, schema_capsule};
use crate::read::next_of;

/// Refuses keywords of the device capsule methods that this module does
/// not know with a value set (the interface reserves them for later).
fn no_unknown_keywords(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    for (k, v) in kwargs.into_iter().flatten() {
        if !v.is_none() {
            return Err(PyTypeError::new_err(format!("unexpected keyword {k}")));
        }
    }
    Ok(())
}

fn cuda_of(backend: &Arc<dyn Backend>) -> PyResult<&CudaBackend> {
    backend
        .as_cuda()
        .ok_or_else(|| Error::Unsupported("device batches need the CUDA backend".into()))
        .py_err()
}

/// One record batch in device memory.
#[pyclass(module = "warpread", frozen)]
pub struct NativeDeviceBatch {
    batch: DeviceBatch,
    backend: Arc<dyn Backend>,
}

#[pymethods]
impl NativeDeviceBatch {
    /// Rows in the batch.
    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// The CUDA device ordinal.
    #[getter]
    fn device_id(&self) -> usize {
        self.batch.device_ordinal()
    }

    /// The schema capsule and an `arrow_device_array` capsule (a struct
    /// array of the columns, device type CUDA, with the event to wait on).
    #[pyo3(signature = (requested_schema = None, **kwargs))]
    fn __arrow_c_device_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        no_unknown_keywords(kwargs)?;
        let (schema, array) = self.batch.to_ffi().py_err()?;
        Ok((
            PyCapsule::new_with_value(py, schema, c"arrow_schema")?,
            PyCapsule::new_with_value(py, array, c"arrow_device_array")?,
        ))
    }

    /// Device bytes by origin: decoded on the device, uploaded, derived.
    fn device_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        device_bytes(py, std::slice::from_ref(&self.batch))
    }

    /// The batch copied to host memory.
    fn to_host(&self, py: Python<'_>) -> PyResult<NativeBatch> {
        let cuda = cuda_of(&self.backend)?;
        let host = py.detach(|| self.batch.to_host(cuda)).py_err()?;
        Ok(NativeBatch::new(host))
    }
}

fn device_bytes<'py>(py: Python<'py>, batches: &[DeviceBatch]) -> PyResult<Bound<'py, PyDict>> {
    let b = DeviceBytes::of(batches);
    let d = PyDict::new(py);
    d.set_item("decoded", b.decoded)?;
    d.set_item("uploaded", b.uploaded)?;
    d.set_item("derived", b.derived)?;
    Ok(d)
}

/// A device read in progress: iterate it for [`NativeDeviceBatch`]es, hand
/// it to a consumer with `__arrow_c_device_stream__`, or collect it with
/// `read_all`.
#[pyclass(module = "warpread")]
pub struct NativeDeviceReader {
    schema: SchemaRef,
    backend: Arc<dyn Backend>,
    source: Mutex<Option<Box<dyn DeviceBatchSource>>>,
}

impl NativeDeviceReader {
    /// Wraps a device read on `backend`.
    pub fn new(source: Box<dyn DeviceBatchSource>, backend: Arc<dyn Backend>) -> Self {
        Self {
            schema: source.schema(),
            backend,
            source: Mutex::new(Some(source)),
        }
    }

    fn take(&self) -> PyResult<Box<dyn DeviceBatchSource>> {
        self.source
            .lock()
            .map_err(|_| PyValueError::new_err("the reader failed in another thread"))?
            .take()
            .ok_or_else(|| PyValueError::new_err("the reader was already exported or closed"))
    }
}

#[pymethods]
impl NativeDeviceReader {
    /// The schema of the batches.
    #[getter]
    fn schema(&self) -> NativeSchema {
        NativeSchema {
            schema: self.schema.clone(),
        }
    }

    /// The rest of the read as an `arrow_device_array_stream` capsule; the
    /// reader is consumed.
    #[pyo3(signature = (requested_schema = None, **kwargs))]
    fn __arrow_c_device_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        no_unknown_keywords(kwargs)?;
        let stream = ArrowDeviceArrayStream::new(self.take()?);
        PyCapsule::new_with_value(py, stream, c"arrow_device_array_stream")
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next batch (read with the GIL released).
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<NativeDeviceBatch>> {
        let batch = next_of(py, &self.source, |s| s.next_batch())?;
        Ok(batch.map(|batch| NativeDeviceBatch {
            batch,
            backend: self.backend.clone(),
        }))
    }

    /// Reads every remaining batch into a table on the device.
    fn read_all(&self, py: Python<'_>) -> PyResult<NativeDeviceTable> {
        let mut source = self.take()?;
        let batches = py
            .detach(|| std::iter::from_fn(|| source.next_batch()).collect::<Result<Vec<_>>>())
            .py_err()?;
        Ok(NativeDeviceTable {
            schema: self.schema.clone(),
            batches,
            backend: self.backend.clone(),
        })
    }
}

/// A whole read on the device: its batches, and its columns as DLPack
/// tensors.
#[pyclass(module = "warpread", frozen)]
pub struct NativeDeviceTable {
    schema: SchemaRef,
    batches: Vec<DeviceBatch>,
    backend: Arc<dyn Backend>,
}

/// Hands out a table's batches (clones: they share device memory).
struct TableSource {
    schema: SchemaRef,
    batches: std::vec::IntoIter<DeviceBatch>,
}

impl DeviceBatchSource for TableSource {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn next_batch(&mut self) -> Option<Result<DeviceBatch>> {
        self.batches.next().map(Ok)
    }
}

impl NativeDeviceTable {
    fn index(&self, column: &Bound<'_, PyAny>) -> PyResult<usize> {
        if let Ok(i) = column.extract::<usize>() {
            return (i < self.schema.fields().len())
                .then_some(i)
                .ok_or_else(|| PyIndexError::new_err(format!("no column {i}")));
        }
        let name: String = column.extract()?;
        self.schema
            .index_of(&name)
            .map_err(|_| PyKeyError::new_err(format!("no column {name:?}")))
    }
}

#[pymethods]
impl NativeDeviceTable {
    /// The table's schema.
    #[getter]
    fn schema(&self) -> NativeSchema {
        NativeSchema {
            schema: self.schema.clone(),
        }
    }

    /// Rows in the table.
    #[getter]
    fn num_rows(&self) -> usize {
        self.batches.iter().map(DeviceBatch::num_rows).sum()
    }

    /// Batches in the table.
    #[getter]
    fn num_batches(&self) -> usize {
        self.batches.len()
    }

    /// The CUDA device ordinal.
    #[getter]
    fn device_id(&self) -> PyResult<usize> {
        Ok(cuda_of(&self.backend)?.runtime().info().ordinal)
    }

    /// The `i`th batch.
    fn batch(&self, i: usize) -> PyResult<NativeDeviceBatch> {
        let batch = self
            .batches
            .get(i)
            .cloned()
            .ok_or_else(|| PyIndexError::new_err(format!("no batch {i}")))?;
        Ok(NativeDeviceBatch {
            batch,
            backend: self.backend.clone(),
        })
    }

    /// The batches as an `arrow_device_array_stream` capsule (the table
    /// stays usable: the stream shares its device memory).
    #[pyo3(signature = (requested_schema = None, **kwargs))]
    fn __arrow_c_device_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        no_unknown_keywords(kwargs)?;
        let source = TableSource {
            schema: self.schema.clone(),
            batches: self.batches.clone().into_iter(),
        };
        let stream = ArrowDeviceArrayStream::new(Box::new(source));
        PyCapsule::new_with_value(py, stream, c"arrow_device_array_stream")
    }

    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }

    /// A fixed-width or boolean column (by index or name) as DLPack
    /// tensors: values (the batches' chunks as one tensor) and validity
    /// (one byte per row, `None` without nulls).
    fn column(&self, py: Python<'_>, column: &Bound<'_, PyAny>) -> PyResult<DeviceColumn> {
        let index = self.index(column)?;
        let cuda = cuda_of(&self.backend)?;
        let field = self.schema.field(index);
        let named = |e: Error| match e {
            Error::Unsupported(m) => Error::Unsupported(format!("column {:?}: {m}", field.name())),
            other => other,
        };
        let (values, validity) = py
            .detach(|| {
                Ok::<_, Error>((
                    column_values(cuda, &self.batches, index)?,
                    column_validity(cuda, &self.batches, index)?,
                ))
            })
            .map_err(named)
            .py_err()?;
        let null_count = self
            .batches
            .iter()
            .filter_map(|b| b.column(index))
            .map(|c| c.null_count())
            .sum();
        Ok(DeviceColumn {
            name: field.name().clone(),
            tensor: values,
            validity: validity.map(|v| {
                Box::new(DeviceColumn {
                    name: format!("{}.validity", field.name()),
                    tensor: v,
                    validity: None,
                    null_count: 0,
                })
            }),
            null_count,
        })
    }

    /// Device bytes by origin: decoded on the device, uploaded, derived.
    fn device_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        device_bytes(py, &self.batches)
    }

    /// The table copied to host memory, a batch at a time.
    fn to_host(&self, py: Python<'_>) -> PyResult<Vec<NativeBatch>> {
        let cuda = cuda_of(&self.backend)?;
        let host = py
            .detach(|| {
                self.batches
                    .iter()
                    .map(|b| b.to_host(cuda))
                    .collect::<Result<Vec<_>>>()
            })
            .py_err()?;
        Ok(host.into_iter().map(NativeBatch::new).collect())
    }
}

/// One column on the device as a DLPack tensor (`__dlpack__`), with its
/// validity as another (`validity`).
#[pyclass(module = "warpread", frozen)]
pub struct DeviceColumn {
    name: String,
    tensor: DeviceTensor,
    validity: Option<Box<DeviceColumn>>,
    null_count: usize,
}

impl Clone for DeviceColumn {
    fn clone(&self) -> Self {
        Self {
            name: self.name.clone(),
            tensor: self.tensor.clone(),
            validity: self.validity.clone(),
            null_count: self.null_count,
        }
    }
}

/// `tensor` as a `dltensor` capsule; a capsule collected unconsumed frees
/// the tensor, a consumed one (renamed `used_dltensor`) is the consumer's.
fn dlpack_capsule(py: Python<'_>, tensor: DeviceTensor) -> PyResult<Bound<'_, PyAny>> {
    unsafe extern "C" fn destructor(capsule: *mut ffi::PyObject) {
        // SAFETY: called by Python on a capsule made below; under its
        // original name it still holds the tensor, which nobody deleted.
        unsafe {
            if ffi::PyCapsule_IsValid(capsule, c"dltensor".as_ptr()) == 1 {
                let t = ffi::PyCapsule_GetPointer(capsule, c"dltensor".as_ptr());
                delete_unconsumed(t.cast::<DLManagedTensor>());
            }
        }
    }
    let t = tensor.into_dlpack();
    // SAFETY: `t` is a live DLManagedTensor; the capsule takes it over
    // with the destructor above.
    let capsule = unsafe { ffi::PyCapsule_New(t.cast(), c"dltensor".as_ptr(), Some(destructor)) };
    if capsule.is_null() {
        // SAFETY: the capsule was not made; `t` is still ours.
        unsafe { delete_unconsumed(t) };
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference PyCapsule_New returned.
    Ok(unsafe { Bound::from_owned_ptr(py, capsule) })
}

#[pymethods]
impl DeviceColumn {
    /// The column's name (`name.validity` for a validity tensor).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Null rows.
    #[getter]
    fn null_count(&self) -> usize {
        self.null_count
    }

    /// The validity as a tensor of one byte per row (1 valid), `None`
    /// when no row is null.
    #[getter]
    fn validity(&self) -> Option<DeviceColumn> {
        self.validity.as_deref().cloned()
    }

    /// DLPack's type: `(code, bits, lanes)`.
    #[getter]
    fn dlpack_dtype(&self) -> (u8, u8, u16) {
        let d = self.tensor.dtype();
        (d.code, d.bits, d.lanes)
    }

    fn __len__(&self) -> usize {
        self.tensor.len()
    }

    /// `(kDLCUDA, device ordinal)`.
    fn __dlpack_device__(&self) -> (i32, i32) {
        (
            warpread::device::dlpack::DL_CUDA,
            self.tensor.buffer().device_ordinal() as i32,
        )
    }

    /// A `dltensor` capsule over the column's device memory (no copy).
    /// The data is complete before this returns, so any consumer stream
    /// may read it; a copy or another device is refused.
    #[pyo3(signature = (stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<Bound<'py, PyAny>>,
        max_version: Option<Bound<'py, PyAny>>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = (stream, max_version);
        if copy == Some(true) {
            return Err(PyValueError::new_err(
                "warpread exports device columns without a copy (copy=True refused)",
            ));
        }
        if let Some(d) = dl_device
            && d != self.__dlpack_device__()
        {
            return Err(PyValueError::new_err(format!(
                "the column lies on device {:?}, not {d:?}",
                self.__dlpack_device__()
            )));
        }
        dlpack_capsule(py, self.tensor.clone())
    }

    fn __repr__(&self) -> String {
        let d = self.tensor.dtype();
        format!(
            "<warpread.DeviceColumn {:?}: {} rows, dlpack ({}, {}, {}), {} nulls, cuda:{}>",
            self.name,
            self.tensor.len(),
            d.code,
            d.bits,
            d.lanes,
            self.null_count,
            self.tensor.buffer().device_ordinal()
        )
    }
}
