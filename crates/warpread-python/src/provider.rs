//! `TableProvider`: a warpread table exported to DataFusion in Python
//! (the `datafusion` package 55) through `datafusion-ffi`'s
//! `FFI_TableProvider`.
//!
//! The table lives in a private warpread session (its backend, its
//! `warpread.*` settings, the object store of a URL) and is planned there:
//! the host session hands the scan its projection, filters and limit, and
//! runs the plan it gets back. That plan executes with the private
//! session's task context, not the host's: a task context crossing the
//! FFI arrives with a fresh runtime environment (no object stores but the
//! local one) and without warpread's configuration.

use std::fmt;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider as DfTableProvider};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DFSchema, Statistics};
use datafusion::datasource::TableType;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::SessionState;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_optimizer::filter_pushdown::FilterPushdown;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PhysicalExpr, PlanProperties, StatisticsArgs,
    StatisticsContext, displayable,
};
use datafusion::prelude::SessionContext;
use datafusion_ffi::proto::logical_extension_codec::FFI_LogicalExtensionCodec;
use datafusion_ffi::table_provider::FFI_TableProvider;
use futures::StreamExt;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use warpread::Error;
use warpread_datafusion::{
    GsstFormat, OrcFormat, ParquetFormat, SessionContextExt, WarpFormat, WarpReadOptions,
    WarpreadConfig, apply_settings, register_path, session, session_config,
};

use crate::backend::Backend;
use crate::errors::IntoPy;
use crate::export::NativeSchema;
use warpread_url::Input as Where;

/// Worker threads of a provider's runtime: its async work is listing
/// files and fetching bytes; decoding runs on blocking threads and the
/// backend's own.
const RUNTIME_WORKERS: usize = 2;

/// The name of the table in the private session.
const TABLE: &str = "t";

/// A tokio runtime shut down in the background when the last user lets
/// go of it: a plan may be dropped on one of the host's async threads,
/// where dropping a runtime in place would panic.
struct OwnedRuntime(Option<tokio::runtime::Runtime>);

impl OwnedRuntime {
    fn handle(&self) -> tokio::runtime::Handle {
        self.0.as_ref().expect("set until dropped").handle().clone()
    }
}

impl Drop for OwnedRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// The warpread table seen by the host session: scans are planned and run
/// in the private session.
struct Bound {
    inner: Arc<dyn DfTableProvider>,
    ctx: SessionContext,
    runtime: Arc<OwnedRuntime>,
}

impl fmt::Debug for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bound")
            .field("inner", &self.inner)
            .field("session", &self.ctx.session_id())
            .finish()
    }
}

impl fmt::Debug for OwnedRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OwnedRuntime")
    }
}

#[async_trait]
impl DfTableProvider for Bound {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        self.inner.table_type()
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }

    async fn scan(
        &self,
        _host: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        // The host polls this future on its own runtime, a tokio of
        // another library: planning (which lists files and opens footers
        // on blocking threads) runs on the provider's runtime instead.
        let inner = self.inner.clone();
        let state = self.ctx.state();
        let (projection, filters) = (projection.cloned(), filters.to_vec());
        let plan = self
            .runtime
            .handle()
            .spawn(async move {
                let plan = inner
                    .scan(&state, projection.as_ref(), &filters, limit)
                    .await?;
                push_filters(&state, plan, &filters)
            })
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))??;
        Ok(Arc::new(BoundExec::new(
            plan,
            self.ctx.task_ctx(),
            self.runtime.clone(),
        )))
    }

    fn statistics(&self) -> Option<Statistics> {
        self.inner.statistics()
    }
}

/// `plan` with `filters` pushed into its scan. A session pushes a query's
/// filters into a file scan while it optimizes the physical plan, but the
/// host optimizes a plan it cannot see into: the filters are pushed here,
/// as the private session's optimizer would (the scan prunes with them
/// and drops the rows failing them; a filter it takes inexactly is kept
/// above it). A filter naming a column the scan does not hand out stays
/// with the host alone.
fn push_filters(
    state: &SessionState,
    plan: Arc<dyn ExecutionPlan>,
    filters: &[Expr],
) -> DfResult<Arc<dyn ExecutionPlan>> {
    let schema = DFSchema::try_from(plan.schema().as_ref().clone())?;
    let usable = filters
        .iter()
        .filter(|f| f.column_refs().iter().all(|c| schema.has_column(c)))
        .cloned();
    let Some(expr) = conjunction(usable) else {
        return Ok(plan);
    };
    let predicate = state.create_physical_expr(expr, &schema)?;
    let filtered = Arc::new(FilterExec::try_new(predicate, plan)?);
    FilterPushdown::new().optimize(filtered, state.config_options())
}

/// A scan of the private session, executed with its task context.
#[derive(Debug)]
struct BoundExec {
    inner: Arc<dyn ExecutionPlan>,
    task: Arc<TaskContext>,
    runtime: Arc<OwnedRuntime>,
    /// The name the host shows: across the FFI a plan is displayed by its
    /// name alone, so the name carries the hidden subtree, one node after
    /// its input (files, projection, limit, predicates), for the host's
    /// `EXPLAIN`.
    label: String,
}

impl BoundExec {
    fn new(
        inner: Arc<dyn ExecutionPlan>,
        task: Arc<TaskContext>,
        runtime: Arc<OwnedRuntime>,
    ) -> Self {
        let tree = displayable(inner.as_ref()).indent(false).to_string();
        let nodes: Vec<&str> = tree.lines().map(str::trim).collect();
        let label = format!("WarpreadTableExec: {}", nodes.join(" <- "));
        Self {
            inner,
            task,
            runtime,
            label,
        }
    }

    fn wrap(&self, inner: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
        Arc::new(Self::new(inner, self.task.clone(), self.runtime.clone()))
    }
}

impl DisplayAs for BoundExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WarpreadTableExec: ")?;
        self.inner.fmt_as(t, f)
    }
}

impl ExecutionPlan for BoundExec {
    fn name(&self) -> &str {
        &self.label
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.inner.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal(
                "WarpreadTableExec is a leaf: it takes no children".into(),
            ))
        }
    }

    fn repartitioned(
        &self,
        target_partitions: usize,
        config: &datafusion::config::ConfigOptions,
    ) -> DfResult<Option<Arc<dyn ExecutionPlan>>> {
        Ok(self
            .inner
            .repartitioned(target_partitions, config)?
            .map(|p| self.wrap(p)))
    }

    /// The statistics of the hidden subtree, walked on its own (the host
    /// sees no children to resolve first).
    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> DfResult<Arc<Statistics>> {
        StatisticsContext::new().compute(self.inner.as_ref(), args)
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        self.inner.apply_expressions(f)
    }

    fn execute(
        &self,
        partition: usize,
        _host: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let stream = self.inner.execute(partition, self.task.clone())?;
        let schema = stream.schema();
        // The stream keeps the runtime it reads on alive, whatever the
        // host drops first.
        let keep = self.runtime.clone();
        let stream = stream.inspect(move |_| {
            let _ = &keep;
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }
}

/// The format of `name` (`"parquet"`, `"orc"`, `"gsst"`).
fn format_named(name: &str) -> PyResult<Arc<dyn WarpFormat>> {
    Ok(match name {
        "parquet" => Arc::new(ParquetFormat),
        "orc" => Arc::new(OrcFormat),
        "gsst" => Arc::new(GsstFormat),
        other => {
            return Err(PyValueError::new_err(format!(
                "format {other:?}: expected \"parquet\", \"orc\" or \"gsst\""
            )));
        }
    })
}

/// A table of ORC, Parquet or GSST files read by warpread, for
/// `datafusion.SessionContext.register_table`.
#[pyclass(module = "warpread", frozen)]
pub struct TableProvider {
    bound: Arc<Bound>,
    name: String,
}

/// The `FFI_LogicalExtensionCodec` the host hands over: a session
/// exposing `__datafusion_logical_extension_codec__`, or that codec's
/// capsule itself (how a `datafusion` schema registers a table).
fn host_codec(session: &pyo3::Bound<'_, PyAny>) -> PyResult<FFI_LogicalExtensionCodec> {
    const NAME: &std::ffi::CStr = c"datafusion_logical_extension_codec";
    let capsule = if let Ok(c) = session.cast::<PyCapsule>() {
        c.clone()
    } else if session.hasattr("__datafusion_logical_extension_codec__")? {
        session
            .getattr("__datafusion_logical_extension_codec__")?
            .call0()?
            .cast_into::<PyCapsule>()?
    } else {
        return Err(PyTypeError::new_err(
            "__datafusion_table_provider__ needs the DataFusion session (or its logical \
             extension codec) it is registered in",
        ));
    };
    let ptr = capsule.pointer_checked(Some(NAME))?;
    // SAFETY: the name check above is the capsule protocol's type tag; the
    // codec is cloned out while the capsule is alive.
    Ok(unsafe { ptr.cast::<FFI_LogicalExtensionCodec>().as_ref() }.clone())
}

#[pymethods]
impl TableProvider {
    /// A table over `path_or_url` (a file, a folder of files, a glob, or
    /// their URL) of `format` (`None`: by the extension, or the files in a
    /// local folder), decoded on `backend`, with `options` (`warpread.*`
    /// keys) set for its scans.
    #[new]
    #[pyo3(signature = (path_or_url, backend, format = None, options = None))]
    fn new(
        py: Python<'_>,
        path_or_url: &str,
        backend: &Backend,
        format: Option<&str>,
        options: Option<Vec<(String, String)>>,
    ) -> PyResult<Self> {
        let options = options.unwrap_or_default();
        if let Some((key, _)) = options.iter().find(|(k, _)| !k.starts_with("warpread.")) {
            return Err(PyValueError::new_err(format!(
                "option {key:?}: a table takes warpread.* options (docs/options.md)"
            )));
        }
        let mut config = session_config();
        apply_settings(&mut config, &options).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let format = format.map(format_named).transpose()?;
        let at = Where::parse(path_or_url).py_err()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(RUNTIME_WORKERS)
            .thread_name("warpread-datafusion")
            .enable_all()
            .build()
            .map_err(|e| Error::io("tokio runtime", e))
            .py_err()?;
        let ctx = session(WarpreadConfig::with_backend(backend.inner.clone()), config);
        if let Where::Object(r) = &at {
            ctx.register_object_store(&r.root, r.store.clone());
        }
        let registered = py.detach(|| {
            runtime.block_on(async {
                match &format {
                    Some(f) => ctx
                        .register_warp(TABLE, path_or_url, f.clone(), WarpReadOptions::default())
                        .await
                        .map_err(|e| Error::datafusion(format!("registering {path_or_url}"), e)),
                    None => register_path(&ctx, TABLE, path_or_url).await.map(|_| ()),
                }?;
                ctx.table_provider(TABLE)
                    .await
                    .map_err(|e| Error::datafusion(format!("opening {path_or_url}"), e))
            })
        });
        let inner = registered.py_err()?;
        Ok(Self {
            bound: Arc::new(Bound {
                inner,
                ctx,
                runtime: Arc::new(OwnedRuntime(Some(runtime))),
            }),
            name: at.name(),
        })
    }

    /// The table's Arrow schema.
    #[getter]
    fn schema(&self) -> NativeSchema {
        NativeSchema {
            schema: self.bound.schema(),
        }
    }

    /// The provider as DataFusion's FFI capsule, bound to the host
    /// `session`'s codec (filters cross the boundary serialized with it).
    fn __datafusion_table_provider__<'py>(
        &self,
        py: Python<'py>,
        session: pyo3::Bound<'py, PyAny>,
    ) -> PyResult<pyo3::Bound<'py, PyCapsule>> {
        let codec = host_codec(&session)?;
        let provider = FFI_TableProvider::new_with_ffi_codec(
            self.bound.clone(),
            true,
            Some(self.bound.runtime.handle()),
            codec,
        );
        PyCapsule::new_with_value(py, provider, c"datafusion_table_provider")
    }

    fn __repr__(&self) -> String {
        format!("<warpread.datafusion.TableProvider {}>", self.name)
    }
}
