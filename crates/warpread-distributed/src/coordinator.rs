//! The coordinator's session: planned as a warpread session is, then cut
//! into stages for the workers.

use std::sync::Arc;

use datafusion::error::Result as DfResult;
use datafusion::execution::config::SessionConfig;
use datafusion::prelude::SessionContext;
use datafusion_distributed::{DistributedExt, SessionStateBuilderExt, WorkerResolver};
use url::Url;
use warpread_datafusion::{
    RowFiltersWithinLimits, WarpreadConfig, WarpreadOptions, register_formats, state_builder,
};

use crate::codec::WarpCodec;
use crate::error::{Error, Result};

/// A fixed list of workers.
#[derive(Debug, Clone)]
pub struct StaticWorkers(Vec<Url>);

impl StaticWorkers {
    /// These workers.
    pub fn new(urls: Vec<Url>) -> Self {
        Self(urls)
    }

    /// Workers from addresses such as `http://127.0.0.1:50051` (a missing
    /// scheme is `http://`).
    pub fn parse<S: AsRef<str>>(addresses: &[S]) -> Result<Self> {
        addresses
            .iter()
            .map(|a| {
                let a = a.as_ref().trim();
                let text = if a.contains("://") {
                    a.to_string()
                } else {
                    format!("http://{a}")
                };
                Url::parse(&text).map_err(|source| Error::Url { text, source })
            })
            .collect::<Result<_>>()
            .map(Self)
    }

    /// The workers' URLs.
    pub fn urls(&self) -> &[Url] {
        &self.0
    }
}

impl WorkerResolver for StaticWorkers {
    fn get_urls(&self) -> DfResult<Vec<Url>> {
        Ok(self.0.clone())
    }
}

/// A session whose queries run on `workers`: a warpread session (see
/// [`warpread_datafusion::session`]) with `config` and `session_config`,
/// whose plans the distributed engine cuts into stages that the workers
/// run (the head stage runs here). `warpread.*` settings go with each
/// stage; warpread's rules are placed as the crate docs say.
pub fn coordinator_session(
    config: WarpreadConfig,
    session_config: SessionConfig,
    workers: StaticWorkers,
) -> SessionContext {
    let options = WarpreadOptions::of(session_config.options());
    let state = state_builder(config, session_config)
        .with_physical_optimizer_rule(Arc::new(RowFiltersWithinLimits))
        .with_distributed_option_extension(options)
        .with_distributed_user_codec(WarpCodec)
        .with_distributed_worker_resolver(workers)
        .with_distributed_planner()
        .build();
    let ctx = SessionContext::new_with_state(state);
    register_formats(&ctx);
    ctx
}
