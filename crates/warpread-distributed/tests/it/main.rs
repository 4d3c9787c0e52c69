//! warpread scans through datafusion-distributed: the codec round trip,
//! and queries on two workers served in this process over the loopback.

mod codec;
mod workers;

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::prelude::SessionContext;
use warpread::exec::CpuBackend;
use warpread_datafusion::{SessionContextExt, WarpReadOptions, WarpreadConfig};

/// A fixture of the repository's `testdata/`.
pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

/// The CPU backend, as a session's config.
pub fn cpu_config() -> WarpreadConfig {
    WarpreadConfig::with_backend(Arc::new(CpuBackend::new()))
}

/// Registers the Parquet fixture with four row groups as `t` and the ORC
/// TPC-H-like fixture as `o`.
pub async fn register_fixtures(ctx: &SessionContext) {
    let parquet = fixture("parquet/page_index_gzip_v1.parquet");
    ctx.register_warpread_parquet("t", parquet.to_str().unwrap(), WarpReadOptions::default())
        .await
        .unwrap();
}

/// The physical plan of `sql` in `ctx`, and its indented text.
pub async fn plan_of(
    ctx: &SessionContext,
    sql: &str,
) -> (Arc<dyn datafusion::physical_plan::ExecutionPlan>, String) {
    let plan = ctx
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let text = datafusion::physical_plan::displayable(plan.as_ref())
        .indent(true)
        .to_string();
    (plan, text)
}

/// Queries over `t` that touch filters, aggregates, joins, sorts and
/// limits.
pub const QUERIES: &[&str] = &[
    "SELECT count(*), sum(score), min(name), max(k32) FROM t",
    "SELECT color, count(*), sum(score), min(day) FROM t WHERE rnd > 10 GROUP BY color ORDER BY color",
    "SELECT a.id, a.name, b.score FROM t a JOIN t b ON a.id = b.id WHERE a.k32 < 100 ORDER BY a.id",
    "SELECT id, name FROM t WHERE name LIKE '%0%7%' ORDER BY id LIMIT 7",
    "SELECT sparse, count(*) FROM t WHERE sparse IS NOT NULL GROUP BY sparse ORDER BY 2 DESC, 1 LIMIT 5",
];
