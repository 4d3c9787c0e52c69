//! [`ReaderBuilder`]: a synchronous, streaming reader of a local file or
//! bytes in memory, shaped like arrow-rs's
//! `ParquetRecordBatchReaderBuilder`; `build()` gives a
//! [`RecordBatchReader`] whose batches come out as read groups finish.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use arrow::array::{RecordBatch, RecordBatchReader};
use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;

use super::file::or_unit_by_unit;
use super::selection::{RowSelection, Shaper};
use super::{GroupedFile, ReadOptions, ReadStats};
use crate::error::{Error, Result};
use crate::exec::pipeline::{self, Front};
use crate::exec::{self, Backend, BackendChoice};
use crate::source::Source;

pub use crate::exec::STREAM_GROUP_BYTES;

/// What a reader builder was asked for, sync or async alike.
#[derive(Clone)]
pub(crate) struct Settings {
    pub options: ReadOptions,
    pub selection: Option<RowSelection>,
    pub limit: Option<usize>,
    pub filter_rows: bool,
    pub read_ahead: usize,
    pub groups_in_flight: Option<usize>,
    pub backend: Option<Arc<dyn Backend>>,
    /// Whether the caller chose the batch size (a device read's batches
    /// are whole read groups otherwise).
    pub batch_size_set: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            options: ReadOptions::default(),
            selection: None,
            limit: None,
            filter_rows: false,
            read_ahead: 1,
            groups_in_flight: None,
            backend: None,
            batch_size_set: false,
        }
    }
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("options", &self.options)
            .field("selection", &self.selection)
            .field("limit", &self.limit)
            .field("filter_rows", &self.filter_rows)
            .field("read_ahead", &self.read_ahead)
            .field("groups_in_flight", &self.groups_in_flight)
            .field("backend", &self.backend.as_ref().map(|b| b.name()))
            .finish()
    }
}

/// What a planned read runs with: the options the groups are read with
/// (the filter's columns added), the backend, and the row steps.
pub(crate) struct Planned<F: GroupedFile> {
    pub file: Arc<F>,
    pub read: ReadOptions,
    pub backend: Arc<dyn Backend>,
    pub shaper: Shaper,
    pub groups: VecDeque<F::Group>,
    pub stats: ReadStats,
}

impl Settings {
    /// The backend asked for, else one chosen now (CUDA when a device is
    /// usable).
    fn backend(&self) -> Result<Arc<dyn Backend>> {
        match &self.backend {
            Some(b) => Ok(b.clone()),
            None => Ok(Arc::from(exec::select(BackendChoice::Auto)?)),
        }
    }

    /// Settles the backend for a read whose batches go to the device: it
    /// must be CUDA. Without an exact row filter (which reads values on
    /// the host), Parquet values the host would only copy stay on the
    /// device ([`ReadOptions::device_values`]) and decimals stored as
    /// integers are read at their stored width, to be widened on the
    /// device ([`ReadOptions::narrow_decimals`]). Unless the caller chose
    /// them, batches are whole read groups of the backend's
    /// [`group_bytes`](Backend::group_bytes): the host holds a group only
    /// until it is on the device, and a device consumer gains nothing from
    /// small batches, each of which costs a round of transfers.
    pub(crate) fn for_device(&mut self) -> Result<Arc<dyn Backend>> {
        let backend = self.backend()?;
        if backend.as_cuda().is_none() {
            return Err(Error::Unsupported(format!(
                "device output needs the CUDA backend; this read's backend is {}",
                backend.describe()
            )));
        }
        self.backend = Some(backend.clone());
        if !self.filter_rows {
            self.options.device_values = true;
            // Widened on the device instead (`DeviceBatch::widened_to`).
            self.options.narrow_decimals = true;
        }
        if !self.batch_size_set {
            self.options.batch_size = usize::MAX;
        }
        if self.options.tuning.group_bytes.is_none() {
            self.options.tuning.group_bytes = Some(backend.group_bytes());
        }
        Ok(backend)
    }

    /// The schema handed out.
    pub fn schema<F: GroupedFile>(&self, file: &F) -> Result<SchemaRef> {
        file.projected_schema(&self.options)
    }

    /// The options the groups are read with: the filter's columns added to
    /// the projection, and the streaming group size unless one is set.
    fn read_options<F: GroupedFile>(&self, file: &F, backend: &dyn Backend) -> Result<ReadOptions> {
        let mut read = self.options.clone();
        if read.tuning.group_bytes.is_none() {
            read.tuning.group_bytes = Some(backend.stream_group_bytes());
        }
        if self.filter_rows
            && let Some(cols) = &mut read.columns
        {
            for p in &self.options.predicates {
                if !cols.contains(&p.column) {
                    cols.push(p.column.clone());
                }
            }
        }
        let schema = file.file_schema();
        for p in self
            .filter_rows
            .then_some(&self.options.predicates)
            .into_iter()
            .flatten()
        {
            if schema.index_of(&p.column).is_err() {
                return Err(Error::Unsupported(format!(
                    "{}: row filter on unknown column {:?}",
                    file.source().path().display(),
                    p.column
                )));
            }
        }
        Ok(read)
    }

    /// Plans the read of `file`: its groups, the backend and the row steps.
    pub fn plan<F: GroupedFile>(&self, file: Arc<F>) -> Result<Planned<F>> {
        let backend = self.backend()?;
        let read = self.read_options(file.as_ref(), backend.as_ref())?;
        let shaper = Shaper {
            schema: self.schema(file.as_ref())?,
            selection: self.selection.clone(),
            filters: if self.filter_rows {
                self.options.predicates.clone()
            } else {
                Vec::new()
            },
            remaining: self.limit.map(|l| l as u64),
            batch_size: self.options.batch_size,
        };
        let mut stats = ReadStats::default();
        let groups = if shaper.done() {
            Vec::new()
        } else {
            file.plan_groups(&read, backend.as_ref(), &|r| shaper.wants(&r), &mut stats)?
        };
        Ok(Planned {
            file,
            read,
            backend,
            shaper,
            groups: groups.into(),
            stats,
        })
    }
}

/// The builder methods shared by [`ReaderBuilder`] and
/// [`StreamBuilder`](super::StreamBuilder).
macro_rules! settings_methods {
    () => {
        /// Reads only these top-level columns, in this order.
        pub fn with_projection<S: Into<String>>(
            mut self,
            columns: impl IntoIterator<Item = S>,
        ) -> Self {
            self.settings.options.columns = Some(columns.into_iter().map(Into::into).collect());
            self
        }

        /// Adds a predicate: stripes, row groups, ORC row groups (row
        /// index) and Parquet pages (page index) it rules out by their
        /// statistics are not read. Rows are filtered exactly only with
        /// [`with_row_filter`](Self::with_row_filter).
        pub fn with_predicate(mut self, predicate: $crate::read::Predicate) -> Self {
            self.settings.options.predicates.push(predicate);
            self
        }

        /// Also drops every row that does not match all predicates (the
        /// predicates' columns are read for it when not projected, and not
        /// handed out). Off by default: the predicates only prune.
        pub fn with_row_filter(mut self, on: bool) -> Self {
            self.settings.filter_rows = on;
            self
        }

        /// Reads only these file rows: stripes and row groups without a
        /// selected row are skipped, other rows dropped.
        pub fn with_row_selection(mut self, selection: $crate::read::RowSelection) -> Self {
            self.settings.selection = Some(selection);
            self
        }

        /// Hands out at most `rows` rows (after selection and filtering),
        /// reading no group past them.
        pub fn with_limit(mut self, rows: usize) -> Self {
            self.settings.limit = Some(rows);
            self
        }

        /// Most rows per batch (at least 1; default 65,536).
        pub fn with_batch_size(mut self, rows: usize) -> Self {
            self.settings.options.batch_size = rows.max(1);
            self.settings.batch_size_set = true;
            self
        }

        /// Decodes on `backend` (share one per device between reads:
        /// creating a CUDA backend creates a context). Default: CUDA when a
        /// device is usable, else the CPU, chosen at `build()`.
        pub fn with_backend(mut self, backend: std::sync::Arc<dyn $crate::exec::Backend>) -> Self {
            self.settings.backend = Some(backend);
            self
        }

        /// How the read runs. A streaming read's groups are the backend's
        /// [`stream_group_bytes`](crate::exec::Backend::stream_group_bytes)
        /// of compressed bytes unless the tuning sets
        /// [`group_bytes`](crate::read::ReadTuning::group_bytes).
        pub fn with_tuning(mut self, tuning: $crate::read::ReadTuning) -> Self {
            self.settings.options.tuning = tuning;
            self
        }

        /// Read groups decoded ahead of the one being handed out (default
        /// 1: the next group decodes while the caller consumes the
        /// current; 0: each group is decoded when the caller asks). Memory
        /// holds up to this many groups plus the current.
        pub fn with_read_ahead(mut self, groups: usize) -> Self {
            self.settings.read_ahead = groups;
            self
        }

        /// Read groups decoded side by side (at least 1; default the
        /// backend's [`stream_groups_in_flight`](crate::exec::Backend::stream_groups_in_flight):
        /// 1 on the CPU, whose cores one group keeps busy). A group starts
        /// once the one before it has read and decompressed its bytes.
        /// Memory holds these plus the read-ahead and the current group.
        /// The async [`StreamBuilder`](crate::read::StreamBuilder) decodes
        /// one group at a time and ignores it.
        pub fn with_groups_in_flight(mut self, groups: usize) -> Self {
            self.settings.groups_in_flight = Some(groups.max(1));
            self
        }

        /// Replaces what to read (columns, batch size, byte range,
        /// predicates, tuning) at once.
        pub fn with_options(mut self, options: $crate::read::ReadOptions) -> Self {
            self.settings.options = options;
            self.settings.batch_size_set = true;
            self
        }

        /// The schema of the batches the reader will hand out.
        pub fn schema(&self) -> $crate::Result<arrow::datatypes::SchemaRef> {
            self.settings.schema(self.file.as_ref())
        }

        /// The parsed file (footer, schema, statistics).
        pub fn file(&self) -> &std::sync::Arc<F> {
            &self.file
        }

        /// Settles the read's backend for output on the device
        /// ([`crate::device`]) and returns it.
        pub(crate) fn for_device(
            &mut self,
        ) -> $crate::Result<std::sync::Arc<dyn $crate::exec::Backend>> {
            self.settings.for_device()
        }
    };
}
pub(crate) use settings_methods;

/// Builds a synchronous [`RecordBatchReader`] over a local file or bytes
/// in memory; see the format's alias (`ParquetReaderBuilder`,
/// `OrcReaderBuilder`).
#[derive(Debug)]
pub struct ReaderBuilder<F: GroupedFile> {
    file: Arc<F>,
    settings: Settings,
}

impl<F: GroupedFile + std::fmt::Debug> ReaderBuilder<F> {
    /// Opens a local file and parses its footer.
    pub fn try_new(path: impl AsRef<Path>) -> Result<Self> {
        let src = Source::open(path.as_ref(), F::FORMAT)?;
        Ok(Self::new(Arc::new(F::from_source(src)?)))
    }

    /// Parses the footer of bytes held in memory, named `name` in errors.
    pub fn from_bytes(name: impl Into<std::path::PathBuf>, bytes: bytes::Bytes) -> Result<Self> {
        let src = Source::from_bytes(name, bytes, F::FORMAT);
        Ok(Self::new(Arc::new(F::from_source(src)?)))
    }

    /// A builder over a file already opened.
    pub fn new(file: Arc<F>) -> Self {
        Self {
            file,
            settings: Settings::default(),
        }
    }

    settings_methods!();

    /// Plans the read (statistics and index pruning) and returns the
    /// reader; nothing is decoded until it is iterated.
    pub fn build(self) -> Result<BatchReader<F>> {
        let planned = self.settings.plan(self.file)?;
        let schema = planned.shaper.schema.clone();
        let state = if self.settings.read_ahead == 0 {
            State::Inline(Box::new(planned))
        } else {
            // A rendezvous for one group ahead: the reading thread holds the
            // group it decoded until the caller takes it.
            let (tx, rx) = sync_channel(self.settings.read_ahead - 1);
            let depth = self
                .settings
                .groups_in_flight
                .unwrap_or_else(|| planned.backend.stream_groups_in_flight());
            let spawned = std::thread::Builder::new()
                .name("warpread-read".into())
                .spawn(move || planned.send_groups(depth, &tx));
            match spawned {
                Ok(_) => State::Ahead(rx),
                Err(e) => return Err(Error::io("warpread-read thread", e)),
            }
        };
        Ok(BatchReader {
            schema,
            state,
            pending: VecDeque::new(),
        })
    }
}

impl<F: GroupedFile> Planned<F> {
    /// Reads the groups on this thread with up to `depth` in flight
    /// ([`pipeline::run_each`]) and sends each group's shaped batches to
    /// `tx` in file order, until the read ends, fails (the error is sent
    /// last) or the receiver is gone.
    fn send_groups(mut self, depth: usize, tx: &SyncSender<Result<Vec<RecordBatch>>>) {
        if depth <= 1 {
            while let Some(out) = self.next_group() {
                let last = out.is_err();
                if tx.send(out).is_err() || last {
                    return;
                }
            }
            return;
        }
        let Planned {
            file,
            read,
            backend,
            mut shaper,
            groups,
            mut stats,
        } = self;
        // The limit can only rule out more groups as rows come back: those
        // then in flight are decoded and dropped.
        let wanted = groups
            .into_iter()
            .filter(|g| shaper.wants(&file.group_span(g)))
            .collect::<Vec<_>>();
        let read_one = |g: F::Group, front: &Front| {
            let mut own = ReadStats::default();
            let first = |b: &dyn Backend, own: &mut ReadStats| {
                file.read_group_in_flight(&g, &read, b, front, own)
            };
            or_unit_by_unit(first, file.as_ref(), &g, &read, backend.as_ref(), &mut own)
                .map(|(batches, rows)| (batches, rows, own))
        };
        pipeline::run_each(wanted, depth, read_one, |out| {
            let shaped = out.and_then(|(batches, rows, own)| {
                stats.add(&own);
                shaper.shape(batches, &rows)
            });
            let last = shaped.is_err();
            match shaped {
                Ok(b) if b.is_empty() => {}
                other => {
                    if tx.send(other).is_err() {
                        return ControlFlow::Break(());
                    }
                }
            }
            if last || shaper.done() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
    }

    /// Reads and shapes the next group that hands out rows; `None` when
    /// none is left or the limit is reached.
    pub fn next_group(&mut self) -> Option<Result<Vec<RecordBatch>>> {
        while !self.shaper.done() {
            let group = self.groups.pop_front()?;
            if !self.shaper.wants(&self.file.group_span(&group)) {
                continue;
            }
            let backend = self.backend.as_ref();
            let file = self.file.as_ref();
            let read = &self.read;
            let first =
                |b: &dyn Backend, stats: &mut ReadStats| file.read_group(&group, read, b, stats);
            let out = or_unit_by_unit(
                first,
                self.file.as_ref(),
                &group,
                &self.read,
                backend,
                &mut self.stats,
            )
            .and_then(|(batches, rows)| self.shaper.shape(batches, &rows));
            match out {
                Ok(b) if b.is_empty() => continue,
                other => return Some(other),
            }
        }
        None
    }
}

enum State<F: GroupedFile> {
    Inline(Box<Planned<F>>),
    Ahead(Receiver<Result<Vec<RecordBatch>>>),
}

/// A streaming read: a [`RecordBatchReader`] whose batches come out as
/// read groups finish, in file order. Errors carry the file, stripe or row
/// group, column and byte offset (as [`ArrowError::ExternalError`] of a
/// [`crate::Error`]); after an error the reader ends.
pub struct BatchReader<F: GroupedFile> {
    schema: SchemaRef,
    state: State<F>,
    pending: VecDeque<RecordBatch>,
}

impl<F: GroupedFile> std::fmt::Debug for BatchReader<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchReader")
            .field("schema", &self.schema)
            .field("pending", &self.pending.len())
            .finish()
    }
}

impl<F: GroupedFile> BatchReader<F> {
    /// Where the read has spent its time so far (read-ahead: `None`, the
    /// stats live on the reading thread).
    pub fn stats(&self) -> Option<ReadStats> {
        match &self.state {
            State::Inline(p) => Some(p.stats),
            State::Ahead(_) => None,
        }
    }

    /// The next batch, with warpread's error.
    pub fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            if let Some(b) = self.pending.pop_front() {
                return Some(Ok(b));
            }
            let next = match &mut self.state {
                State::Inline(p) => p.next_group(),
                State::Ahead(rx) => rx.recv().ok(),
            }?;
            match next {
                Ok(batches) => self.pending.extend(batches),
                Err(e) => {
                    // The reader ends after an error.
                    self.state = State::Ahead(sync_channel(0).1);
                    return Some(Err(e));
                }
            }
        }
    }
}

impl<F: GroupedFile> Iterator for BatchReader<F> {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
            .map(|r| r.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl<F: GroupedFile> RecordBatchReader for BatchReader<F> {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}
