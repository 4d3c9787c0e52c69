//! `ScanAggregateExec`: a partial aggregate run by the backend over a
//! warpread scan's batches, emitting the partial aggregate's states.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{
    BaselineMetrics, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, Partitioning,
    PlanProperties, SendableRecordBatchStream,
};
use futures::{FutureExt, StreamExt};

use super::Fallback;
use crate::exec::Backend;
use crate::query::{AggProgram, Groups};

/// Most batches handed to the backend together: a read group's row groups
/// (about 36 of TPC-H lineitem's at 256 MiB per group) in one launch.
const READY_BATCHES: usize = 64;

/// Runs an [`AggProgram`] over each partition of a scan on the scan's
/// backend; each partition emits its groups' states once its scan is done.
pub struct ScanAggregateExec {
    input: Arc<dyn ExecutionPlan>,
    program: Arc<AggProgram>,
    backend: Arc<dyn Backend>,
    /// One backend per device, `backend` first, as the scan's partitions
    /// take them (empty: `backend` alone).
    devices: Vec<Arc<dyn Backend>>,
    /// DataFusion's partial aggregate, per scan partition.
    fallback: Arc<Fallback>,
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl fmt::Debug for ScanAggregateExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScanAggregateExec")
            .field("program", &self.program)
            .finish_non_exhaustive()
    }
}

impl ScanAggregateExec {
    /// `program` over `input` (a warpread scan) on `backend`; on a backend
    /// that aggregates on its device, a partition with a batch the device
    /// cannot aggregate (too many groups for a block's table, keys that do
    /// not pack, nulls, decimal overflow) runs `fallback` instead from its
    /// start: DataFusion's partial aggregate over that partition's files.
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        program: AggProgram,
        backend: Arc<dyn Backend>,
        fallback: Arc<Fallback>,
    ) -> Self {
        let partitions = input.output_partitioning().partition_count();
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(program.schema.clone()),
            Partitioning::UnknownPartitioning(partitions),
            EmissionType::Final,
            Boundedness::Bounded,
        ));
        Self {
            input,
            program: Arc::new(program),
            backend,
            devices: Vec::new(),
            fallback,
            properties,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// The same, partition `p` aggregating on `devices[p % devices.len()]`:
    /// the device its scan partition decoded on, where the decoded columns
    /// lie (the scan must take the same list in the same turn).
    pub fn with_devices(mut self, devices: Vec<Arc<dyn Backend>>) -> Self {
        if let Some(first) = devices.first() {
            self.backend = Arc::clone(first);
        }
        self.devices = if devices.len() > 1 {
            devices
        } else {
            Vec::new()
        };
        self
    }

    /// The backend partition `partition` aggregates on.
    fn backend_of(&self, partition: usize) -> Arc<dyn Backend> {
        crate::exec::devices::for_partition(&self.devices, partition)
            .map_or_else(|| Arc::clone(&self.backend), Arc::clone)
    }

    /// The program.
    pub fn program(&self) -> &AggProgram {
        &self.program
    }
}

impl DisplayAs for ScanAggregateExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.program;
        match t {
            DisplayFormatType::TreeRender => writeln!(f, "backend={}", self.backend.name()),
            _ => write!(
                f,
                "ScanAggregateExec: backend={}, keys={}, aggregates={}, filter={}",
                self.backend.name(),
                p.keys.len(),
                p.aggs.len(),
                p.filter.is_some()
            ),
        }
    }
}

/// `context` for this exec's scans: each partition reads only its own
/// files (no work stealing between the partitions of a scan: a partition
/// that restarts on the fallback must find its files again, and no other
/// partition may take them), in batches of `batch_size` rows.
fn scan_context(context: &Arc<TaskContext>, batch_size: usize) -> Arc<TaskContext> {
    let mut config = context.session_config().clone().with_batch_size(batch_size);
    config
        .options_mut()
        .execution
        .enable_file_stream_work_stealing = false;
    Arc::new(TaskContext::new(
        context.task_id(),
        context.session_id(),
        config,
        context.scalar_functions().clone(),
        context.higher_order_functions().clone(),
        context.aggregate_functions().clone(),
        context.window_functions().clone(),
        context.runtime_env(),
    ))
}

/// Keeps the backend retaining decoded outputs while a partition runs.
struct Retain(Arc<dyn Backend>);

impl Retain {
    fn new(b: Arc<dyn Backend>) -> Self {
        b.retain_decoded(true);
        Self(b)
    }
}

impl Drop for Retain {
    fn drop(&mut self) {
        self.0.retain_decoded(false);
    }
}

impl ExecutionPlan for ScanAggregateExec {
    fn name(&self) -> &str {
        "ScanAggregateExec"
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        // The program is not made of DataFusion expressions.
        Ok(TreeNodeRecursion::Continue)
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let [input] = <[_; 1]>::try_from(children)
            .map_err(|_| DataFusionError::Internal("ScanAggregateExec has one input".into()))?;
        // The program and the fallback address the scan's columns.
        if input.schema() != self.input.schema() {
            return Err(DataFusionError::Internal(
                "ScanAggregateExec's scan cannot change its schema".into(),
            ));
        }
        Ok(Arc::new(
            Self::new(
                input,
                (*self.program).clone(),
                Arc::clone(&self.backend),
                Arc::clone(&self.fallback),
            )
            .with_devices(self.devices.clone()),
        ))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let backend = self.backend_of(partition);
        let retain = Retain::new(Arc::clone(&backend));
        // A batch size no read unit reaches: DataFusion's scan splits its
        // source's batches to the session's batch size, and a unit should
        // reach the backend as one batch (one launch over its decoded
        // columns, not one per 8192 rows).
        let mut input = self
            .input
            .execute(partition, scan_context(&context, super::SCAN_BATCH_ROWS))?;
        let program = Arc::clone(&self.program);
        let metrics = BaselineMetrics::new(&self.metrics, partition);
        let restarted =
            MetricBuilder::new(&self.metrics).counter("restarted_partitions", partition);
        let on_device = backend.aggregates_on_device();
        let schema: SchemaRef = program.schema.clone();
        let run = async move {
            let _retain = retain;
            let mut groups = Groups::new(&program);
            let mut first = true;
            let mut ended = false;
            while !ended {
                let Some(batch) = input.next().await else {
                    break;
                };
                let mut batches = vec![batch?];
                // The batches at hand go together (a read group's row
                // groups arrive at once): one device launch for them rather
                // than one each. Not the first: the probe is judged before
                // the stream is polled again, which would start the scan's
                // read-ahead that a refusal wastes.
                while !first && batches.len() < READY_BATCHES {
                    match input.next().now_or_never() {
                        Some(Some(b)) => batches.push(b?),
                        Some(None) => {
                            ended = true;
                            break;
                        }
                        None => break,
                    }
                }
                first = false;
                // On this worker thread, as DataFusion's own operators run:
                // a blocking-pool thread would free the scan's buffers in a
                // heap the reader's next group does not allocate from.
                let timer = metrics.elapsed_compute().timer();
                let part = if on_device {
                    match backend.aggregate_on_device(&program, &batches)? {
                        Some(g) => g,
                        // Nothing emitted yet: DataFusion's plan takes the
                        // partition over from its start (usually after the
                        // probe, one unit's read), rather than the CPU
                        // reference, which is slower than DataFusion's
                        // operators (and on many groups much slower).
                        None => return Ok(None),
                    }
                } else {
                    let mut part = Groups::new(&program);
                    for b in &batches {
                        part.merge(&backend.aggregate(&program, b)?);
                    }
                    part
                };
                drop(batches);
                groups.merge(&part);
                timer.done();
            }
            let out = groups.to_batch(&program)?;
            metrics.record_output(out.num_rows());
            Ok::<_, DataFusionError>(Some(out))
        };
        let fallback = Arc::clone(&self.fallback);
        let out_schema = schema.clone();
        let stream = futures::stream::once(run)
            .map(move |r| -> SendableRecordBatchStream {
                let one = |r: DfResult<_>| {
                    Box::pin(RecordBatchStreamAdapter::new(
                        out_schema.clone(),
                        futures::stream::once(async move { r }),
                    )) as SendableRecordBatchStream
                };
                match r {
                    Ok(Some(batch)) => one(Ok(batch)),
                    Ok(None) => {
                        restarted.add(1);
                        let batch_size = context.session_config().batch_size();
                        let ctx = scan_context(&context, batch_size);
                        // Every output partition of the partition's plan,
                        // side by side.
                        let streams = fallback.plan(partition).and_then(|plan| {
                            (0..plan.output_partitioning().partition_count())
                                .map(|i| plan.execute(i, Arc::clone(&ctx)))
                                .collect::<DfResult<Vec<_>>>()
                        });
                        match streams {
                            Ok(streams) => Box::pin(RecordBatchStreamAdapter::new(
                                out_schema.clone(),
                                futures::stream::select_all(streams),
                            )),
                            Err(e) => one(Err(e)),
                        }
                    }
                    Err(e) => one(Err(e)),
                }
            })
            .flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
}
