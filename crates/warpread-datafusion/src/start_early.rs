//! Scans that start reading when the plan starts (see `prefetch`, whose
//! started reads they hold).
//!
//! The physical optimizer rule [`StartScansEarly`] picks the scans that do
//! so: those on a device backend whose files no other scan of the plan
//! reads. A table a query reads twice or three times (lineitem in TPC-H
//! Q17, Q18, Q21) is first read for a large aggregate or semi join on the
//! host, and starting every read of it at once would hold all their
//! decoded groups together. At scale 10 on the H100 host, starting scans
//! early took the 22 queries from 12.96 to 12.04 s (DataFusion 17.0 s);
//! starting every scan early gave 12.15 s, within noise of the rule
//! (benchmarks/tpch.md).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::config::ConfigOptions;
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::error::Result as DfResult;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;

use super::options::Prefetch;
use super::source::WarpSource;

/// The physical optimizer rule that lets scans start reading when
/// executed (see the module docs).
#[derive(Debug, Default)]
pub struct StartScansEarly;

/// The files of a warpread scan, if `node` is one.
fn scan_files(
    node: &Arc<dyn ExecutionPlan>,
) -> Option<(&FileScanConfig, &WarpSource, Vec<String>)> {
    let (config, warp) = WarpSource::of(node.as_ref())?;
    let files = config
        .file_groups
        .iter()
        .flat_map(|g| g.files())
        .map(|f| f.object_meta.location.to_string())
        .collect();
    Some((config, warp, files))
}

impl PhysicalOptimizerRule for StartScansEarly {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _options: &ConfigOptions,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        // How many scans of the plan read each file.
        let mut readers: HashMap<String, usize> = HashMap::new();
        plan.apply(|node| {
            if let Some((_, _, files)) = scan_files(node) {
                let distinct: HashSet<_> = files.into_iter().collect();
                for f in distinct {
                    *readers.entry(f).or_default() += 1;
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        plan.transform_up(|node| {
            let Some((config, warp, files)) = scan_files(&node) else {
                return Ok(Transformed::no(node));
            };
            // Each scan's `warpread.prefetch` (its table's, else the
            // session's) says which it is.
            let start = match warp.options().prefetch {
                Prefetch::Off => false,
                Prefetch::All => true,
                Prefetch::Alone => files.iter().all(|f| readers.get(f) == Some(&1)),
            };
            let early = warp.clone().with_start_early(true);
            if !start
                || !early.starts_early(config.limit)
                || warp.backend().scan_partitions().is_none()
            {
                return Ok(Transformed::no(node));
            }
            Ok(Transformed::yes(early.scan(config)))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "warpread_start_scans_early"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
