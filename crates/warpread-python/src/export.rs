//! Arrow data handed to Python through the Arrow PyCapsule interface:
//! capsules named `arrow_schema`, `arrow_array` and `arrow_array_stream`
//! holding the C data interface structs, which the consumer (pyarrow,
//! or any library speaking the interface) moves out. A capsule whose
//! struct was not taken releases it when collected.

use arrow::array::{Array, RecordBatch, RecordBatchReader, StructArray};
use arrow::datatypes::SchemaRef;
use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow::ffi_stream::FFI_ArrowArrayStream;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// `schema` as an `arrow_schema` capsule (its metadata kept).
pub fn schema_capsule<'py>(py: Python<'py>, schema: &SchemaRef) -> PyResult<Bound<'py, PyCapsule>> {
    let ffi = FFI_ArrowSchema::try_from(schema.as_ref())
        .map_err(|e| PyValueError::new_err(format!("exporting the schema: {e}")))?;
    PyCapsule::new_with_value(py, ffi, c"arrow_schema")
}

/// `reader` as an `arrow_array_stream` capsule: the consumer pulls its
/// batches one at a time.
pub fn stream_capsule(
    py: Python<'_>,
    reader: Box<dyn RecordBatchReader + Send>,
) -> PyResult<Bound<'_, PyCapsule>> {
    let ffi = FFI_ArrowArrayStream::new(reader);
    PyCapsule::new_with_value(py, ffi, c"arrow_array_stream")
}

/// An Arrow schema, exported with `__arrow_c_schema__`.
#[pyclass(module = "warpread", frozen)]
pub struct NativeSchema {
    pub(crate) schema: SchemaRef,
}

#[pymethods]
impl NativeSchema {
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }
}

/// One record batch, exported with `__arrow_c_array__` as a struct array
/// (the PyCapsule interface's form of a record batch).
#[pyclass(module = "warpread", frozen)]
pub struct NativeBatch {
    pub(crate) batch: RecordBatch,
}

#[pymethods]
impl NativeBatch {
    /// The schema and array capsules; `requested_schema` is not acted on
    /// (the interface lets a producer ignore it: the batch is exported as
    /// it was read).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let data = StructArray::from(self.batch.clone()).into_data();
        let array = FFI_ArrowArray::new(&data);
        let schema = FFI_ArrowSchema::try_from(data.data_type())
            .map_err(|e| PyValueError::new_err(format!("exporting a batch's schema: {e}")))?;
        Ok((
            PyCapsule::new_with_value(py, schema, c"arrow_schema")?,
            PyCapsule::new_with_value(py, array, c"arrow_array")?,
        ))
    }

    /// Rows in the batch.
    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }
}

impl NativeBatch {
    /// Wraps a batch.
    pub fn new(batch: RecordBatch) -> Self {
        Self { batch }
    }
}
