//! Random access to a GSST container file: the IPC footer's record-batch
//! blocks become independently readable units (with their file offset and
//! row count, read from each block's message header without touching its
//! body), so a table provider can split a file by byte range and read only
//! the batches and columns a scan asks for.
//!
//! This is the one way warpread reads an Arrow IPC file (`read_container`
//! too), and arrow-ipc sizes its buffers from lengths in the file: the
//! footer's block offsets and lengths, each message's metadata length, body
//! length, buffer ranges, field-node and row counts, and the uncompressed
//! size prefixed to each compressed buffer. An allocation that fails aborts
//! the process, which no `catch_unwind` catches, so every one of those
//! lengths is checked against the file before arrow-ipc sees the bytes: a
//! block must lie between the leading magic and the footer, a buffer inside
//! its message's body, a row count within what the body's buffers can hold
//! (one bit a row), a compressed buffer's uncompressed size within its
//! codec's largest expansion. Blocks are read here, into buffers of the
//! checked size, and decoded with arrow-ipc's `FileDecoder`.

use std::path::Path;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::buffer::{Buffer, MutableBuffer};
use arrow::datatypes::{DataType, Field, SchemaRef};
use arrow::ipc::convert::fb_to_schema;
use arrow::ipc::reader::{FileDecoder, read_footer_length};
use arrow::ipc::{Block, CompressionType, MetadataVersion};

use super::container::{decode_batch, decode_schema};
use super::ipc_layout::{Node, check_layout};
use crate::error::{Error, Location, Result};
use crate::exec::Backend;
use crate::source::Source;

/// One record batch of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchBlock {
    /// Batch number in the file.
    pub index: usize,
    /// File offset of the batch's message.
    pub offset: u64,
    /// Message and body bytes.
    pub bytes: u64,
    /// Rows in the batch.
    pub rows: u64,
}

/// A GSST container (or any Arrow IPC file) opened for random access.
#[derive(Debug)]
pub struct ContainerFile {
    /// The bytes; every block lies within its length.
    src: Source,
    /// The footer's metadata version.
    version: MetadataVersion,
    /// The stored schema (GSST columns as marked LargeBinary).
    stored: SchemaRef,
    /// The decoded schema (GSST columns as strings).
    schema: SchemaRef,
    /// The footer's dictionary blocks, range-checked.
    dictionaries: Vec<Block>,
    /// The footer's record batch blocks, range-checked, as arrow-ipc takes
    /// them (`blocks` is the same, with row counts).
    ipc_blocks: Vec<Block>,
    blocks: Vec<BatchBlock>,
    /// The file row number of each batch's first row.
    first_rows: Vec<u64>,
}

fn error(path: &Path, message: impl Into<String>) -> Error {
    Error::Format {
        format: "GSST container",
        location: Box::new(Location::file(path)),
        message: message.into(),
    }
}

/// Runs `f`, turning a panic of the IPC reader (arrow-ipc 59 panics on some
/// damaged footers and buffer lengths) into an error naming the file.
fn guarded<T>(path: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(error(
            path,
            "damaged Arrow IPC file (the IPC reader panicked)",
        ))
    })
}

/// The leading magic of an Arrow IPC file, padded to 8 bytes.
const LEADING_MAGIC_BYTES: u64 = 8;
/// The trailer: footer length (4 bytes) and `ARROW1`.
const TRAILER_BYTES: u64 = 10;
/// Most bytes one byte of an LZ4 frame decompresses to: a match-length
/// extension byte adds at most 255 bytes of output.
const LZ4_MAX_EXPANSION: u64 = 256;
/// Most bytes one byte of a Zstandard frame decompresses to: an RLE block,
/// 3 header bytes and 1 byte, repeats that byte at most 128 KiB times.
const ZSTD_MAX_EXPANSION: u64 = 32 * 1024;

/// What a footer block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Dictionary,
    Batch,
}

impl BlockKind {
    fn name(self) -> &'static str {
        match self {
            Self::Dictionary => "dictionary batch",
            Self::Batch => "record batch",
        }
    }
}

/// Whether every row of an array of this type takes at least one bit of
/// some buffer, so that a row count can be bounded by the buffers' bytes.
/// Null arrays, run-end encoded arrays and structs of such children (or of
/// none) hold rows without bytes.
fn stores_rows(data_type: &DataType) -> bool {
    match data_type {
        DataType::Null | DataType::RunEndEncoded(..) => false,
        DataType::Struct(fields) => fields.iter().any(|f| stores_rows(f.data_type())),
        DataType::FixedSizeBinary(w) => *w > 0,
        DataType::FixedSizeList(f, n) => *n > 0 && stores_rows(f.data_type()),
        _ => true,
    }
}

impl ContainerFile {
    /// Opens a file: its schema and the footer's batch directory.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::from_source(Source::open(path.as_ref(), "GSST container")?)
    }

    /// Parses the footer of an IPC file held in memory, named `name` in
    /// errors.
    pub fn from_bytes(name: impl Into<std::path::PathBuf>, bytes: bytes::Bytes) -> Result<Self> {
        Self::from_source(Source::from_bytes(name, bytes, "GSST container"))
    }

    /// Parses the footer of the IPC file bytes of `src`: a file, memory,
    /// or the fetched ranges of an object ([`crate::read::stream`]).
    pub fn from_source(src: Source) -> Result<Self> {
        let path = src.path().to_path_buf();
        guarded(&path, || Self::open_inner(src))
    }

    /// Where the bytes come from.
    pub fn source(&self) -> &Source {
        &self.src
    }

    fn open_inner(src: Source) -> Result<Self> {
        let path = &src.path().to_path_buf();
        let at = Location::file(path);
        let arrow_err = |e| Error::arrow(format!("reading {}", path.display()), e);
        let len = src.len();
        if len < LEADING_MAGIC_BYTES + TRAILER_BYTES {
            return Err(error(path, "file too short for an Arrow IPC footer"));
        }
        if src.read(0, 6, &at)? != b"ARROW1" {
            return Err(error(path, "no Arrow IPC file magic at the start"));
        }
        let tail: [u8; TRAILER_BYTES as usize] = src
            .read(len - TRAILER_BYTES, TRAILER_BYTES, &at)?
            .try_into()
            .expect("the trailer's bytes");
        let footer_len = read_footer_length(tail).map_err(arrow_err)? as u64;
        if footer_len + TRAILER_BYTES + LEADING_MAGIC_BYTES > len {
            return Err(error(
                path,
                format!("footer of {footer_len} bytes in a {len}-byte file"),
            ));
        }
        let footer_at = len - TRAILER_BYTES - footer_len;
        let footer = src.read(footer_at, footer_len, &at)?;
        let footer = arrow::ipc::root_as_footer(&footer)
            .map_err(|e| error(path, format!("bad IPC footer: {e}")))?;
        let ipc_schema = footer
            .schema()
            .ok_or_else(|| error(path, "IPC footer without a schema"))?;
        if !ipc_schema.endianness().equals_to_target_endianness() {
            return Err(error(path, "big-endian Arrow IPC file"));
        }
        // arrow-ipc's conversion panics on schemas that verify but break
        // its expectations (found by fuzzing: no field list, an unknown
        // timestamp unit): checked first, as the embedded schema of a
        // Parquet file is.
        if let Some(why) = crate::parquet::arrow_schema::schema_problem(ipc_schema) {
            return Err(error(path, format!("unusable IPC footer schema: {why}")));
        }
        let stored = Arc::new(fb_to_schema(ipc_schema));
        let schema = decode_schema(&stored, &Location::file(path))?;
        let mut f = Self {
            src,
            version: footer.version(),
            stored,
            schema,
            dictionaries: Vec::new(),
            ipc_blocks: Vec::new(),
            blocks: Vec::new(),
            first_rows: Vec::new(),
        };
        for (index, b) in footer.dictionaries().into_iter().flatten().enumerate() {
            f.check_range(BlockKind::Dictionary, index, b, footer_at)?;
            f.dictionaries.push(*b);
        }
        let mut checked = Vec::new();
        for (index, b) in footer.recordBatches().into_iter().flatten().enumerate() {
            checked.push((
                index,
                b,
                f.check_range(BlockKind::Batch, index, b, footer_at)?,
            ));
        }
        // Every message header at once, so an object store's reader
        // fetches them in one round (see `Source::require`).
        let headers: Vec<_> = checked.iter().map(|(_, _, (o, m, _))| *o..o + m).collect();
        if !f.src.require(&headers) {
            return Err(error(
                path,
                "the batches' message headers are not fetched yet",
            ));
        }
        for (index, b, (offset, meta, body)) in checked {
            // The message header alone gives the row count (and is checked
            // now, so that a damaged one is found on opening).
            let m = f.src.read(offset, meta, &at.clone().at(offset))?;
            let rows = f.check_message(BlockKind::Batch, index, b, &m, None)?;
            f.ipc_blocks.push(*b);
            let first = f.blocks.last().map_or(0, |l: &BatchBlock| {
                f.first_rows
                    .last()
                    .copied()
                    .unwrap_or(0)
                    .saturating_add(l.rows)
            });
            f.first_rows.push(first);
            f.blocks.push(BatchBlock {
                index,
                offset,
                bytes: meta + body,
                rows,
            });
        }
        Ok(f)
    }

    /// An error at a footer block: the file, the block's offset, which
    /// block.
    fn block_error(&self, kind: BlockKind, index: usize, offset: u64, message: &str) -> Error {
        Error::Format {
            format: "GSST container",
            location: Box::new(Location::file(self.src.path()).at(offset)),
            message: format!("{} {index}: {message}", kind.name()),
        }
    }

    /// Checks a footer block's fields: none negative, the block between the
    /// leading magic and the footer (at `footer_at`). Returns offset,
    /// metadata length and body length.
    fn check_range(
        &self,
        kind: BlockKind,
        index: usize,
        b: &Block,
        footer_at: u64,
    ) -> Result<(u64, u64, u64)> {
        let (offset, meta, body) = (b.offset(), b.metaDataLength(), b.bodyLength());
        let (Ok(o), Ok(m), Ok(l)) = (
            u64::try_from(offset),
            u64::try_from(meta),
            u64::try_from(body),
        ) else {
            return Err(self.block_error(
                kind,
                index,
                offset.max(0) as u64,
                &format!("negative block field (offset {offset}, metadata {meta}, body {body})"),
            ));
        };
        if o < LEADING_MAGIC_BYTES
            || o.checked_add(m)
                .and_then(|e| e.checked_add(l))
                .is_none_or(|e| e > footer_at)
        {
            return Err(self.block_error(
                kind,
                index,
                o,
                &format!(
                    "block at {o} of {m} metadata and {l} body bytes does not lie between the \
                     file magic and the footer at {footer_at} (a {}-byte file)",
                    self.src.len()
                ),
            ));
        }
        Ok((o, m, l))
    }

    /// Checks the message of a range-checked block, given its metadata and,
    /// when read, its body (which also checks compressed buffers'
    /// uncompressed sizes), and returns its row count. Every length
    /// arrow-ipc would trust is checked here: the message's prefix and body
    /// length, buffer ranges, field nodes, variadic buffer counts and the
    /// row count.
    fn check_message(
        &self,
        kind: BlockKind,
        index: usize,
        b: &Block,
        meta: &[u8],
        body: Option<&[u8]>,
    ) -> Result<u64> {
        let at = b.offset() as u64;
        let bad = |m: String| self.block_error(kind, index, at, &m);
        let meta_len = meta.len();
        let body_len = b.bodyLength() as u64;
        debug_assert_eq!(meta_len, b.metaDataLength() as usize);
        debug_assert!(body.is_none_or(|body| body.len() as u64 == body_len));
        // Continuation marker and length, or (before Arrow 0.15) the length.
        let (start, prefix) = match meta {
            [0xff, 0xff, 0xff, 0xff, a, b, c, d, ..] => (8, [*a, *b, *c, *d]),
            [a, b, c, d, ..] if [*a, *b, *c, *d] != [0xff; 4] => (4, [*a, *b, *c, *d]),
            _ => return Err(bad(format!("{meta_len} bytes of metadata hold no message"))),
        };
        let fb_len = i32::from_le_bytes(prefix);
        let fb = usize::try_from(fb_len)
            .ok()
            .and_then(|n| meta.get(start..start + n))
            .ok_or_else(|| {
                bad(format!(
                    "message of {fb_len} bytes in {meta_len} bytes of metadata"
                ))
            })?;
        let message =
            arrow::ipc::root_as_message(fb).map_err(|e| bad(format!("bad message header: {e}")))?;
        if self.version != MetadataVersion::V1 && message.version() != self.version {
            return Err(bad(format!(
                "message version {:?}, footer version {:?}",
                message.version(),
                self.version
            )));
        }
        if !u64::try_from(message.bodyLength()).is_ok_and(|n| n <= body_len) {
            return Err(bad(format!(
                "message body of {} bytes in a {body_len}-byte block body",
                message.bodyLength()
            )));
        }
        // A dictionary batch's nodes describe one field of its value type
        // (a record batch's, the stored schema's fields).
        let mut dictionary_field: Option<Field> = None;
        let (batch, rows_need_bytes) = match kind {
            BlockKind::Batch => (
                message.header_as_record_batch(),
                self.stored
                    .fields()
                    .iter()
                    .any(|f| stores_rows(f.data_type())),
            ),
            BlockKind::Dictionary => {
                let d = message.header_as_dictionary_batch();
                // The value type as arrow-ipc finds it: the first field
                // with the dictionary's id.
                #[allow(deprecated)]
                let values = d.and_then(|d| {
                    self.stored
                        .fields_with_dict_id(d.id())
                        .first()
                        .map(|f| f.data_type().clone())
                });
                let stores = match values {
                    Some(DataType::Dictionary(_, v)) => {
                        let stores = stores_rows(&v);
                        dictionary_field = Some(Field::new("", *v, true));
                        stores
                    }
                    _ => false,
                };
                (d.and_then(|d| d.data()), stores)
            }
        };
        let batch = batch.ok_or_else(|| {
            bad(format!(
                "message holds a {:?} header, not a {}",
                message.header_type(),
                kind.name()
            ))
        })?;
        let rows = u64::try_from(batch.length())
            .map_err(|_| bad(format!("negative row count {}", batch.length())))?;
        let nodes = batch.nodes().ok_or_else(|| bad("no field nodes".into()))?;
        let mut layout = Vec::with_capacity(nodes.len());
        for (j, n) in nodes.iter().enumerate() {
            if n.length() < 0 || n.null_count() < 0 || n.null_count() > n.length() {
                return Err(bad(format!(
                    "field node {j}: {} rows, {} nulls",
                    n.length(),
                    n.null_count()
                )));
            }
            layout.push(Node {
                length: n.length() as u64,
                nulls: n.null_count() as u64,
            });
        }
        let buffers = batch.buffers().ok_or_else(|| bad("no buffers".into()))?;
        let mut variadic = 0u64;
        let mut counts = Vec::new();
        for c in batch.variadicBufferCounts().into_iter().flatten() {
            counts.push(u64::try_from(c).unwrap_or(u64::MAX));
            variadic = u64::try_from(c)
                .ok()
                .and_then(|c| variadic.checked_add(c))
                .filter(|&v| v <= buffers.len() as u64)
                .ok_or_else(|| {
                    bad(format!(
                        "variadic buffer count {c} with {} buffers",
                        buffers.len()
                    ))
                })?;
        }
        let expansion = match batch.compression().map(|c| c.codec()) {
            None => None,
            Some(CompressionType::LZ4_FRAME) => Some(LZ4_MAX_EXPANSION),
            Some(CompressionType::ZSTD) => Some(ZSTD_MAX_EXPANSION),
            Some(c) => return Err(bad(format!("unknown compression codec {c:?}"))),
        };
        // Bytes the buffers hold once decompressed: what the rows may need.
        let mut capacity = 0u64;
        let mut holds_each = Vec::with_capacity(buffers.len());
        for (j, buf) in buffers.iter().enumerate() {
            let (offset, length) = (buf.offset(), buf.length());
            let range = u64::try_from(offset)
                .ok()
                .zip(u64::try_from(length).ok())
                .filter(|&(o, l)| o.checked_add(l).is_some_and(|e| e <= body_len));
            let Some((o, l)) = range else {
                return Err(bad(format!(
                    "buffer {j} at {offset} of {length} bytes runs past the {body_len}-byte body"
                )));
            };
            let holds = match (expansion, body) {
                (None, _) => l,
                (Some(_), _) if l == 0 => 0,
                // The metadata alone: the most the codec could give.
                (Some(x), None) => l.saturating_mul(x),
                (Some(x), Some(body)) => {
                    let (o, l) = (o as usize, l as usize);
                    let prefix = body.get(o..o + 8).filter(|_| l >= 8).ok_or_else(|| {
                        bad(format!(
                            "compressed buffer {j} of {l} bytes has no length prefix"
                        ))
                    })?;
                    let n = i64::from_le_bytes(prefix.try_into().expect("8 bytes"));
                    let data = (l - 8) as u64;
                    match n {
                        -1 => data,
                        0 => 0,
                        n if n > 0 && (n as u64) <= data.saturating_mul(x) => n as u64,
                        n => {
                            return Err(bad(format!(
                                "compressed buffer {j} of {data} bytes claims {n} bytes \
                                 uncompressed (at most {x} per byte)"
                            )));
                        }
                    }
                }
            };
            capacity = capacity.saturating_add(holds);
            holds_each.push(holds);
        }
        let checked = match kind {
            BlockKind::Batch => check_layout(
                self.stored.fields().iter().map(|f| f.as_ref()),
                self.version,
                &layout,
                &holds_each,
                &counts,
            ),
            BlockKind::Dictionary => check_layout(
                dictionary_field.iter(),
                self.version,
                &layout,
                &holds_each,
                &counts,
            ),
        };
        checked.map_err(bad)?;
        if rows_need_bytes && rows > capacity.saturating_mul(8) {
            return Err(bad(format!(
                "{rows} rows, but its buffers hold {capacity} bytes"
            )));
        }
        Ok(rows)
    }

    /// Reads a range-checked block whole, into a buffer of its size, and
    /// checks its message.
    fn read_block(&self, kind: BlockKind, index: usize, b: &Block) -> Result<Buffer> {
        let len = b.metaDataLength() as usize + b.bodyLength() as usize;
        let mut buf = MutableBuffer::from_len_zeroed(len);
        let at = Location::file(self.src.path()).with_stripe(index as u64);
        self.src
            .read_exact_at(b.offset() as u64, buf.as_slice_mut(), &at)?;
        let (meta, body) = buf.split_at(b.metaDataLength() as usize);
        self.check_message(kind, index, b, meta, Some(body))?;
        Ok(buf.into())
    }

    /// The file.
    pub fn path(&self) -> &Path {
        self.src.path()
    }

    /// The decoded schema: GSST columns as Utf8 or LargeUtf8.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The record batches, in file order.
    pub fn blocks(&self) -> &[BatchBlock] {
        &self.blocks
    }

    /// Rows in the file.
    pub fn rows(&self) -> u64 {
        self.blocks.iter().map(|b| b.rows).sum()
    }

    /// The stored-schema indices of `columns` (all when empty).
    fn projection(&self, columns: &[String]) -> Result<Vec<usize>> {
        if columns.is_empty() {
            return Ok((0..self.stored.fields().len()).collect());
        }
        columns
            .iter()
            .map(|c| {
                self.stored.index_of(c).map_err(|_| {
                    Error::Unsupported(format!("no column `{c}` in {}", self.path().display()))
                })
            })
            .collect()
    }

    /// The decoded schema of `columns` (all when empty), as [`Self::read`]
    /// gives its batches.
    pub fn projected_schema(&self, columns: &[String]) -> Result<SchemaRef> {
        let projection = self.projection(columns)?;
        let schema = self.schema.project(&projection).map_err(|e| {
            Error::arrow(
                format!("projecting the schema of {}", self.path().display()),
                e,
            )
        })?;
        Ok(Arc::new(schema))
    }

    /// Reads the batches `options` select (columns, byte range), in read
    /// groups of the tuning's group bytes, each group through the readers'
    /// shared path (host budget, smaller groups over a memory limit, errors
    /// naming the file), as the ORC and Parquet readers' `read_with_stats`.
    pub fn read_with_stats(
        &self,
        options: &crate::read::ReadOptions,
        backend: &dyn Backend,
    ) -> Result<(Vec<RecordBatch>, crate::read::ReadStats)> {
        crate::read::read_with_stats(self, options, backend)
    }

    /// Reads the batches numbered `indices` (their columns `columns`, all
    /// when empty), decoding GSST columns on `backend`.
    pub fn read(
        &self,
        indices: &[usize],
        columns: &[String],
        backend: &dyn Backend,
    ) -> Result<Vec<RecordBatch>> {
        guarded(self.path(), || self.read_inner(indices, columns, backend))
    }

    fn read_inner(
        &self,
        indices: &[usize],
        columns: &[String],
        backend: &dyn Backend,
    ) -> Result<Vec<RecordBatch>> {
        let path = self.path();
        let projection = self.projection(columns)?;
        let schema = self.projected_schema(columns)?;
        if let Some(&i) = indices.iter().find(|&&i| i >= self.blocks.len()) {
            return Err(error(path, format!("no record batch {i}")));
        }
        let mut decoder =
            FileDecoder::new(self.stored.clone(), self.version).with_projection(projection);
        for (i, b) in self.dictionaries.iter().enumerate() {
            let buf = self.read_block(BlockKind::Dictionary, i, b)?;
            decoder.read_dictionary(b, &buf).map_err(|e| {
                self.block_error(BlockKind::Dictionary, i, b.offset() as u64, &e.to_string())
            })?;
        }
        let mut out = Vec::with_capacity(indices.len());
        for &i in indices {
            let b = &self.ipc_blocks[i];
            let buf = self.read_block(BlockKind::Batch, i, b)?;
            let at = b.offset() as u64;
            let batch = decoder
                .read_record_batch(b, &buf)
                .map_err(|e| self.block_error(BlockKind::Batch, i, at, &e.to_string()))?
                .ok_or_else(|| self.block_error(BlockKind::Batch, i, at, "no record batch"))?;
            let location = Location::file(path).with_stripe(i as u64);
            out.push(decode_batch(&batch, &schema, backend, &location)?);
        }
        Ok(out)
    }
}
impl crate::read::GroupedFile for ContainerFile {
    /// Record batch numbers.
    type Group = Vec<usize>;
    const FORMAT: &'static str = "GSST container";

    fn from_source(src: Source) -> Result<Self> {
        ContainerFile::from_source(src)
    }

    fn source(&self) -> &Source {
        &self.src
    }

    fn file_schema(&self) -> SchemaRef {
        self.schema()
    }

    fn projected_schema(&self, options: &crate::read::ReadOptions) -> Result<SchemaRef> {
        ContainerFile::projected_schema(self, options.columns.as_deref().unwrap_or_default())
    }

    fn planning_ranges(&self, _: &crate::read::ReadOptions) -> Result<Vec<std::ops::Range<u64>>> {
        Ok(Vec::new())
    }

    /// The batches whose message starts in the byte range and whose rows
    /// `keep` accepts, grouped by the tuning's group bytes. The container
    /// keeps no statistics: predicates prune nothing.
    fn plan_groups(
        &self,
        options: &crate::read::ReadOptions,
        backend: &dyn Backend,
        keep: &dyn Fn(std::ops::Range<u64>) -> bool,
        _: &mut crate::read::ReadStats,
    ) -> Result<Vec<Vec<usize>>> {
        let limit = options.tuning.group_bytes_on(backend);
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut bytes = 0u64;
        for b in &self.blocks {
            let first = self.first_rows[b.index];
            if options
                .byte_range
                .as_ref()
                .is_some_and(|r| !r.contains(&b.offset))
                || !keep(first..first + b.rows)
            {
                continue;
            }
            match groups.last_mut() {
                Some(g) if bytes + b.bytes <= limit => g.push(b.index),
                _ => {
                    groups.push(vec![b.index]);
                    bytes = 0;
                }
            }
            bytes += b.bytes;
        }
        Ok(groups)
    }

    fn group_span(&self, group: &Vec<usize>) -> std::ops::Range<u64> {
        let span = |i: &usize| {
            let first = self.first_rows.get(*i).copied().unwrap_or(0);
            first..first + self.blocks.get(*i).map_or(0, |b| b.rows)
        };
        let first = group.first().map_or(0, |i| span(i).start);
        let end = group.last().map_or(first, |i| span(i).end);
        first..end
    }

    /// The dictionaries (every read decodes them) and the batches.
    fn group_ranges(
        &self,
        group: &Vec<usize>,
        _: &crate::read::ReadOptions,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        let block = |b: &Block| {
            let at = b.offset() as u64;
            at..at + b.metaDataLength() as u64 + b.bodyLength() as u64
        };
        Ok(self
            .dictionaries
            .iter()
            .map(block)
            .chain(
                group
                    .iter()
                    .filter_map(|&i| self.ipc_blocks.get(i))
                    .map(block),
            )
            .collect())
    }

    fn read_group(
        &self,
        group: &Vec<usize>,
        options: &crate::read::ReadOptions,
        backend: &dyn Backend,
        stats: &mut crate::read::ReadStats,
    ) -> Result<(Vec<RecordBatch>, Vec<std::ops::Range<u64>>)> {
        let t = std::time::Instant::now();
        let columns = options.columns.as_deref().unwrap_or_default();
        let batches = self.read(group, columns, backend)?;
        stats.decode_s += t.elapsed().as_secs_f64();
        stats.file_bytes += group
            .iter()
            .filter_map(|&i| self.blocks.get(i))
            .map(|b| b.bytes)
            .sum::<u64>();
        let mut rows: Vec<std::ops::Range<u64>> = Vec::new();
        for span in group.iter().map(|&i| self.group_span(&vec![i])) {
            match rows.last_mut() {
                Some(l) if l.end == span.start => l.end = span.end,
                _ => rows.push(span),
            }
        }
        Ok((batches, rows))
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use arrow::array::{Int32Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    use super::*;
    use crate::exec::CpuBackend;
    use crate::gsst::container::{ContainerOptions, write_container};
    use crate::plan::GsstLayout;

    fn batch(n: usize, seed: usize) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("s", DataType::Utf8, true),
        ]));
        let ids = Int32Array::from_iter_values((0..n as i32).map(|i| i + seed as i32));
        let s =
            StringArray::from_iter((0..n).map(|i| {
                (i % 7 != 3).then(|| format!("value {} of batch {seed} says hello", i * 31))
            }));
        RecordBatch::try_new(schema, vec![Arc::new(ids), Arc::new(s)]).unwrap()
    }

    /// A fuzzer's input (minimized): a footer whose schema has no field
    /// list, which arrow-ipc's schema conversion unwraps. A clean error,
    /// not a caught panic.
    #[test]
    fn a_footer_schema_without_fields_is_an_error() {
        let hex: String = [
            "4152524f57310000ffffffff200300001000000000000a000e00060005000800",
            "0a000000000104001000000000000a000c000000040008000a000200006c0200",
            "0038020000cc01000068010000811ab51300ff00000000100000000c00140006",
            "0008000c0010000c000000000004003800000024000000040000000100000030",
            "03000000000000000300000000000088040000000000000000000000000a000c",
            "000000040008000e0000000c000000040000000000000009000000b00200006c",
            "02000038020000cc010000680100003001000000010000b40000000400000084",
            "fdffff0000010e180000002c000000040000000200000060000000300000000b",
            "00000064656e73655f756e696f6e000800080000000400080000000400000002",
            "0000000000000001000000d0fdffff00000105100000001c0000000400000000",
            "000000080000005f756e696f6e5f3100000000bcfdfffffcfdffff0000010210",
            "0000001c0000000400000000000000080000005f756e696f6e5f300000000098",
            "feffff000000014000000030feffff0000010a10000000280000000400000000",
            "0000000e00000074735f6d735f747a5f746f6b796f000008000c000600080008",
            "0000000000030004000000030000005554430078feffff0000010a1000000018",
            "00000004000000000000000400000074735f7300000000d2ffffff00000300a4",
            "feffff0000010a10000000200000000400000000000000060000006461746536",
            "34000000000600080006000600000000000300d8feffff0000010c1400000020",
            "0000000400000001000000180000000b00000066697865645f6c6973743200c8",
            "feffff08ffffff00000102106e67000000000400040004000000480300004152",
            "524f5731000000a0ffffff000000014000000038ffffff0000010c1400000020",
            "0000000400000001000000180000000a0000006c617267655f6c697374000028",
            "ffffff68ffffff00000102100000002000000004000000000000000400000069",
            "74656d0000000008000c0008000700080000000000000120000000a0ffffff00",
            "000104100000002000000004000000000000000d00000066697865645f62696e",
            "6172793400000090ffffffd0ffffff0000010410000000200000000400000000",
            "0000000c0000006c617267655f62696e61727900000000c0ffffff1000140008",
            "00060007000c0000001000100000000000010510000000240000000400000000",
            "0000000c0000006c617267655f737472696e6700000000040004000400000048",
            "0300004152524f5731",
        ]
        .concat();
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        assert_eq!(bytes.len(), 937);
        let e = ContainerFile::from_bytes("fuzz.arrow", bytes::Bytes::from(bytes))
            .unwrap_err()
            .to_string();
        assert!(e.contains("schema without fields"), "{e}");
    }

    /// What a fuzzer found: a struct node far longer than its validity
    /// buffer, which arrow-ipc wraps in a `BooleanBuffer` that panics.
    /// Synthesized from a valid file by patching the node's length.
    /// `b` (one node of 3 rows and 1 null) as an IPC file whose node
    /// claims `rows` rows, read as a container named `name`.
    fn read_with_node_rows(b: &RecordBatch, rows: i64, name: &str) -> Result<Vec<RecordBatch>> {
        let mut bytes = Vec::new();
        let mut w = arrow::ipc::writer::FileWriter::try_new(&mut bytes, &b.schema()).unwrap();
        w.write(b).unwrap();
        w.finish().unwrap();
        drop(w);
        let node: Vec<u8> = [3i64.to_le_bytes(), 1i64.to_le_bytes()].concat();
        let at: Vec<usize> = (0..bytes.len() - 16)
            .filter(|&i| bytes[i..i + 16] == node[..])
            .collect();
        assert_eq!(at.len(), 1);
        bytes[at[0]..at[0] + 8].copy_from_slice(&rows.to_le_bytes());
        ContainerFile::from_bytes(name, bytes::Bytes::from(bytes))
            .and_then(|f| f.read(&[0], &[], &CpuBackend::new()))
    }

    #[test]
    fn a_struct_node_longer_than_its_validity_is_an_error() {
        use arrow::array::{ArrayRef, StructArray};
        use arrow::buffer::NullBuffer;
        use arrow::datatypes::Fields;
        let child: ArrayRef = Arc::new(Int32Array::from(vec![7, 8, 9]));
        let fields = Fields::from(vec![Field::new("a", DataType::Int32, false)]);
        let nulls = NullBuffer::from(vec![true, false, true]);
        let s = StructArray::new(fields, vec![child], Some(nulls));
        let b = RecordBatch::try_from_iter([("s", Arc::new(s) as ArrayRef)]).unwrap();
        // The struct's node: 3 rows, 1 null (the child's has no nulls).
        let e = read_with_node_rows(&b, 1 << 60, "node.arrow")
            .unwrap_err()
            .to_string();
        assert!(e.contains("node.arrow") && e.contains("validity"), "{e}");
    }

    /// The fuzzed finding after the struct one: an integer node (any node
    /// with nulls) longer than its validity buffer.
    #[test]
    fn a_primitive_node_longer_than_its_validity_is_an_error() {
        use arrow::array::ArrayRef;
        let a: ArrayRef = Arc::new(Int32Array::from(vec![Some(7), None, Some(9)]));
        let b = RecordBatch::try_from_iter([("a", a)]).unwrap();
        let e = read_with_node_rows(&b, 6_124_895_493_223_874_660, "int.arrow")
            .unwrap_err()
            .to_string();
        assert!(e.contains("int.arrow") && e.contains("validity"), "{e}");
    }

    #[test]
    fn blocks_give_offsets_rows_and_random_access() {
        let dir = std::env::temp_dir().join(format!("warpread-cf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.arrow");
        let batches: Vec<_> = [(100, 0), (1, 1000), (2500, 2000)]
            .into_iter()
            .map(|(n, s)| batch(n, s))
            .collect();
        let schema = batches[0].schema();
        let mut file = File::create(&path).unwrap();
        write_container(
            &mut file,
            &schema,
            batches.iter().cloned().map(Ok),
            &ContainerOptions::new(GsstLayout::Splits),
        )
        .unwrap();
        let f = ContainerFile::open(&path).unwrap();
        assert_eq!(f.schema(), schema);
        let rows: Vec<u64> = f.blocks().iter().map(|b| b.rows).collect();
        assert_eq!(rows, [100, 1, 2500]);
        assert!(f.blocks().windows(2).all(|w| w[0].offset < w[1].offset));
        let got = f.read(&[2, 0], &["s".into()], &CpuBackend::new()).unwrap();
        assert_eq!(got[0].column(0).as_ref(), batches[2].column(1).as_ref());
        assert_eq!(got[1].column(0).as_ref(), batches[0].column(1).as_ref());
        assert!(f.read(&[3], &[], &CpuBackend::new()).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn damaged_footers_are_errors() {
        let dir = std::env::temp_dir().join(format!("warpread-cf-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.arrow");
        let mut file = File::create(&path).unwrap();
        let b = batch(50, 0);
        write_container(
            &mut file,
            &b.schema(),
            [Ok(b.clone())],
            &ContainerOptions::new(GsstLayout::Coalesced),
        )
        .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        for cut in [0, 5, bytes.len() / 2, bytes.len() - 11, bytes.len() - 1] {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let e = ContainerFile::open(&path).unwrap_err().to_string();
            assert!(e.contains("t.arrow"), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
