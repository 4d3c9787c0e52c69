//! The one error type of warpread and its `Result` alias.
//!
//! Every error that comes from data carries a [`Location`] naming the file and
//! the place inside it, so that a user can find the bad bytes.

use std::fmt;
use std::path::PathBuf;

use crate::plan::ChunkStatus;

/// Where in the input an error happened. Every field is optional because the
/// same decoders serve files, in-memory buffers and benchmarks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// The file being read, if any.
    pub file: Option<PathBuf>,
    /// ORC stripe or Parquet row group index.
    pub stripe: Option<u64>,
    /// ORC stream name or Parquet page index.
    pub page: Option<String>,
    /// Column name or index.
    pub column: Option<String>,
    /// Chunk job index inside its plan stage.
    pub chunk: Option<u64>,
    /// Byte offset of the chunk's input inside its buffer or file.
    pub offset: Option<u64>,
    /// Parquet row group index.
    pub row_group: Option<u64>,
    /// Parquet page index within its column chunk.
    pub page_index: Option<u64>,
}

impl Location {
    /// A location that names only a file.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Self {
            file: Some(path.into()),
            ..Self::default()
        }
    }

    /// The same location, narrowed to one chunk job.
    pub fn with_chunk(mut self, chunk: u64, offset: u64) -> Self {
        self.chunk = Some(chunk);
        self.offset = Some(offset);
        self
    }

    /// The same location, narrowed to a stripe (or row group).
    pub fn with_stripe(mut self, stripe: u64) -> Self {
        self.stripe = Some(stripe);
        self
    }

    /// The same location, narrowed to a stream (or page).
    pub fn with_stream(mut self, stream: impl Into<String>) -> Self {
        self.page = Some(stream.into());
        self
    }

    /// The same location, at a byte offset.
    pub fn at(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }

    /// The same location, narrowed to a Parquet row group.
    pub fn with_row_group(mut self, row_group: u64) -> Self {
        self.row_group = Some(row_group);
        self
    }

    /// The same location, narrowed to a Parquet page of a column chunk.
    pub fn with_page(mut self, page: u64) -> Self {
        self.page_index = Some(page);
        self
    }

    /// The same location, narrowed to a column.
    pub fn with_column(mut self, column: impl Into<String>) -> Self {
        self.column = Some(column.into());
        self
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(file) = &self.file {
            parts.push(format!("file {}", file.display()));
        }
        if let Some(s) = self.stripe {
            parts.push(format!("stripe {s}"));
        }
        if let Some(g) = self.row_group {
            parts.push(format!("row group {g}"));
        }
        if let Some(p) = &self.page {
            parts.push(format!("stream {p}"));
        }
        if let Some(c) = &self.column {
            parts.push(format!("column {c}"));
        }
        if let Some(p) = self.page_index {
            parts.push(format!("page {p}"));
        }
        if let Some(c) = self.chunk {
            parts.push(format!("chunk {c}"));
        }
        if let Some(o) = self.offset {
            parts.push(format!("byte offset {o}"));
        }
        if parts.is_empty() {
            f.write_str("<input>")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

/// Every failure warpread reports.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input bytes do not follow the format.
    #[error("corrupt data at {location}: {status}")]
    Corrupt {
        /// Where the bad bytes are.
        location: Box<Location>,
        /// What the decoder found.
        status: ChunkStatus,
    },
    /// File metadata (a footer, a stripe footer, a stream directory) does
    /// not follow the format.
    #[error("invalid {format} file at {location}: {message}")]
    Format {
        /// `ORC` or `Parquet`.
        format: &'static str,
        /// Where the bad metadata is.
        location: Box<Location>,
        /// What is wrong with it.
        message: String,
    },
    /// Building Arrow arrays or writing Arrow output failed.
    #[error("arrow error while {context}: {source}")]
    Arrow {
        /// What warpread was doing.
        context: String,
        /// The underlying error.
        source: arrow::error::ArrowError,
    },
    /// A plan is inconsistent with the buffers it was given (a bug in the
    /// format layer or a hostile file whose metadata lies about sizes).
    #[error("invalid decode plan: {0}")]
    InvalidPlan(String),
    /// The CUDA backend was asked for but cannot run here.
    #[error("CUDA backend unavailable: {0}")]
    CudaUnavailable(String),
    /// A CUDA driver call failed.
    #[error("CUDA driver error during {during}: {message}")]
    Cuda {
        /// What warpread was doing.
        during: &'static str,
        /// The driver's message.
        message: String,
    },
    /// A stage needs more device memory than its backend may use (its
    /// device memory limit); readers retry the read group in smaller
    /// groups before they report it.
    #[error("device memory: {during} needs {needed} bytes, over the limit of {limit}")]
    DeviceMemory {
        /// What needed the memory.
        during: &'static str,
        /// Bytes it needed.
        needed: u64,
        /// Bytes the backend may use.
        limit: u64,
    },
    /// A read would hold more host memory than its budget allows (the
    /// reader's host memory limit, or the query's memory pool): what
    /// needed it, with the place in the file whose sizes claimed it.
    #[error("host memory: {during} needs {needed} bytes: {why}")]
    HostMemory {
        /// What needed the memory, and where in the file.
        during: String,
        /// Bytes it needed.
        needed: u64,
        /// Why the budget refused them.
        why: String,
    },
    /// The backend failed (a driver error, device memory) while reading a
    /// part of a file: the error with the file and the rows it was reading.
    #[error("reading {location}, rows {first}..{end}: {source}")]
    Device {
        /// The file (and, where one unit was read, its stripe or row group).
        location: Box<Location>,
        /// First file row of the part.
        first: u64,
        /// One past its last row.
        end: u64,
        /// The backend's error.
        source: Box<Error>,
    },
    /// NVRTC could not compile a kernel source; carries the compiler log.
    #[error("NVRTC failed to compile {kernel}: {log}")]
    KernelCompile {
        /// The kernel source file name.
        kernel: String,
        /// The NVRTC log.
        log: String,
    },
    /// The GPU and CPU backends disagreed (raised by verification).
    #[error("verification failed for {what}: {detail}")]
    Mismatch {
        /// What was compared.
        what: String,
        /// The first difference.
        detail: String,
    },
    /// A caller asked for something warpread does not do (yet).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An I/O error on a named path.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The path being read or written.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An object store request failed.
    #[error("object store error on {location}: {source}")]
    ObjectStore {
        /// The object being read.
        location: String,
        /// The store's error.
        source: object_store::Error,
    },
    /// An error from the parquet crate, with the file it came from.
    #[error("parquet error on {path}: {source}")]
    Parquet {
        /// The file being read.
        path: PathBuf,
        /// The underlying error.
        source: parquet::errors::ParquetError,
    },
    /// An error from DataFusion (planning or running a query), with what
    /// warpread was doing.
    #[cfg(feature = "datafusion")]
    #[error("query error while {context}: {source}")]
    DataFusion {
        /// What warpread was doing.
        context: String,
        /// The underlying error (boxed: it is large).
        source: Box<datafusion::error::DataFusionError>,
    },
}

#[cfg(feature = "datafusion")]
/// Errors of the warpread reader inside a query keep their message (file,
/// stripe, column) as an external error; a DataFusion error that went
/// through warpread is unwrapped rather than nested.
impl From<Error> for datafusion::error::DataFusionError {
    fn from(e: Error) -> Self {
        match e {
            Error::DataFusion { source, .. } => *source,
            other => Self::External(Box::new(other)),
        }
    }
}

/// `Result` with warpread's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    /// Wraps an object store error with the object it concerns.
    pub fn object_store(location: impl Into<String>, source: object_store::Error) -> Self {
        Self::ObjectStore {
            location: location.into(),
            source,
        }
    }

    /// An ORC metadata error at `location`.
    pub fn orc(location: &Location, message: impl Into<String>) -> Self {
        Self::Format {
            format: "ORC",
            location: Box::new(location.clone()),
            message: message.into(),
        }
    }

    /// A Parquet metadata error at `location`.
    pub fn parquet(location: &Location, message: impl Into<String>) -> Self {
        Self::Format {
            format: "Parquet",
            location: Box::new(location.clone()),
            message: message.into(),
        }
    }

    /// Wraps an Arrow error with what warpread was doing.
    pub fn arrow(context: impl Into<String>, source: arrow::error::ArrowError) -> Self {
        Self::Arrow {
            context: context.into(),
            source,
        }
    }

    /// Wraps a DataFusion error with what warpread was doing.
    #[cfg(feature = "datafusion")]
    pub fn datafusion(
        context: impl Into<String>,
        source: datafusion::error::DataFusionError,
    ) -> Self {
        Self::DataFusion {
            context: context.into(),
            source: Box::new(source),
        }
    }

    /// Whether the device ran out of memory: a stage over the backend's
    /// limit ([`Error::DeviceMemory`]) or the driver's own
    /// `CUDA_ERROR_OUT_OF_MEMORY`. A smaller read may succeed.
    pub fn is_device_out_of_memory(&self) -> bool {
        match self.backend_cause() {
            Self::DeviceMemory { .. } => true,
            Self::Cuda { message, .. } => message.contains("CUDA_ERROR_OUT_OF_MEMORY"),
            _ => false,
        }
    }

    /// Whether a memory limit refused the read, on the device or on the
    /// host: read again in smaller groups, it may fit.
    pub fn is_over_memory_limit(&self) -> bool {
        self.is_device_out_of_memory() || matches!(self.backend_cause(), Self::HostMemory { .. })
    }

    /// Whether the device's context can no longer be used: the driver
    /// reported one of its sticky errors (an illegal address or
    /// instruction, a trap, a kernel that died), after which every call on
    /// that context fails. The CUDA backend then decodes on the host.
    pub fn is_device_lost(&self) -> bool {
        /// The driver's errors that leave a context unusable (CUDA's
        /// documentation of each: "the process must be terminated and
        /// relaunched" or "the context cannot be used").
        const STICKY: [&str; 9] = [
            "CUDA_ERROR_ILLEGAL_ADDRESS",
            "CUDA_ERROR_LAUNCH_TIMEOUT",
            "CUDA_ERROR_HARDWARE_STACK_ERROR",
            "CUDA_ERROR_ILLEGAL_INSTRUCTION",
            "CUDA_ERROR_MISALIGNED_ADDRESS",
            "CUDA_ERROR_INVALID_ADDRESS_SPACE",
            "CUDA_ERROR_INVALID_PC",
            "CUDA_ERROR_LAUNCH_FAILED",
            "CUDA_ERROR_ECC_UNCORRECTABLE",
        ];
        match self.backend_cause() {
            Self::Cuda { message, .. } => STICKY.iter().any(|s| message.contains(s)),
            _ => false,
        }
    }

    /// Whether the backend itself failed (the device, its driver or its
    /// memory), not the data: a read that another backend may redo.
    pub fn is_backend_failure(&self) -> bool {
        matches!(
            self.backend_cause(),
            Self::Cuda { .. } | Self::DeviceMemory { .. } | Self::CudaUnavailable(_)
        )
    }

    /// The backend's error inside [`Error::Device`]; any other error as it
    /// is.
    pub fn backend_cause(&self) -> &Error {
        match self {
            Self::Device { source, .. } => source.backend_cause(),
            other => other,
        }
    }

    /// A backend failure (see [`is_backend_failure`](Self::is_backend_failure))
    /// wrapped in [`Error::Device`] with the part of a file it was reading;
    /// any other error, or one that names its place already, as it is.
    pub fn reading(self, location: impl FnOnce() -> Location, rows: std::ops::Range<u64>) -> Self {
        if !self.is_backend_failure() || matches!(self, Self::Device { .. }) {
            return self;
        }
        Self::Device {
            location: Box::new(location()),
            first: rows.start,
            end: rows.end,
            source: Box::new(self),
        }
    }

    /// Wraps a CUDA driver error with what warpread was doing.
    pub fn cuda(during: &'static str, err: impl fmt::Display) -> Self {
        Self::Cuda {
            during,
            message: err.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver(code: &str) -> Error {
        Error::cuda("a stage", format!("DriverError({code}, \"...\")"))
    }

    #[test]
    fn backend_failures_name_the_part_of_the_file_they_were_reading() {
        let e = driver("CUDA_ERROR_ILLEGAL_ADDRESS")
            .reading(|| Location::file("t.parquet").with_row_group(3), 10..20);
        let text = e.to_string();
        assert!(
            text.contains("file t.parquet, row group 3, rows 10..20"),
            "{text}"
        );
        assert!(text.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{text}");
        assert!(e.is_device_lost() && e.is_backend_failure());
        assert!(!e.is_device_out_of_memory());
        // Wrapped once only; data errors stay as they are.
        let again = e.reading(|| Location::file("other"), 0..1);
        assert!(!again.to_string().contains("other"));
        let data = Error::Unsupported("x".into()).reading(|| Location::file("t"), 0..1);
        assert!(matches!(data, Error::Unsupported(_)));
    }

    #[test]
    fn out_of_memory_and_lost_devices_are_told_apart() {
        let oom = driver("CUDA_ERROR_OUT_OF_MEMORY").reading(|| Location::file("t"), 0..1);
        assert!(oom.is_device_out_of_memory() && !oom.is_device_lost());
        let limit = Error::DeviceMemory {
            during: "a stage",
            needed: 2,
            limit: 1,
        };
        assert!(limit.is_device_out_of_memory() && limit.is_backend_failure());
        let launch = driver("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
        assert!(!launch.is_device_lost() && launch.is_backend_failure());
        for code in ["CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ILLEGAL_INSTRUCTION"] {
            assert!(driver(code).is_device_lost(), "{code}");
        }
    }
}
