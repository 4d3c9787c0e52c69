//! `ParquetFile`: opening a file and reading it into Arrow record batches
//! through the decode plan.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{DataType, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use rayon::prelude::*;

use super::arrow_schema;
use super::assemble::{self, Columns};
use super::decode::{self, LeafInfo};
use super::decompress;
use super::levels::{Builder, Node, Shape};
use super::page_header::{self, PageKind};
use super::page_index::{self, Kept};
use super::page_select;
use super::pages::{self, RawChunk};
use super::predicate;
use super::row_ranges::{self, RowRanges};
use crate::error::{Error, Location, Result};
use crate::exec::pipeline::Front;
use crate::exec::{Backend, column_sets};
use crate::read::{Predicate, ReadOptions, ReadStats};
use crate::source::Source;

/// A Parquet file with its footer parsed.
#[derive(Debug)]
pub struct ParquetFile {
    src: Source,
    meta: Arc<ParquetMetaData>,
    schema: SchemaRef,
    nodes: Vec<Node>,
    /// The file row number of each row group's first row.
    first_rows: Vec<u64>,
}

/// One read group of a Parquet read: row groups read and decoded
/// together, each with the rows its page index keeps (all when `None`).
#[derive(Debug, Clone)]
pub struct RowGroupSet {
    units: Vec<(usize, Option<RowRanges>)>,
}

impl RowGroupSet {
    /// The row groups, in file order.
    pub fn row_groups(&self) -> impl Iterator<Item = usize> + '_ {
        self.units.iter().map(|(g, _)| *g)
    }
}

fn leaf_types(n: &Node, out: &mut HashMap<usize, DataType>) {
    match &n.shape {
        Shape::Leaf(c) => {
            out.insert(*c, n.data_type.clone());
        }
        Shape::Struct(ch) => ch.iter().for_each(|c| leaf_types(c, out)),
        Shape::List(c) => leaf_types(c, out),
    }
}

impl ParquetFile {
    /// Opens a file and parses its footer (not the page index).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::from_source(Source::open(path.as_ref(), "Parquet")?)
    }

    /// Parses the footer of Parquet bytes held in memory, named `name` in
    /// errors.
    pub fn from_bytes(name: impl Into<std::path::PathBuf>, bytes: bytes::Bytes) -> Result<Self> {
        Self::from_source(Source::from_bytes(name, bytes, "Parquet"))
    }

    /// Parses the footer of the Parquet bytes of `src`: a file, memory, or
    /// the fetched ranges of an object ([`crate::read::stream`]).
    pub fn from_source(src: Source) -> Result<Self> {
        let path = src.path().to_path_buf();
        let path = path.as_path();
        let at = Location::file(path);
        let len = src.len();
        if len < 12 {
            return Err(Error::parquet(
                &at,
                format!("file of {len} bytes is too short"),
            ));
        }
        let mut tail = Vec::new();
        src.read_into(len - 8, 8, &mut tail, &at)?;
        let mut head = Vec::new();
        src.read_into(0, 4, &mut head, &at)?;
        if &tail[4..] == b"PARE" || head == b"PARE" {
            return Err(Error::Unsupported(format!(
                "{}: encrypted Parquet file (encrypted footer), no key",
                path.display()
            )));
        }
        if &tail[4..] != b"PAR1" || head != b"PAR1" {
            return Err(Error::parquet(&at, "no PAR1 magic at the start and end"));
        }
        let footer = u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")) as u64;
        if footer + 12 > len {
            return Err(Error::parquet(
                &at.clone().at(len - 8),
                format!("footer of {footer} bytes does not fit the file of {len} bytes"),
            ));
        }
        let mut footer_bytes = Vec::new();
        src.read_into(len - 8 - footer, footer, &mut footer_bytes, &at)?;
        // Walked first: the parquet crate's footer parser loops without
        // reading on some hostile bytes (`page_header::check_footer`).
        page_header::check_footer(&footer_bytes).map_err(|m| {
            Error::parquet(&at.clone().at(len - 8 - footer), format!("footer: {m}"))
        })?;
        if page_header::struct_has_field(&footer_bytes, 8).unwrap_or(false) {
            return Err(Error::Unsupported(format!(
                "{}: encrypted Parquet columns (plaintext footer), no key",
                path.display()
            )));
        }
        let perr = |source| Error::Parquet {
            path: path.to_path_buf(),
            source,
        };
        // The footer bytes are in hand: decoded from them, not read again.
        // The page index is not loaded here: only reads with predicates
        // use it, per row group (`page_index`). The footer parser is
        // third-party code fed hostile bytes: a panic there becomes an
        // error here.
        let parsed =
            std::panic::catch_unwind(|| ParquetMetaDataReader::decode_metadata(&footer_bytes))
                .map_err(|_| Error::parquet(&at, "footer parser panicked on this file"))?;
        let meta = Arc::new(parsed.map_err(perr)?);
        // An embedded Arrow schema that arrow-ipc would panic on is skipped
        // (`arrow_schema`): the Parquet schema alone gives the types.
        let unusable = meta
            .file_metadata()
            .key_value_metadata()
            .into_iter()
            .flatten()
            .filter(|kv| kv.key == arrow_schema::KEY)
            .find_map(|kv| kv.value.as_deref().and_then(arrow_schema::problem));
        if let Some(why) = &unusable {
            tracing::warn!(
                "{at}: ignoring the embedded Arrow schema ({why}); reading with the Parquet schema"
            );
        }
        let options = ArrowReaderOptions::new().with_skip_arrow_metadata(unusable.is_some());
        let arm = ArrowReaderMetadata::try_new(meta.clone(), options).map_err(perr)?;
        let schema = arm.schema().clone();
        let nodes = Builder::new(meta.file_metadata().schema_descr())
            .build(schema.fields())
            .map_err(|m| Error::Unsupported(format!("{}: {m}", path.display())))?;
        let mut first_rows = Vec::with_capacity(meta.num_row_groups());
        let mut row = 0u64;
        for rg in meta.row_groups() {
            first_rows.push(row);
            row = row.saturating_add(rg.num_rows().max(0) as u64);
        }
        Ok(Self {
            src,
            meta,
            schema,
            nodes,
            first_rows,
        })
    }

    /// Where the bytes come from.
    pub fn source(&self) -> &Source {
        &self.src
    }

    /// The path.
    pub fn path(&self) -> &Path {
        self.src.path()
    }

    /// The parsed footer (row groups, column chunks, statistics; no page
    /// index).
    pub fn metadata(&self) -> &ParquetMetaData {
        &self.meta
    }

    /// The parsed footer, shared.
    pub fn metadata_ref(&self) -> &Arc<ParquetMetaData> {
        &self.meta
    }

    /// The page index of row group `g`, per leaf column: `Ok(None)` when
    /// the row group has none, `Err` (a message) when it cannot be used.
    /// Reads it from the file at each call (`open` does not load it).
    pub fn page_index(
        &self,
        g: usize,
    ) -> std::result::Result<Option<Vec<page_index::PageIndexColumn>>, String> {
        if g >= self.meta.num_row_groups() {
            return Err(format!("no row group {g}"));
        }
        page_index::summary(&self.src, &self.meta, g)
    }

    /// The Arrow schema of the whole file, as the parquet crate gives it.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Rows in the file.
    pub fn rows(&self) -> u64 {
        self.meta.file_metadata().num_rows().max(0) as u64
    }

    fn projection(&self, options: &ReadOptions) -> Result<Vec<usize>> {
        let fields = self.schema.fields();
        match &options.columns {
            None => Ok((0..fields.len()).collect()),
            Some(names) => names
                .iter()
                .map(|n| {
                    fields.iter().position(|f| f.name() == n).ok_or_else(|| {
                        Error::Unsupported(format!(
                            "{}: no column {n:?} (columns: {})",
                            self.path().display(),
                            fields
                                .iter()
                                .map(|f| f.name().as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })
                })
                .collect(),
        }
    }

    /// The schema of a projection.
    pub fn projected_schema(&self, options: &ReadOptions) -> Result<SchemaRef> {
        let cols = self.projection(options)?;
        Ok(Arc::new(Schema::new_with_metadata(
            cols.iter()
                .map(|&i| {
                    let f = self.schema.field(i);
                    match self.narrowed(i, options) {
                        Some((_, dt)) => f.clone().with_data_type(dt),
                        None => f.clone(),
                    }
                })
                .collect::<Vec<_>>(),
            self.schema.metadata().clone(),
        )))
    }

    /// Field `f`'s leaf and type when the options read it narrowed
    /// ([`ReadOptions::narrow_decimals`]): a top-level decimal stored as
    /// INT32 or INT64 whose precision fits that width.
    fn narrowed(&self, f: usize, options: &ReadOptions) -> Option<(usize, DataType)> {
        let Shape::Leaf(c) = self.nodes[f].shape else {
            return None;
        };
        let DataType::Decimal128(p, s) = *self.schema.field(f).data_type() else {
            return None;
        };
        let physical = self
            .meta
            .file_metadata()
            .schema_descr()
            .column(c)
            .physical_type();
        match physical {
            _ if !options.narrow_decimals => None,
            parquet::basic::Type::INT32 if p <= 9 => Some((c, DataType::Decimal32(p, s))),
            parquet::basic::Type::INT64 if p <= 18 => Some((c, DataType::Decimal64(p, s))),
            _ => None,
        }
    }

    /// Each predicate with the leaf column whose statistics it is checked
    /// against: only flat primitive top-level columns have usable ones.
    fn predicate_leaves<'a>(
        &self,
        options: &'a ReadOptions,
    ) -> Result<Vec<(&'a Predicate, Option<usize>)>> {
        let descr = self.meta.file_metadata().schema_descr();
        options
            .predicates
            .iter()
            .map(|p| {
                let field = self
                    .schema
                    .fields()
                    .iter()
                    .position(|f| f.name() == &p.column)
                    .ok_or_else(|| {
                        Error::Unsupported(format!("predicate on unknown column {:?}", p.column))
                    })?;
                let leaf = match self.nodes[field].shape {
                    Shape::Leaf(c) if descr.column(c).max_rep_level() == 0 => Some(c),
                    _ => None,
                };
                Ok((p, leaf))
            })
            .collect()
    }

    /// Row groups the options select: starting inside the byte range and not
    /// ruled out by the predicates and the column chunk statistics.
    pub fn selected_row_groups(&self, options: &ReadOptions) -> Result<Vec<usize>> {
        let preds = self.predicate_leaves(options)?;
        Ok((0..self.meta.num_row_groups())
            .filter(|&g| {
                let rg = self.meta.row_group(g);
                let start = rg
                    .columns()
                    .first()
                    .and_then(super::pages::chunk_range)
                    .map_or(0, |r| r.0);
                options
                    .byte_range
                    .as_ref()
                    .is_none_or(|r| r.contains(&start))
            })
            .filter(|&g| {
                let rg = self.meta.row_group(g);
                preds.iter().all(|(p, leaf)| {
                    leaf.and_then(|c| rg.columns().get(c))
                        .is_none_or(|cc| predicate::may_match_chunk(p, cc, rg.num_rows()))
                })
            })
            .collect())
    }

    /// Page pruning of the selected row groups `selected` (see
    /// [`page_index::plan`]): per row group, the rows to keep (`None`:
    /// all). Loads no page index for reads without predicates.
    fn page_plans(
        &self,
        options: &ReadOptions,
        selected: &[usize],
        leaves: &[usize],
    ) -> Result<Vec<Option<Kept>>> {
        let preds: Vec<(&Predicate, usize)> = self
            .predicate_leaves(options)?
            .into_iter()
            .filter_map(|(p, c)| Some((p, c?)))
            .collect();
        if preds.is_empty() {
            return Ok(vec![None; selected.len()]);
        }
        let file = Location::file(self.path());
        Ok(selected
            .par_iter()
            .map(|&g| {
                let at = file.clone().with_row_group(g as u64);
                page_index::plan(&self.src, &self.meta, g, &preds, leaves, &at)
            })
            .collect())
    }

    /// Reads the selected row groups into record batches of at most
    /// `options.batch_size` rows, decoding on `backend`. With predicates,
    /// a row group with a page index gives only the rows of the pages that
    /// may match (in every column, in file order); rows are not filtered.
    pub fn read(&self, options: &ReadOptions, backend: &dyn Backend) -> Result<Vec<RecordBatch>> {
        self.read_with_stats(options, backend).map(|(b, _)| b)
    }

    /// [`read`](Self::read), also reporting where the time went.
    pub fn read_with_stats(
        &self,
        options: &ReadOptions,
        backend: &dyn Backend,
    ) -> Result<(Vec<RecordBatch>, ReadStats)> {
        crate::read::read_with_stats(self, options, backend)
    }

    /// The selected row groups whose rows `keep` accepts, with the rows
    /// their page indexes keep, in read groups of about the tuning's group
    /// bytes; pages skipped counted in `stats`.
    pub(crate) fn plan_groups(
        &self,
        options: &ReadOptions,
        backend: &dyn Backend,
        keep: &dyn Fn(std::ops::Range<u64>) -> bool,
        stats: &mut ReadStats,
    ) -> Result<Vec<RowGroupSet>> {
        let cols = self.projection(options)?;
        let mut leaves = Vec::new();
        for &f in &cols {
            self.nodes[f].leaves(&mut leaves);
        }
        let selected: Vec<usize> = self
            .selected_row_groups(options)?
            .into_iter()
            .filter(|&g| keep(self.row_group_rows(g)))
            .collect();
        let plans = self.page_plans(options, &selected, &leaves)?;
        let mut groups: Vec<RowGroupSet> = Vec::new();
        let mut bytes = 0u64;
        let limit = options.tuning.group_bytes_on(backend);
        for (g, plan) in selected.into_iter().zip(plans) {
            // A row group whose every page is ruled out is not read at all.
            if let Some(Kept { rows, pages }) = &plan
                && rows.is_empty()
            {
                stats.pages_skipped += pages;
                continue;
            }
            let size = self.meta.row_group(g).compressed_size().max(0) as u64;
            let unit = (g, plan.map(|k| k.rows));
            match groups.last_mut() {
                Some(v) if bytes + size <= limit => v.units.push(unit),
                _ => {
                    groups.push(RowGroupSet { units: vec![unit] });
                    bytes = 0;
                }
            }
            bytes += size;
        }
        Ok(groups)
    }

    /// The file rows of row group `g`.
    fn row_group_rows(&self, g: usize) -> std::ops::Range<u64> {
        let first = self.first_rows.get(g).copied().unwrap_or(0);
        let rows = self.meta.row_group(g).num_rows().max(0) as u64;
        first..first.saturating_add(rows)
    }

    /// The file rows a read group spans.
    pub(crate) fn group_span(&self, group: &RowGroupSet) -> std::ops::Range<u64> {
        let first = group
            .units
            .first()
            .map_or(0, |(g, _)| self.row_group_rows(*g).start);
        let end = group
            .units
            .last()
            .map_or(first, |(g, _)| self.row_group_rows(*g).end);
        first..end
    }

    /// The file bytes a read group reads: the column chunks of the
    /// projection's leaves.
    pub(crate) fn group_ranges(
        &self,
        group: &RowGroupSet,
        options: &ReadOptions,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        let row_groups: Vec<usize> = group.row_groups().collect();
        self.chunk_ranges(&row_groups, options)
    }

    /// The file bytes of the column chunks a read of `row_groups` with
    /// `options` decodes (the projection's leaves), clamped to the file.
    pub fn chunk_ranges(
        &self,
        row_groups: &[usize],
        options: &ReadOptions,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        let mut leaves = Vec::new();
        for f in self.projection(options)? {
            self.nodes[f].leaves(&mut leaves);
        }
        Ok(row_groups
            .iter()
            .filter(|&&g| g < self.meta.num_row_groups())
            .flat_map(|&g| {
                let rg = self.meta.row_group(g);
                leaves
                    .iter()
                    .filter_map(move |&c| rg.columns().get(c))
                    .filter_map(super::pages::chunk_range)
            })
            .map(|(start, len)| start..start.saturating_add(len).min(self.src.len()))
            .filter(|r| r.start < r.end)
            .collect())
    }

    /// The file bytes planning a read reads: with predicates, the column
    /// and offset indexes of the row groups the statistics keep.
    pub(crate) fn planning_ranges(
        &self,
        options: &ReadOptions,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        if options.predicates.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.index_ranges(&self.selected_row_groups(options)?))
    }

    /// The file bytes of the column and offset indexes of `row_groups`
    /// (what page pruning reads), those that lie inside the file.
    pub fn index_ranges(&self, row_groups: &[usize]) -> Vec<std::ops::Range<u64>> {
        let len = self.src.len();
        let range = |offset: Option<i64>, length: Option<i32>| {
            let start = u64::try_from(offset?).ok()?;
            let end = start.checked_add(u64::try_from(length?).ok()?)?;
            (start < end && end <= len).then_some(start..end)
        };
        row_groups
            .iter()
            .filter(|&&g| g < self.meta.num_row_groups())
            .flat_map(|&g| self.meta.row_group(g).columns().iter())
            .flat_map(|cc| {
                [
                    range(cc.column_index_offset(), cc.column_index_length()),
                    range(cc.offset_index_offset(), cc.offset_index_length()),
                ]
            })
            .flatten()
            .collect()
    }

    /// Reads one read group; returns its batches and, in order, the file
    /// rows they hold.
    pub(crate) fn read_group_set(
        &self,
        group: &RowGroupSet,
        options: &ReadOptions,
        backend: &dyn Backend,
        front: &Front,
        stats: &mut ReadStats,
    ) -> Result<(Vec<RecordBatch>, Vec<std::ops::Range<u64>>)> {
        let cols = self.projection(options)?;
        let schema = self.projected_schema(options)?;
        let batches =
            self.read_sets(&group.units, &cols, &schema, options, backend, front, stats)?;
        let mut rows: Vec<std::ops::Range<u64>> = Vec::new();
        for (g, kept) in &group.units {
            let whole = self.row_group_rows(*g);
            let base = whole.start;
            let mut push = |r: std::ops::Range<u64>| match rows.last_mut() {
                Some(l) if l.end == r.start => l.end = r.end,
                _ => rows.push(r),
            };
            match kept {
                None => push(whole),
                Some(k) => k.iter().for_each(|r| push(base + r.start..base + r.end)),
            }
        }
        Ok((batches, rows))
    }

    /// Reads one group with its columns split into sets of about equal
    /// work ([`set_weight`]) that decode concurrently
    /// ([`column_sets`](crate::exec::column_sets)); stage times in `stats`
    /// are then the slowest set's. Each set passes `front` once its pages
    /// are decompressed ([`pipeline`](crate::exec::pipeline)).
    #[allow(clippy::too_many_arguments)]
    fn read_sets(
        &self,
        group: &[(usize, Option<RowRanges>)],
        cols: &[usize],
        schema: &SchemaRef,
        options: &ReadOptions,
        backend: &dyn Backend,
        front: &Front,
        stats: &mut ReadStats,
    ) -> Result<Vec<RecordBatch>> {
        let split = options.tuning.column_sets;
        let leaves_of = |f: usize| {
            let mut l = Vec::new();
            self.nodes[f].leaves(&mut l);
            l
        };
        let bytes: Vec<u64> = cols
            .iter()
            .map(|&f| {
                let leaves = leaves_of(f);
                group
                    .iter()
                    .flat_map(|(g, _)| {
                        let rg = self.meta.row_group(*g);
                        leaves
                            .iter()
                            .filter_map(move |&c| rg.columns().get(c))
                            .map(set_weight)
                    })
                    .fold(0u64, u64::saturating_add)
            })
            .collect();
        let sets = split.partition(&bytes);
        front.parties(sets.len());
        let (batches, set_stats) = column_sets::read_joined(schema, &sets, |set, schema| {
            let cols: Vec<usize> = set.iter().map(|&i| cols[i]).collect();
            let leaves: Vec<usize> = cols.iter().flat_map(|&f| leaves_of(f)).collect();
            let mut stats = ReadStats::default();
            let batches = self.read_group(
                group, &cols, &leaves, schema, options, backend, front, &mut stats,
            )?;
            Ok((batches, stats))
        })?;
        stats.add_concurrent(&set_stats);
        Ok(batches)
    }

    /// Reads one group of row groups for the columns `cols`, whose leaves
    /// are `leaves`; arrives at `front` once its pages are decompressed.
    #[allow(clippy::too_many_arguments)]
    fn read_group(
        &self,
        group: &[(usize, Option<RowRanges>)],
        cols: &[usize],
        leaves: &[usize],
        schema: &SchemaRef,
        options: &ReadOptions,
        backend: &dyn Backend,
        front: &Front,
        stats: &mut ReadStats,
    ) -> Result<Vec<RecordBatch>> {
        let device_values = options.device_values;
        let file = Location::file(self.path());
        let descr = self.meta.file_metadata().schema_descr();
        let _group = crate::trace::span("pq.group");
        let mut types = HashMap::new();
        for &f in cols {
            leaf_types(&self.nodes[f], &mut types);
            if let Some((c, dt)) = self.narrowed(f, options) {
                types.insert(c, dt);
            }
        }
        let t = std::time::Instant::now();
        let io = crate::trace::span("pq.io");
        let mut chunks = Vec::new();
        let mut codecs = Vec::new();
        let mut infos = Vec::new();
        // Per chunk, the rows its pages hold when the page index dropped
        // some (`None`: the whole row group).
        let mut held = Vec::new();
        // Top-level columns without repetition skip pages: their rows are
        // their level entries. Others (structs, whose leaves must hold the
        // same rows, and lists) are read whole and cut after assembly.
        let flat: Vec<bool> = leaves
            .iter()
            .map(|&c| {
                descr.column(c).max_rep_level() == 0
                    && cols
                        .iter()
                        .any(|&f| matches!(self.nodes[f].shape, Shape::Leaf(x) if x == c))
            })
            .collect();
        // Every chunk's range first, then one parallel read of them all into
        // one buffer, then the page walks one task per chunk.
        let mut reads = Vec::with_capacity(group.len() * leaves.len());
        let mut total = 0usize;
        for (g, _) in group {
            let rg = self.meta.row_group(*g);
            for &c in leaves {
                let cc = rg.column(c);
                let at = file
                    .clone()
                    .with_row_group(*g as u64)
                    .with_column(descr.column(c).path().string());
                let (start, len) = pages::checked_range(cc, &at)?;
                if start.checked_add(len).is_none_or(|e| e > self.src.len()) {
                    return Err(Error::parquet(
                        &at.clone().at(start),
                        format!(
                            "column chunk of {len} bytes at {start} is outside the file of {} bytes",
                            self.src.len()
                        ),
                    ));
                }
                let dest = usize::try_from(len)
                    .ok()
                    .and_then(|n| total.checked_add(n))
                    .map(|end| total..end)
                    .ok_or_else(|| Error::parquet(&at, "column chunk larger than memory"))?;
                total = dest.end;
                reads.push((start, dest, at, cc));
            }
        }
        let refs: Vec<_> = reads
            .iter()
            .map(|(s, d, at, _)| (*s, d.clone(), at))
            .collect();
        let raw = self.src.read_many_for(backend, &refs, total)?;
        let walked: Vec<Vec<pages::RawPage>> = reads
            .par_iter()
            .map(|(start, dest, at, cc)| {
                pages::walk(&raw[dest.clone()], dest.start, *start, cc, at)
            })
            .collect::<Result<_>>()?;
        let mut walked = walked.into_iter().zip(reads);
        for (g, kept) in group {
            let rg = self.meta.row_group(*g);
            for (&c, &flat) in leaves.iter().zip(&flat) {
                let (mut pages, (_, _, at, cc)) = walked.next().expect("one walk per chunk");
                held.push(match kept {
                    Some(kept) if flat => {
                        let rows = rg.num_rows().max(0) as u64;
                        let (h, skipped) = page_select::select(&mut pages, kept, rows, &at)?;
                        stats.pages_skipped += skipped;
                        Some(h)
                    }
                    _ => None,
                });
                stats.pages_read += pages
                    .iter()
                    .filter(|p| matches!(p.header.kind, PageKind::Data | PageKind::DataV2))
                    .count() as u64;
                chunks.push(RawChunk {
                    pages,
                    location: at,
                });
                codecs.push(cc.compression());
                infos.push(match types.get(&c) {
                    Some(dt) => {
                        let mut info = LeafInfo::for_type(&descr.column(c), dt);
                        // Rows cut after assembly would copy the values.
                        info.device_values =
                            device_values && kept.is_none() && info.shares_values(dt);
                        info
                    }
                    None => LeafInfo::new(&descr.column(c)),
                });
            }
        }
        stats.io_s += t.elapsed().as_secs_f64();
        stats.file_bytes += raw.len() as u64;
        drop(io);
        let t = std::time::Instant::now();
        let span = crate::trace::span("pq.decompress");
        // Pages the host will not read may stay on the device (their CRC32
        // is checked there too).
        let host_reads: Option<Vec<Vec<bool>>> =
            options.tuning.keeps_pages_on_device().then(|| {
                chunks
                    .iter()
                    .zip(&infos)
                    .map(|(chunk, info)| decode::host_reads_pages(info, chunk))
                    .collect()
            });
        let pages = decompress::run(&raw, &chunks, &codecs, backend, true, host_reads.as_deref())?;
        front.arrive();
        drop(span);
        stats.decompress_s += t.elapsed().as_secs_f64();
        stats.stream_bytes += pages.buf.len() as u64;
        let t = std::time::Instant::now();
        let span = crate::trace::span("pq.decode");
        // The deferred GZIP CRC32 checks run beside the decode rounds; the
        // decoded values are used only once they pass.
        // A check that panics counts as failed: the strict path below then
        // decides.
        let on_rayon = rayon::current_thread_index().is_some();
        let verify = || {
            let _span = crate::trace::span("pq.crc32");
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                if options.tuning.device_crc && backend.holds_on_device(&pages.buf) {
                    decompress::verify_on_device(&pages, backend)
                } else if on_rayon {
                    decompress::verify(&pages)
                } else {
                    decompress::verify_on_threads(&pages, CRC_THREADS)
                }
            }))
            .unwrap_or(false)
        };
        let decode = || decode::run(&pages, &infos, backend, &options.tuning);
        let (decoded, checked) = if on_rayon {
            // Called on a rayon worker: a join that steals work while it
            // waits (a thread of our own, joined here, could deadlock when
            // every worker waits so).
            rayon::join(decode, verify)
        } else {
            // Called on a thread of the caller's (the CLI, column sets,
            // DataFusion's blocking tasks): the decode rounds stay on it,
            // as their waits for CUDA stages would otherwise hold a rayon
            // worker; without a thread to spare the checks run first.
            std::thread::scope(
                |s| match std::thread::Builder::new().spawn_scoped(s, verify) {
                    Ok(h) => {
                        let decoded = decode();
                        (decoded, h.join().unwrap_or(false))
                    }
                    Err(_) => {
                        let checked = verify();
                        (decode(), checked)
                    }
                },
            )
        };
        let mut decoded = if checked {
            drop(pages);
            decoded?
        } else {
            drop((pages, decoded));
            let pages = decompress::run(&raw, &chunks, &codecs, backend, false, None)?;
            decode::run(&pages, &infos, backend, &options.tuning)?
        };
        drop(raw);
        drop(span);
        stats.decode_s += t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let span = crate::trace::span("pq.to_arrow");
        let per_group = leaves.len();
        let width = leaves.iter().max().map_or(0, |&c| c + 1);
        // Values to Arrow first, one task per row group × column: the
        // conversions (decimals, offsets) are the costly part, and a read
        // group often has fewer row groups than the host has cores. The
        // values move into the arrays; the levels stay in the leaves.
        let arrays = decoded
            .par_iter_mut()
            .enumerate()
            .map(|(i, leaf)| {
                let dt = &types[&leaves[i % per_group.max(1)]];
                let _span = crate::trace::span_with(|| {
                    let column = chunks[i].location.column.clone();
                    format!("pq.to_arrow {}", column.unwrap_or_default())
                });
                let dense = std::mem::replace(&mut leaf.values, decode::Dense::Bool(Vec::new()));
                super::values::to_arrow(dense, infos[i].physical, dt)
                    .map_err(|m| Error::parquet(&chunks[i].location, format!("values: {m}")))
            })
            .collect::<Result<Vec<ArrayRef>>>()?;
        drop(span);
        let _span = crate::trace::span("pq.assemble");
        let parts: Vec<&[decode::Leaf]> = if per_group == 0 {
            group.iter().map(|_| Default::default()).collect()
        } else {
            decoded.chunks(per_group).collect()
        };
        let batches = parts
            .into_par_iter()
            .zip(group.par_iter())
            .enumerate()
            .map(|(gi, (decoded, (g, kept)))| {
                let g = *g;
                let rows = self.meta.row_group(g).num_rows().max(0) as usize;
                let at = file.clone().with_row_group(g as u64);
                let mut map: Vec<Option<(&decode::Leaf, ArrayRef)>> = vec![None; width];
                let mut held_by: Vec<Option<&RowRanges>> = vec![None; width];
                for (k, (&c, leaf)) in leaves.iter().zip(decoded).enumerate() {
                    let i = gi * per_group + k;
                    held_by[c] = held[i].as_ref();
                    map[c] = Some((leaf, arrays[i].clone()));
                }
                let columns = Columns { leaves: map };
                // Columns side by side too: a file often has fewer row
                // groups than the host has cores (the NYC taxi sample x16:
                // 6), and nullable columns with nulls are spread here.
                let arrays = cols
                    .par_iter()
                    .map(|&f| {
                        let node = &self.nodes[f];
                        let at = || at.clone().with_column(self.schema.field(f).name().clone());
                        let array = match assemble::flat(node, &columns) {
                            Some(a) => a,
                            None => assemble::root_slots(node, &columns)
                                .and_then(|s| assemble::build(node, &s, &columns)),
                        }
                        .map_err(|m| Error::parquet(&at(), m))?;
                        let Some(kept) = kept else {
                            if array.len() != rows {
                                return Err(Error::parquet(
                                    &at(),
                                    format!("{} rows decoded, row group has {rows}", array.len()),
                                ));
                            }
                            return Ok(array);
                        };
                        // Every column holds the kept rows, whatever pages
                        // it read.
                        let whole = RowRanges::all(rows as u64);
                        let held = match node.shape {
                            Shape::Leaf(c) => held_by[c].unwrap_or(&whole),
                            _ => &whole,
                        };
                        row_ranges::cut(&array, held, kept).map_err(|m| Error::parquet(&at(), m))
                    })
                    .collect::<Result<Vec<ArrayRef>>>()?;
                let rows = kept.as_ref().map_or(rows, |k| k.rows() as usize);
                RecordBatch::try_new_with_options(
                    schema.clone(),
                    arrays,
                    &RecordBatchOptions::new().with_row_count(Some(rows)),
                )
                .map_err(|e| Error::arrow(format!("assembling {at}"), e))
            })
            .collect::<Result<Vec<_>>>();
        stats.assemble_s += t.elapsed().as_secs_f64();
        batches
    }
}

/// Threads a read off the rayon pool checks its GZIP pages' CRC32 on
/// ([`decompress::verify_on_threads`]).
const CRC_THREADS: usize = 4;

/// A column chunk's share of a read's work, for splitting columns into
/// sets: its compressed bytes (decompression) plus about the Arrow bytes
/// its values become (decoding and assembly on the host, per value). By
/// compressed bytes alone the taxi table's two timestamp columns made two
/// sets and its fourteen small dictionary-encoded columns, with seven
/// times their values, one: that set's host work bounded the read.
fn set_weight(cc: &parquet::file::metadata::ColumnChunkMetaData) -> u64 {
    // Footer numbers, hostile ones included: saturating. Byte arrays
    // become 4-byte offsets and their bytes; booleans one byte each.
    let values = cc.num_values().max(0) as u64;
    let arrow = match cc.column_type() {
        parquet::basic::Type::BYTE_ARRAY => values
            .saturating_mul(4)
            .saturating_add(cc.uncompressed_size().max(0) as u64),
        _ => values.saturating_mul(LeafInfo::new(cc.column_descr()).width as u64),
    };
    (cc.compressed_size().max(0) as u64).saturating_add(arrow)
}

impl crate::read::GroupedFile for ParquetFile {
    type Group = RowGroupSet;
    const FORMAT: &'static str = "Parquet";

    fn from_source(src: Source) -> Result<Self> {
        ParquetFile::from_source(src)
    }

    fn source(&self) -> &Source {
        &self.src
    }

    fn file_schema(&self) -> SchemaRef {
        self.schema()
    }

    fn projected_schema(&self, options: &ReadOptions) -> Result<SchemaRef> {
        ParquetFile::projected_schema(self, options)
    }

    fn planning_ranges(&self, options: &ReadOptions) -> Result<Vec<std::ops::Range<u64>>> {
        ParquetFile::planning_ranges(self, options)
    }

    fn plan_groups(
        &self,
        options: &ReadOptions,
        backend: &dyn Backend,
        keep: &dyn Fn(std::ops::Range<u64>) -> bool,
        stats: &mut ReadStats,
    ) -> Result<Vec<RowGroupSet>> {
        ParquetFile::plan_groups(self, options, backend, keep, stats)
    }

    fn group_span(&self, group: &RowGroupSet) -> std::ops::Range<u64> {
        ParquetFile::group_span(self, group)
    }

    fn group_ranges(
        &self,
        group: &RowGroupSet,
        options: &ReadOptions,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        ParquetFile::group_ranges(self, group, options)
    }

    fn read_group_in_flight(
        &self,
        group: &RowGroupSet,
        options: &ReadOptions,
        backend: &dyn Backend,
        front: &Front,
        stats: &mut ReadStats,
    ) -> Result<(Vec<RecordBatch>, Vec<std::ops::Range<u64>>)> {
        self.read_group_set(group, options, backend, front, stats)
    }
}
