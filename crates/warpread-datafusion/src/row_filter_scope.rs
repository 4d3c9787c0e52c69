//! Which pushed filters a scan may apply to its rows. Dropping the rows that
//! fail a filter is only right where every operator between the filter's
//! source and the scan keeps or drops each row on its own merits; an
//! operator that stops after some rows (`LIMIT`, a `fetch`) or skips some
//! (`OFFSET`) would then count, and pass on, other rows. DataFusion 55 still
//! pushes filters through a `FilterExec` or `CoalescePartitionsExec` that
//! has a fetch, so a join above
//! `... ORDER BY k LIMIT n` would, with its filter applied in the scan,
//! join the first `n` rows that match instead of the first `n` rows (its
//! own Parquet reader gives the same wrong answer with `pushdown_filters`
//! on). [`RowFiltersWithinLimits`] takes those filters back out of the
//! scans: dynamic filters produced above such an operator, and every
//! static one where such an operator sits anywhere above the scan (their
//! source is not recorded). A scan with a limit of its own applies none
//! (`WarpSource::create_file_opener`).

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::config::ConfigOptions;
use datafusion::error::Result as DfResult;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::limit::GlobalLimitExec;

use super::filter_ids::dynamic_ids;
use super::source::WarpSource;

/// The physical optimizer rule that keeps row filters of warpread scans
/// within the operators that count rows (see the module docs). It must run
/// after DataFusion's filter pushdown, as rules added to a session do.
#[derive(Debug, Default)]
pub struct RowFiltersWithinLimits;

/// Whether `node` passes on rows by their position (a limit or an offset).
fn counts_rows(node: &dyn ExecutionPlan) -> bool {
    node.fetch().is_some()
        || node
            .downcast_ref::<GlobalLimitExec>()
            .is_some_and(|l| l.skip() > 0)
}

/// Where a walk down the plan stands: the dynamic filters produced above
/// the nearest operator that counts rows, whether there is one, and the
/// dynamic filters produced since.
#[derive(Clone, Default)]
struct Scope {
    blocked: HashSet<u64>,
    under_limit: bool,
    produced: Vec<u64>,
}

fn within(node: Arc<dyn ExecutionPlan>, scope: &Scope) -> DfResult<Arc<dyn ExecutionPlan>> {
    let mut scope = scope.clone();
    if counts_rows(node.as_ref()) {
        scope.blocked.extend(scope.produced.drain(..));
        scope.under_limit = true;
    }
    // A scan with a limit of its own applies no row filter at all (its
    // opener checks), so only the operators above it matter here.
    if let Some((config, warp)) = WarpSource::of(node.as_ref()) {
        let narrowed = warp.without_row_filters(
            |f| dynamic_ids(f).iter().any(|id| scope.blocked.contains(id)),
            scope.under_limit,
        );
        return Ok(match narrowed {
            Some(source) => source.scan(config),
            None => node,
        });
    }
    for e in node.dynamic_expressions_produced() {
        scope.produced.extend(dynamic_ids(&e));
    }
    let children: Vec<_> = node.children().into_iter().cloned().collect();
    let mut changed = false;
    let mut new_children = Vec::with_capacity(children.len());
    for c in children {
        let n = within(Arc::clone(&c), &scope)?;
        changed |= !Arc::ptr_eq(&n, &c);
        new_children.push(n);
    }
    if changed {
        node.replace_children(
            new_children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    } else {
        Ok(node)
    }
}

impl PhysicalOptimizerRule for RowFiltersWithinLimits {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _options: &ConfigOptions,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        within(plan, &Scope::default())
    }

    fn name(&self) -> &str {
        "warpread_row_filters_within_limits"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
