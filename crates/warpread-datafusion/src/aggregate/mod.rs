//! Aggregates on the backend: a physical optimizer rule that replaces a
//! partial `AggregateExec` over filters and projections of a warpread scan
//! with a [`ScanAggregateExec`] running the same work as one
//! [`AggProgram`](crate::query::AggProgram) on the scan's backend (on a
//! CUDA device, over the columns the decode stages left there). The final
//! aggregate above stays DataFusion's and merges the states unchanged.
//! Plans the program cannot express keep DataFusion's operators;
//! `warpread.device_aggregates = false` keeps them always, and
//! `warpread.cpu_aggregates = true` runs the programs on a CPU backend too
//! (each scan's values: its table's, else the session's).

mod compile;
mod exec;

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::config::ConfigOptions;
use datafusion::datasource::physical_plan::{
    FileGroupPartitioner, FileScanConfig, FileScanConfigBuilder,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::Result as DfResult;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};

pub use exec::ScanAggregateExec;

use super::source::WarpSource;

/// Rows per scan batch under a [`ScanAggregateExec`] (its scan runs with
/// this batch size): a row group or read unit stays one batch, so each is
/// one launch over its decoded columns rather than many small ones.
const SCAN_BATCH_ROWS: usize = 1 << 24;

/// The rule (see the module docs).
#[derive(Debug, Default)]
pub struct ScanAggregate;

impl PhysicalOptimizerRule for ScanAggregate {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        options: &ConfigOptions,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            Ok(match rewrite(&node, options) {
                Some(new) => Transformed::yes(new),
                None => Transformed::no(node),
            })
        })
        .data()
    }

    fn name(&self) -> &str {
        "warpread_scan_aggregate"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// The replacement of `node` when it is a partial aggregate the rule takes.
fn rewrite(
    node: &Arc<dyn ExecutionPlan>,
    options: &ConfigOptions,
) -> Option<Arc<dyn ExecutionPlan>> {
    let agg = node.downcast_ref::<AggregateExec>()?;
    if *agg.mode() != AggregateMode::Partial || agg.limit_options().is_some() {
        return None;
    }
    let (levels, scan) = compile::chain(agg)?;
    let (config, warp) = WarpSource::of(scan.as_ref())?;
    let backend = warp.backend();
    let settings = warp.options();
    if !settings.device_aggregates
        || config.limit.is_some()
        || !(settings.cpu_aggregates || backend.aggregates_on_device())
    {
        return None;
    }
    let program = match compile::program(agg, &levels, &scan) {
        Ok(p) => p,
        Err(why) => {
            tracing::debug!("aggregate stays DataFusion's: {why}");
            return None;
        }
    };
    if backend.aggregates_on_device() && on_device_keys_too_wide(&program, &scan, config, warp) {
        tracing::debug!("aggregate stays DataFusion's: group keys wider than the device's table");
        return None;
    }
    let on_device = backend.aggregates_on_device();
    let config = &if on_device {
        // As many partitions per device as one device would read with.
        let devices = warp.devices().len().max(1);
        spread(
            config,
            settings.aggregate_scan_partitions.saturating_mul(devices),
            options,
        )
    } else {
        config.clone()
    };
    let fallback = Fallback {
        agg: Arc::clone(node),
        levels: levels.clone(),
        scan: config.clone(),
    };
    // Checked once here: a plan that does not rebuild stays DataFusion's.
    if let Err(e) = fallback.plan(0) {
        tracing::debug!("aggregate stays DataFusion's: {e}");
        return None;
    }
    // Its own scan (the fallback keeps DataFusion's), probing each file's
    // first unit alone: a partition the device cannot aggregate restarts
    // after one unit's read. Its values stay on the device when the device
    // aggregates them (a batch the device refuses restarts the partition
    // on the fallback, whose scan reads everything to the host).
    let probing = warp
        .clone()
        .with_probe_first(on_device)
        .with_device_values(on_device);
    let scan = probing.scan(config);
    Some(Arc::new(
        ScanAggregateExec::new(scan, program, backend, Arc::new(fallback))
            .with_devices(warp.devices()),
    ))
}

/// `config` with its files spread over `partitions` groups
/// (`warpread.aggregate_scan_partitions`) by byte ranges, at most the
/// session's target partitions, as DataFusion splits scans; unchanged when
/// it already has as many. A plain scan on a device backend reads 4
/// ([`crate::exec::Backend::scan_partitions`]); with nothing above the
/// scan but the program, more partitions overlap more reads with the
/// per-batch launches. TPC-H SF 10 on the H100, median of 5: Q1 0.263 ->
/// 0.209 s, Q6 0.173 -> 0.126 s with 8 (benchmarks/tpch.md); plain scans at 8
/// lost as much in other queries as they won.
fn spread(config: &FileScanConfig, partitions: usize, options: &ConfigOptions) -> FileScanConfig {
    let target = partitions.min(options.execution.target_partitions);
    if target <= config.file_groups.len() || config.file_compression_type.is_compressed() {
        return config.clone();
    }
    let groups = FileGroupPartitioner::new()
        .with_target_partitions(target)
        .with_repartition_file_min_size(options.optimizer.repartition_file_min_size)
        .with_preserve_order_within_groups(!config.output_ordering.is_empty())
        .repartition_file_groups(&config.file_groups);
    let mut out = config.clone();
    if let Some(groups) = groups {
        out.file_groups = groups;
    }
    out
}

/// Whether an integer group key of `program` spans more values than the
/// device's group table holds in every unit of the scan's first file (by
/// its statistics): the device would refuse every batch, and each
/// partition would restart on DataFusion's plan after its probe (TPC-H
/// Q18, grouped by order key: 2.45 s against 1.78 s without the rule).
fn on_device_keys_too_wide(
    program: &crate::query::AggProgram,
    scan: &Arc<dyn ExecutionPlan>,
    config: &FileScanConfig,
    warp: &WarpSource,
) -> bool {
    let schema = scan.schema();
    let int_keys: Vec<&str> = program
        .keys
        .iter()
        .map(|&k| program.inputs[k])
        .filter(|i| matches!(i.load, crate::query::Load::Int { .. }))
        .filter_map(|i| schema.fields().get(i.column).map(|f| f.name().as_str()))
        .collect();
    // Only integer keys have a hint: no footer read for the others.
    if int_keys.is_empty() {
        return false;
    }
    let Some(file) = config.file_groups.iter().flat_map(|g| g.files()).next() else {
        return false;
    };
    let Ok(path) = datafusion::object_store::local::LocalFileSystem::new()
        .path_to_filesystem(&file.object_meta.location)
    else {
        return false;
    };
    let Ok(opened) = warp
        .files()
        .open(warp.format().as_ref(), &path, &file.object_meta)
    else {
        return false;
    };
    int_keys.iter().any(|name| {
        opened
            .narrowest_key_range(name)
            .is_some_and(|n| n > crate::query::cuda_source::GROUPS as u64)
    })
}

fn recompute() -> ReplaceChildrenOptions {
    ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute)
}

/// The partial aggregate as DataFusion planned it, for a partition whose
/// data the device cannot aggregate: rebuilt over that partition's files
/// alone (its file group), with every operator DataFusion put between, so
/// a round-robin repartitioning still spreads the partition's batches over
/// as many aggregating partitions as DataFusion asked for.
#[derive(Debug)]
pub struct Fallback {
    agg: Arc<dyn ExecutionPlan>,
    levels: Vec<Arc<dyn ExecutionPlan>>,
    scan: FileScanConfig,
}

impl Fallback {
    /// The plan for scan partition `partition` (all of its output
    /// partitions together are that partition's partial aggregate).
    pub fn plan(&self, partition: usize) -> DfResult<Arc<dyn ExecutionPlan>> {
        let group = self
            .scan
            .file_groups
            .get(partition)
            .cloned()
            .ok_or_else(|| {
                datafusion::error::DataFusionError::Internal(format!(
                    "no file group {partition} to restart"
                ))
            })?;
        let config = FileScanConfigBuilder::from(self.scan.clone())
            .with_file_groups(vec![group])
            .build();
        let mut node: Arc<dyn ExecutionPlan> = DataSourceExec::from_data_source(config);
        for level in self.levels.iter().rev() {
            node = Arc::clone(level).replace_children(vec![node], recompute())?;
        }
        Arc::clone(&self.agg).replace_children(vec![node], recompute())
    }
}
