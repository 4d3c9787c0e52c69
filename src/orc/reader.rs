//! `OrcFile`: opening a file and reading it into Arrow record batches
//! through the decode plan.

use std::path::Path;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{Schema, SchemaRef};
use rayon::prelude::*;

use super::assemble::Assembler;
use super::decode::Rounds;
use super::predicate::Predicate;
use super::schema::{self, Column};
use super::streams;
use super::stripe::{self, StripeInfo, StripeLayout};
use super::tail::{self, Source, Tail};
use crate::error::{Error, Location, Result};
use crate::exec::Backend;

/// Compressed bytes of stripes decoded together: large enough for stages of
/// thousands of jobs, small enough to bound host and device memory.
const GROUP_BYTES: u64 = 256 << 20;

/// What to read.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Top-level columns to read, in this order (`None`: all).
    pub columns: Option<Vec<String>>,
    /// Most rows per record batch.
    pub batch_size: usize,
    /// Read only stripes starting inside this file byte range (how
    /// distributed readers split files).
    pub byte_range: Option<std::ops::Range<u64>>,
    /// Conjunction of predicates used to skip stripes (Parquet: row
    /// groups, and pages by the page index) by their statistics. Rows of
    /// what is kept are not filtered: a Parquet read returns whole pages'
    /// rows, the same rows in every column.
    pub predicates: Vec<Predicate>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            columns: None,
            batch_size: 65536,
            byte_range: None,
            predicates: Vec::new(),
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

    /// Adds a pruning predicate.
    pub fn with_predicate(mut self, p: Predicate) -> Self {
        self.predicates.push(p);
        self
    }
}

/// Where a read spent its time (wall clock, summed over stripe groups).
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
}

/// `batch` cut into zero-copy slices of at most `rows` rows (at least 1),
/// as every reader hands out batches of the requested size.
pub fn split_batch(batch: &RecordBatch, rows: usize) -> impl Iterator<Item = RecordBatch> + '_ {
    let rows = rows.max(1);
    (0..batch.num_rows())
        .step_by(rows)
        .map(move |at| batch.slice(at, rows.min(batch.num_rows() - at)))
}

/// An ORC file with its tail parsed.
#[derive(Debug)]
pub struct OrcFile {
    src: Source,
    tail: Tail,
    root: Column,
    stripes: Vec<StripeInfo>,
}

impl OrcFile {
    /// Opens a file and parses its tail.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let src = Source::open(path.as_ref(), "ORC")?;
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

    /// Stripes the options select: in the byte range and not ruled out by
    /// the predicates and the stripe statistics.
    pub fn selected_stripes(&self, options: &ReadOptions) -> Result<Vec<usize>> {
        let mut preds = Vec::new();
        for p in &options.predicates {
            let col = self
                .root
                .children
                .iter()
                .find(|c| c.name == p.column)
                .ok_or_else(|| {
                    Error::Unsupported(format!("predicate on unknown column {:?}", p.column))
                })?;
            preds.push((p, col));
        }
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
            .filter(|s| {
                options
                    .byte_range
                    .as_ref()
                    .is_none_or(|r| r.contains(&s.offset))
            })
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
        let mut stats = ReadStats::default();
        let cols = self.projection(options)?;
        let schema = self.projected_schema(options)?;
        let ids: Vec<u32> = cols
            .iter()
            .flat_map(|c| c.walk().into_iter().map(|c| c.id))
            .collect();
        let selected = self.selected_stripes(options)?;
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut bytes = 0u64;
        for i in selected {
            let s = &self.stripes[i];
            let size = s.data_length;
            match groups.last_mut() {
                Some(g) if bytes + size <= GROUP_BYTES => g.push(i),
                _ => {
                    groups.push(vec![i]);
                    bytes = 0;
                }
            }
            bytes += size;
        }
        let mut out = Vec::new();
        for group in groups {
            for batch in self.read_group(&group, &cols, &ids, &schema, backend, &mut stats)? {
                out.extend(split_batch(&batch, options.batch_size));
            }
        }
        Ok((out, stats))
    }

    fn read_group(
        &self,
        group: &[usize],
        cols: &[&Column],
        ids: &[u32],
        schema: &SchemaRef,
        backend: &dyn Backend,
        stats: &mut ReadStats,
    ) -> Result<Vec<RecordBatch>> {
        let file = Location::file(self.path());
        let t = std::time::Instant::now();
        let layouts = group
            .par_iter()
            .map(|&i| self.stripe_layout(i))
            .collect::<Result<Vec<_>>>()?;
        stats.io_s += t.elapsed().as_secs_f64();
        let streams = streams::load(&self.src, &layouts, ids, &self.tail.compression, backend)?;
        stats.io_s += streams.io_s;
        stats.decompress_s += streams.decompress_s;
        stats.file_bytes += streams.file_bytes;
        stats.stream_bytes += streams.buf.len() as u64;
        let t = std::time::Instant::now();
        let rounds = Rounds {
            file: &file,
            layouts: &layouts,
            streams: &streams,
            backend,
            decimal64: self.is_pre_2_0(),
        };
        let (states, decoded) = rounds.run(cols)?;
        stats.decode_s += t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
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
            .map(|&(g, c)| asm.array(g, c))
            .collect::<Result<Vec<ArrayRef>>>()?
            .into_iter();
        let batches = layouts
            .iter()
            .map(|layout| {
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
            .collect();
        stats.assemble_s += t.elapsed().as_secs_f64();
        batches
    }
}
