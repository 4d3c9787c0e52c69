//! Streamed reads: a [`BatchSource`] per read (a local file read by the
//! synchronous reader, an object by the async one on a runtime of its
//! own), handed to Python as a `NativeReader` that yields batches one at a
//! time or exports itself whole as an Arrow C stream.

use std::sync::{Arc, Mutex};

use arrow::array::{RecordBatch, RecordBatchReader};
use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;
use futures::StreamExt;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use warpread::exec::Backend;
use warpread::read::{BatchReader, BatchStream, GroupedFile, Predicate};
use warpread::{Error, Result};

use crate::errors::IntoPy;
use crate::export::{self, NativeBatch, NativeSchema};

/// What a read asks for.
pub struct Request {
    /// Top-level columns, in this order (`None`: all).
    pub columns: Option<Vec<String>>,
    /// Conjunction pruning the file and filtering its rows exactly.
    pub predicates: Vec<Predicate>,
    /// Most rows per batch (`None`: the reader's default).
    pub batch_size: Option<usize>,
    /// Most rows read (`None`: all).
    pub limit: Option<usize>,
    /// Compressed bytes of a read group (`None`: the reader's default).
    pub group_bytes: Option<u64>,
    /// Where the read decodes.
    pub backend: Arc<dyn Backend>,
}

/// Applies `req` to a reader builder (sync and async builders share these
/// methods but no trait).
macro_rules! apply_request {
    ($builder:expr, $req:expr) => {{
        let req: Request = $req;
        let mut b = $builder.with_backend(req.backend);
        if let Some(cols) = req.columns {
            b = b.with_projection(cols);
        }
        if !req.predicates.is_empty() {
            for p in req.predicates {
                b = b.with_predicate(p);
            }
            b = b.with_row_filter(true);
        }
        if let Some(n) = req.batch_size {
            b = b.with_batch_size(n);
        }
        if let Some(n) = req.limit {
            b = b.with_limit(n);
        }
        if let Some(g) = req.group_bytes {
            b = b.with_tuning(warpread::read::ReadTuning::default().with_group_bytes(Some(g)));
        }
        b
    }};
}
pub(crate) use apply_request;

/// Batches of one read, in file order.
pub trait BatchSource: Send {
    /// The schema of every batch.
    fn schema(&self) -> SchemaRef;
    /// The next batch; `None` once the read is done.
    fn next_batch(&mut self) -> Option<Result<RecordBatch>>;
}

impl<F: GroupedFile> BatchSource for BatchReader<F> {
    fn schema(&self) -> SchemaRef {
        RecordBatchReader::schema(self)
    }

    fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        BatchReader::next_batch(self)
    }
}

/// An object store read: the async stream, polled on a runtime owned by
/// the read (a current-thread one: it runs while a batch is asked for,
/// and the decoding runs on its blocking threads).
pub struct RemoteSource {
    runtime: tokio::runtime::Runtime,
    stream: BatchStream,
}

impl RemoteSource {
    /// A runtime for one object store read or open.
    pub fn runtime() -> Result<tokio::runtime::Runtime> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io("tokio runtime", e))
    }

    /// Wraps a stream built on `runtime`.
    pub fn new(runtime: tokio::runtime::Runtime, stream: BatchStream) -> Self {
        Self { runtime, stream }
    }
}

impl BatchSource for RemoteSource {
    fn schema(&self) -> SchemaRef {
        self.stream.schema()
    }

    fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        self.runtime.block_on(self.stream.next())
    }
}

/// A source seen as a `RecordBatchReader`, for the C stream export; its
/// errors become Arrow external errors keeping warpread's message.
struct Exported(Box<dyn BatchSource>);

impl Iterator for Exported {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0
            .next_batch()
            .map(|r| r.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for Exported {
    fn schema(&self) -> SchemaRef {
        self.0.schema()
    }
}

/// The next item of the read in `source`, taken with the GIL released;
/// at the end, or after an error (a failed read does not go on past it),
/// the read is dropped.
pub fn next_of<S: ?Sized + Send, T: Send>(
    py: Python<'_>,
    source: &Mutex<Option<Box<S>>>,
    next: impl FnOnce(&mut S) -> Option<Result<T>> + Send,
) -> PyResult<Option<T>> {
    let mut guard = source
        .lock()
        .map_err(|_| PyValueError::new_err("the reader failed in another thread"))?;
    let Some(s) = guard.as_mut() else {
        return Ok(None);
    };
    match py.detach(|| next(s)) {
        None => {
            *guard = None;
            Ok(None)
        }
        Some(Err(e)) => {
            *guard = None;
            Err(e).py_err()
        }
        Some(Ok(item)) => Ok(Some(item)),
    }
}

/// A read in progress: iterate it for batches (each with
/// `__arrow_c_array__`), or hand it whole to an Arrow consumer with
/// `__arrow_c_stream__`. Either way it reads each group once.
#[pyclass(module = "warpread")]
pub struct NativeReader {
    schema: SchemaRef,
    source: Mutex<Option<Box<dyn BatchSource>>>,
}

impl NativeReader {
    /// Wraps a read.
    pub fn new(source: Box<dyn BatchSource>) -> Self {
        Self {
            schema: source.schema(),
            source: Mutex::new(Some(source)),
        }
    }

    fn take(&self) -> PyResult<Box<dyn BatchSource>> {
        self.source
            .lock()
            .map_err(|_| PyValueError::new_err("the reader failed in another thread"))?
            .take()
            .ok_or_else(|| PyValueError::new_err("the reader was already exported or closed"))
    }
}

#[pymethods]
impl NativeReader {
    /// The schema of the batches.
    #[getter]
    fn schema(&self) -> NativeSchema {
        NativeSchema {
            schema: self.schema.clone(),
        }
    }

    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        export::schema_capsule(py, &self.schema)
    }

    /// The rest of the read as an `arrow_array_stream` capsule; the
    /// reader is consumed. `requested_schema` is not acted on.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let source = self.take()?;
        export::stream_capsule(py, Box::new(Exported(source)))
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next batch (decoded with the GIL released).
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<NativeBatch>> {
        Ok(next_of(py, &self.source, |s| s.next_batch())?.map(NativeBatch::new))
    }

    /// Stops the read and frees what it holds.
    fn close(&self) -> PyResult<()> {
        if let Ok(mut g) = self.source.lock() {
            g.take();
        }
        Ok(())
    }
}
