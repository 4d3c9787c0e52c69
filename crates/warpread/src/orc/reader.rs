//! `OrcFile`: opening a file and reading it into Arrow record batches
//! through the decode plan.

use std::path::Path;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{Schema, SchemaRef};
use rayon::prelude::*;

use super::assemble::Assembler;
use super::decode::Rounds;
use super::predicate::Predicate;
use super::row_index::{self, StripeIndex};
use super::schema::{self, Column};
use super::seek::{self, Part};
use super::streams;
use super::stripe::{self, StripeInfo, StripeLayout};
use super::tail::{self, Source, Tail};
use crate::error::{Error, Location, Result};
use crate::exec::pipeline::Front;
use crate::exec::{Backend, column_sets};
use crate::read::{ReadOptions, ReadStats};

/// How one stripe is read.
struct StripePlan {
    /// What to decode: the whole stripe (sliced to its kept row groups, if
    /// some are pruned) or windows of it; empty when nothing is kept.
    parts: Vec<Part>,
    /// For windows: the whole stripe sliced, read if the windows fail.
    whole: Option<Part>,
    /// Row groups of the stripe (0 without a row index).
    groups: u64,
    /// Row groups kept.
    kept: u64,
    /// Pruned row groups, but the positions were unusable.
    fallback: bool,
}

/// An ORC file with its tail parsed.
#[derive(Debug)]
pub struct OrcFile {
    src: Source,
    tail: Tail,
    root: Column,
    stripes: Vec<StripeInfo>,
}

/// Whether stripe `s` starts inside the options' byte range (how
/// distributed readers split files; no range: every stripe).
fn in_byte_range(options: &ReadOptions, s: &StripeInfo) -> bool {
    options
        .byte_range
        .as_ref()
        .is_none_or(|r| r.contains(&s.offset))
}

impl OrcFile {
    /// Opens a file and parses its tail.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::from_source(Source::open(path.as_ref(), "ORC")?)
    }

    /// Parses the tail of ORC bytes held in memory, named `name` in errors.
    pub fn from_bytes(name: impl Into<std::path::PathBuf>, bytes: bytes::Bytes) -> Result<Self> {
        Self::from_source(Source::from_bytes(name, bytes, "ORC"))
    }

    /// Parses the tail of the ORC bytes of `src`: a file, memory, or the
    /// fetched ranges of an object ([`crate::read::stream`]).
    pub fn from_source(src: Source) -> Result<Self> {
        let tail = tail::read_tail(&src)?;
        let at = Location::file(src.path());
        let root = schema::build(&tail.footer.types, &at)?;
        let stripes = stripe::stripes(&tail.footer, src.len(), &at)?;
        Ok(Self {
            src,
            tail,
            root,
            stripes,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        self.src.path()
    }

    /// Where the bytes come from.
    pub fn source(&self) -> &Source {
        &self.src
    }

    /// The parsed tail (postscript, footer, metadata, compression).
    pub fn tail(&self) -> &Tail {
        &self.tail
    }

    /// The ORC type tree (a struct).
    pub fn root(&self) -> &Column {
        &self.root
    }

    /// The Arrow schema of the whole file.
    pub fn schema(&self) -> SchemaRef {
        self.root.arrow_schema()
    }

    /// The stripes.
    pub fn stripes(&self) -> &[StripeInfo] {
        &self.stripes
    }

    /// The file format version, e.g. `[0, 12]`.
    pub fn version(&self) -> &[u32] {
        &self.tail.postscript.version
    }

    /// Whether the file is of the unstable pre-2.0 version `1.9999`, whose
    /// decimals of precision up to 18 are stored as RLE v2 integers.
    fn is_pre_2_0(&self) -> bool {
        self.version() == [1, 9999]
    }

    /// Rows in the file.
    pub fn rows(&self) -> u64 {
        self.stripes.iter().map(|s| s.rows).sum()
    }

    /// Reads and resolves one stripe's footer.
    pub fn stripe_layout(&self, index: usize) -> Result<StripeLayout> {
        let info = self.stripes.get(index).ok_or_else(|| {
            Error::Unsupported(format!("stripe {index} of {} stripes", self.stripes.len()))
        })?;
        stripe::read_layout(
            &self.src,
            info,
            &self.tail.compression,
            self.tail.footer.types.len(),
        )
    }

    fn projection(&self, options: &ReadOptions) -> Result<Vec<&Column>> {
        match &options.columns {
            None => Ok(self.root.children.iter().collect()),
            Some(names) => names
                .iter()
                .map(|n| {
                    self.root
                        .children
                        .iter()
                        .find(|c| &c.name == n)
                        .ok_or_else(|| {
                            Error::Unsupported(format!(
                                "{}: no column {n:?} (columns: {})",
                                self.path().display(),
                                self.root
                                    .children
                                    .iter()
                                    .map(|c| c.name.as_str())
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
        Ok(std::sync::Arc::new(Schema::new(
            cols.iter().map(|c| c.arrow_field()).collect::<Vec<_>>(),
        )))
    }

    /// Each predicate with its (top-level) column.
    fn predicate_columns<'a>(
        &'a self,
        options: &'a ReadOptions,
    ) -> Result<Vec<(&'a Predicate, &'a Column)>> {
        options
            .predicates
            .iter()
            .map(|p| {
                let col = self
                    .root
                    .children
                    .iter()
                    .find(|c| c.name == p.column)
                    .ok_or_else(|| {
                        Error::Unsupported(format!("predicate on unknown column {:?}", p.column))
                    })?;
                Ok((p, col))
            })
            .collect()
    }

    /// Stripes in the options' byte range.
    fn stripes_in_range(&self, options: &ReadOptions) -> usize {
        self.stripes
            .iter()
            .filter(|s| in_byte_range(options, s))
            .count()
    }

    /// How a stripe is read: which row groups the row index keeps and
    /// whether they can be read as windows. `layout` is the whole stripe.
    fn plan_stripe(
        &self,
        layout: StripeLayout,
        preds: &[(&Predicate, &Column)],
        cols: &[&Column],
    ) -> Result<StripePlan> {
        let stride = u64::from(self.tail.footer.row_index_stride.unwrap_or(0));
        let groups = if stride > 0 {
            layout.info.rows.div_ceil(stride)
        } else {
            0
        };
        let whole = |layout: StripeLayout| StripePlan {
            parts: vec![Part {
                layout,
                keep: None,
                expect: Vec::new(),
                sliced_groups: 0,
            }],
            whole: None,
            groups,
            kept: groups,
            fallback: false,
        };
        // Encrypted files are not pruned (see `selected_stripes`).
        if preds.is_empty() || stride == 0 || self.tail.footer.encryption.is_some() {
            return Ok(whole(layout));
        }
        let compression = &self.tail.compression;
        let mut index = StripeIndex::new(layout.info.rows, stride);
        let pred_cols: Vec<&Column> = preds.iter().map(|(_, c)| *c).collect();
        index.load(&self.src, &layout, compression, &pred_cols)?;
        let Some(keep) = row_index::keep(&index, preds) else {
            return Ok(whole(layout));
        };
        let kept = keep.iter().filter(|&&k| k).count() as u64;
        if kept == groups {
            return Ok(whole(layout));
        }
        let mut plan = StripePlan {
            parts: Vec::new(),
            whole: None,
            groups,
            kept,
            fallback: false,
        };
        if kept == 0 {
            return Ok(plan);
        }
        let sliced = Part {
            keep: Some(
                row_index::runs(&keep)
                    .into_iter()
                    .map(|r| {
                        let rows = index.rows(r, layout.info.rows);
                        rows.start as usize..rows.end as usize
                    })
                    .collect(),
            ),
            expect: Vec::new(),
            sliced_groups: groups - kept,
            layout,
        };
        index.load(&self.src, &sliced.layout, compression, cols)?;
        match seek::plan(
            &self.src,
            &sliced.layout,
            compression,
            &index,
            cols,
            &keep,
            self.is_pre_2_0(),
        )? {
            Some(windows) => {
                plan.parts = windows;
                plan.whole = Some(sliced);
            }
            None => {
                plan.parts = vec![sliced];
                plan.fallback = true;
            }
        }
        Ok(plan)
    }

    /// The rows a read with `options` returns, as ranges of file row
    /// numbers in order: the kept row groups of the selected stripes.
    /// Reads stripe footers and row indexes, decodes nothing.
    pub fn selected_rows(&self, options: &ReadOptions) -> Result<Vec<std::ops::Range<u64>>> {
        let cols = self.projection(options)?;
        let preds = self.predicate_columns(options)?;
        let mut out: Vec<std::ops::Range<u64>> = Vec::new();
        for i in self.selected_stripes(options)? {
            let plan = self.plan_stripe(self.stripe_layout(i)?, &preds, &cols)?;
            for part in &plan.parts {
                let base = part.layout.info.first_row;
                let all = 0..part.layout.info.rows as usize;
                for r in part.keep.as_deref().unwrap_or(std::slice::from_ref(&all)) {
                    let r = base + r.start as u64..base + r.end as u64;
                    match out.last_mut() {
                        Some(l) if l.end == r.start => l.end = r.end,
                        _ => out.push(r),
                    }
                }
            }
        }
        Ok(out)
    }

    /// Stripes the options select: in the byte range and not ruled out by
    /// the predicates and the stripe statistics.
    pub fn selected_stripes(&self, options: &ReadOptions) -> Result<Vec<usize>> {
        let preds = self.predicate_columns(options)?;
        // With column encryption we read the masked copies of encrypted
        // columns. The unencrypted statistics of sample2.orc describe those
        // copies, but the specification does not promise it, and pruning is
        // only an optimisation: encrypted files are not pruned.
        let stats = self
            .tail
            .metadata
            .as_ref()
            .filter(|_| self.tail.footer.encryption.is_none())
            .map(|m| &m.stripe_stats);
        Ok(self
            .stripes
            .iter()
            .filter(|s| in_byte_range(options, s))
            .filter(|s| {
                preds.iter().all(|(p, col)| {
                    stats
                        .and_then(|st| st.get(s.index))
                        .and_then(|st| st.col_stats.get(col.id as usize))
                        .is_none_or(|cs| p.may_match(col, cs))
                })
            })
            .map(|s| s.index)
            .collect())
    }

    /// Reads the selected stripes into record batches of at most
    /// `options.batch_size` rows, decoding on `backend`.
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

    /// The selected stripes whose rows `keep` accepts, in read groups of
    /// about the tuning's group bytes; stripes pruned counted in `stats`.
    pub(crate) fn plan_groups(
        &self,
        options: &ReadOptions,
        backend: &dyn Backend,
        keep: &dyn Fn(std::ops::Range<u64>) -> bool,
        stats: &mut ReadStats,
    ) -> Result<Vec<Vec<usize>>> {
        let selected = self.selected_stripes(options)?;
        stats.stripes_pruned += (self.stripes_in_range(options) - selected.len()) as u64;
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut bytes = 0u64;
        let limit = options.tuning.group_bytes_on(backend);
        for i in selected {
            let s = &self.stripes[i];
            if !keep(s.first_row..s.first_row + s.rows) {
                continue;
            }
            let size = s.data_length;
            match groups.last_mut() {
                Some(g) if bytes + size <= limit => g.push(i),
                _ => {
                    groups.push(vec![i]);
                    bytes = 0;
                }
            }
            bytes += size;
        }
        Ok(groups)
    }

    /// The file bytes a read of `stripes` with `options` reads: each
    /// stripe's footer and the streams of the projected and predicate
    /// columns (index streams included), clamped to the file. The streams
    /// are known from the stripe footers, which this reads: over an object
    /// store they are fetched first (a read that misses them fails and is
    /// run again, [`crate::read::stream::ranges_fetching`]). Files with
    /// encrypted columns read whole stripes.
    pub fn group_ranges(
        &self,
        stripes: &[usize],
        options: &ReadOptions,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        let len = self.src.len();
        let clamp = |r: std::ops::Range<u64>| r.start.min(len)..r.end.min(len);
        let whole = |s: &StripeInfo| {
            let end = s
                .offset
                .saturating_add(s.index_length)
                .saturating_add(s.data_length)
                .saturating_add(s.footer_length);
            clamp(s.offset..end)
        };
        let infos = stripes.iter().filter_map(|&i| self.stripes.get(i));
        if self.tail.footer.encryption.is_some() {
            return Ok(infos.map(whole).collect());
        }
        // Column ids whose streams a read needs: the projected columns'
        // subtrees, the predicates' columns, and the root.
        let mut wanted: Vec<std::ops::RangeInclusive<u32>> = vec![0..=0];
        for c in self.projection(options)? {
            wanted.push(c.id..=c.last_id);
        }
        for (_, c) in self.predicate_columns(options)? {
            wanted.push(c.id..=c.last_id);
        }
        let mut out = Vec::new();
        for s in infos {
            let footer_at = s
                .offset
                .saturating_add(s.index_length)
                .saturating_add(s.data_length);
            out.push(clamp(footer_at..footer_at.saturating_add(s.footer_length)));
            let layout = self.stripe_layout(s.index)?;
            out.extend(
                layout
                    .streams
                    .iter()
                    .filter(|st| wanted.iter().any(|w| w.contains(&st.column)))
                    .map(|st| clamp(st.range.clone())),
            );
        }
        out.retain(|r| r.start < r.end);
        Ok(out)
    }

    /// The file rows a read group of stripes spans.
    pub(crate) fn group_span(&self, group: &[usize]) -> std::ops::Range<u64> {
        let rows = |i: &usize| {
            self.stripes
                .get(*i)
                .map(|s| (s.first_row, s.first_row + s.rows))
        };
        let first = group
            .iter()
            .filter_map(rows)
            .map(|r| r.0)
            .min()
            .unwrap_or(0);
        let end = group
            .iter()
            .filter_map(rows)
            .map(|r| r.1)
            .max()
            .unwrap_or(first);
        first..end
    }

    /// Reads one group of stripes: plans each (row index pruning,
    /// windows), decodes the parts, and if windows fail to decode — a row
    /// index whose positions lie, or a writer whose chunks are shorter
    /// than `seek` assumes — reads the stripes with windows whole again.
    #[allow(clippy::too_many_arguments)]
    /// Returns the batches and, in order, the file rows they hold.
    pub(crate) fn read_group(
        &self,
        group: &[usize],
        options: &ReadOptions,
        backend: &dyn Backend,
        front: &Front,
        stats: &mut ReadStats,
    ) -> Result<(Vec<RecordBatch>, Vec<std::ops::Range<u64>>)> {
        let cols = self.projection(options)?;
        let schema = self.projected_schema(options)?;
        let preds = self.predicate_columns(options)?;
        let (cols, schema, preds) = (&cols[..], &schema, &preds[..]);
        let split = options.tuning.column_sets;
        let t = std::time::Instant::now();
        let mut plans = group
            .par_iter()
            .map(|&i| self.plan_stripe(self.stripe_layout(i)?, preds, cols))
            .collect::<Result<Vec<_>>>()?;
        stats.io_s += t.elapsed().as_secs_f64();
        let parts: Vec<&Part> = plans.iter().flat_map(|p| &p.parts).collect();
        let batches = match self.decode_parts(&parts, cols, schema, split, backend, front, stats) {
            Err(e) if plans.iter().any(|p| p.whole.is_some()) => {
                tracing::warn!(
                    "{e}; reading the stripes of {} whole instead of their row groups",
                    self.path().display()
                );
                for p in &mut plans {
                    if let Some(whole) = p.whole.take() {
                        p.parts = vec![whole];
                        p.fallback = true;
                    }
                }
                let parts: Vec<&Part> = plans.iter().flat_map(|p| &p.parts).collect();
                self.decode_parts(&parts, cols, schema, split, backend, front, stats)?
            }
            other => other?,
        };
        for p in &plans {
            if p.parts.is_empty() {
                stats.stripes_pruned += 1;
            } else {
                stats.stripes_read += 1;
                stats.row_groups_read += p.kept;
                stats.row_groups_pruned += p.groups - p.kept;
                stats.row_groups_sliced +=
                    p.parts.iter().map(|part| part.sliced_groups).sum::<u64>();
                stats.row_index_fallbacks += u64::from(p.fallback);
            }
        }
        let mut rows: Vec<std::ops::Range<u64>> = Vec::new();
        for part in plans.iter().flat_map(|p| &p.parts) {
            let base = part.layout.info.first_row;
            let all = 0..part.layout.info.rows as usize;
            for r in part.keep.as_deref().unwrap_or(std::slice::from_ref(&all)) {
                let r = base + r.start as u64..base + r.end as u64;
                match rows.last_mut() {
                    Some(l) if l.end == r.start => l.end = r.end,
                    _ => rows.push(r),
                }
            }
        }
        Ok((batches, rows))
    }

    /// Decodes whole stripes and windows into one batch each, sliced to the
    /// rows each part keeps. Columns are split into sets of about equal
    /// compressed size that decode concurrently
    /// ([`column_sets`](crate::exec::column_sets)); stage times in `stats`
    /// are then the slowest set's. Each set passes `front` once its streams
    /// are decompressed ([`pipeline`](crate::exec::pipeline)).
    #[allow(clippy::too_many_arguments)]
    fn decode_parts(
        &self,
        parts: &[&Part],
        cols: &[&Column],
        schema: &SchemaRef,
        split: column_sets::Split,
        backend: &dyn Backend,
        front: &Front,
        stats: &mut ReadStats,
    ) -> Result<Vec<RecordBatch>> {
        let layouts: Vec<&StripeLayout> = parts.iter().map(|p| &p.layout).collect();
        let bytes: Vec<u64> = cols
            .iter()
            .map(|c| streams::column_bytes(&layouts, &c.walk()))
            .collect();
        let sets = split.partition(&bytes);
        front.parties(sets.len());
        let (batches, set_stats) = column_sets::read_joined(schema, &sets, |set, schema| {
            let cols: Vec<&Column> = set.iter().map(|&i| cols[i]).collect();
            let ids: Vec<u32> = cols
                .iter()
                .flat_map(|c| c.walk().into_iter().map(|c| c.id))
                .collect();
            let mut stats = ReadStats::default();
            let batches =
                self.decode_columns(parts, &cols, &ids, schema, backend, front, &mut stats)?;
            Ok((batches, stats))
        })?;
        stats.add_concurrent(&set_stats);
        Ok(batches)
    }

    /// [`decode_parts`](Self::decode_parts) for one set of columns.
    #[allow(clippy::too_many_arguments)]
    fn decode_columns(
        &self,
        parts: &[&Part],
        cols: &[&Column],
        ids: &[u32],
        schema: &SchemaRef,
        backend: &dyn Backend,
        front: &Front,
        stats: &mut ReadStats,
    ) -> Result<Vec<RecordBatch>> {
        let _group = crate::trace::span("orc.group");
        let file = Location::file(self.path());
        let layouts: Vec<StripeLayout> = parts.iter().map(|p| p.layout.clone()).collect();
        let streams = streams::load(&self.src, &layouts, ids, &self.tail.compression, backend)?;
        front.arrive();
        stats.io_s += streams.io_s;
        stats.decompress_s += streams.decompress_s;
        stats.file_bytes += streams.file_bytes;
        stats.stream_bytes += streams.stream_bytes();
        let t = std::time::Instant::now();
        let span = crate::trace::span("orc.decode");
        let rounds = Rounds {
            file: &file,
            layouts: &layouts,
            streams: &streams,
            backend,
            decimal64: self.is_pre_2_0(),
        };
        let decoded = rounds.run(cols);
        // Arrays may slice the streams and outlive the read; their device
        // copy is only for the rounds.
        backend.release_on_device(&streams.buf);
        let (states, decoded) = decoded?;
        drop(span);
        stats.decode_s += t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let _assemble = crate::trace::span("orc.assemble");
        let asm = Assembler {
            file: &file,
            layouts: &layouts,
            streams: &streams,
            states: &states,
            decoded: &decoded,
            decimal64: self.is_pre_2_0(),
        };
        // One task per (stripe, column): a group has a few stripes but
        // many columns, and a stripe at a time left most cores idle.
        let tasks: Vec<(usize, &Column)> = (0..layouts.len())
            .flat_map(|g| cols.iter().map(move |c| (g, *c)))
            .collect();
        let mut arrays = tasks
            .par_iter()
            .map(|&(g, c)| {
                let _span = crate::trace::span_with(|| format!("orc.array {}", c.name));
                asm.array(g, c)
            })
            .collect::<Result<Vec<ArrayRef>>>()?
            .into_iter();
        let whole = parts
            .iter()
            .map(|part| {
                let layout = &part.layout;
                let arrays: Vec<ArrayRef> = arrays.by_ref().take(cols.len()).collect();
                RecordBatch::try_new_with_options(
                    schema.clone(),
                    arrays,
                    &arrow::array::RecordBatchOptions::new()
                        .with_row_count(Some(layout.info.rows as usize)),
                )
                .map_err(|e| {
                    Error::arrow(
                        format!(
                            "assembling stripe {} of {}",
                            layout.info.index,
                            self.path().display()
                        ),
                        e,
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        // Windows are checked against the row index statistics, row group
        // by row group, before any of their rows are handed out.
        let checks: Vec<(usize, &(u32, std::ops::Range<usize>, _))> = parts
            .iter()
            .enumerate()
            .flat_map(|(g, p)| p.expect.iter().map(move |e| (g, e)))
            .collect();
        checks
            .par_iter()
            .try_for_each(|&(g, (id, rows, group_stats))| {
                let Some(k) = cols.iter().position(|c| c.id == *id) else {
                    return Ok(());
                };
                let values = whole[g].column(k).slice(rows.start, rows.len());
                row_index::check(values.as_ref(), cols[k], group_stats).map_err(|m| {
                    let layout = &parts[g].layout;
                    let first = layout.window.as_ref().map_or(0, |w| w.start) as usize;
                    let rows = first + rows.start..first + rows.end;
                    Error::orc(
                        &row_index::column_location(&file, layout, cols[k]),
                        format!("rows {rows:?} of the stripe, read through the row index: {m}"),
                    )
                })
            })?;
        let mut batches = Vec::with_capacity(parts.len());
        for (part, batch) in parts.iter().zip(whole) {
            match &part.keep {
                None => batches.push(batch),
                Some(keep) => batches.extend(keep.iter().map(|r| batch.slice(r.start, r.len()))),
            }
        }
        stats.assemble_s += t.elapsed().as_secs_f64();
        Ok(batches)
    }
}

impl crate::read::GroupedFile for OrcFile {
    type Group = Vec<usize>;
    const FORMAT: &'static str = "ORC";

    fn from_source(src: Source) -> Result<Self> {
        OrcFile::from_source(src)
    }

    fn source(&self) -> &Source {
        &self.src
    }

    fn file_schema(&self) -> SchemaRef {
        self.schema()
    }

    fn projected_schema(&self, options: &ReadOptions) -> Result<SchemaRef> {
        OrcFile::projected_schema(self, options)
    }

    fn planning_ranges(&self, _: &ReadOptions) -> Result<Vec<std::ops::Range<u64>>> {
        // Stripe statistics are in the tail; row indexes are read with
        // their stripes.
        Ok(Vec::new())
    }

    fn plan_groups(
        &self,
        options: &ReadOptions,
        backend: &dyn Backend,
        keep: &dyn Fn(std::ops::Range<u64>) -> bool,
        stats: &mut ReadStats,
    ) -> Result<Vec<Vec<usize>>> {
        OrcFile::plan_groups(self, options, backend, keep, stats)
    }

    fn group_span(&self, group: &Vec<usize>) -> std::ops::Range<u64> {
        OrcFile::group_span(self, group)
    }

    fn group_ranges(
        &self,
        group: &Vec<usize>,
        options: &ReadOptions,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        OrcFile::group_ranges(self, group, options)
    }

    fn read_group_in_flight(
        &self,
        group: &Vec<usize>,
        options: &ReadOptions,
        backend: &dyn Backend,
        front: &Front,
        stats: &mut ReadStats,
    ) -> Result<(Vec<RecordBatch>, Vec<std::ops::Range<u64>>)> {
        OrcFile::read_group(self, group, options, backend, front, stats)
    }
}
