//! What a read asks for and how it runs, shared by the ORC and Parquet
//! readers: [`ReadOptions`] (columns, batch size, byte range, predicates)
//! with its [`ReadTuning`] (read groups, groups in flight, column sets, the
//! Parquet reader's device switches), the [`ReadStats`] a read reports,
//! and the read-group loop both readers run.
//!
//! The reader builders stream a file read group by read group:
//! [`ReaderBuilder`] (a local file or bytes in memory, giving a
//! synchronous `RecordBatchReader`) and [`StreamBuilder`] (an object in
//! any `object_store::ObjectStore`, giving an async `Stream`), generic
//! over the format ([`GroupedFile`]) and named per format
//! (`parquet::ParquetReaderBuilder`, `orc::OrcStreamBuilder`, ...).

mod builder;
mod file;
mod predicate;
mod selection;
pub mod stream;

pub use builder::{BatchReader, ReaderBuilder, STREAM_GROUP_BYTES};
pub use file::GroupedFile;
pub(crate) use file::read_with_stats;
pub(crate) use predicate::may_match_range;
pub use predicate::{CmpOp, Predicate, Scalar};
pub use selection::RowSelection;
pub use stream::{BatchStream, StreamBuilder};

use arrow::array::RecordBatch;

use crate::error::Result;
use crate::exec::pipeline::Front;
use crate::exec::{Backend, column_sets};

/// How a read runs: sizes and switches that change its speed, never its
/// output. The defaults are the measured best; benchmarks flip them to
/// compare, and every read takes its own (two reads in one process may
/// differ).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ReadTuning {
    /// How a read group's columns split into sets decoded side by side
    /// ([`column_sets::Split::default`]: at most
    /// [`MAX_SETS`](column_sets::MAX_SETS) sets of at least
    /// [`MIN_SET_BYTES`](column_sets::MIN_SET_BYTES)).
    pub column_sets: column_sets::Split,
    /// Compressed bytes of stripes or row groups read and decoded together
    /// (a single larger one still makes a group of its own); `None`, the
    /// default: the backend's choice ([`Backend::group_bytes`]).
    pub group_bytes: Option<u64>,
    /// Read groups in flight side by side
    /// ([`pipeline`](crate::exec::pipeline); default
    /// [`GROUPS_IN_FLIGHT`](crate::exec::pipeline::GROUPS_IN_FLIGHT), 1).
    pub groups_in_flight: usize,
    /// Parquet: CRC32s of pages that lie on the device are checked there
    /// (default on); off, on the host.
    pub device_crc: bool,
    /// Parquet: inflated pages the host does not read stay on the device
    /// (default on; needs [`device_crc`](Self::device_crc)); off, every
    /// page comes to the host.
    pub pages_on_device: bool,
    /// Parquet: byte-array dictionary pages are gathered by stages
    /// (`Some(true)`: on every backend, the CPU then running the stages'
    /// reference code), on the host (`Some(false)`), or by stages where
    /// the pages lie on the device (`None`, the default).
    pub device_byte_dicts: Option<bool>,
    /// Parquet: dictionary-encoded Decimal128 chunks are gathered widened
    /// (default on); off, widened on the host afterwards. On the H100 it
    /// moved time from the host's Arrow conversion to the device's gathers
    /// and downloads, SF 10 lineitem at 7.1 GB/s either way.
    pub widen_decimals: bool,
    /// Host memory the stages of a read draw on before they allocate their
    /// outputs (`None`, the default: no budget beyond what allocation
    /// gives). Sizes come from file metadata; a budget turns a file that
    /// claims more than it holds into an error naming the claim, and a
    /// read group over it is read again one stripe or row group at a time.
    /// The bytes a group's stages took are given back when its read ends.
    pub host_memory: Option<crate::exec::memory::HostBudget>,
}

impl Default for ReadTuning {
    fn default() -> Self {
        Self {
            column_sets: column_sets::Split::default(),
            group_bytes: None,
            groups_in_flight: crate::exec::pipeline::GROUPS_IN_FLIGHT,
            device_crc: true,
            pages_on_device: true,
            device_byte_dicts: None,
            widen_decimals: true,
            host_memory: None,
        }
    }
}

impl ReadTuning {
    /// Sets [`column_sets`](Self::column_sets).
    pub fn with_column_sets(mut self, split: column_sets::Split) -> Self {
        self.column_sets = split;
        self
    }

    /// Sets [`group_bytes`](Self::group_bytes) (`Some(0)` reads as `None`).
    pub fn with_group_bytes(mut self, bytes: Option<u64>) -> Self {
        self.group_bytes = bytes.filter(|&b| b > 0);
        self
    }

    /// Sets [`groups_in_flight`](Self::groups_in_flight) (at least 1).
    pub fn with_groups_in_flight(mut self, n: usize) -> Self {
        self.groups_in_flight = n.max(1);
        self
    }

    /// Sets [`device_crc`](Self::device_crc).
    pub fn with_device_crc(mut self, on: bool) -> Self {
        self.device_crc = on;
        self
    }

    /// Sets [`pages_on_device`](Self::pages_on_device).
    pub fn with_pages_on_device(mut self, on: bool) -> Self {
        self.pages_on_device = on;
        self
    }

    /// Sets [`device_byte_dicts`](Self::device_byte_dicts).
    pub fn with_device_byte_dicts(mut self, on: Option<bool>) -> Self {
        self.device_byte_dicts = on;
        self
    }

    /// Sets [`widen_decimals`](Self::widen_decimals).
    pub fn with_widen_decimals(mut self, on: bool) -> Self {
        self.widen_decimals = on;
        self
    }

    /// Sets [`host_memory`](Self::host_memory).
    pub fn with_host_memory(mut self, budget: Option<crate::exec::memory::HostBudget>) -> Self {
        self.host_memory = budget;
        self
    }

    /// Sets [`host_memory`](Self::host_memory) to a budget of its own of at
    /// most `bytes` at once (`None`: no budget).
    pub fn with_host_memory_limit(self, bytes: Option<u64>) -> Self {
        self.with_host_memory(bytes.map(crate::exec::memory::HostBudget::limit))
    }

    /// Whether pages the host does not read may stay on the device: asked
    /// for, and their CRC32s checked there.
    pub fn keeps_pages_on_device(&self) -> bool {
        self.pages_on_device && self.device_crc
    }

    /// Compressed bytes per read group: [`group_bytes`](Self::group_bytes),
    /// else the backend's.
    pub fn group_bytes_on(&self, backend: &dyn Backend) -> u64 {
        self.group_bytes.unwrap_or_else(|| backend.group_bytes())
    }
}

/// What to read, and how ([`tuning`](Self::tuning)).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Top-level columns to read, in this order (`None`: all).
    pub columns: Option<Vec<String>>,
    /// Most rows per record batch.
    pub batch_size: usize,
    /// Read only stripes or row groups starting inside this file byte
    /// range (how distributed readers split files).
    pub byte_range: Option<std::ops::Range<u64>>,
    /// Conjunction of predicates used to skip stripes by their statistics,
    /// then ORC row groups by the row index (Parquet: row groups, then
    /// pages by the page index). Rows of what is kept are not filtered: a
    /// Parquet read returns whole pages' rows, the same rows in every
    /// column.
    pub predicates: Vec<Predicate>,
    /// The caller reads the values of flat required columns only on the
    /// backend's device (an aggregate over the decode stages' outputs,
    /// which it must keep there: [`Backend::retain_decoded`]):
    /// Parquet chunks whose Arrow buffers are those outputs as they are
    /// (every data page dictionary-encoded) leave them on the device and
    /// their host bytes unwritten. Off by default; ORC ignores it.
    pub device_values: bool,
    /// Parquet decimals stored as INT32 or INT64 (top-level, precision up
    /// to 9 or 18) are read as Arrow `Decimal32` or `Decimal64`, the stored
    /// values as they are, rather than widened to `Decimal128` as the
    /// parquet crate reads them: for callers that take either width (an
    /// aggregate program) and skip the widening's copy and its doubled
    /// bytes. Off by default; ORC ignores it.
    pub narrow_decimals: bool,
    /// How the read runs ([`ReadTuning::default`]).
    pub tuning: ReadTuning,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            columns: None,
            batch_size: 65536,
            byte_range: None,
            predicates: Vec::new(),
            device_values: false,
            narrow_decimals: false,
            tuning: ReadTuning::default(),
        }
    }
}

impl ReadOptions {
    /// Projects onto the named top-level columns.
    pub fn with_columns<S: Into<String>>(mut self, cols: impl IntoIterator<Item = S>) -> Self {
        self.columns = Some(cols.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the batch size (at least 1).
    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n.max(1);
        self
    }

    /// Sets [`byte_range`](Self::byte_range).
    pub fn with_byte_range(mut self, range: Option<std::ops::Range<u64>>) -> Self {
        self.byte_range = range;
        self
    }

    /// Adds a pruning predicate.
    pub fn with_predicate(mut self, p: Predicate) -> Self {
        self.predicates.push(p);
        self
    }

    /// Replaces the pruning predicates.
    pub fn with_predicates(mut self, ps: impl IntoIterator<Item = Predicate>) -> Self {
        self.predicates = ps.into_iter().collect();
        self
    }

    /// Sets [`device_values`](Self::device_values).
    pub fn with_device_values(mut self, on: bool) -> Self {
        self.device_values = on;
        self
    }

    /// Sets [`narrow_decimals`](Self::narrow_decimals).
    pub fn with_narrow_decimals(mut self, on: bool) -> Self {
        self.narrow_decimals = on;
        self
    }

    /// Sets how the read runs.
    pub fn with_tuning(mut self, tuning: ReadTuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// Sets how columns split into concurrently decoded sets (the
    /// tuning's [`column_sets`](ReadTuning::column_sets)).
    pub fn with_column_sets(mut self, split: column_sets::Split) -> Self {
        self.tuning.column_sets = split;
        self
    }
}

/// `read` of every group of stripes or row groups, up to the tuning's
/// groups in flight at once ([`pipeline`](crate::exec::pipeline)); each
/// group's stats added to `stats`, its batches cut to the batch size, in
/// group order.
pub(crate) fn read_groups<G: Send>(
    groups: Vec<G>,
    options: &ReadOptions,
    stats: &mut ReadStats,
    read: impl Fn(G, &Front, &mut ReadStats) -> Result<Vec<RecordBatch>> + Sync,
) -> Result<Vec<RecordBatch>> {
    let depth = options.tuning.groups_in_flight.max(1);
    let read = crate::exec::pipeline::run(groups, depth, |group, front| {
        let mut stats = ReadStats::default();
        read(group, front, &mut stats).map(|batches| (batches, stats))
    })?;
    let mut out = Vec::new();
    for (batches, group_stats) in read {
        stats.add(&group_stats);
        for batch in batches {
            out.extend(split_batch(&batch, options.batch_size));
        }
    }
    Ok(out)
}

/// Where a read spent its time (wall clock, summed over stripe groups) and
/// what it skipped. The stripe and row-group counts are the ORC reader's;
/// other readers leave them 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct ReadStats {
    /// Bytes read from the file (streams only).
    pub file_bytes: u64,
    /// Decompressed stream bytes.
    pub stream_bytes: u64,
    /// Reading the tail, stripe footers and streams.
    pub io_s: f64,
    /// Decompression stage.
    pub decompress_s: f64,
    /// Decode stages (RLE, byte and boolean RLE).
    pub decode_s: f64,
    /// Building Arrow arrays.
    pub assemble_s: f64,
    /// Parquet data pages decompressed and decoded (0 for ORC).
    pub pages_read: u64,
    /// Parquet data pages the page index ruled out: neither decompressed
    /// nor decoded (0 for ORC).
    pub pages_skipped: u64,
    /// Stripes decoded (at least one row group kept).
    pub stripes_read: u64,
    /// Stripes of the byte range skipped: ruled out by the stripe
    /// statistics, or every row group by the row index.
    pub stripes_pruned: u64,
    /// Row groups of the decoded stripes that the row index kept (every
    /// row group when nothing prunes; 0 for files without a row index).
    pub row_groups_read: u64,
    /// Row groups of the decoded stripes ruled out by the row index.
    pub row_groups_pruned: u64,
    /// Of the pruned row groups, those decoded all the same and sliced off
    /// the output (see [`ReadStats::row_index_fallbacks`] and the `seek`
    /// module: nested columns, merged windows); the others were not read.
    pub row_groups_sliced: u64,
    /// Stripes with pruned row groups read whole and sliced because the row
    /// index positions could not be used (nested or unknown columns,
    /// positions that do not fit the streams, a window that failed to
    /// decode).
    pub row_index_fallbacks: u64,
}

impl ReadStats {
    /// Adds the stats of reads that ran side by side: counts add up, and
    /// each stage's time is the longest of theirs (the wall-clock share a
    /// stage took, where the sum would count overlapped seconds twice).
    pub fn add_concurrent(&mut self, others: &[ReadStats]) {
        let max = |f: fn(&ReadStats) -> f64| others.iter().map(f).fold(0.0, f64::max);
        let (io, decompress, decode, assemble) = (
            max(|s| s.io_s),
            max(|s| s.decompress_s),
            max(|s| s.decode_s),
            max(|s| s.assemble_s),
        );
        for o in others {
            self.add(o);
        }
        self.io_s += io - others.iter().map(|s| s.io_s).sum::<f64>();
        self.decompress_s += decompress - others.iter().map(|s| s.decompress_s).sum::<f64>();
        self.decode_s += decode - others.iter().map(|s| s.decode_s).sum::<f64>();
        self.assemble_s += assemble - others.iter().map(|s| s.assemble_s).sum::<f64>();
    }

    /// Adds `other` to `self`, field by field.
    pub fn add(&mut self, other: &ReadStats) {
        self.file_bytes += other.file_bytes;
        self.stream_bytes += other.stream_bytes;
        self.io_s += other.io_s;
        self.decompress_s += other.decompress_s;
        self.decode_s += other.decode_s;
        self.assemble_s += other.assemble_s;
        self.stripes_read += other.stripes_read;
        self.stripes_pruned += other.stripes_pruned;
        self.row_groups_read += other.row_groups_read;
        self.row_groups_pruned += other.row_groups_pruned;
        self.row_groups_sliced += other.row_groups_sliced;
        self.row_index_fallbacks += other.row_index_fallbacks;
        self.pages_read += other.pages_read;
        self.pages_skipped += other.pages_skipped;
    }
}

/// `batch` cut into zero-copy slices of at most `rows` rows (at least 1),
/// as every reader hands out batches of the requested size.
pub fn split_batch(batch: &RecordBatch, rows: usize) -> impl Iterator<Item = RecordBatch> + '_ {
    let rows = rows.max(1);
    (0..batch.num_rows())
        .step_by(rows)
        .map(move |at| batch.slice(at, rows.min(batch.num_rows() - at)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::CpuBackend;

    #[test]
    fn defaults_are_the_measured_settings() {
        let t = ReadTuning::default();
        assert_eq!(t.column_sets, column_sets::Split::default());
        assert_eq!(t.column_sets.max_sets, column_sets::MAX_SETS);
        assert_eq!(t.group_bytes, None);
        assert_eq!(t.groups_in_flight, 1);
        assert!(t.device_crc && t.pages_on_device && t.widen_decimals);
        assert_eq!(t.device_byte_dicts, None);
        assert!(t.keeps_pages_on_device());
        let o = ReadOptions::default();
        assert_eq!(o.batch_size, 65536);
        assert_eq!(o.tuning, t);
        assert!(!o.device_values && !o.narrow_decimals);
    }

    #[test]
    fn builders_set_and_clamp() {
        let t = ReadTuning::default()
            .with_group_bytes(Some(0))
            .with_groups_in_flight(0)
            .with_device_crc(false);
        assert_eq!(t.group_bytes, None);
        assert_eq!(t.groups_in_flight, 1);
        // Pages stay on the device only where their CRC32s are checked there.
        assert!(t.pages_on_device && !t.keeps_pages_on_device());
        let o = ReadOptions::default()
            .with_column_sets(column_sets::Split::NONE)
            .with_batch_size(0);
        assert_eq!(o.tuning.column_sets, column_sets::Split::NONE);
        assert_eq!(o.batch_size, 1);
    }

    #[test]
    fn group_bytes_prefer_the_tuning_then_the_backend() {
        let cpu = CpuBackend::new();
        let set = ReadTuning::default().with_group_bytes(Some(5 << 20));
        assert_eq!(set.group_bytes_on(&cpu), 5 << 20);
        assert_eq!(
            ReadTuning::default().group_bytes_on(&cpu),
            cpu.group_bytes()
        );
    }
}
