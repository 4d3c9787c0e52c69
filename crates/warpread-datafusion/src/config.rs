//! Per-session settings of the warpread provider, kept as a DataFusion
//! `SessionConfig` extension: the decode backend (one per session, since a
//! CUDA context is costly to create) and a sink that adds up the reader's
//! stage timings for `warpread demo` and `warpread bench sql`.

use std::sync::{Arc, Mutex, OnceLock};

use datafusion::execution::config::SessionConfig;

use crate::error::Result;
use crate::exec::{self, Backend, BackendChoice};
use crate::orc::ReadStats;

/// The warpread settings of a DataFusion session.
#[derive(Clone)]
pub struct WarpreadConfig {
    /// Decodes every warpread scan of the session.
    pub backend: Arc<dyn Backend>,
    /// Where scans add their stage timings.
    pub stats: Arc<StatsSink>,
    /// Whether partial aggregates over warpread scans run as aggregate
    /// programs on a backend without a device too (the CPU reference;
    /// tests use it). Off by default: on the CPU, DataFusion's own
    /// operators were faster (TPC-H Q6 at scale 1 on the dev box).
    pub cpu_aggregates: bool,
}

impl std::fmt::Debug for WarpreadConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarpreadConfig")
            .field("backend", &self.backend.describe())
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
            backend,
            stats: Arc::default(),
            cpu_aggregates: false,
        }
    }

    /// These settings with [`cpu_aggregates`](Self::cpu_aggregates) set.
    pub fn with_cpu_aggregates(mut self, on: bool) -> Self {
        self.cpu_aggregates = on;
        self
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

/// The backend of scans whose session has no [`WarpreadConfig`]: `auto`,
/// created once per process.
pub fn default_backend() -> Arc<dyn Backend> {
    static DEFAULT: OnceLock<Arc<dyn Backend>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| match exec::select(BackendChoice::Auto) {
            Ok(b) => Arc::from(b),
            Err(e) => {
                tracing::warn!("auto backend unavailable ({e}); using the CPU");
                Arc::new(exec::CpuBackend::new())
            }
        })
        .clone()
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
