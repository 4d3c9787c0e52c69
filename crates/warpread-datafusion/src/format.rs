//! The plug-in point between DataFusion and warpread's file readers: a
//! [`WarpFormat`] opens a file into a [`WarpFile`], which reports its schema
//! and independently readable units (ORC stripes, Parquet row groups) and
//! reads a run of them on a backend. The `FileFormat`, `FileSource` and
//! `FileOpener` in this module are written once against these traits; ORC
//! ([`OrcFormat`]) and Parquet ([`ParquetFormat`]) are the implementations.

use std::fmt::Debug;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::common::Statistics;
use datafusion::common::stats::Precision;

use crate::error::Result;
use crate::exec::Backend;
use crate::orc::{OrcFile, Predicate, ReadOptions, ReadStats, ReadTuning};
use crate::parquet::ParquetFile;
use warpread::source::Source;

/// A file format warpread decodes.
pub trait WarpFormat: Debug + Send + Sync + 'static {
    /// Short name shown in plans and errors: `orc`.
    fn name(&self) -> &'static str;
    /// The default file extension, with its dot: `.orc`.
    fn extension(&self) -> &'static str;
    /// The `CREATE EXTERNAL TABLE ... STORED AS` name (any case) that reads
    /// with this format; by default [`name`](Self::name). A format whose
    /// natural name DataFusion already serves picks another, so the
    /// built-in reader stays reachable.
    fn stored_as(&self) -> &'static str {
        self.name()
    }
    /// Opens a local file and parses its metadata.
    fn open(&self, path: &Path) -> Result<Arc<dyn WarpFile>>;
    /// The format's name in errors about its bytes: `ORC`.
    fn source_format(&self) -> &'static str;
    /// Parses the metadata of the bytes of `src`: an object in a store,
    /// whose ranges are fetched into it ([`Source::fetched`]).
    fn open_source(&self, src: Source) -> Result<Arc<dyn WarpFile>>;
}

/// What a scan of one file asks for.
#[derive(Debug, Clone, Default)]
pub struct ScanRequest {
    /// Top-level columns, in output order.
    pub columns: Vec<String>,
    /// Conjunction of predicates for pruning units (and Parquet pages) by
    /// statistics; rows of kept units and pages are not filtered.
    pub predicates: Vec<Predicate>,
    /// Only units starting inside this byte range (DataFusion's file
    /// splitting), or the whole file.
    pub byte_range: Option<Range<u64>>,
    /// Most rows per batch.
    pub batch_size: usize,
    /// Values of flat required columns are read on the device only
    /// ([`ReadOptions::device_values`](crate::orc::ReadOptions::device_values)).
    pub device_values: bool,
    /// Decimals stored as integers are read at their stored width
    /// ([`ReadOptions::narrow_decimals`](crate::orc::ReadOptions::narrow_decimals)):
    /// only for a consumer that takes either width (an aggregate program),
    /// never for DataFusion's operators.
    pub narrow_decimals: bool,
    /// The reader's tuning (group size, groups in flight: see
    /// `warpread.group_mib`); its columns, batch size, range and predicates
    /// are ignored, the fields above say those.
    pub tuning: ReadTuning,
}

/// One independently readable piece of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadUnit {
    /// Index in the file (stripe or row-group number).
    pub index: usize,
    /// File offset where it starts.
    pub offset: u64,
    /// Compressed bytes it spans.
    pub bytes: u64,
    /// Rows in it (a read with predicates may return fewer: Parquet page
    /// pruning).
    pub rows: u64,
}

/// An open file.
pub trait WarpFile: Send + Sync {
    /// The file's Arrow schema.
    fn schema(&self) -> SchemaRef;
    /// Rows in the file.
    fn rows(&self) -> u64;
    /// DataFusion's statistics of the file read as `table_schema`: rows,
    /// and per column what the footer records (see
    /// [`statistics`](crate::statistics)). By default, rows only.
    fn statistics(&self, table_schema: &SchemaRef) -> Result<Statistics> {
        Ok(Statistics::new_unknown(table_schema)
            .with_num_rows(Precision::Exact(self.rows() as usize)))
    }
    /// The units the request selects (byte range, then statistics), in file
    /// order.
    fn plan(&self, request: &ScanRequest) -> Result<Vec<ReadUnit>>;
    /// The narrowest range (max - min + 1) of the top-level integer column
    /// `column` over the units, by their statistics; `None` when unknown.
    /// A hint, not a count of distinct values: a planner skips device
    /// aggregates grouped by keys whose every unit spans more values than
    /// the device's group table holds (such keys usually have that many).
    fn narrowest_key_range(&self, column: &str) -> Option<u64> {
        let _ = column;
        None
    }
    /// Where its bytes come from.
    fn source(&self) -> &Source;
    /// The file bytes reading `units` for `request` reads (an object
    /// store's reader fetches them first). May read metadata (ORC stripe
    /// footers): over an object store, call it through
    /// `warpread::read::stream::ranges_fetching`.
    fn unit_ranges(&self, units: &[ReadUnit], request: &ScanRequest) -> Result<Vec<Range<u64>>>;
    /// Reads `units` (consecutive entries of [`plan`](Self::plan)'s answer)
    /// into batches of the requested columns, decoding on `backend`.
    fn read(
        &self,
        units: &[ReadUnit],
        request: &ScanRequest,
        backend: &dyn Backend,
    ) -> Result<(Vec<RecordBatch>, ReadStats)>;
}

/// ORC through [`OrcFile`].
#[derive(Debug, Clone, Copy, Default)]
pub struct OrcFormat;

impl WarpFormat for OrcFormat {
    fn name(&self) -> &'static str {
        "orc"
    }

    fn extension(&self) -> &'static str {
        ".orc"
    }

    fn open(&self, path: &Path) -> Result<Arc<dyn WarpFile>> {
        Ok(Arc::new(OrcFile::open(path)?))
    }

    fn source_format(&self) -> &'static str {
        "ORC"
    }

    fn open_source(&self, src: Source) -> Result<Arc<dyn WarpFile>> {
        Ok(Arc::new(OrcFile::from_source(src)?))
    }
}

/// The reader options of a scan request over the units in `byte_range`.
pub(crate) fn read_options(request: &ScanRequest, byte_range: Option<Range<u64>>) -> ReadOptions {
    ReadOptions::default()
        .with_columns(request.columns.clone())
        .with_batch_size(request.batch_size)
        .with_byte_range(byte_range)
        .with_predicates(request.predicates.clone())
        .with_device_values(request.device_values)
        .with_narrow_decimals(request.narrow_decimals)
        // A scan's partitions already read side by side; column sets within
        // each multiplied the threads waiting for CUDA lanes (TPC-H SF 10
        // Parquet on CUDA: 59.5 s with them, 44.4 s without; on the CPU
        // backend at SF 1, 2 cores: 9.1 s against 8.9 s).
        .with_tuning(
            request
                .tuning
                .clone()
                .with_column_sets(crate::exec::column_sets::Split::NONE),
        )
}

impl WarpFile for OrcFile {
    fn schema(&self) -> SchemaRef {
        OrcFile::schema(self)
    }

    fn rows(&self) -> u64 {
        OrcFile::rows(self)
    }

    fn source(&self) -> &Source {
        OrcFile::source(self)
    }

    fn unit_ranges(&self, units: &[ReadUnit], request: &ScanRequest) -> Result<Vec<Range<u64>>> {
        let stripes: Vec<usize> = units.iter().map(|u| u.index).collect();
        self.group_ranges(&stripes, &read_options(request, None))
    }

    fn statistics(&self, table_schema: &SchemaRef) -> Result<Statistics> {
        Ok(super::statistics::orc(self, table_schema))
    }

    fn plan(&self, request: &ScanRequest) -> Result<Vec<ReadUnit>> {
        let options = read_options(request, request.byte_range.clone());
        let stripes = self.stripes();
        Ok(self
            .selected_stripes(&options)?
            .into_iter()
            .map(|i| {
                let s = &stripes[i];
                ReadUnit {
                    index: i,
                    offset: s.offset,
                    bytes: s.index_length + s.data_length + s.footer_length,
                    rows: s.rows,
                }
            })
            .collect())
    }

    fn read(
        &self,
        units: &[ReadUnit],
        request: &ScanRequest,
        backend: &dyn Backend,
    ) -> Result<(Vec<RecordBatch>, ReadStats)> {
        let (Some(first), Some(last)) = (units.first(), units.last()) else {
            return Ok((Vec::new(), ReadStats::default()));
        };
        // Stripes start at distinct offsets, so this range holds exactly the
        // stripes from first to last; pruned ones between are pruned again.
        let options = read_options(request, Some(first.offset..last.offset + 1));
        self.read_with_stats(&options, backend)
    }
}

/// Parquet through warpread's own reader ([`ParquetFile`]): units are row
/// groups. `CREATE EXTERNAL TABLE ... STORED AS WARPREAD_PARQUET` reads with
/// it; `STORED AS PARQUET` stays DataFusion's built-in reader, which users
/// of DataFusion expect behind that name.
#[derive(Debug, Clone, Copy, Default)]
pub struct ParquetFormat;

impl WarpFormat for ParquetFormat {
    fn name(&self) -> &'static str {
        "parquet"
    }

    fn extension(&self) -> &'static str {
        ".parquet"
    }

    fn stored_as(&self) -> &'static str {
        "warpread_parquet"
    }

    fn open(&self, path: &Path) -> Result<Arc<dyn WarpFile>> {
        Ok(Arc::new(ParquetFile::open(path)?))
    }

    fn source_format(&self) -> &'static str {
        "Parquet"
    }

    fn open_source(&self, src: Source) -> Result<Arc<dyn WarpFile>> {
        Ok(Arc::new(ParquetFile::from_source(src)?))
    }
}

impl WarpFile for ParquetFile {
    fn schema(&self) -> SchemaRef {
        ParquetFile::schema(self)
    }

    fn narrowest_key_range(&self, column: &str) -> Option<u64> {
        use parquet::file::statistics::Statistics;
        let meta = self.metadata();
        let descr = meta.file_metadata().schema_descr();
        let c = (0..descr.num_columns()).find(|&i| {
            let path = descr.column(i).path().parts().to_vec();
            path.len() == 1 && path[0] == column
        })?;
        let mut fewest: Option<u64> = None;
        for rg in meta.row_groups() {
            let span = match rg.column(c).statistics()? {
                Statistics::Int32(s) => i64::from(*s.max_opt()?).abs_diff(i64::from(*s.min_opt()?)),
                Statistics::Int64(s) => s.max_opt()?.abs_diff(*s.min_opt()?),
                _ => return None,
            };
            let n = span.saturating_add(1);
            fewest = Some(fewest.map_or(n, |f| f.min(n)));
        }
        fewest
    }

    fn rows(&self) -> u64 {
        ParquetFile::rows(self)
    }

    fn source(&self) -> &Source {
        ParquetFile::source(self)
    }

    fn unit_ranges(&self, units: &[ReadUnit], request: &ScanRequest) -> Result<Vec<Range<u64>>> {
        let row_groups: Vec<usize> = units.iter().map(|u| u.index).collect();
        let options = read_options(request, None);
        let mut ranges = self.chunk_ranges(&row_groups, &options)?;
        if !request.predicates.is_empty() {
            ranges.extend(self.index_ranges(&row_groups));
        }
        Ok(ranges)
    }

    fn statistics(&self, table_schema: &SchemaRef) -> Result<Statistics> {
        super::statistics::parquet(self, table_schema)
    }

    fn plan(&self, request: &ScanRequest) -> Result<Vec<ReadUnit>> {
        // A row group belongs to the byte range holding its first page (the
        // first column chunk's dictionary or data page), as in DataFusion's
        // own Parquet scan (`prune_by_range`): every row group falls in
        // exactly one of the ranges DataFusion cuts a file into.
        let options = read_options(request, request.byte_range.clone());
        let meta = self.metadata();
        Ok(self
            .selected_row_groups(&options)?
            .into_iter()
            .map(|g| {
                let rg = meta.row_group(g);
                ReadUnit {
                    index: g,
                    offset: rg
                        .columns()
                        .first()
                        .and_then(crate::parquet::pages::chunk_range)
                        .map_or(0, |r| r.0),
                    bytes: rg.compressed_size().max(0) as u64,
                    rows: rg.num_rows().max(0) as u64,
                }
            })
            .collect())
    }

    fn read(
        &self,
        units: &[ReadUnit],
        request: &ScanRequest,
        backend: &dyn Backend,
    ) -> Result<(Vec<RecordBatch>, ReadStats)> {
        let (Some(first), Some(last)) = (units.first(), units.last()) else {
            return Ok((Vec::new(), ReadStats::default()));
        };
        // Row groups normally start at increasing offsets, so this range
        // selects exactly the planned run (pruned ones between are pruned
        // again by the same predicates).
        let options = read_options(request, Some(first.offset..last.offset + 1));
        let want: Vec<usize> = units.iter().map(|u| u.index).collect();
        if self.selected_row_groups(&options)? == want {
            return self.read_with_stats(&options, backend);
        }
        // A footer listing row groups out of file order: read them one by
        // one rather than return a row group twice or miss one.
        let mut out = (Vec::new(), ReadStats::default());
        for u in units {
            let one = read_options(request, Some(u.offset..u.offset + 1));
            if self.selected_row_groups(&one)? != [u.index] {
                return Err(crate::error::Error::Unsupported(format!(
                    "{}: several row groups start at byte {}",
                    self.path().display(),
                    u.offset
                )));
            }
            let (batches, s) = self.read_with_stats(&one, backend)?;
            out.0.extend(batches);
            crate::StatsSink::add_to(&mut out.1, &s);
        }
        Ok(out)
    }
}
