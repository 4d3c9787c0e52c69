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

use super::assemble::{self, Columns};
use super::decode::{self, LeafInfo};
use super::decompress;
use super::levels::{Builder, Node, Shape};
use super::page_header;
use super::pages::{self, RawChunk};
use super::predicate;
use crate::error::{Error, Location, Result};
use crate::exec::Backend;
use crate::orc::{ReadOptions, ReadStats};
use crate::source::Source;

/// Compressed bytes of row groups decoded together (as for ORC stripes).
const GROUP_BYTES: u64 = 256 << 20;

/// A Parquet file with its footer parsed.
#[derive(Debug)]
pub struct ParquetFile {
    src: Source,
    meta: Arc<ParquetMetaData>,
    schema: SchemaRef,
    nodes: Vec<Node>,
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
        let path = path.as_ref();
        let src = Source::open(path, "Parquet")?;
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
        // The page index is not loaded: reads skip whole row groups only
        // and nothing else uses it. The footer parser is third-party code
        // fed hostile bytes: a panic there becomes an error here.
        let parsed =
            std::panic::catch_unwind(|| ParquetMetaDataReader::decode_metadata(&footer_bytes))
                .map_err(|_| Error::parquet(&at, "footer parser panicked on this file"))?;
        let meta = Arc::new(parsed.map_err(perr)?);
        // The embedded Arrow schema is decoded by arrow-ipc, which panics on
        // some damaged flatbuffers.
        let arm = std::panic::catch_unwind(|| {
            ArrowReaderMetadata::try_new(meta.clone(), ArrowReaderOptions::new())
        })
        .map_err(|_| Error::parquet(&at, "embedded Arrow schema cannot be decoded"))?
        .map_err(perr)?;
        let schema = arm.schema().clone();
        let nodes = Builder::new(meta.file_metadata().schema_descr())
            .build(schema.fields())
            .map_err(|m| Error::Unsupported(format!("{}: {m}", path.display())))?;
        Ok(Self {
            src,
            meta,
            schema,
            nodes,
        })
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
                .map(|&i| self.schema.field(i).clone())
                .collect::<Vec<_>>(),
            self.schema.metadata().clone(),
        )))
    }

    /// Row groups the options select: starting inside the byte range and not
    /// ruled out by the predicates and the column chunk statistics.
    pub fn selected_row_groups(&self, options: &ReadOptions) -> Result<Vec<usize>> {
        let descr = self.meta.file_metadata().schema_descr();
        let mut preds = Vec::new();
        for p in &options.predicates {
            let field = self
                .schema
                .fields()
                .iter()
                .position(|f| f.name() == &p.column)
                .ok_or_else(|| {
                    Error::Unsupported(format!("predicate on unknown column {:?}", p.column))
                })?;
            // Only flat primitive top-level columns have usable statistics.
            let leaf = match self.nodes[field].shape {
                Shape::Leaf(c) if descr.column(c).max_rep_level() == 0 => Some(c),
                _ => None,
            };
            preds.push((p, leaf));
        }
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

    /// Reads the selected row groups into record batches of at most
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
        let mut leaves = Vec::new();
        for &f in &cols {
            self.nodes[f].leaves(&mut leaves);
        }
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut bytes = 0u64;
        for g in self.selected_row_groups(options)? {
            let size = self.meta.row_group(g).compressed_size().max(0) as u64;
            match groups.last_mut() {
                Some(v) if bytes + size <= GROUP_BYTES => v.push(g),
                _ => {
                    groups.push(vec![g]);
                    bytes = 0;
                }
            }
            bytes += size;
        }
        let mut out = Vec::new();
        for group in groups {
            for batch in self.read_group(&group, &cols, &leaves, &schema, backend, &mut stats)? {
                out.extend(crate::orc::split_batch(&batch, options.batch_size));
            }
        }
        Ok((out, stats))
    }

    fn read_group(
        &self,
        group: &[usize],
        cols: &[usize],
        leaves: &[usize],
        schema: &SchemaRef,
        backend: &dyn Backend,
        stats: &mut ReadStats,
    ) -> Result<Vec<RecordBatch>> {
        let file = Location::file(self.path());
        let descr = self.meta.file_metadata().schema_descr();
        let t = std::time::Instant::now();
        let mut raw = Vec::new();
        let mut chunks = Vec::new();
        let mut codecs = Vec::new();
        let mut infos = Vec::new();
        for &g in group {
            let rg = self.meta.row_group(g);
            for &c in leaves {
                let cc = rg.column(c);
                let at = file
                    .clone()
                    .with_row_group(g as u64)
                    .with_column(descr.column(c).path().string());
                let pages = pages::read_chunk(&self.src, cc, &mut raw, &at)?;
                chunks.push(RawChunk {
                    pages,
                    location: at,
                });
                codecs.push(cc.compression());
                infos.push(LeafInfo::new(&descr.column(c)));
            }
        }
        stats.io_s += t.elapsed().as_secs_f64();
        stats.file_bytes += raw.len() as u64;
        let t = std::time::Instant::now();
        let pages = decompress::run(&raw, &chunks, &codecs, backend)?;
        drop(raw);
        stats.decompress_s += t.elapsed().as_secs_f64();
        stats.stream_bytes += pages.buf.len() as u64;
        let t = std::time::Instant::now();
        let mut decoded = decode::run(&pages, &infos, backend)?;
        drop(pages);
        stats.decode_s += t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let mut types = HashMap::new();
        for &f in cols {
            leaf_types(&self.nodes[f], &mut types);
        }
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
                let dense = std::mem::replace(&mut leaf.values, decode::Dense::Bool(Vec::new()));
                super::values::to_arrow(dense, infos[i].physical, dt)
                    .map_err(|m| Error::parquet(&chunks[i].location, format!("values: {m}")))
            })
            .collect::<Result<Vec<ArrayRef>>>()?;
        let parts: Vec<&[decode::Leaf]> = if per_group == 0 {
            group.iter().map(|_| Default::default()).collect()
        } else {
            decoded.chunks(per_group).collect()
        };
        let batches = parts
            .into_par_iter()
            .zip(group.par_iter())
            .enumerate()
            .map(|(gi, (decoded, &g))| {
                let rows = self.meta.row_group(g).num_rows().max(0) as usize;
                let at = file.clone().with_row_group(g as u64);
                let mut map: Vec<Option<(&decode::Leaf, ArrayRef)>> = vec![None; width];
                for (k, (&c, leaf)) in leaves.iter().zip(decoded).enumerate() {
                    map[c] = Some((leaf, arrays[gi * per_group + k].clone()));
                }
                let columns = Columns { leaves: map };
                let arrays = cols
                    .iter()
                    .map(|&f| {
                        let node = &self.nodes[f];
                        let at = || at.clone().with_column(self.schema.field(f).name().clone());
                        let array = match assemble::flat(node, &columns) {
                            Some(a) => a,
                            None => assemble::root_slots(node, &columns)
                                .and_then(|s| assemble::build(node, &s, &columns)),
                        }
                        .map_err(|m| Error::parquet(&at(), m))?;
                        if array.len() != rows {
                            return Err(Error::parquet(
                                &at(),
                                format!("{} rows decoded, row group has {rows}", array.len()),
                            ));
                        }
                        Ok(array)
                    })
                    .collect::<Result<Vec<ArrayRef>>>()?;
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
