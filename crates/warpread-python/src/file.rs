//! `NativeFile`: an ORC or Parquet file (local, or an object named by a
//! URL) with its footer parsed: the schema, what the footer says (in
//! Python types) and reads of it.

use std::fmt::Debug;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use warpread::orc::OrcFile;
use warpread::parquet::ParquetFile;
use warpread::read::{GroupedFile, ReaderBuilder, StreamBuilder};
use warpread::{Error, Result};

use warpread::device::{DeviceBatch, DeviceBatchSource, DeviceBatchStream};

use crate::backend::Backend;
use crate::device::NativeDeviceReader;
use crate::errors::IntoPy;
use crate::export::NativeSchema;
use crate::filter::{self, Value};
use crate::read::{BatchSource, NativeReader, RemoteSource, Request, apply_request};
use warpread_url::{Input as Where, Object as Remote};

/// A file of one format whose footer is parsed, and where to read it
/// from.
struct Opened<F> {
    file: Arc<F>,
    remote: Option<Remote>,
}

impl<F: GroupedFile + Debug> Opened<F> {
    fn open(at: &Where) -> Result<Self> {
        match at {
            Where::Local(path) => Ok(Self {
                file: ReaderBuilder::<F>::try_new(path)?.file().clone(),
                remote: None,
            }),
            Where::Object(r) => {
                let runtime = RemoteSource::runtime()?;
                let builder = runtime
                    .block_on(StreamBuilder::<F>::new(r.store.clone(), r.location.clone()))?;
                Ok(Self {
                    file: builder.file().clone(),
                    remote: Some(r.clone()),
                })
            }
        }
    }

    fn start(&self, req: Request) -> Result<Box<dyn BatchSource>> {
        match &self.remote {
            None => {
                let builder = apply_request!(ReaderBuilder::new(self.file.clone()), req);
                Ok(Box::new(builder.build()?))
            }
            // The async builder opens the object again (its footer is one
            // or two requests): it reads through a source of its own.
            Some(r) => {
                let runtime = RemoteSource::runtime()?;
                let stream = runtime.block_on(async {
                    let builder =
                        StreamBuilder::<F>::new(r.store.clone(), r.location.clone()).await?;
                    apply_request!(builder, req).build().await
                })?;
                Ok(Box::new(RemoteSource::new(runtime, stream)))
            }
        }
    }

    fn start_device(&self, req: Request) -> Result<Box<dyn DeviceBatchSource>> {
        match &self.remote {
            None => {
                let builder = apply_request!(ReaderBuilder::new(self.file.clone()), req);
                Ok(Box::new(builder.build_device()?))
            }
            Some(r) => {
                let runtime = RemoteSource::runtime()?;
                let stream = runtime.block_on(async {
                    let builder =
                        StreamBuilder::<F>::new(r.store.clone(), r.location.clone()).await?;
                    apply_request!(builder, req).build_device().await
                })?;
                Ok(Box::new(RemoteDeviceSource { runtime, stream }))
            }
        }
    }
}

/// An object store read whose batches go to the device, polled on a
/// runtime of its own (as [`RemoteSource`]).
struct RemoteDeviceSource {
    runtime: tokio::runtime::Runtime,
    stream: DeviceBatchStream,
}

impl DeviceBatchSource for RemoteDeviceSource {
    fn schema(&self) -> SchemaRef {
        self.stream.schema()
    }

    fn next_batch(&mut self) -> Option<Result<DeviceBatch>> {
        use futures::StreamExt;
        self.runtime.block_on(self.stream.next())
    }
}

/// What `NativeFile` needs of a format.
trait AnyFile: Send + Sync {
    fn schema(&self) -> SchemaRef;
    fn rows(&self) -> u64;
    fn describe<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>>;
    fn read(&self, req: Request) -> Result<Box<dyn BatchSource>>;
    fn read_device(&self, req: Request) -> Result<Box<dyn DeviceBatchSource>>;
}

/// A Parquet codec's name, without its level.
fn parquet_codec(c: warpread::parquet::basic::Compression) -> &'static str {
    use warpread::parquet::basic::Compression as C;
    match c {
        C::UNCOMPRESSED => "UNCOMPRESSED",
        C::SNAPPY => "SNAPPY",
        C::GZIP(_) => "GZIP",
        C::LZO => "LZO",
        C::BROTLI(_) => "BROTLI",
        C::LZ4 => "LZ4",
        C::ZSTD(_) => "ZSTD",
        C::LZ4_RAW => "LZ4_RAW",
    }
}

impl AnyFile for Opened<ParquetFile> {
    fn schema(&self) -> SchemaRef {
        self.file.schema()
    }

    fn rows(&self) -> u64 {
        self.file.rows()
    }

    fn describe<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let meta = self.file.metadata();
        let fm = meta.file_metadata();
        let d = PyDict::new(py);
        d.set_item("format_version", fm.version())?;
        d.set_item("created_by", fm.created_by())?;
        let kv = PyDict::new(py);
        for item in fm.key_value_metadata().into_iter().flatten() {
            kv.set_item(&item.key, item.value.as_deref())?;
        }
        d.set_item("metadata", kv)?;
        let mut codecs: Vec<&str> = Vec::new();
        let groups = PyList::empty(py);
        for (i, rg) in meta.row_groups().iter().enumerate() {
            let g = PyDict::new(py);
            g.set_item("index", i)?;
            g.set_item("num_rows", rg.num_rows())?;
            g.set_item("total_byte_size", rg.total_byte_size())?;
            g.set_item("compressed_size", rg.compressed_size())?;
            g.set_item("file_offset", rg.file_offset())?;
            let cols = PyList::empty(py);
            for cc in rg.columns() {
                let codec = parquet_codec(cc.compression());
                if !codecs.contains(&codec) {
                    codecs.push(codec);
                }
                let c = PyDict::new(py);
                c.set_item("path", cc.column_path().string())?;
                c.set_item("physical_type", cc.column_type().to_string())?;
                c.set_item("compression", codec)?;
                c.set_item("compressed_size", cc.compressed_size())?;
                c.set_item("uncompressed_size", cc.uncompressed_size())?;
                c.set_item(
                    "null_count",
                    cc.statistics().and_then(|s| s.null_count_opt()),
                )?;
                cols.append(c)?;
            }
            g.set_item("columns", cols)?;
            groups.append(g)?;
        }
        codecs.sort_unstable();
        d.set_item("compression", codecs)?;
        d.set_item("row_groups", groups)?;
        Ok(d)
    }

    fn read(&self, req: Request) -> Result<Box<dyn BatchSource>> {
        self.start(req)
    }

    fn read_device(&self, req: Request) -> Result<Box<dyn DeviceBatchSource>> {
        self.start_device(req)
    }
}

/// The name of an ORC writer id (the footer's `writer` field).
fn orc_writer(id: u32) -> String {
    match id {
        0 => "ORC Java".into(),
        1 => "ORC C++".into(),
        2 => "Presto".into(),
        3 => "Scritchley Go".into(),
        4 => "Trino".into(),
        5 => "CUDF".into(),
        other => format!("unknown ({other})"),
    }
}

impl AnyFile for Opened<OrcFile> {
    fn schema(&self) -> SchemaRef {
        self.file.schema()
    }

    fn rows(&self) -> u64 {
        self.file.rows()
    }

    fn describe<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let tail = self.file.tail();
        let (ps, footer) = (&tail.postscript, &tail.footer);
        let d = PyDict::new(py);
        let version: Vec<String> = self.file.version().iter().map(u32::to_string).collect();
        d.set_item("file_version", version.join("."))?;
        d.set_item("writer_version", ps.writer_version)?;
        d.set_item("writer", footer.writer.map(orc_writer))?;
        d.set_item("software_version", footer.software_version.as_deref())?;
        d.set_item("compression", tail.compression.kind.name())?;
        d.set_item("compression_block_size", tail.compression.block_size)?;
        d.set_item("row_index_stride", footer.row_index_stride)?;
        let meta = PyDict::new(py);
        for item in &footer.metadata {
            let value = item.value.as_deref().map(|v| PyBytes::new(py, v));
            meta.set_item(item.name.as_deref().unwrap_or(""), value)?;
        }
        d.set_item("metadata", meta)?;
        let stripes = PyList::empty(py);
        for s in self.file.stripes() {
            let e = PyDict::new(py);
            e.set_item("index", s.index)?;
            e.set_item("offset", s.offset)?;
            e.set_item("index_length", s.index_length)?;
            e.set_item("data_length", s.data_length)?;
            e.set_item("footer_length", s.footer_length)?;
            e.set_item("num_rows", s.rows)?;
            e.set_item("first_row", s.first_row)?;
            stripes.append(e)?;
        }
        d.set_item("stripes", stripes)?;
        Ok(d)
    }

    fn read(&self, req: Request) -> Result<Box<dyn BatchSource>> {
        self.start(req)
    }

    fn read_device(&self, req: Request) -> Result<Box<dyn DeviceBatchSource>> {
        self.start_device(req)
    }
}

/// An ORC or Parquet file with its footer parsed.
#[pyclass(module = "warpread", frozen)]
pub struct NativeFile {
    inner: Box<dyn AnyFile>,
    name: String,
    format: &'static str,
}

/// Opens `path_or_url` as `format` (`"parquet"` or `"orc"`) and parses
/// its footer (the GIL released meanwhile).
#[pyfunction]
pub fn open_file(py: Python<'_>, format: &str, path_or_url: &str) -> PyResult<NativeFile> {
    let at = Where::parse(path_or_url).py_err()?;
    let name = at.name();
    let (inner, format): (Box<dyn AnyFile>, &'static str) = match format {
        "parquet" => (
            Box::new(py.detach(|| Opened::<ParquetFile>::open(&at)).py_err()?),
            "parquet",
        ),
        "orc" => (
            Box::new(py.detach(|| Opened::<OrcFile>::open(&at)).py_err()?),
            "orc",
        ),
        other => {
            return Err(PyValueError::new_err(format!(
                "format {other:?}: expected \"parquet\" or \"orc\""
            )));
        }
    };
    Ok(NativeFile {
        inner,
        name,
        format,
    })
}

/// A filter term as the Python side hands it over: `(column, op, kind,
/// value)`, `kind` naming how to read `value`.
type Term<'py> = (String, String, String, Bound<'py, PyAny>);

fn value_of(kind: &str, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    Ok(match kind {
        "bool" => Value::Bool(v.extract()?),
        "int" => Value::Int(v.extract().map_err(|_| {
            PyValueError::new_err(format!("filter value {v}: integers must fit 64 bits"))
        })?),
        "float" => Value::Float(v.extract()?),
        "str" => Value::Str(v.extract()?),
        "date" => Value::Date(v.extract()?),
        other => {
            return Err(PyValueError::new_err(format!(
                "filter value kind {other:?} (bool, int, float, str or date)"
            )));
        }
    })
}

impl NativeFile {
    /// What a read asks for, its filter terms checked against the schema.
    fn request(
        &self,
        backend: &Backend,
        columns: Option<Vec<String>>,
        filters: Option<Vec<Term<'_>>>,
        batch_size: Option<usize>,
        limit: Option<usize>,
        group_bytes: Option<u64>,
    ) -> PyResult<Request> {
        if batch_size == Some(0) {
            return Err(PyValueError::new_err("batch_size must be at least 1"));
        }
        if group_bytes == Some(0) {
            return Err(PyValueError::new_err("group_bytes must be at least 1"));
        }
        let terms = filters
            .unwrap_or_default()
            .iter()
            .map(|(c, op, kind, v)| Ok((c.clone(), op.clone(), value_of(kind, v)?)))
            .collect::<PyResult<Vec<_>>>()?;
        let schema = self.inner.schema();
        let predicates = filter::predicates(&schema, &terms)
            .map_err(|e| match e {
                Error::Unsupported(m) => Error::Unsupported(format!("{}: {m}", self.name)),
                other => other,
            })
            .py_err()?;
        Ok(Request {
            columns,
            predicates,
            batch_size,
            limit,
            group_bytes,
            backend: backend.inner.clone(),
        })
    }
}

#[pymethods]
impl NativeFile {
    /// The file's Arrow schema.
    #[getter]
    fn schema(&self) -> NativeSchema {
        NativeSchema {
            schema: self.inner.schema(),
        }
    }

    /// Rows in the file.
    #[getter]
    fn num_rows(&self) -> u64 {
        self.inner.rows()
    }

    /// `"parquet"` or `"orc"`.
    #[getter]
    fn format(&self) -> &'static str {
        self.format
    }

    /// The path or URL the file was opened by.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// What the footer says, as a dict of Python values (keys per format:
    /// see the Python classes).
    fn describe<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.inner.describe(py)
    }

    /// Starts a read: `columns` (top-level, in this order), `filters` (a
    /// conjunction of terms, pruning and filtering rows exactly),
    /// `batch_size`, `limit`, on `backend`. Planning runs with the GIL
    /// released; nothing is decoded until the reader is iterated.
    #[pyo3(signature = (backend, columns = None, filters = None, batch_size = None, limit = None, group_bytes = None))]
    // One argument per Python keyword of the call.
    #[allow(clippy::too_many_arguments)]
    fn read(
        &self,
        py: Python<'_>,
        backend: &Backend,
        columns: Option<Vec<String>>,
        filters: Option<Vec<Term<'_>>>,
        batch_size: Option<usize>,
        limit: Option<usize>,
        group_bytes: Option<u64>,
    ) -> PyResult<NativeReader> {
        let req = self.request(backend, columns, filters, batch_size, limit, group_bytes)?;
        let source = py.detach(|| self.inner.read(req)).py_err()?;
        Ok(NativeReader::new(source))
    }

    /// [`read`](Self::read) with the batches left in the CUDA device's
    /// memory; an error when `backend` is not CUDA.
    #[pyo3(signature = (backend, columns = None, filters = None, batch_size = None, limit = None, group_bytes = None))]
    // One argument per Python keyword of the call.
    #[allow(clippy::too_many_arguments)]
    fn read_device(
        &self,
        py: Python<'_>,
        backend: &Backend,
        columns: Option<Vec<String>>,
        filters: Option<Vec<Term<'_>>>,
        batch_size: Option<usize>,
        limit: Option<usize>,
        group_bytes: Option<u64>,
    ) -> PyResult<NativeDeviceReader> {
        let req = self.request(backend, columns, filters, batch_size, limit, group_bytes)?;
        let source = py.detach(|| self.inner.read_device(req)).py_err()?;
        Ok(NativeDeviceReader::new(source, backend.inner.clone()))
    }

    fn __repr__(&self) -> String {
        format!(
            "<warpread native {} file {} ({} rows)>",
            self.format,
            self.name,
            self.inner.rows()
        )
    }
}
