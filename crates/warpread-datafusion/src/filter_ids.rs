//! Which pushed filters are dynamic (updated by their operator while the
//! query runs) and the ids that tie a copy of such a filter to the operator
//! that produced it. This module imports no other module of the crate.

use std::sync::Arc;

use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::DynamicFilterPhysicalExpr;

/// Whether `expr` holds a filter that operators update while the query
/// runs (and so is worth applying row by row in the scan).
pub fn is_dynamic(expr: &Arc<dyn PhysicalExpr>) -> bool {
    !dynamic_ids(expr).is_empty()
}

/// The ids of the dynamic filters inside `expr` (a filter keeps its id
/// through copies, so the operator that produced it is found by it).
pub fn dynamic_ids(expr: &Arc<dyn PhysicalExpr>) -> Vec<u64> {
    let mut ids = Vec::new();
    let _ = expr.apply(|e| {
        if let Some(d) = e.as_ref().downcast_ref::<DynamicFilterPhysicalExpr>() {
            ids.extend(d.expression_id());
        }
        Ok(TreeNodeRecursion::Continue)
    });
    ids
}
