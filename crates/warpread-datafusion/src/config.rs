//! The objects a session's warpread scans share, kept as a typed
//! DataFusion `SessionConfig` extension: the decode backend (created by the
//! application, since a CUDA context is costly to create, and shared by
//! whichever sessions it gives it to), the opened files, and a sink that
//! adds up the reader's stage timings for `warpread demo` and `warpread
//! bench sql`. The `warpread.*` settings are the `options` module's.

use std::sync::{Arc, Mutex};

use datafusion::execution::config::SessionConfig;

use datafusion::error::{DataFusionError, Result as DfResult};

use super::file_cache::FileCache;
use super::options::{BackendSetting, WarpreadOptions};
use crate::error::Result;
use crate::exec::{self, Backend, BackendChoice, CpuBackend};
use crate::orc::ReadStats;

/// The shared state of a DataFusion session's warpread scans.
#[derive(Clone)]
pub struct WarpreadConfig {
    /// Decodes the session's warpread scans (unless `warpread.backend` is
    /// `cpu`, or a table has a backend of its own).
    pub backend: Arc<dyn Backend>,
    /// Every device backend the session's scans may decode on,
    /// [`backend`](Self::backend) first: one unless the session was made
    /// [`with_devices`](Self::with_devices). `warpread.devices` picks among
    /// them, and scan partitions take the picked ones in turn.
    pub devices: Vec<Arc<dyn Backend>>,
    /// Where scans add their stage timings.
    pub stats: Arc<StatsSink>,
    /// Files the session's scans opened, kept between scans.
    pub files: Arc<FileCache>,
}

impl std::fmt::Debug for WarpreadConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarpreadConfig")
            .field("backend", &self.backend.describe())
            .field("devices", &self.devices.len())
            .finish_non_exhaustive()
    }
}

impl WarpreadConfig {
    /// Settings with the backend `choice` gives.
    pub fn new(choice: BackendChoice) -> Result<Self> {
        Ok(Self::with_backend(Arc::from(exec::select(choice)?)))
    }

    /// Settings around an existing backend.
    pub fn with_backend(backend: Arc<dyn Backend>) -> Self {
        Self {
            devices: vec![Arc::clone(&backend)],
            backend,
            stats: Arc::default(),
            files: Arc::default(),
        }
    }

    /// Settings around one backend per device (every GPU of a host,
    /// opened with [`exec::devices::open`]); the first is the session's
    /// [`backend`](Self::backend). An empty list is an error.
    pub fn with_devices(devices: Vec<Arc<dyn Backend>>) -> Result<Self> {
        let first = devices.first().cloned().ok_or_else(|| {
            crate::error::Error::Unsupported("a session needs at least one device backend".into())
        })?;
        Ok(Self {
            devices,
            ..Self::with_backend(first)
        })
    }

    /// The settings of a session, if it has them.
    pub fn of(config: &SessionConfig) -> Option<Arc<Self>> {
        config.get_extension::<Self>()
    }

    /// Adds these settings to a session configuration.
    pub fn install(self, config: SessionConfig) -> SessionConfig {
        config.with_extension(Arc::new(self))
    }
}

/// The backends a scan decodes on under `options`, one per device, its
/// partitions taking them in turn: as `warpread.backend` says (see
/// [`BackendSetting`]), on the devices of `session` that `warpread.devices`
/// picks; the CPU for a session without a [`WarpreadConfig`].
pub(crate) fn session_backends(
    session: Option<&WarpreadConfig>,
    options: &WarpreadOptions,
) -> DfResult<Vec<Arc<dyn Backend>>> {
    let cpu = || vec![Arc::new(CpuBackend::new()) as Arc<dyn Backend>];
    let devices = |s: &WarpreadConfig| {
        options
            .devices
            .pick(&s.devices)
            .map_err(|e| DataFusionError::Configuration(format!("warpread.devices: {e}")))
    };
    match (options.backend, session) {
        (BackendSetting::Cpu, _) | (BackendSetting::Auto, None) => Ok(cpu()),
        (BackendSetting::Auto, Some(s)) => devices(s),
        (BackendSetting::Cuda, Some(s)) if s.backend.name() == "cuda" => devices(s),
        (BackendSetting::Cuda, s) => Err(DataFusionError::Configuration(format!(
            "warpread.backend = cuda, but the session's backend is {}: create the \
             session's WarpreadConfig with a CUDA backend",
            s.map_or_else(|| "none".to_string(), |s| s.backend.describe())
        ))),
    }
}

/// Stage timings added up over every file a session's scans read. Files
/// are read in parallel, so the sums can exceed the query's wall time.
#[derive(Debug, Default)]
pub struct StatsSink {
    total: Mutex<ReadStats>,
}

impl StatsSink {
    /// Adds one read's timings.
    pub fn add(&self, s: &ReadStats) {
        Self::add_to(&mut self.total.lock().unwrap_or_else(|p| p.into_inner()), s);
    }

    /// Adds `s` to `t`, field by field.
    pub fn add_to(t: &mut ReadStats, s: &ReadStats) {
        t.add(s);
    }

    /// The sums so far, resetting them.
    pub fn take(&self) -> ReadStats {
        std::mem::take(&mut *self.total.lock().unwrap_or_else(|p| p.into_inner()))
    }
}
