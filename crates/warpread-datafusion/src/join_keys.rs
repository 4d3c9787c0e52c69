//! A hash join's build keys as an exact bit set, for the dynamic filter a
//! warpread scan applies to the join's probe side.
//!
//! DataFusion publishes a join's filter as `bounds AND hash_lookup`: the
//! probe key is hashed and looked up in the join's hash table (or, for a
//! partitioned join, routed by `hash % partitions` to one partition's
//! table). On TPC-H SF 10 on the H100 host that lookup was the scans' main
//! host cost: 1.1 to 3.3 s of thread time per `lineitem` scan (60 M rows,
//! about 20 to 55 ns a row; benchmarks/tpch.md), on the few threads
//! that hand a device scan's batches on. Join keys are mostly integers in a
//! dense range (order, part, supplier and customer keys), so the build keys
//! fit a bit set over `min..=max`, and a probe row costs a subtraction, a
//! compare and one bit test.
//!
//! [`JoinKeySets`] (a physical optimizer rule) puts a [`BuildKeysExec`]
//! over the build side of each hash join on one integer key whose dynamic
//! filter a warpread scan applies. It records the key values of every
//! build batch as they pass; once every build partition has ended (before
//! the join can publish its filter), the scan's row filter tests the probe
//! key against the set instead of evaluating DataFusion's expression
//! ([`super::dynamic_filter`]). A key is in the set exactly when it is in
//! some partition's table, which for a partitioned join is the table its
//! routing picks (both sides are routed by the same hash of the key), so
//! the set keeps the rows DataFusion's filter keeps, without its hash
//! collisions. Where the set cannot be built (a key range too wide for its
//! key count, a build partition that did not run to its end), DataFusion's
//! expression is applied as before.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use datafusion::common::NullEquality;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode, TreeNodeRecursion};
use datafusion::config::ConfigOptions;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::joins::HashJoinExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
    SendableRecordBatchStream,
};
use futures::StreamExt;

use super::filter_ids::dynamic_ids;
use super::key_set::{BuildKeys, KeySlot, MAX_PARTS, supported};
use super::source::WarpSource;

/// Passes a join's build side through, recording its keys.
pub struct BuildKeysExec {
    input: Arc<dyn ExecutionPlan>,
    /// The parts of the join's build key, over `input`'s schema.
    key: Vec<Arc<dyn PhysicalExpr>>,
    /// Where this recorder's keys go.
    keys: Arc<BuildKeys>,
    /// Where the probe scans find the keys.
    slot: Arc<KeySlot>,
}

impl fmt::Debug for BuildKeysExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuildKeysExec")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl BuildKeysExec {
    /// Records `key` of `input`'s batches into the keys `slot` holds.
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        key: Vec<Arc<dyn PhysicalExpr>>,
        slot: Arc<KeySlot>,
    ) -> Self {
        let keys = slot.keys();
        Self {
            input,
            key,
            keys,
            slot,
        }
    }
}

impl BuildKeysExec {
    fn shown_key(&self) -> String {
        let parts: Vec<String> = self.key.iter().map(|k| k.to_string()).collect();
        parts.join(", ")
    }
}

impl DisplayAs for BuildKeysExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match t {
            DisplayFormatType::TreeRender => writeln!(f, "key={}", self.shown_key()),
            _ => write!(f, "BuildKeysExec: key={}", self.shown_key()),
        }
    }
}

impl ExecutionPlan for BuildKeysExec {
    fn name(&self) -> &str {
        "BuildKeysExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        for k in &self.key {
            if f(k)? == TreeNodeRecursion::Stop {
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let [input] = <[_; 1]>::try_from(children)
            .map_err(|_| DataFusionError::Internal("BuildKeysExec has one input".into()))?;
        // Another partitioning would leave the scans' keys waiting for
        // partitions that never come: such a copy records into keys of its
        // own, which no scan finds (they fall back to DataFusion's filter).
        let mut copy = Self {
            input,
            key: self.key.clone(),
            keys: Arc::clone(&self.keys),
            slot: Arc::clone(&self.slot),
        };
        if copy.input.output_partitioning().partition_count() != self.keys.partitions() {
            copy.keys = Arc::new(BuildKeys::new(0));
            copy.slot = Arc::new(KeySlot::new(Arc::clone(&copy.keys)));
        }
        Ok(Arc::new(copy))
    }

    fn reset_state(self: Arc<Self>) -> DfResult<Arc<dyn ExecutionPlan>> {
        // A plan run again (a recursive query's term) gets a join whose
        // filter is built anew; these keys must not wait for partitions
        // that already ended.
        // The scans sharing the slot find the new keys when they next open
        // a file.
        let keys = Arc::new(BuildKeys::new(self.keys.partitions()));
        self.slot.replace(Arc::clone(&keys));
        Ok(Arc::new(Self {
            input: Arc::clone(&self.input),
            key: self.key.clone(),
            keys,
            slot: Arc::clone(&self.slot),
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let schema = input.schema();
        let (keys, key) = (Arc::clone(&self.keys), self.key.clone());
        let end = Arc::clone(&self.keys);
        let stream = input
            .map(move |batch| {
                match &batch {
                    Ok(b) => keys.record(
                        key.iter()
                            .map(|k| k.evaluate(b).and_then(|v| v.into_array(b.num_rows())))
                            .collect(),
                    ),
                    // Rows may be missing: the set would drop their keys.
                    Err(_) => keys.spoil(),
                }
                batch
            })
            // Reached once the input has ended.
            .chain(
                futures::stream::once(async move {
                    end.finish(partition);
                })
                .filter_map(|()| async { None }),
            );
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }
}

/// The physical optimizer rule (see the module docs). It must run after
/// DataFusion's filter pushdown, which gives joins their dynamic filters,
/// as rules added to a session do.
#[derive(Debug, Default)]
pub struct JoinKeySets;

/// The ids of the dynamic filters the warpread scans of `plan` apply, of
/// the scans whose `warpread.join_key_sets` is on.
fn scan_filter_ids(plan: &Arc<dyn ExecutionPlan>) -> HashSet<u64> {
    let mut ids = HashSet::new();
    let _ = plan.apply(|node| {
        if let Some((config, source)) = WarpSource::of(node.as_ref())
            && source.options().join_key_sets
        {
            for f in source.row_filtered_dynamic(config.limit) {
                ids.extend(dynamic_ids(f));
            }
        }
        Ok(TreeNodeRecursion::Continue)
    });
    ids
}

/// `plan` with each warpread scan that applies a dynamic filter of
/// `slots` given the slot where that filter's join hands its keys.
fn hand_to_scans(
    plan: Arc<dyn ExecutionPlan>,
    slots: &HashMap<u64, Arc<KeySlot>>,
) -> DfResult<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        let Some((config, source)) = WarpSource::of(node.as_ref()) else {
            return Ok(Transformed::no(node));
        };
        if !source.options().join_key_sets {
            return Ok(Transformed::no(node));
        }
        let mine: Vec<(u64, Arc<KeySlot>)> = source
            .row_filtered_dynamic(config.limit)
            .iter()
            .flat_map(dynamic_ids)
            .filter_map(|id| Some((id, Arc::clone(slots.get(&id)?))))
            .collect();
        if mine.is_empty() {
            return Ok(Transformed::no(node));
        }
        Ok(Transformed::yes(
            source.clone().with_key_slots(mine).scan(config),
        ))
    })
    .data()
}

impl PhysicalOptimizerRule for JoinKeySets {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _options: &ConfigOptions,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        // Each scan says whether it takes key sets (`warpread.join_key_sets`,
        // the session's value unless its table set its own).
        let ids = scan_filter_ids(&plan);
        if ids.is_empty() {
            return Ok(plan);
        }
        let mut slots = HashMap::new();
        let plan = plan
            .transform_up(|node| {
                let Some(join) = node.downcast_ref::<HashJoinExec>() else {
                    return Ok(Transformed::no(node));
                };
                // A hash join produces one dynamic filter, its own.
                let produced = join.dynamic_expressions_produced();
                let [filter] = &produced[..] else {
                    return Ok(Transformed::no(node));
                };
                let Some(id) = filter.expression_id() else {
                    return Ok(Transformed::no(node));
                };
                let (left_schema, right_schema) = (join.left().schema(), join.right().schema());
                let mut same_types = true;
                for (build, probe) in join.on() {
                    let t = build.data_type(&left_schema)?;
                    same_types &= supported(&t) && probe.data_type(&right_schema)? == t;
                }
                // Null keys match nothing: the set leaves them out.
                // A null-aware anti join (`NOT IN`) keeps probe rows with a
                // null key (DataFusion's filter says `key IS NULL OR ...`).
                if !ids.contains(&id)
                    || join.null_aware
                    || !same_types
                    || !(1..=MAX_PARTS).contains(&join.on().len())
                    || join.null_equality() != NullEquality::NullEqualsNothing
                    || join.left().downcast_ref::<BuildKeysExec>().is_some()
                {
                    return Ok(Transformed::no(node));
                }
                let partitions = join.left().output_partitioning().partition_count();
                let slot = Arc::new(KeySlot::new(Arc::new(BuildKeys::new(partitions))));
                slots.insert(id, Arc::clone(&slot));
                let build = join.on().iter().map(|(b, _)| Arc::clone(b)).collect();
                let left = Arc::new(BuildKeysExec::new(Arc::clone(join.left()), build, slot));
                let right = Arc::clone(join.right());
                let options = ReplaceChildrenOptions::new(ChildrenPropertiesMode::Keep);
                Ok(Transformed::yes(
                    node.replace_children(vec![left, right], options)?,
                ))
            })
            .data()?;
        if slots.is_empty() {
            return Ok(plan);
        }
        hand_to_scans(plan, &slots)
    }

    fn name(&self) -> &str {
        "warpread_join_key_sets"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
