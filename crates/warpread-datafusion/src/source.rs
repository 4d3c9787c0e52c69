//! `WarpSource`: DataFusion's `FileSource` for warpread formats. It carries
//! the projection (file columns only: partition columns and expressions are
//! left to DataFusion's `ProjectionOpener`), the pushed filters (used for
//! pruning only, so DataFusion keeps applying them; dynamic ones also drop
//! rows as batches are handed on), the backend, and the scan's `warpread.*`
//! settings and session state (opened files, join key hand-offs), given to
//! it when its plan is created or by the rules that rewrite it.

use std::fmt;
use std::sync::Arc;

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::config::ConfigOptions;
use datafusion::datasource::physical_plan::{
    FileGroupPartitioner, FileOpener, FileScanConfig, FileScanConfigBuilder, FileSource,
};
use datafusion::datasource::projection::{ProjectionOpener, SplitProjection};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::Result as DfResult;
use datafusion::object_store::ObjectStore;
use datafusion::physical_expr::{LexOrdering, PhysicalExpr, conjunction};
use datafusion::physical_plan::filter_pushdown::{FilterPushdownPropagation, PushedDown};
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::projection::ProjectionExprs;
use datafusion::physical_plan::{DisplayFormatType, ExecutionPlan, apply_expression_roots};

use super::config::StatsSink;
use super::file_cache::FileCache;
use super::filter_ids::is_dynamic;
use super::format::WarpFormat;
use super::key_set::KeySlot;
use super::opener::{ScanMetrics, WarpOpener};
use super::options::{Prefetch, WarpreadOptions};
use super::predicate;
use super::prefetch::Prefetches;
use crate::exec::{Backend, CpuBackend};

/// A scan of files of one warpread format.
#[derive(Clone)]
pub struct WarpSource {
    format: Arc<dyn WarpFormat>,
    table_schema: TableSchema,
    projection: SplitProjection,
    filter: Option<Arc<dyn PhysicalExpr>>,
    /// Pushed filters that operators update while the query runs, applied
    /// to the rows read ([`super::dynamic_filter`]).
    dynamic_filters: Vec<Arc<dyn PhysicalExpr>>,
    /// Every other pushed filter, applied to rows only with dynamic ones.
    fixed_filters: Vec<Arc<dyn PhysicalExpr>>,
    batch_size: Option<usize>,
    backend: Option<Arc<dyn Backend>>,
    /// One backend per device, `backend` first, that scan partitions take
    /// in turn (empty: `backend` alone).
    devices: Vec<Arc<dyn Backend>>,
    stats: Option<Arc<StatsSink>>,
    metrics: ExecutionPlanMetricsSet,
    /// Read each file's first unit alone before reading ahead (see
    /// [`WarpSource::with_probe_first`]).
    probe_first: bool,
    /// See [`WarpSource::with_device_values`].
    device_values: bool,
    /// See [`WarpSource::with_start_early`].
    start_early: bool,
    /// Reads started when the scan is executed, shared by its partitions.
    prefetches: Arc<Prefetches>,
    /// The `warpread.*` settings of the scan: its table's over its
    /// session's, as of planning.
    options: WarpreadOptions,
    /// Opened files, shared by the session's scans.
    files: Arc<FileCache>,
    /// Parsed footers of objects in other stores (see `remote`).
    metadata_cache: Option<Arc<datafusion::execution::cache::cache_manager::FileMetadataCache>>,
    /// Where joins hand the scan their build keys (see `join_keys`).
    key_slots: Vec<(u64, Arc<KeySlot>)>,
    /// The session's memory pool, which each partition's reads draw their
    /// stages' host memory from (see [`WarpSource::with_memory_pool`]).
    memory_pool: Option<Arc<dyn datafusion::execution::memory_pool::MemoryPool>>,
}

/// What a [`WarpSource`] carries besides its files and schema, for a copy
/// of the scan in another process (a worker of a distributed engine): the
/// format, the settings and the pushed filters. The session state (backend,
/// opened files, key hand-offs) is the receiving session's
/// ([`WarpSource::from_parts`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ScanParts {
    /// The format's [`WarpFormat::name`]: `orc`, `parquet` or `gsst`.
    pub format: &'static str,
    /// The scan's `warpread.*` settings (its table's over its session's).
    pub options: WarpreadOptions,
    /// The pruning predicate.
    pub filter: Option<Arc<dyn PhysicalExpr>>,
    /// Pushed filters that operators update while the query runs.
    pub dynamic_filters: Vec<Arc<dyn PhysicalExpr>>,
    /// Every other pushed filter.
    pub fixed_filters: Vec<Arc<dyn PhysicalExpr>>,
    /// Rows per batch, where set.
    pub batch_size: Option<usize>,
    /// See [`WarpSource::with_probe_first`].
    pub probe_first: bool,
    /// See [`WarpSource::with_device_values`].
    pub device_values: bool,
}

impl ScanParts {
    /// Parts of a scan of `format` with `options` and nothing pushed.
    pub fn new(format: &'static str, options: WarpreadOptions) -> Self {
        Self {
            format,
            options,
            filter: None,
            dynamic_filters: Vec::new(),
            fixed_filters: Vec::new(),
            batch_size: None,
            probe_first: false,
            device_values: false,
        }
    }
}

impl fmt::Debug for WarpSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WarpSource")
            .field("format", &self.format.name())
            .field("filter", &self.filter)
            .finish_non_exhaustive()
    }
}

impl WarpSource {
    /// A scan of `table_schema` (file columns, then partition columns).
    pub fn new(format: Arc<dyn WarpFormat>, table_schema: TableSchema) -> Self {
        Self {
            format,
            projection: SplitProjection::unprojected(&table_schema),
            table_schema,
            filter: None,
            dynamic_filters: Vec::new(),
            fixed_filters: Vec::new(),
            batch_size: None,
            backend: None,
            devices: Vec::new(),
            stats: None,
            metrics: ExecutionPlanMetricsSet::new(),
            probe_first: false,
            device_values: false,
            start_early: false,
            prefetches: Arc::default(),
            options: WarpreadOptions::default(),
            files: Arc::default(),
            metadata_cache: None,
            memory_pool: None,
            key_slots: Vec::new(),
        }
    }

    /// The parts another process needs to rebuild this scan
    /// ([`Self::from_parts`]).
    pub fn parts(&self) -> ScanParts {
        ScanParts {
            format: self.format.name(),
            options: self.options.clone(),
            filter: self.filter.clone(),
            dynamic_filters: self.dynamic_filters.clone(),
            fixed_filters: self.fixed_filters.clone(),
            batch_size: self.batch_size,
            probe_first: self.probe_first,
            device_values: self.device_values,
        }
    }

    /// The scan `parts` describe over `table_schema`, decoding on the
    /// backends of `session` (its [`WarpreadConfig`](super::WarpreadConfig),
    /// picked as `warpread.backend` and `warpread.devices` say; the CPU
    /// without one), reading through its opened files and `runtime`'s file
    /// metadata cache. The projection is applied afterwards, as
    /// DataFusion's file scan configuration does. An unknown format or a
    /// device the session lacks is an error.
    pub fn from_parts(
        parts: ScanParts,
        table_schema: TableSchema,
        session: &datafusion::execution::config::SessionConfig,
        runtime: &datafusion::execution::runtime_env::RuntimeEnv,
    ) -> DfResult<Self> {
        let format = super::session_ext::format_named(parts.format).ok_or_else(|| {
            datafusion::error::DataFusionError::Plan(format!(
                "a warpread scan of unknown format {:?} (known: orc, parquet, gsst)",
                parts.format
            ))
        })?;
        let config = super::config::WarpreadConfig::of(session);
        let devices = super::config::session_backends(config.as_deref(), &parts.options)?;
        let files = config
            .as_ref()
            .map_or_else(Arc::default, |c| Arc::clone(&c.files));
        let mut source = Self::new(format, table_schema)
            .with_devices(devices)
            .with_stats(config.as_ref().map(|c| Arc::clone(&c.stats)))
            .with_files(files)
            .with_metadata_cache(Some(runtime.cache_manager.get_file_metadata_cache()))
            .with_memory_pool(Some(Arc::clone(&runtime.memory_pool)))
            .with_options(parts.options)
            .with_probe_first(parts.probe_first)
            .with_device_values(parts.device_values);
        source.filter = parts.filter;
        source.dynamic_filters = parts.dynamic_filters;
        source.fixed_filters = parts.fixed_filters;
        source.batch_size = parts.batch_size;
        Ok(source)
    }

    /// Reads with these `warpread.*` settings.
    pub fn with_options(mut self, options: WarpreadOptions) -> Self {
        self.options = options;
        self
    }

    /// The scan's `warpread.*` settings.
    pub fn options(&self) -> &WarpreadOptions {
        &self.options
    }

    /// Keeps the parsed footers of objects in stores other than the local
    /// file system in `cache` (the session's DataFusion file-metadata
    /// cache; `None`: parsed at every open).
    pub fn with_metadata_cache(
        mut self,
        cache: Option<Arc<datafusion::execution::cache::cache_manager::FileMetadataCache>>,
    ) -> Self {
        self.metadata_cache = cache;
        self
    }

    /// Reserves the host memory of each partition's reads from `pool` (the
    /// session's `MemoryPool`): every decode stage takes its output bytes
    /// before it allocates them and gives them back when its read group
    /// ends. A read group the pool refuses is read again one stripe or row
    /// group at a time; one that still does not fit fails the query with
    /// the pool's error, naming the file. `None`: no reservation.
    pub fn with_memory_pool(
        mut self,
        pool: Option<Arc<dyn datafusion::execution::memory_pool::MemoryPool>>,
    ) -> Self {
        self.memory_pool = pool;
        self
    }

    /// Sets the session's opened files (local ones; see `remote` for the
    /// others).
    pub fn with_files(mut self, files: Arc<FileCache>) -> Self {
        self.files = files;
        self
    }

    /// The opened files the scan reads through.
    pub(crate) fn files(&self) -> &Arc<FileCache> {
        &self.files
    }

    /// The same scan finding the build keys of the joins whose dynamic
    /// filters it applies in `slots` (by filter id).
    pub(crate) fn with_key_slots(mut self, slots: Vec<(u64, Arc<KeySlot>)>) -> Self {
        self.key_slots = slots;
        self
    }

    /// Decodes on `backend` (else the CPU).
    pub fn with_backend(mut self, backend: Option<Arc<dyn Backend>>) -> Self {
        self.backend = backend;
        self.devices = Vec::new();
        self
    }

    /// Decodes on these backends, one per device: scan partition `p` on
    /// `devices[p % devices.len()]`, and the scan reads with as many
    /// partitions per device as one device would (an empty list: the
    /// CPU).
    pub fn with_devices(mut self, devices: Vec<Arc<dyn Backend>>) -> Self {
        self.backend = devices.first().cloned();
        self.devices = if devices.len() > 1 {
            devices
        } else {
            Vec::new()
        };
        self
    }

    /// The backends scan partitions take in turn: the devices, else the
    /// one backend.
    pub(crate) fn devices(&self) -> Vec<Arc<dyn Backend>> {
        if self.devices.is_empty() {
            vec![self.backend()]
        } else {
            self.devices.clone()
        }
    }

    /// The backend scan partition `partition` decodes on.
    pub(crate) fn backend_of(&self, partition: usize) -> Arc<dyn Backend> {
        crate::exec::devices::for_partition(&self.devices, partition)
            .cloned()
            .unwrap_or_else(|| self.backend())
    }

    /// Adds stage timings to `stats`.
    pub fn with_stats(mut self, stats: Option<Arc<StatsSink>>) -> Self {
        self.stats = stats;
        self
    }

    /// The same scan reading each file's first unit alone, with nothing
    /// read ahead until it is consumed: a consumer that may give up after
    /// one batch (an aggregate the device cannot take) wastes one unit's
    /// read, not a group's and the read-ahead.
    pub fn with_probe_first(mut self, on: bool) -> Self {
        self.probe_first = on;
        self
    }

    /// The same scan for a consumer that reads the values of flat required
    /// columns only on the backend's device, where it keeps the decode
    /// stages' outputs ([`ScanRequest::device_values`](super::ScanRequest::device_values)):
    /// those values never come down to the host, whose copies of them are
    /// left unwritten. Only an aggregate program's scan sets it.
    pub fn with_device_values(mut self, on: bool) -> Self {
        self.device_values = on;
        self
    }

    /// The scan configuration and warpread source of `node`, if it is a
    /// warpread scan (what the physical optimizer rules look for).
    pub(crate) fn of(node: &dyn ExecutionPlan) -> Option<(&FileScanConfig, &WarpSource)> {
        node.downcast_ref::<DataSourceExec>()?
            .downcast_to_file_source::<WarpSource>()
    }

    /// A scan of `config`'s files through this source instead of its own.
    pub(crate) fn scan(self, config: &FileScanConfig) -> Arc<dyn ExecutionPlan> {
        DataSourceExec::from_data_source(
            FileScanConfigBuilder::from(config.clone())
                .with_source(Arc::new(self))
                .build(),
        )
    }

    /// The same scan starting, when executed, the reads of the files its
    /// partitions open first, each up to its first batch, before any
    /// partition is polled (set by [`super::StartScansEarly`], whose docs
    /// say why).
    pub fn with_start_early(mut self, on: bool) -> Self {
        self.start_early = on;
        self
    }

    /// The filters that operators update while the query runs which this
    /// scan applies to its rows, under a scan limit of `limit` (none where
    /// its values stay on the device or it has a limit of its own, see
    /// `create_file_opener`).
    pub(crate) fn row_filtered_dynamic(&self, limit: Option<usize>) -> &[Arc<dyn PhysicalExpr>] {
        if self.applies_row_filters(limit) {
            &self.dynamic_filters
        } else {
            &[]
        }
    }

    /// Whether this scan filters rows at all (the opener's condition).
    fn applies_row_filters(&self, limit: Option<usize>) -> bool {
        !self.device_values && limit.is_none() && self.options.dynamic_filters
    }

    /// The same scan without the dynamic filters `drop_dynamic` picks and,
    /// with `drop_fixed`, without the static filters it applies to rows
    /// (the pruning predicates stay); `None` when nothing changes.
    pub(crate) fn without_row_filters(
        &self,
        drop_dynamic: impl Fn(&Arc<dyn PhysicalExpr>) -> bool,
        drop_fixed: bool,
    ) -> Option<Self> {
        let dynamic: Vec<_> = self
            .dynamic_filters
            .iter()
            .filter(|f| !drop_dynamic(f))
            .cloned()
            .collect();
        let drop_fixed = drop_fixed && !self.fixed_filters.is_empty();
        if dynamic.len() == self.dynamic_filters.len() && !drop_fixed {
            return None;
        }
        let mut source = self.clone();
        source.dynamic_filters = dynamic;
        if drop_fixed {
            source.fixed_filters.clear();
        }
        Some(source)
    }

    /// Whether this scan's partitions start reading when executed: set by
    /// the rule, on, and neither a `LIMIT` (which reads only what it needs)
    /// nor an aggregate's probe (read on its own).
    pub(crate) fn starts_early(&self, limit: Option<usize>) -> bool {
        self.start_early
            && self.options.prefetch != Prefetch::Off
            && limit.is_none()
            && !self.probe_first
    }

    /// Starts the reads of the files the scan's partitions open first, for
    /// any of the scan's streams to take, unless another partition of this
    /// execution did; `opener` holds them either way. With DataFusion's file
    /// streams taking files from one queue (all groups' files in order)
    /// those are the queue's first files, one per partition; where the scan
    /// keeps an order or a partitioning each stream reads its own group, so
    /// they are the groups' first files. A file that cannot be opened is
    /// left to `open` to report.
    fn start_first_reads(&self, opener: &mut WarpOpener, config: &FileScanConfig) {
        opener.prefetches = Some(Arc::clone(&self.prefetches));
        let shared_queue = !config.preserve_order && config.output_partitioning.is_none();
        let first: Vec<_> = if shared_queue {
            let all = config.file_groups.iter().flat_map(|g| g.files());
            all.take(config.file_groups.len()).collect()
        } else {
            config
                .file_groups
                .iter()
                .filter_map(|g| g.files().first())
                .collect()
        };
        // The i-th first read on partition i's device: with several
        // devices, every device starts reading at once.
        let reads = first
            .into_iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let read = opener.open_on(f.clone(), self.backend_of(i)).ok()?;
                Some((opener.prefetch_key(f), read))
            })
            .collect();
        opener.started = self.prefetches.start_all(reads);
    }

    /// Whether the projection hands on the columns read, in read order, one
    /// column reference each (no expressions, partition columns, repeats).
    fn reads_as_projected(&self) -> bool {
        let p = &self.projection;
        p.source.iter().count() == p.file_indices.len()
            && p.source.iter().zip(&p.file_indices).all(|(e, &i)| {
                e.expr
                    .downcast_ref::<datafusion::physical_expr::expressions::Column>()
                    .is_some_and(|c| c.index() == i)
            })
    }

    /// The file format.
    pub(crate) fn format(&self) -> &Arc<dyn WarpFormat> {
        &self.format
    }

    /// The backend reads decode on: the CPU where none was chosen (a scan
    /// planned through its `FileFormat` always has one).
    pub(crate) fn backend(&self) -> Arc<dyn Backend> {
        self.backend
            .clone()
            .unwrap_or_else(|| Arc::new(CpuBackend::new()))
    }

    /// Whether a backend was chosen.
    pub fn has_backend(&self) -> bool {
        self.backend.is_some()
    }
}

impl FileSource for WarpSource {
    fn create_file_opener(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        partition: usize,
    ) -> DfResult<Arc<dyn FileOpener>> {
        let file_schema = self.table_schema.file_schema();
        let read: Vec<_> = self
            .projection
            .file_indices
            .iter()
            .map(|&i| file_schema.field(i))
            .collect();
        let columns = read.iter().map(|f| f.name().clone()).collect();
        let predicates = self
            .filter
            .as_ref()
            .map(|f| predicate::translate(f, file_schema))
            .unwrap_or_default();
        let mut opener = WarpOpener {
            format: Arc::clone(&self.format),
            backend: self.backend_of(partition),
            columns,
            predicates,
            batch_size: self.batch_size.unwrap_or(8192),
            limit: base_config.limit,
            stats: self.stats.clone(),
            metrics: ScanMetrics::new(&self.metrics, partition),
            probe_first: self.probe_first,
            device_values: self.device_values,
            narrow_decimals: self.device_values && self.reads_as_projected(),
            expected_types: None,
            prefetches: None,
            started: Vec::new(),
            dynamic_filters: Vec::new(),
            fixed_filters: Vec::new(),
            options: self.options.clone(),
            files: Arc::clone(&self.files),
            remote: (!super::remote::is_local(object_store.as_ref())).then(|| {
                super::opener::Remote {
                    store: Arc::clone(&object_store),
                    name: base_config.object_store_url.to_string(),
                    cache: self.metadata_cache.clone(),
                }
            }),
            key_slots: self.key_slots.clone(),
            host_memory: self.memory_pool.as_ref().map(|pool| {
                super::memory::PoolBudget::register(pool, format!("warpread scan [{partition}]"))
            }),
        };
        // An aggregate program's scan hands its batches to the device as
        // read (narrowed decimals the filters' types would not match), and
        // no operator between them publishes filters. A scan with a limit
        // of its own would count the rows left (see `row_filter_scope`).
        // Its values may never reach the host at all (`device_values`).
        if self.applies_row_filters(base_config.limit) {
            opener.dynamic_filters = self.dynamic_filters.clone();
            if !opener.dynamic_filters.is_empty() || self.options.fixed_row_filters {
                opener.fixed_filters = self.fixed_filters.clone();
            }
        }
        // The projection would rebuild each batch with the table's types:
        // a scan whose batches reach only an aggregate program skips it
        // when it hands on the read columns as they are, keeping decimals
        // at their stored width, and checks each batch's types against the
        // table's instead.
        if opener.narrow_decimals {
            opener.expected_types = Some(read.iter().map(|f| f.data_type().clone()).collect());
        }
        if self.starts_early(base_config.limit) {
            self.start_first_reads(&mut opener, base_config);
        }
        if opener.narrow_decimals {
            return Ok(Arc::new(opener));
        }
        ProjectionOpener::try_new(self.projection.clone(), Arc::new(opener), file_schema)
    }

    fn repartitioned(
        &self,
        target_partitions: usize,
        repartition_file_min_size: usize,
        output_ordering: Option<LexOrdering>,
        config: &FileScanConfig,
    ) -> DfResult<Option<FileScanConfig>> {
        // A device backend reads few large groups; the plan above the scan
        // repartitions its batches for the query's parallelism.
        let most = match self.options.scan_partitions {
            Some(0) => None,
            Some(n) => Some(n),
            None => self
                .backend()
                .scan_partitions()
                .map(|n| n.saturating_mul(self.devices.len().max(1))),
        };
        let target = most.map_or(target_partitions, |n| target_partitions.min(n));
        // Spread evenly by size into `target` groups, merging the listing's
        // file groups too (a table of 16 files otherwise kept 16 scans).
        if config.file_compression_type.is_compressed() || !self.supports_repartitioning() {
            return Ok(None);
        }
        Ok(FileGroupPartitioner::new()
            .with_target_partitions(target)
            .with_repartition_file_min_size(repartition_file_min_size)
            .with_preserve_order_within_groups(output_ordering.is_some())
            .repartition_file_groups(&config.file_groups)
            .map(|groups| {
                let mut c = config.clone();
                c.file_groups = groups;
                c
            }))
    }

    fn table_schema(&self) -> &TableSchema {
        &self.table_schema
    }

    fn with_batch_size(&self, batch_size: usize) -> Arc<dyn FileSource> {
        let mut s = self.clone();
        s.batch_size = Some(batch_size);
        Arc::new(s)
    }

    fn filter(&self) -> Option<Arc<dyn PhysicalExpr>> {
        self.filter.clone()
    }

    fn projection(&self) -> Option<&ProjectionExprs> {
        Some(&self.projection.source)
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        &self.metrics
    }

    fn file_type(&self) -> &str {
        self.format.name()
    }

    fn fmt_extra(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let name = self.backend.as_ref().map_or("cpu", |b| b.name());
        let backend = match self.devices.len() {
            0 | 1 => name.to_string(),
            n => format!("{name} x{n}"),
        };
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                write!(f, ", reader=warpread, backend={backend}")?;
                let changed = self.options.changed();
                if !changed.is_empty() {
                    write!(f, ", warpread=[{}]", changed.join(", "))?;
                }
                if self.starts_early(None) {
                    write!(f, ", starts_early")?;
                }
                if let Some(p) = &self.filter {
                    write!(f, ", pruning_predicate={p}")?;
                }
                for d in &self.dynamic_filters {
                    write!(f, ", dynamic_filter={d}")?;
                }
                Ok(())
            }
            DisplayFormatType::TreeRender => writeln!(f, "reader=warpread backend={backend}"),
        }
    }

    fn try_pushdown_filters(
        &self,
        filters: Vec<Arc<dyn PhysicalExpr>>,
        _config: &ConfigOptions,
    ) -> DfResult<FilterPushdownPropagation<Arc<dyn FileSource>>> {
        // Every filter stays with DataFusion (`No`): statistics only prune
        // whole stripes, so rows of kept stripes still need the filter.
        // Dynamic filters are also applied to the rows read, but only while
        // the scan reads the columns they name, so they stay `No` as well.
        let verdicts = vec![PushedDown::No; filters.len()];
        let file_schema = self.table_schema.file_schema();
        let (dynamic, fixed): (Vec<_>, Vec<_>) = filters.into_iter().partition(is_dynamic);
        let useful: Vec<_> = fixed
            .iter()
            .filter(|f| !predicate::translate(f, file_schema).is_empty())
            .cloned()
            .collect();
        if fixed.is_empty() && dynamic.is_empty() {
            return Ok(FilterPushdownPropagation::with_parent_pushdown_result(
                verdicts,
            ));
        }
        let mut source = self.clone();
        if !useful.is_empty() {
            source.filter = Some(conjunction(self.filter.clone().into_iter().chain(useful)));
        }
        source.dynamic_filters.extend(dynamic);
        source.fixed_filters.extend(fixed);
        Ok(
            FilterPushdownPropagation::with_parent_pushdown_result(verdicts)
                .with_updated_node(Arc::new(source) as Arc<dyn FileSource>),
        )
    }

    fn try_pushdown_projection(
        &self,
        projection: &ProjectionExprs,
    ) -> DfResult<Option<Arc<dyn FileSource>>> {
        let mut source = self.clone();
        let merged = self.projection.source.try_merge(projection)?;
        source.projection = SplitProjection::new(self.table_schema.file_schema(), &merged);
        Ok(Some(Arc::new(source)))
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        let mut roots: Vec<&Arc<dyn PhysicalExpr>> = self.filter.iter().collect();
        roots.extend(&self.dynamic_filters);
        roots.extend(self.projection.source.iter().map(|p| &p.expr));
        apply_expression_roots(roots, f)
    }
}
