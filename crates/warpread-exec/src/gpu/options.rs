//! How a CUDA backend runs: its host wait mode, where compiled kernels are
//! kept, the pinned pool's sizes, the host's share of inflate jobs, the
//! GSST launch shape. One value per backend, given when it is created, so
//! two backends of one process (two devices, two test setups) never see
//! each other's settings.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use super::launch::GsstShape;
use crate::error::{Error, Result};
pub use warpread_codecs::deflate::speculative::SpanOptions;

/// How a host thread waits for the device (the context's scheduling flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SyncMode {
    /// Sleeps on a driver event. The default: CUDA's own choice spins while
    /// the context has fewer threads than cores, so each scan lane waiting
    /// on its stream would hold a core at full load, away from the query's
    /// host operators.
    #[default]
    Blocking,
    /// Yields its core while it waits.
    Yield,
    /// Spins.
    Spin,
    /// CUDA's own choice (the context's flag is left alone).
    Auto,
}

impl FromStr for SyncMode {
    type Err = Error;

    /// `blocking`, `yield`, `spin` or `auto`, in any case.
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "blocking" => Ok(Self::Blocking),
            "yield" => Ok(Self::Yield),
            "spin" => Ok(Self::Spin),
            "auto" => Ok(Self::Auto),
            other => Err(Error::Unsupported(format!(
                "CUDA sync mode {other:?} (expected blocking, yield, spin or auto)"
            ))),
        }
    }
}

impl fmt::Display for SyncMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Blocking => "blocking",
            Self::Yield => "yield",
            Self::Spin => "spin",
            Self::Auto => "auto",
        })
    }
}

/// How a [`CudaBackend`](crate::CudaBackend) runs (see the module docs).
/// The defaults are the measured best on the H100 host; the fields exist
/// for applications with other needs and for benchmarks that compare.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CudaOptions {
    /// How host threads wait for the device ([`SyncMode::Blocking`]).
    pub sync: SyncMode,
    /// Folder where compiled kernels are kept across processes, keyed by
    /// everything the compilation depends on (`None`, the default: kernels
    /// are compiled once per backend and not stored).
    pub kernel_cache: Option<PathBuf>,
    /// Folder whose kernel sources (`inflate.cu`, `codag.cuh`, `deflate.cuh`, ...)
    /// replace the built-in ones of the same name, so that one binary can
    /// compare kernel variants on a host without a Rust toolchain (`None`,
    /// the default: the built-in sources).
    pub kernel_dir: Option<PathBuf>,
    /// Most bytes of page-locked host memory the output pool holds (`Some(0)`
    /// turns it off; `None`, the default:
    /// [`default_cap`](super::pinned_pool::default_cap) of the host's memory).
    pub pinned_pool_bytes: Option<usize>,
    /// Most device bytes that device mirrors of pool blocks hold (`Some(0)`
    /// turns mirrors off; `None`, the default: half of the device's memory).
    pub device_mirror_bytes: Option<usize>,
    /// How many times a request's size a free pool block may be and still
    /// serve it before a new block is page-locked (at least 1; default 4).
    pub pinned_larger: usize,
    /// Whether inflate stages hand some jobs to the host's cores
    /// ([`host_share`](crate::host_share); default on). Off, every job runs
    /// on the device, which kernel tests need.
    pub host_share: bool,
    /// Host threads the host share of one stage runs on, and the split
    /// between host and device assumes (`None`, the default: the threads
    /// rayon's pool has). Backends opened together on one host by
    /// [`devices::open`](crate::devices::open) divide the host's threads
    /// among themselves when this is `None`: each planning its share with
    /// all of them would give the host several times the work it can do,
    /// and every stage would wait on it.
    pub host_threads: Option<usize>,
    /// Launch shape the GSST kernels are compiled and launched with
    /// ([`GsstShape::DEFAULT`]); checked when the backend is created.
    pub gsst_shape: GsstShape,
    /// Scan partitions a query engine should read with
    /// ([`Backend::scan_partitions`](crate::Backend::scan_partitions);
    /// default 4; `None`: as many as the engine plans). TPC-H SF 10 Parquet
    /// GZIP on the H100 host (16 cores): 29.1 s with 4, 36.3 s with
    /// DataFusion's 16, 44.1 s with 2 (benchmarks/tpch.md).
    pub scan_partitions: Option<usize>,
    /// How inflate stages with few, long streams cut each stream into spans
    /// decoded in parallel (speculative parallel inflate, `cuda::span_inflate`);
    /// `None` inflates every stream with one warp. A stream is cut when it
    /// is at least [`SpanOptions::min_stream_bytes`] long, holds at least
    /// [`SPAN_MIN_SPANS`] spans, and its stage fewer than [`SPAN_MAX_JOBS`]
    /// streams.
    pub span_inflate: Option<SpanOptions>,
    /// Operations that fail on purpose, to test how reads and callers
    /// handle a device that runs out of memory or fails a launch
    /// ([`Faults`](super::Faults); default: none).
    pub faults: super::Faults,
    /// Most device bytes one decode stage may take, its input and output
    /// together (`None`, the default: [`DEVICE_MEMORY_SHARE`] of the memory
    /// free when the backend opens, divided among its most lanes). A stage
    /// over it fails with [`Error::DeviceMemory`]
    /// before it allocates, and the readers read its group again one stripe
    /// or row group at a time, so a read larger than the device streams
    /// through it. Lanes run stages side by side: the backend holds at most
    /// its lanes times this, plus the mirrors' cap
    /// ([`device_mirror_bytes`](Self::device_mirror_bytes)).
    pub device_memory_limit: Option<usize>,
}

/// Share of the device memory free when a backend opens that its lanes'
/// stages may take together unless
/// [`CudaOptions::device_memory_limit`] sets a limit: the other half is
/// what the device mirrors may hold by default
/// ([`device_mirror_bytes`](CudaOptions::device_mirror_bytes)).
pub const DEVICE_MEMORY_SHARE: f64 = 0.5;

/// The default of [`CudaOptions::device_memory_limit`] on a device with
/// `free` bytes free at open and `lanes` lanes at most: its
/// [`DEVICE_MEMORY_SHARE`], split evenly.
pub fn default_stage_memory(free: usize, lanes: usize) -> u64 {
    (free as f64 * DEVICE_MEMORY_SHARE / lanes.max(1) as f64) as u64
}

/// Fewest spans a stream must hold to be inflated in spans.
pub const SPAN_MIN_SPANS: u64 = 4;

/// Streams a stage may hold and still have its long ones inflated in spans:
/// with more, one warp per stream keeps the device busy already.
pub const SPAN_MAX_JOBS: usize = 2048;

/// Default of [`CudaOptions::pinned_larger`].
pub const PINNED_LARGER: usize = 4;

/// Default of [`CudaOptions::scan_partitions`].
pub const SCAN_PARTITIONS: usize = 4;

impl Default for CudaOptions {
    fn default() -> Self {
        Self {
            sync: SyncMode::default(),
            kernel_cache: None,
            kernel_dir: None,
            pinned_pool_bytes: None,
            device_mirror_bytes: None,
            pinned_larger: PINNED_LARGER,
            host_share: true,
            host_threads: None,
            gsst_shape: GsstShape::DEFAULT,
            scan_partitions: Some(SCAN_PARTITIONS),
            span_inflate: Some(SpanOptions::default()),
            faults: super::Faults::default(),
            device_memory_limit: None,
        }
    }
}

impl CudaOptions {
    /// Sets [`sync`](Self::sync).
    pub fn with_sync(mut self, mode: SyncMode) -> Self {
        self.sync = mode;
        self
    }

    /// Sets [`kernel_cache`](Self::kernel_cache).
    pub fn with_kernel_cache(mut self, dir: Option<impl Into<PathBuf>>) -> Self {
        self.kernel_cache = dir.map(Into::into);
        self
    }

    /// Sets [`kernel_dir`](Self::kernel_dir).
    pub fn with_kernel_dir(mut self, dir: Option<impl Into<PathBuf>>) -> Self {
        self.kernel_dir = dir.map(Into::into);
        self
    }

    /// Sets [`pinned_pool_bytes`](Self::pinned_pool_bytes).
    pub fn with_pinned_pool_bytes(mut self, bytes: Option<usize>) -> Self {
        self.pinned_pool_bytes = bytes;
        self
    }

    /// Sets [`device_mirror_bytes`](Self::device_mirror_bytes).
    pub fn with_device_mirror_bytes(mut self, bytes: Option<usize>) -> Self {
        self.device_mirror_bytes = bytes;
        self
    }

    /// Sets [`pinned_larger`](Self::pinned_larger) (at least 1).
    pub fn with_pinned_larger(mut self, times: usize) -> Self {
        self.pinned_larger = times.max(1);
        self
    }

    /// Sets [`span_inflate`](Self::span_inflate).
    pub fn with_span_inflate(mut self, spans: Option<SpanOptions>) -> Self {
        self.span_inflate = spans;
        self
    }

    /// Sets [`device_memory_limit`](Self::device_memory_limit).
    pub fn with_device_memory_limit(mut self, bytes: Option<usize>) -> Self {
        self.device_memory_limit = bytes;
        self
    }

    /// Sets [`faults`](Self::faults).
    pub fn with_faults(mut self, faults: super::Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Sets [`host_share`](Self::host_share).
    pub fn with_host_share(mut self, on: bool) -> Self {
        self.host_share = on;
        self
    }

    /// Sets [`host_threads`](Self::host_threads) (`Some(0)` reads as
    /// `None`).
    pub fn with_host_threads(mut self, threads: Option<usize>) -> Self {
        self.host_threads = threads.filter(|&n| n > 0);
        self
    }

    /// Sets [`gsst_shape`](Self::gsst_shape).
    pub fn with_gsst_shape(mut self, shape: GsstShape) -> Self {
        self.gsst_shape = shape;
        self
    }

    /// Sets [`scan_partitions`](Self::scan_partitions) (`Some(0)` reads as
    /// `None`).
    pub fn with_scan_partitions(mut self, n: Option<usize>) -> Self {
        self.scan_partitions = n.filter(|&n| n > 0);
        self
    }

    /// Fails on settings a backend cannot run with: an invalid GSST shape
    /// (its fields are public, so one may be built without
    /// [`GsstShape::new`]'s checks).
    pub fn validate(&self) -> Result<()> {
        let s = self.gsst_shape;
        GsstShape::new(s.threads, s.min_blocks, s.ring)
            .map(|_| ())
            .map_err(Error::Unsupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_measured_settings() {
        let o = CudaOptions::default();
        assert_eq!(o.sync, SyncMode::Blocking);
        assert_eq!(o.kernel_cache, None);
        assert_eq!(o.kernel_dir, None);
        assert_eq!((o.pinned_pool_bytes, o.device_mirror_bytes), (None, None));
        assert_eq!(o.pinned_larger, 4);
        assert!(o.host_share);
        assert_eq!(o.gsst_shape, GsstShape::DEFAULT);
        assert_eq!(o.scan_partitions, Some(4));
        assert!(o.validate().is_ok());
    }

    #[test]
    fn the_default_stage_limit_splits_a_share_of_free_memory_among_lanes() {
        // An H100 with 79 GiB free and 8 lanes: 4.9 GiB a stage.
        let free = 79usize << 30;
        let stage = default_stage_memory(free, 8);
        assert_eq!(stage, (79u64 << 30) / 2 / 8);
        assert_eq!(default_stage_memory(free, 0), default_stage_memory(free, 1));
        assert_eq!(default_stage_memory(0, 8), 0);
    }

    #[test]
    fn builders_set_and_clamp() {
        let o = CudaOptions::default()
            .with_sync(SyncMode::Spin)
            .with_kernel_cache(Some("/tmp/kc"))
            .with_kernel_dir(None::<PathBuf>)
            .with_pinned_pool_bytes(Some(0))
            .with_pinned_larger(0)
            .with_host_share(false)
            .with_scan_partitions(Some(0));
        assert_eq!(o.sync, SyncMode::Spin);
        assert_eq!(
            o.kernel_cache.as_deref(),
            Some(std::path::Path::new("/tmp/kc"))
        );
        assert_eq!(o.pinned_pool_bytes, Some(0));
        assert_eq!(o.pinned_larger, 1);
        assert!(!o.host_share);
        assert_eq!(o.scan_partitions, None);
        let bad = CudaOptions::default().with_gsst_shape(GsstShape {
            threads: 200,
            ..GsstShape::DEFAULT
        });
        assert!(
            bad.validate()
                .unwrap_err()
                .to_string()
                .contains("multiple of 32")
        );
    }

    #[test]
    fn sync_modes_parse_in_any_case_and_reject_the_rest() {
        for (s, m) in [
            ("blocking", SyncMode::Blocking),
            ("Blocking", SyncMode::Blocking),
            (" spin ", SyncMode::Spin),
            ("yield", SyncMode::Yield),
            ("AUTO", SyncMode::Auto),
        ] {
            assert_eq!(s.parse::<SyncMode>().unwrap(), m, "{s:?}");
            assert_eq!(m.to_string().parse::<SyncMode>().unwrap(), m);
        }
        for s in ["", "nonsense"] {
            assert!(s.parse::<SyncMode>().is_err(), "{s:?}");
        }
    }
}
