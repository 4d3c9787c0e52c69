//! `WarpOpener`: DataFusion's `FileOpener` over any [`WarpFormat`]. Opening
//! a file parses its metadata and plans its units; the batch stream then
//! reads groups of units on blocking threads, the next group decoding while
//! the plan consumes the current one; a scan with a `LIMIT` reads one group
//! at a time, so it never reads the groups it did not reach.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileOpenFuture, FileOpener};
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::object_store::local::LocalFileSystem;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder, Time};
use futures::{StreamExt, TryStreamExt};
use warpread::read::stream::{fetch_scoped, ranges_fetching, run_fetching};

use super::config::StatsSink;
use super::dynamic_filter::RowFilter;
use super::file_cache::FileCache;
use super::format::{ReadUnit, ScanRequest, WarpFormat};
use super::key_set::KeySlot;
use super::options::{WarpreadOptions, read_tuning};
use super::prefetch::{Prefetches, Slot};
use crate::error::Error;
use crate::exec::Backend;
use crate::orc::Predicate;

/// Compressed bytes read in one go unless `warpread.group_mib` says
/// otherwise: big enough for large decode stages (the GPU wants thousands
/// of chunk jobs), small enough that memory stays bounded (a `LIMIT` reads
/// one unit at a time anyway).
const GROUP_BYTES: u64 = 256 << 20;

/// The compressed bytes of one read of a scan under `options`.
fn group_bytes(options: &WarpreadOptions) -> u64 {
    options
        .group_mib
        .map_or(GROUP_BYTES, |mib| mib.saturating_mul(1 << 20))
}

/// A file's name without its folder, for trace spans.
fn path_name(path: &std::path::Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// DataFusion metrics of a warpread scan (shown by `EXPLAIN ANALYZE`).
#[derive(Debug, Clone)]
pub struct ScanMetrics {
    io: Time,
    decompress: Time,
    decode: Time,
    assemble: Time,
    units_read: Count,
    units_pruned: Count,
    pages_read: Count,
    pages_skipped: Count,
    row_groups_read: Count,
    row_groups_pruned: Count,
    files_started_early: Count,
    rows_dynamic_filtered: Count,
    dynamic_filter_time: Time,
    cpu_fallbacks: Count,
}

impl ScanMetrics {
    /// Registers the metrics of one partition.
    pub fn new(metrics: &ExecutionPlanMetricsSet, partition: usize) -> Self {
        let time = |name| MetricBuilder::new(metrics).subset_time(name, partition);
        let count = |name| MetricBuilder::new(metrics).counter(name, partition);
        Self {
            io: time("warpread_io_time"),
            decompress: time("warpread_decompress_time"),
            decode: time("warpread_decode_time"),
            assemble: time("warpread_assemble_time"),
            units_read: count("warpread_units_read"),
            units_pruned: count("warpread_units_pruned"),
            pages_read: count("warpread_pages_read"),
            pages_skipped: count("warpread_pages_skipped"),
            row_groups_read: count("warpread_row_groups_read"),
            row_groups_pruned: count("warpread_row_groups_pruned"),
            files_started_early: count("warpread_files_started_early"),
            rows_dynamic_filtered: count("warpread_rows_dynamic_filtered"),
            dynamic_filter_time: time("warpread_dynamic_filter_time"),
            cpu_fallbacks: count("warpread_cpu_fallbacks"),
        }
    }
}

/// The object store a scan reads from when it is not the local file
/// system (see `remote`).
#[derive(Clone)]
pub struct Remote {
    /// The store.
    pub store: Arc<dyn datafusion::object_store::ObjectStore>,
    /// Its URL (`s3://bucket`), which tells stores apart in the cache.
    pub name: String,
    /// The session's file-metadata cache.
    pub cache: Option<Arc<datafusion::execution::cache::cache_manager::FileMetadataCache>>,
}

/// Opens files of one partition of a scan.
pub struct WarpOpener {
    /// Where the partition's reads take their host memory from (the
    /// session's memory pool), if anywhere.
    pub host_memory: Option<crate::exec::memory::HostBudget>,
    /// The file format.
    pub format: Arc<dyn WarpFormat>,
    /// Decodes.
    pub backend: Arc<dyn Backend>,
    /// File columns to read, in the order the projection expects.
    pub columns: Vec<String>,
    /// Pruning predicates on file columns.
    pub predicates: Vec<Predicate>,
    /// Rows per batch.
    pub batch_size: usize,
    /// Rows the scan needs at most (`LIMIT` pushed down), if known.
    pub limit: Option<usize>,
    /// Session-wide timing sums, if the session collects them.
    pub stats: Option<Arc<StatsSink>>,
    /// This partition's metrics.
    pub metrics: ScanMetrics,
    /// The first unit is a group of its own, read before anything else
    /// ([`super::WarpSource::with_probe_first`]).
    pub probe_first: bool,
    /// Values read on the device only ([`ScanRequest::device_values`]).
    pub device_values: bool,
    /// See [`ScanRequest::narrow_decimals`].
    pub narrow_decimals: bool,
    /// The table's types of the columns read, checked against every batch
    /// when no projection above the opener rebuilds batches with them (a
    /// file whose types differ from the table's would otherwise reach the
    /// consumer as it is); decimals narrowed at the table's precision and
    /// scale pass.
    pub expected_types: Option<Vec<arrow::datatypes::DataType>>,
    /// The scan's reads started at execution ([`super::prefetch`]), which
    /// [`FileOpener::open`] takes before starting one.
    pub(crate) prefetches: Option<Arc<Prefetches>>,
    /// The scan's started reads, held while this partition's stream may
    /// open files.
    pub(crate) started: Vec<Arc<Slot>>,
    /// The scan's `warpread.*` settings (its table's over the session's).
    pub options: WarpreadOptions,
    /// The session's opened files (local ones).
    pub files: Arc<FileCache>,
    /// The store files are read from, unless it is the local file system
    /// (then files are opened by path).
    pub remote: Option<Remote>,
    /// Where the joins whose dynamic filters the scan applies hand it their
    /// build keys, by filter id (`join_keys`).
    pub(crate) key_slots: Vec<(u64, Arc<KeySlot>)>,
    /// Filters operators publish while the query runs, applied to every
    /// batch as it is handed on (see `dynamic_filter`); in the table's
    /// columns, found in the batches by name.
    pub dynamic_filters: Vec<Arc<dyn PhysicalExpr>>,
    /// The scan's other pushed filters, applied with the dynamic ones, and
    /// on their own while together they keep few rows (see
    /// `dynamic_filter::RowFilter`).
    pub fixed_filters: Vec<Arc<dyn PhysicalExpr>>,
}

/// Whether a batch column of type `got` reads as the table's `want`: equal,
/// or a decimal at its stored width with the same precision and scale.
fn reads_as(got: &arrow::datatypes::DataType, want: &arrow::datatypes::DataType) -> bool {
    use arrow::datatypes::DataType::{Decimal32, Decimal64, Decimal128};
    got == want
        || matches!((want, got), (Decimal128(p, s), Decimal64(q, t) | Decimal32(q, t)) if p == q && s == t)
}

/// Errs naming the file and column unless every column of `batch` reads as
/// its entry of `expected`.
fn check_types(
    batch: &arrow::array::RecordBatch,
    expected: &[arrow::datatypes::DataType],
    path: &std::path::Path,
) -> DfResult<()> {
    let schema = batch.schema();
    for (i, (field, want)) in schema.fields().iter().zip(expected).enumerate() {
        if !reads_as(field.data_type(), want) {
            return Err(external(Error::Unsupported(format!(
                "{}: column {} ({i}) is {} in this file, the table declares {want}",
                path.display(),
                field.name(),
                field.data_type()
            ))));
        }
    }
    if schema.fields().len() != expected.len() {
        return Err(external(Error::Unsupported(format!(
            "{}: {} columns read, the table's projection has {}",
            path.display(),
            schema.fields().len(),
            expected.len()
        ))));
    }
    Ok(())
}

fn external(e: Error) -> DataFusionError {
    e.into()
}

fn joined(e: tokio::task::JoinError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// Splits planned units into consecutive groups of about `cap` bytes.
/// With a limit, each unit is its own group (the stream stops as soon as
/// enough rows came) and, when `exact` (each unit gives all its rows),
/// units past the limit's row count are dropped. A read with predicates is
/// not exact: Parquet page pruning returns part of a unit's rows.
fn groups(units: Vec<ReadUnit>, limit: Option<usize>, exact: bool, cap: u64) -> Vec<Vec<ReadUnit>> {
    let mut out: Vec<Vec<ReadUnit>> = Vec::new();
    let (mut bytes, mut rows) = (0u64, 0u64);
    for u in units {
        if exact && limit.is_some_and(|l| rows >= l as u64) {
            break;
        }
        match out.last_mut() {
            Some(g) if limit.is_none() && bytes + u.bytes <= cap => g.push(u),
            _ => {
                out.push(vec![u]);
                bytes = 0;
            }
        }
        bytes += u.bytes;
        rows += u.rows;
    }
    out
}

impl WarpOpener {
    /// What a started read of `file` is found by: the file, its byte range
    /// and everything the read depends on.
    pub fn prefetch_key(&self, file: &PartitionedFile) -> String {
        format!(
            "{}|{:?}|{:?}|{:?}|{}|{}|{}|{:?}|{}|{:?}",
            file.object_meta.location,
            file.range.as_ref().map(|r| (r.start, r.end)),
            self.columns,
            self.predicates,
            self.batch_size,
            self.device_values,
            self.narrow_decimals,
            self.limit,
            self.probe_first,
            (self.options.group_mib, self.options.groups_in_flight),
        )
    }

    /// Opens `file` now (not taking a started read).
    pub fn open_now(&self, file: PartitionedFile) -> DfResult<FileOpenFuture> {
        self.open_on(file, Arc::clone(&self.backend))
    }

    /// [`open_now`](Self::open_now), decoding on `backend` (a read started
    /// early for another partition decodes on that partition's device).
    pub(crate) fn open_on(
        &self,
        file: PartitionedFile,
        backend: Arc<dyn Backend>,
    ) -> DfResult<FileOpenFuture> {
        let remote = self.remote.clone();
        let path: PathBuf = match &remote {
            None => LocalFileSystem::new().path_to_filesystem(&file.object_meta.location)?,
            // Named in errors and traces by its URL.
            Some(r) => PathBuf::from(format!("{}{}", r.name, file.object_meta.location)),
        };
        let format = Arc::clone(&self.format);
        let stats = self.stats.clone();
        let metrics = self.metrics.clone();
        let limit = self.limit;
        let probe_first = self.probe_first;
        let meta = file.object_meta.clone();
        let expected = self.expected_types.clone();
        let dynamic = self.dynamic_filters.clone();
        let shown = path.clone();
        let files = Arc::clone(&self.files);
        let (cap, read_ahead) = (group_bytes(&self.options), self.options.read_ahead);
        let cpu_fallback = self.options.cpu_fallback;
        let request = ScanRequest {
            columns: self.columns.clone(),
            predicates: self.predicates.clone(),
            byte_range: file
                .range
                .as_ref()
                .map(|r| r.start.max(0) as u64..r.end.max(0) as u64),
            batch_size: self.batch_size,
            device_values: self.device_values,
            narrow_decimals: self.narrow_decimals,
            tuning: read_tuning(&self.options).with_host_memory(self.host_memory.clone()),
        };
        Ok(Box::pin(async move {
            let req = request;
            let location = meta.location.clone();
            let fetched = match &remote {
                Some(r) => Some(
                    super::remote::open(
                        format.as_ref(),
                        &r.store,
                        &r.name,
                        &meta,
                        r.cache.as_ref(),
                    )
                    .await
                    .map_err(external)?,
                ),
                None => None,
            };
            let (opened, units, considered, request) = tokio::task::spawn_blocking(move || {
                let opened = match fetched {
                    Some(f) => f,
                    None => files.open(format.as_ref(), &path, &meta)?,
                };
                // A file of a multi-file table may lack a filtered column.
                let schema = opened.schema();
                let mut req = req;
                req.predicates
                    .retain(|p| schema.field_with_name(&p.column).is_ok());
                // A published filter's bounds skip whole units only: the
                // reads keep the request as it was, so a unit is decoded
                // the same way whether or not a filter came.
                let mut pruning = req.clone();
                pruning
                    .predicates
                    .extend(super::dynamic_filter::pruning_predicates(&dynamic, &schema));
                let units = opened.plan(&pruning)?;
                // Units in the byte range before statistics pruning.
                let considered = opened
                    .plan(&ScanRequest {
                        predicates: Vec::new(),
                        ..req.clone()
                    })?
                    .len();
                Ok::<_, Error>((opened, units, considered, req))
            })
            .await
            .map_err(joined)?
            .map_err(external)?;
            metrics
                .units_pruned
                .add(considered.saturating_sub(units.len()));
            // Without a limit the next group decodes while the plan consumes
            // this one's batches; with one, nothing is read ahead of need.
            let ahead = if limit.is_some() { 1 } else { read_ahead };
            let exact = request.predicates.is_empty();
            let mut groups = groups(units, limit, exact, cap);
            let probe = match groups.first_mut() {
                Some(g) if probe_first && g.len() > 1 => vec![g.remove(0)],
                Some(_) if probe_first => groups.remove(0),
                _ => Vec::new(),
            };
            let read = move |group: Vec<ReadUnit>| {
                let opened = Arc::clone(&opened);
                let remote = remote.clone();
                let location = location.clone();
                let backend = Arc::clone(&backend);
                let request = request.clone();
                let stats = stats.clone();
                let metrics = metrics.clone();
                let units_in_group = group.len();
                let expected = expected.clone();
                let shown = shown.clone();
                let shown_in_task = shown.clone();
                let fallbacks = metrics.cpu_fallbacks.clone();
                // Keeps the file (and so the fetched ranges' source) alive
                // while the read owns `opened`.
                let file = Arc::clone(&opened);
                async move {
                    // Over an object store the group's bytes are fetched
                    // first and given back when `_fetched` drops (also if
                    // the scan is cancelled).
                    let _fetched = match &remote {
                        Some(r) => {
                            let src = file.source();
                            let ranges = ranges_fetching(&r.store, &location, src, || {
                                file.unit_ranges(&group, &request)
                            })
                            .await
                            .map_err(external)?;
                            let fetched = fetch_scoped(&r.store, &location, src, ranges)
                                .await
                                .map_err(external)?;
                            Some(fetched)
                        }
                        None => None,
                    };
                    let read = move || {
                        let _span = crate::trace::span_with(|| {
                            let name = path_name(&shown_in_task);
                            format!("scan.read {name} {}", group.len())
                        });
                        match opened.read(&group, &request, backend.as_ref()) {
                            Err(e) if cpu_fallback && e.is_backend_failure() => {
                                tracing::warn!(
                                    "{e}; reading it again on the CPU (warpread.cpu_fallback)"
                                );
                                fallbacks.add(1);
                                opened.read(&group, &request, &crate::exec::CpuBackend::new())
                            }
                            other => other,
                        }
                    };
                    let (batches, s) = match &remote {
                        None => tokio::task::spawn_blocking(read)
                            .await
                            .map_err(joined)?
                            .map_err(external)?,
                        Some(r) => run_fetching(&r.store, &location, file.source(), read)
                            .await
                            .map_err(external)?,
                    };
                    metrics.io.add_duration(Duration::from_secs_f64(s.io_s));
                    metrics
                        .decompress
                        .add_duration(Duration::from_secs_f64(s.decompress_s));
                    metrics
                        .decode
                        .add_duration(Duration::from_secs_f64(s.decode_s));
                    metrics
                        .assemble
                        .add_duration(Duration::from_secs_f64(s.assemble_s));
                    metrics.units_read.add(units_in_group);
                    metrics.pages_read.add(s.pages_read as usize);
                    metrics.pages_skipped.add(s.pages_skipped as usize);
                    metrics.row_groups_read.add(s.row_groups_read as usize);
                    metrics.row_groups_pruned.add(s.row_groups_pruned as usize);
                    if let Some(sink) = &stats {
                        sink.add(&s);
                    }
                    if let Some(expected) = &expected {
                        for b in &batches {
                            check_types(b, expected, &shown)?;
                        }
                    }
                    Ok::<_, DataFusionError>(futures::stream::iter(
                        batches.into_iter().map(Ok::<_, DataFusionError>),
                    ))
                }
            };
            // The probe group is read on its own: `chain` polls the rest
            // (and starts its read-ahead) only once the probe's batches are
            // consumed.
            let first = futures::stream::iter((!probe.is_empty()).then_some(probe))
                .then(read.clone())
                .try_flatten();
            let rest = futures::stream::iter(groups)
                .map(read)
                .buffered(ahead)
                .try_flatten();
            let stream = first.chain(rest);
            Ok(stream.boxed())
        }))
    }
}

impl FileOpener for WarpOpener {
    fn open(&self, file: PartitionedFile) -> DfResult<FileOpenFuture> {
        let started = self
            .prefetches
            .as_ref()
            .and_then(|p| p.take(&self.prefetch_key(&file)));
        let read = match started {
            Some(read) => {
                self.metrics.files_started_early.add(1);
                read
            }
            None => self.open_now(file)?,
        };
        if self.dynamic_filters.is_empty() && self.fixed_filters.is_empty() {
            return Ok(read);
        }
        // Applied as batches are handed on rather than as they are read:
        // a join's filter exists only once its build side is collected,
        // which may be after a started read decoded its first batches.
        let rows = Arc::new(RowFilter::new(
            self.fixed_filters.clone(),
            self.dynamic_filters.clone(),
            self.metrics.rows_dynamic_filtered.clone(),
            &self.key_slots,
            &self.options,
        ));
        // A file stream is one of few scan partitions on a device backend:
        // batches are filtered side by side on the runtime's threads, in
        // order.
        let time = self.metrics.dynamic_filter_time.clone();
        let in_flight = self.options.dynamic_filters_in_flight;
        Ok(Box::pin(async move {
            let stream = read.await?;
            Ok(stream
                .map(move |b| {
                    let rows = Arc::clone(&rows);
                    let time = time.clone();
                    async move {
                        tokio::spawn(async move {
                            let _timer = time.timer();
                            rows.apply(b?)
                        })
                        .await
                        .map_err(joined)?
                    }
                })
                .buffered(in_flight)
                .try_filter_map(|b| futures::future::ready(Ok(b)))
                .boxed())
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(i: usize, bytes: u64, rows: u64) -> ReadUnit {
        ReadUnit {
            index: i,
            offset: i as u64 * 100,
            bytes,
            rows,
        }
    }

    #[test]
    fn groups_respect_size_and_limit() {
        let cap = GROUP_BYTES;
        let big = cap * 5 / 8;
        let units: Vec<_> = (0..5).map(|i| unit(i, big, 1000)).collect();
        let g = groups(units.clone(), None, true, cap);
        assert_eq!(
            g.iter().map(Vec::len).collect::<Vec<_>>(),
            vec![1, 1, 1, 1, 1]
        );
        let small: Vec<_> = (0..5).map(|i| unit(i, 1 << 20, 1000)).collect();
        assert_eq!(groups(small.clone(), None, true, cap).len(), 1);
        let g = groups(small.clone(), Some(1500), true, cap);
        assert_eq!(g.iter().map(Vec::len).collect::<Vec<_>>(), vec![1, 1]);
        // Units that may give fewer rows than they hold are all kept.
        let g = groups(small, Some(1500), false, cap);
        assert_eq!(g.iter().map(Vec::len).collect::<Vec<_>>(), vec![1; 5]);
    }

    #[test]
    fn batches_must_read_as_the_table_declares() {
        use arrow::array::{ArrayRef, Decimal64Array, Int32Array, RecordBatch};
        use arrow::datatypes::DataType;
        let dec = |p, s| -> ArrayRef {
            Arc::new(
                Decimal64Array::from(vec![1i64, 2])
                    .with_precision_and_scale(p, s)
                    .unwrap(),
            )
        };
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
        let batch = |a: ArrayRef| RecordBatch::try_from_iter([("c", a)]).unwrap();
        let path = std::path::Path::new("t.parquet");
        let want = [DataType::Decimal128(15, 2)];
        // Stored width, same precision and scale: the narrowed read.
        assert!(check_types(&batch(dec(15, 2)), &want, path).is_ok());
        // Another scale would aggregate 100 times off: an error naming it.
        let e = check_types(&batch(dec(15, 4)), &want, path).unwrap_err();
        assert!(e.to_string().contains("t.parquet: column c"), "{e}");
        assert!(check_types(&batch(ints.clone()), &want, path).is_err());
        assert!(check_types(&batch(ints), &[DataType::Int32], path).is_ok());
        assert!(check_types(&batch(dec(15, 2)), &[], path).is_err());
    }
}
