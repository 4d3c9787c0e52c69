//! [`GroupedFile`]: what the reader builders need of a format reader, a
//! file read one read group (stripes, row groups) at a time.

use std::ops::Range;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;

use super::{ReadOptions, ReadStats};
use crate::error::Result;
use crate::exec::Backend;
use crate::exec::memory::Budgeted;
use crate::exec::pipeline::Front;
use crate::source::Source;

/// A file whose footer is parsed, read one read group at a time: the ORC
/// and Parquet readers. The reader builders ([`super::ReaderBuilder`],
/// [`super::StreamBuilder`]) are generic over it.
pub trait GroupedFile: Send + Sync + Sized + 'static {
    /// One read group: stripes or row groups read and decoded together,
    /// with what their indexes keep of them.
    type Group: Send + Sync + 'static;

    /// The format's name in errors (`ORC`, `Parquet`).
    const FORMAT: &'static str;

    /// Bytes at the end of an object fetched first when it is opened from
    /// an object store: enough for most footers in one request (a longer
    /// one costs a second).
    const TAIL_GUESS: u64 = 64 << 10;

    /// Parses the footer of the bytes of `src`.
    fn from_source(src: Source) -> Result<Self>;

    /// Where the bytes come from.
    fn source(&self) -> &Source;

    /// The Arrow schema of the whole file.
    fn file_schema(&self) -> SchemaRef;

    /// The schema of what `options` read.
    fn projected_schema(&self, options: &ReadOptions) -> Result<SchemaRef>;

    /// File bytes that [`plan_groups`](Self::plan_groups) reads (indexes
    /// it prunes with), to fetch before it runs.
    fn planning_ranges(&self, options: &ReadOptions) -> Result<Vec<Range<u64>>>;

    /// The read groups of a read: the stripes or row groups `options`
    /// select whose file rows `keep` accepts, grouped by the tuning's
    /// group bytes (or `group_bytes`'s default on `backend`).
    fn plan_groups(
        &self,
        options: &ReadOptions,
        backend: &dyn Backend,
        keep: &dyn Fn(Range<u64>) -> bool,
        stats: &mut ReadStats,
    ) -> Result<Vec<Self::Group>>;

    /// The file rows a group spans, first to last.
    fn group_span(&self, group: &Self::Group) -> Range<u64>;

    /// The file bytes reading `group` with `options` reads. May read
    /// metadata to find them (ORC stripe footers; the async reader fetches
    /// what it misses and asks again).
    fn group_ranges(&self, group: &Self::Group, options: &ReadOptions) -> Result<Vec<Range<u64>>>;

    /// Reads a group: its batches and, in order, the file rows they hold
    /// (fewer than its span where an index pruned rows). By default
    /// [`read_group_in_flight`](Self::read_group_in_flight) with a front
    /// of its own: a format implements at least one of the two.
    fn read_group(
        &self,
        group: &Self::Group,
        options: &ReadOptions,
        backend: &dyn Backend,
        stats: &mut ReadStats,
    ) -> Result<(Vec<RecordBatch>, Vec<Range<u64>>)> {
        self.read_group_in_flight(group, options, backend, &Front::new(), stats)
    }

    /// [`read_group`](Self::read_group) as one of several groups in
    /// flight: `front` is passed once the group's file reads and
    /// decompression are done, and the next group starts then, its front
    /// beneath this one's back. By default the front opens when the group
    /// ends (the groups then run one after another).
    fn read_group_in_flight(
        &self,
        group: &Self::Group,
        options: &ReadOptions,
        backend: &dyn Backend,
        front: &Front,
        stats: &mut ReadStats,
    ) -> Result<(Vec<RecordBatch>, Vec<Range<u64>>)> {
        let _ = front;
        self.read_group(group, options, backend, stats)
    }
}

/// Reads `group` with `first` (the reader's own way of reading it), on
/// `backend` drawing on the read's host budget
/// ([`ReadTuning::host_memory`](super::ReadTuning::host_memory)). A read
/// that a memory limit refused (device or host) is read again one stripe
/// or row group per group, so that a read group larger than the device or
/// the budget goes through it in smaller ones; any other result is
/// returned as it is. A single unit that still does not fit fails with the
/// limit's error. The units are planned again with the same options over
/// the group's rows, and the reader's shaping keeps only the rows it
/// selected. A backend failure that ends the read names the file and the
/// rows it was reading ([`Error::Device`](crate::error::Error::Device)).
pub(crate) fn or_unit_by_unit<F: GroupedFile>(
    first: impl FnOnce(&dyn Backend, &mut ReadStats) -> Result<(Vec<RecordBatch>, Vec<Range<u64>>)>,
    file: &F,
    group: &F::Group,
    options: &ReadOptions,
    backend: &dyn Backend,
    stats: &mut ReadStats,
) -> Result<(Vec<RecordBatch>, Vec<Range<u64>>)> {
    let budget = options.tuning.host_memory.as_ref();
    let span = file.group_span(group);
    let at = || crate::error::Location::file(file.source().path());
    let named = |e: crate::error::Error| e.reading(at, span.clone());
    let first = first(&Budgeted::new(backend, budget), stats);
    let error = match first {
        Err(e) if e.is_over_memory_limit() => e,
        other => return other.map_err(named),
    };
    let mut small = options.clone();
    small.tuning = small.tuning.with_group_bytes(Some(1));
    let inside = |rows: Range<u64>| span.start <= rows.start && rows.end <= span.end;
    let units = file.plan_groups(&small, backend, &inside, stats)?;
    if units.len() <= 1 {
        return Err(named(error));
    }
    tracing::debug!(
        "{}: read group of rows {span:?} over a memory limit ({error}); reading its {} units one by one",
        F::FORMAT,
        units.len()
    );
    let (mut batches, mut rows) = (Vec::new(), Vec::new());
    for unit in &units {
        let unit_rows = file.group_span(unit);
        let (b, r) = file
            .read_group(unit, &small, &Budgeted::new(backend, budget), stats)
            .map_err(|e| e.reading(at, unit_rows))?;
        batches.extend(b);
        rows.extend(r);
    }
    Ok((batches, rows))
}

/// Every read group of `file` that `options` select, `options`' groups in
/// flight at once, each through [`or_unit_by_unit`]: the whole-file read
/// of the ORC, Parquet and GSST container readers (their `read_with_stats`),
/// which SQL scans call with a byte range.
pub(crate) fn read_with_stats<F: GroupedFile>(
    file: &F,
    options: &ReadOptions,
    backend: &dyn Backend,
) -> Result<(Vec<RecordBatch>, ReadStats)> {
    let mut stats = ReadStats::default();
    let groups = file.plan_groups(options, backend, &|_| true, &mut stats)?;
    let out = super::read_groups(groups, options, &mut stats, |group, front, stats| {
        let first = |b: &dyn Backend, stats: &mut ReadStats| {
            file.read_group_in_flight(&group, options, b, front, stats)
        };
        or_unit_by_unit(first, file, &group, options, backend, stats).map(|(batches, _)| batches)
    })?;
    Ok((out, stats))
}
