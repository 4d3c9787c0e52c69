//! Workers: the session each query's stage runs in, the rules applied to
//! the stage there, and the gRPC server.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::common::config::ExtensionOptions;
use datafusion::config::ConfigOptions;
use datafusion::error::Result as DfResult;
use datafusion::execution::SessionState;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
use datafusion_distributed::{
    DistributedExt, Worker, WorkerPlanRewriteEvent, WorkerPlanRewriteEventResponse,
    WorkerQueryContext, WorkerSessionBuilder,
};
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use warpread_datafusion::{
    FastLike, ScanAggregate, StartScansEarly, WarpreadConfig, WarpreadOptions,
};

use crate::codec::WarpCodec;
use crate::error::{Error, Result};

/// Builds the session a worker runs a stage in: the coordinator's
/// `warpread.*` settings (sent with the stage), this worker's
/// [`WarpreadConfig`] (its backend, devices and opened files, shared by
/// every query the worker runs), [`WarpCodec`], and [`worker_rules`].
#[derive(Clone, Debug)]
pub struct WorkerSessions {
    config: WarpreadConfig,
}

impl WorkerSessions {
    /// Sessions around `config`.
    pub fn new(config: WarpreadConfig) -> Self {
        Self { config }
    }
}

#[async_trait]
impl WorkerSessionBuilder for WorkerSessions {
    async fn build_session_state(&self, ctx: WorkerQueryContext) -> DfResult<SessionState> {
        let options = options_from_headers(&ctx.headers)?;
        let mut builder = ctx
            .builder
            .with_distributed_user_codec(WarpCodec)
            .with_distributed_worker_plan_rewrite_handler(rewrite_stage);
        let config = builder.config().get_or_insert_default();
        config.options_mut().extensions.insert(options);
        config.set_extension(Arc::new(self.config.clone()));
        Ok(builder.build())
    }
}

/// How the engine names a propagated setting in a stage request's headers:
/// this prefix, the extension's prefix and a dot, then the key as the
/// extension lists it (`warpread.read_ahead`, so
/// `...-config-warpread.warpread.read_ahead`).
const CONFIG_HEADER: &str = "x-datafusion-distributed-config-warpread.";

/// The coordinator's `warpread.*` settings, from a stage request's
/// headers. (The engine's own reader of them strips every leading
/// `warpread.` and then finds no key: [`WarpreadOptions`] lists its keys
/// with the prefix, as `SHOW` needs.) A malformed value is an error naming
/// the key.
fn options_from_headers(headers: &http::HeaderMap) -> DfResult<WarpreadOptions> {
    let mut options = WarpreadOptions::default();
    for (name, value) in headers {
        let Some(key) = name.as_str().strip_prefix(CONFIG_HEADER) else {
            continue;
        };
        let value = value.to_str().map_err(|e| {
            datafusion::error::DataFusionError::Configuration(format!(
                "setting {key} sent to the worker: {e}"
            ))
        })?;
        options.set(key, value)?;
    }
    Ok(options)
}

/// The warpread rules a worker applies to each stage it is given, in the
/// order a single-process session applies them: aggregates on the
/// backend, early reads, `LIKE` by pieces. Each reads its switches from
/// the stage's settings and its scans' own.
pub fn worker_rules() -> Vec<Arc<dyn PhysicalOptimizerRule + Send + Sync>> {
    vec![
        Arc::new(ScanAggregate),
        Arc::new(StartScansEarly),
        Arc::new(FastLike),
    ]
}

/// [`worker_rules`] over `plan`; kept only if the stage still hands on as
/// many partitions as the coordinator planned to read from it (an
/// aggregate on the backend may read its scan in other partitions).
fn apply_rules(
    plan: Arc<dyn ExecutionPlan>,
    options: &ConfigOptions,
) -> DfResult<Arc<dyn ExecutionPlan>> {
    let mut rewritten = Arc::clone(&plan);
    for rule in worker_rules() {
        rewritten = rule.optimize(rewritten, options)?;
    }
    let (before, after) = (
        plan.output_partitioning().partition_count(),
        rewritten.output_partitioning().partition_count(),
    );
    if before != after {
        tracing::debug!(
            "worker: warpread rules changed the stage's partitions ({before} -> {after}); \
             the stage runs as planned"
        );
        return Ok(plan);
    }
    Ok(rewritten)
}

fn rewrite_stage(ev: WorkerPlanRewriteEvent<'_>) -> DfResult<WorkerPlanRewriteEventResponse> {
    let plan = apply_rules(ev.plan, ev.session_config.options())?;
    Ok(WorkerPlanRewriteEventResponse::new(plan))
}

/// Runs a worker on `listener` until the server fails: every stage it is
/// sent runs in a [`WorkerSessions`] session around `config`.
pub async fn serve(listener: TcpListener, config: WarpreadConfig) -> Result<()> {
    let addr = listener
        .local_addr()
        .map_or_else(|_| "?".to_string(), |a| a.to_string());
    let worker = Worker::from_session_builder(WorkerSessions::new(config));
    tonic::transport::Server::builder()
        .add_service(worker.into_worker_server())
        .serve_with_incoming(TcpListenerStream::new(listener))
        .await
        .map_err(|source| Error::Serve { addr, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    http::HeaderValue::from_str(v).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn settings_come_from_the_engines_headers() {
        let o = options_from_headers(&headers(&[
            (
                "x-datafusion-distributed-config-warpread.warpread.fast_like",
                "false",
            ),
            (
                "x-datafusion-distributed-config-warpread.warpread.group_mib",
                "64",
            ),
            (
                "x-datafusion-distributed-config-distributed.compression",
                "lz4",
            ),
            ("authorization", "secret"),
        ]))
        .unwrap();
        assert!(!o.fast_like);
        assert_eq!(o.group_mib, Some(64));
        let e = options_from_headers(&headers(&[(
            "x-datafusion-distributed-config-warpread.warpread.read_ahead",
            "none",
        )]))
        .unwrap_err();
        assert!(e.to_string().contains("warpread.read_ahead"), "{e}");
    }

    #[test]
    fn the_coordinator_lists_keys_as_the_worker_reads_them() {
        // What the coordinator sends: the engine's prefix, the extension's
        // prefix, then each entry's key.
        let mut sent = WarpreadOptions::default();
        sent.set("join_key_sets", "false").unwrap();
        sent.set("read_ahead", "7").unwrap();
        let pairs: Vec<(String, String)> = sent
            .entries()
            .into_iter()
            .filter_map(|e| {
                Some((
                    format!("x-datafusion-distributed-config-warpread.{}", e.key),
                    e.value?,
                ))
            })
            .collect();
        let refs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(options_from_headers(&headers(&refs)).unwrap(), sent);
    }
}
