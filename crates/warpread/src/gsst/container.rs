//! The GSST file container: an Arrow IPC file in which top-level columns
//! may be stored compressed, each marked with an Arrow extension type:
//! Utf8 or LargeUtf8 columns as LargeBinary columns marked `warpread.gsst`
//! (row 0 of each record batch holds that batch's [`GsstColumn`] bytes:
//! varint lengths, validity, GSST frame; the other rows are empty), and
//! fixed-width or string columns as run-end encoded LargeBinary columns
//! marked `warpread.huffman` (`huffman_extension.rs`, `huffman_column.rs`).
//! Which columns, and how, is [`ContainerOptions::codec`]'s choice
//! (`codec_choice.rs`). Tools that do not know the extensions still open
//! the file and see every other column as it was (docs/gsst-format.md,
//! "File container").

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, Int64Array, LargeBinaryArray, RecordBatch, RunArray, new_empty_array,
};
use arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field, Int64Type, Schema, SchemaRef};
use arrow::ipc::writer::FileWriter;
use serde::{Deserialize, Serialize};

use super::arrow::{GsstColumn, compress_strings, decompress_strings};
use super::codec_choice::{
    CodecPolicy, ColumnChoice, ColumnEncoding, SAMPLE_BYTES, choose, needs_sample, stored_bytes,
};
use super::container_file::ContainerFile;
use super::format::Frame;
use super::huffman_column::{compress_column, decompress_column};
use super::huffman_extension::{HuffmanField, decoded_field, huffman_field_of, stored_field};
use super::{GsstParams, TargetDevice};
use crate::error::{Error, Location, Result};
use crate::exec::Backend;
use crate::plan::GsstLayout;

/// The Arrow extension name of GSST string columns.
pub const EXTENSION_NAME: &str = "warpread.gsst";
/// The container version written and accepted.
pub const CONTAINER_VERSION: u32 = 1;
const KEY_NAME: &str = "ARROW:extension:name";
const KEY_METADATA: &str = "ARROW:extension:metadata";

/// The extension metadata (JSON in `ARROW:extension:metadata`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GsstExtension {
    /// Container version.
    pub version: u32,
    /// Code layout of every frame of the column: `splits` or `coalesced`.
    pub layout: String,
    /// The decoded type: `Utf8` or `LargeUtf8`.
    pub value_type: String,
}

/// How columns are compressed.
#[derive(Debug, Clone, Copy)]
pub struct ContainerOptions {
    /// Which columns are compressed, and how (default: strings GSST).
    pub codec: CodecPolicy,
    /// GSST code layout.
    pub layout: GsstLayout,
    /// The device the block and split defaults are derived for.
    pub target: TargetDevice,
    /// Uncompressed bytes per block (default: derived per column and batch).
    pub block_bytes: Option<usize>,
    /// Splits per block (default: one per kernel thread).
    pub splits: Option<usize>,
}

impl ContainerOptions {
    /// Defaults for a layout, derived for an H100; string columns GSST.
    pub fn new(layout: GsstLayout) -> Self {
        Self {
            codec: CodecPolicy::Gsst,
            layout,
            target: TargetDevice::H100,
            block_bytes: None,
            splits: None,
        }
    }

    /// The same options under another codec policy.
    pub fn with_codec(self, codec: CodecPolicy) -> Self {
        Self { codec, ..self }
    }

    /// GSST settings for `len` bytes of values.
    pub(super) fn params(&self, len: usize) -> GsstParams {
        let mut p = GsstParams::for_device(&self.target, len, self.layout);
        if let Some(b) = self.block_bytes {
            p.block_bytes = b.max(1);
        }
        if let Some(s) = self.splits {
            p.splits = s.max(1);
        }
        p
    }
}

/// Sizes of what was written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerStats {
    /// Rows written.
    pub rows: u64,
    /// Record batches written.
    pub batches: u64,
    /// String value bytes of the GSST columns (before GSST).
    pub string_bytes: u64,
    /// Bytes of the GSST columns' column containers (after GSST).
    pub gsst_bytes: u64,
    /// Per top-level column, in schema order.
    pub columns: Vec<ColumnStats>,
}

/// What one column became.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnStats {
    /// Column name.
    pub name: String,
    /// How it is stored.
    pub encoding: ColumnEncoding,
    /// Bytes its batches' arrays take plain (buffers as far as each slice
    /// reaches).
    pub plain_bytes: u64,
    /// Bytes of its stored arrays (column containers and their storage).
    pub stored_bytes: u64,
    /// Candidate encodings and their stored bytes on the measured sample
    /// (empty when there was no choice to make).
    pub measured: Vec<(ColumnEncoding, u64)>,
}

impl ColumnStats {
    /// Plain bytes over stored bytes.
    pub fn ratio(&self) -> f64 {
        self.plain_bytes as f64 / self.stored_bytes.max(1) as f64
    }
}

fn container_error(location: &Location, message: impl Into<String>) -> Error {
    Error::Format {
        format: "GSST container",
        location: Box::new(location.clone()),
        message: message.into(),
    }
}

/// Errors of the column layer carry no location; give them the batch's.
fn locate(e: Error, location: &Location) -> Error {
    match e {
        Error::Format {
            format,
            location: l,
            message,
        } if *l == Location::default() => Error::Format {
            format,
            location: Box::new(location.clone()),
            message,
        },
        Error::Corrupt {
            location: l,
            status,
        } if l.file.is_none() => Error::Corrupt {
            location: Box::new(Location {
                chunk: l.chunk,
                offset: l.offset,
                ..location.clone()
            }),
            status,
        },
        e => e,
    }
}

/// The extension of a field, if it is a GSST column; malformed markings are
/// errors, not plain columns, so that damage is not silently passed on.
pub fn extension_of(field: &Field, location: &Location) -> Result<Option<GsstExtension>> {
    let md = field.metadata();
    if md.get(KEY_NAME).map(String::as_str) != Some(EXTENSION_NAME) {
        return Ok(None);
    }
    let location = location.clone().with_column(field.name());
    let ext: GsstExtension = md
        .get(KEY_METADATA)
        .ok_or_else(|| container_error(&location, "extension metadata missing"))
        .and_then(|s| {
            serde_json::from_str(s)
                .map_err(|e| container_error(&location, format!("extension metadata: {e}")))
        })?;
    if ext.version != CONTAINER_VERSION {
        return Err(container_error(
            &location,
            format!("container version {}", ext.version),
        ));
    }
    ext.layout
        .parse::<GsstLayout>()
        .map_err(|_| container_error(&location, format!("layout `{}`", ext.layout)))?;
    if !matches!(ext.value_type.as_str(), "Utf8" | "LargeUtf8") {
        return Err(container_error(
            &location,
            format!("value type `{}`", ext.value_type),
        ));
    }
    if field.data_type() != &DataType::LargeBinary {
        return Err(container_error(
            &location,
            format!("storage type {} (expected LargeBinary)", field.data_type()),
        ));
    }
    Ok(Some(ext))
}

/// The container schema of a source schema: top-level string columns
/// become marked LargeBinary columns, keeping name, nullability and
/// metadata; everything else is unchanged.
pub fn encode_schema(schema: &Schema, layout: GsstLayout) -> SchemaRef {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Utf8 | DataType::LargeUtf8 => gsst_field(f, layout),
            _ => f.as_ref().clone(),
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The container schema of a source schema whose top-level columns are
/// stored as `encodings` says (one a field, e.g. from
/// [`codec_choice::choose`](super::codec_choice::choose)); an encoding a
/// column's type cannot have is an error.
pub fn encode_schema_with(
    schema: &Schema,
    encodings: &[ColumnEncoding],
    layout: GsstLayout,
) -> Result<SchemaRef> {
    if encodings.len() != schema.fields().len() {
        return Err(Error::Unsupported(format!(
            "{} encodings for {} columns",
            encodings.len(),
            schema.fields().len()
        )));
    }
    let mut fields = Vec::with_capacity(encodings.len());
    for (f, e) in schema.fields().iter().zip(encodings) {
        fields.push(match e {
            ColumnEncoding::Plain => f.as_ref().clone(),
            ColumnEncoding::Gsst
                if matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8) =>
            {
                gsst_field(f, layout)
            }
            ColumnEncoding::Gsst => {
                return Err(Error::Unsupported(format!(
                    "column `{}`: GSST codes strings, not {}",
                    f.name(),
                    f.data_type()
                )));
            }
            ColumnEncoding::Huffman(h) => stored_field(f, *h)?,
        });
    }
    Ok(Arc::new(Schema::new_with_metadata(
        fields,
        schema.metadata().clone(),
    )))
}

/// The marked LargeBinary field of a GSST string column.
fn gsst_field(f: &Field, layout: GsstLayout) -> Field {
    let ext = GsstExtension {
        version: CONTAINER_VERSION,
        layout: layout.name().into(),
        value_type: f.data_type().to_string(),
    };
    let mut md = f.metadata().clone();
    md.insert(KEY_NAME.into(), EXTENSION_NAME.into());
    md.insert(
        KEY_METADATA.into(),
        serde_json::to_string(&ext).expect("plain struct"),
    );
    Field::new(f.name(), DataType::LargeBinary, f.is_nullable()).with_metadata(md)
}

/// How a stored field is marked.
enum Marking {
    Plain,
    Gsst(GsstExtension),
    Huffman(HuffmanField),
}

impl Marking {
    fn encoding(&self) -> ColumnEncoding {
        match self {
            Self::Plain => ColumnEncoding::Plain,
            Self::Gsst(_) => ColumnEncoding::Gsst,
            Self::Huffman(h) => ColumnEncoding::Huffman(h.encoding),
        }
    }
}

/// The marking of a stored field; a damaged marking is an error.
fn marking(field: &Field, location: &Location) -> Result<Marking> {
    if let Some(ext) = extension_of(field, location)? {
        return Ok(Marking::Gsst(ext));
    }
    Ok(match huffman_field_of(field, location)? {
        Some(h) => Marking::Huffman(h),
        None => Marking::Plain,
    })
}

/// The decoded schema of a container schema.
pub fn decode_schema(schema: &Schema, location: &Location) -> Result<SchemaRef> {
    let mut fields = Vec::with_capacity(schema.fields().len());
    for f in schema.fields() {
        fields.push(match marking(f, location)? {
            Marking::Gsst(ext) => {
                let mut md: HashMap<String, String> = f.metadata().clone();
                md.remove(KEY_NAME);
                md.remove(KEY_METADATA);
                let ty = if ext.value_type == "LargeUtf8" {
                    DataType::LargeUtf8
                } else {
                    DataType::Utf8
                };
                Field::new(f.name(), ty, f.is_nullable()).with_metadata(md)
            }
            Marking::Huffman(h) => decoded_field(f, &h),
            Marking::Plain => f.as_ref().clone(),
        });
    }
    Ok(Arc::new(Schema::new_with_metadata(
        fields,
        schema.metadata().clone(),
    )))
}

/// One batch's `column` stored as `encoding`: what [`encode_batch`] writes
/// and what measurements weigh.
pub(super) fn encode_column(
    column: &ArrayRef,
    encoding: ColumnEncoding,
    options: &ContainerOptions,
) -> Result<ArrayRef> {
    let rows = column.len();
    match encoding {
        ColumnEncoding::Plain => Ok(column.clone()),
        ColumnEncoding::Gsst => {
            let values = col_values_len(column.as_ref());
            let bytes = compress_strings(column.as_ref(), &options.params(values))?.to_bytes();
            // A batch without rows has no row to carry the column: it
            // decodes to an empty array without one.
            let cells = (0..rows).map(|i| if i == 0 { &bytes[..] } else { &[][..] });
            Ok(Arc::new(LargeBinaryArray::from_iter_values(cells)))
        }
        ColumnEncoding::Huffman(h) => {
            let bytes = compress_column(column.as_ref(), h, &|len| options.params(len))?;
            // One run holds the container, a second the other rows' one
            // empty value: two values whatever the row count. The
            // container's bytes become the values buffer as they are.
            let len = bytes.len() as i64;
            let (ends, offsets): (Vec<i64>, Vec<i64>) = match rows {
                0 => (Vec::new(), vec![0]),
                1 => (vec![1], vec![0, len]),
                n => (vec![1, n as i64], vec![0, len, len]),
            };
            let cells = LargeBinaryArray::try_new(
                OffsetBuffer::new(ScalarBuffer::from(offsets)),
                Buffer::from_vec(if rows == 0 { Vec::new() } else { bytes }),
                None,
            )
            .map_err(|e| Error::arrow("building a Huffman column", e))?;
            let run = RunArray::<Int64Type>::try_new(&Int64Array::from(ends), &cells)
                .map_err(|e| Error::arrow("building a Huffman column", e))?;
            Ok(Arc::new(run))
        }
    }
}

/// Per-column statistics for `schema`'s columns stored as `choices` say.
fn column_stats(schema: &Schema, choices: Vec<ColumnChoice>) -> Vec<ColumnStats> {
    schema
        .fields()
        .iter()
        .zip(choices)
        .map(|(f, c)| ColumnStats {
            name: f.name().clone(),
            encoding: c.encoding,
            plain_bytes: 0,
            stored_bytes: 0,
            measured: c.measured,
        })
        .collect()
}

/// Compresses one source batch into a container batch of `schema` (from
/// [`encode_schema`] or [`encode_schema_with`]: each column as its field is
/// marked), adding to `stats`.
pub fn encode_batch(
    batch: &RecordBatch,
    schema: &SchemaRef,
    options: &ContainerOptions,
    stats: &mut ContainerStats,
) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    let mut encodings = Vec::with_capacity(schema.fields().len());
    for f in schema.fields() {
        encodings.push(marking(f, &Location::default())?.encoding());
    }
    if stats.columns.len() != encodings.len() {
        let choices = encodings.iter().map(|&encoding| ColumnChoice {
            encoding,
            measured: Vec::new(),
        });
        stats.columns = column_stats(schema, choices.collect());
    }
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
    for ((column, encoding), st) in batch
        .columns()
        .iter()
        .zip(encodings)
        .zip(&mut stats.columns)
    {
        let stored = encode_column(column, encoding, options)?;
        if encoding == ColumnEncoding::Gsst {
            stats.string_bytes += col_values_len(column.as_ref()) as u64;
            stats.gsst_bytes += stored_cell_bytes(&stored);
        }
        st.plain_bytes += stored_bytes(column.as_ref());
        st.stored_bytes += stored_bytes(stored.as_ref());
        columns.push(stored);
    }
    stats.rows += rows as u64;
    stats.batches += 1;
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| Error::arrow("building a batch", e))
}

/// The column container bytes of a GSST column's stored batch.
fn stored_cell_bytes(stored: &ArrayRef) -> u64 {
    stored
        .as_any()
        .downcast_ref::<LargeBinaryArray>()
        .map_or(0, |a| a.value_data().len() as u64)
}

fn col_values_len(a: &dyn Array) -> usize {
    use arrow::array::AsArray;
    match a.data_type() {
        DataType::Utf8 => {
            let s = a.as_string::<i32>();
            let o = s.value_offsets();
            (o[s.len()] - o[0]) as usize
        }
        DataType::LargeUtf8 => {
            let s = a.as_string::<i64>();
            let o = s.value_offsets();
            (o[s.len()] - o[0]) as usize
        }
        _ => 0,
    }
}

/// Writes `batches` (all of `schema`) as a container. With dictionary
/// columns the batches are first concatenated into one: an IPC file allows
/// one dictionary per field, and batches read from Parquet or ORC each
/// bring their own.
pub fn write_container<W: Write>(
    sink: W,
    schema: &Schema,
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
    options: &ContainerOptions,
) -> Result<ContainerStats> {
    let err = |e| Error::arrow("writing the GSST container", e);
    let has_dictionary = schema
        .fields()
        .iter()
        .any(|f| matches!(f.data_type(), DataType::Dictionary(..)));
    let mut batches: Box<dyn Iterator<Item = Result<RecordBatch>>> = if has_dictionary {
        let all = batches.into_iter().collect::<Result<Vec<_>>>()?;
        let schema = Arc::new(schema.clone());
        let one = arrow::compute::concat_batches(&schema, &all)
            .map_err(|e| Error::arrow("joining batches with dictionaries", e))?;
        Box::new(std::iter::once(Ok(one)))
    } else {
        Box::new(batches.into_iter())
    };
    // The schema, written first, fixes every column's encoding: choices that
    // need measuring are measured on the leading batches.
    let mut sample = Vec::new();
    if needs_sample(schema, options.codec) {
        let mut bytes = 0u64;
        while bytes < SAMPLE_BYTES {
            let Some(b) = batches.next() else { break };
            let b = b?;
            bytes += b
                .columns()
                .iter()
                .map(|c| stored_bytes(c.as_ref()))
                .sum::<u64>();
            sample.push(b);
        }
    }
    let choices = choose(schema, &sample, options)?;
    let encodings: Vec<ColumnEncoding> = choices.iter().map(|c| c.encoding).collect();
    let encoded = encode_schema_with(schema, &encodings, options.layout)?;
    let mut w = FileWriter::try_new(sink, &encoded).map_err(err)?;
    let mut stats = ContainerStats {
        columns: column_stats(schema, choices),
        ..ContainerStats::default()
    };
    for b in sample.into_iter().map(Ok).chain(batches) {
        let b = encode_batch(&b?, &encoded, options, &mut stats)?;
        w.write(&b).map_err(err)?;
    }
    w.finish().map_err(err)?;
    Ok(stats)
}

/// Decodes one container batch to the decoded `schema` (from
/// [`decode_schema`]): each GSST column's frame runs as a GSST stage on
/// `backend`, each Huffman column's as a Huffman stage (then a GSST stage
/// for strings coded after GSST).
pub fn decode_batch(
    batch: &RecordBatch,
    schema: &SchemaRef,
    backend: &dyn Backend,
    location: &Location,
) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (column, field) in batch.columns().iter().zip(batch.schema().fields()) {
        let loc = location.clone().with_column(field.name());
        let ext = match marking(field, location)? {
            Marking::Plain => {
                columns.push(column.clone());
                continue;
            }
            Marking::Huffman(h) => {
                columns.push(decode_huffman(column, rows, &h, backend, &loc)?);
                continue;
            }
            Marking::Gsst(ext) => ext,
        };
        let large = ext.value_type == "LargeUtf8";
        if rows == 0 {
            columns.push(new_empty_array(if large {
                &DataType::LargeUtf8
            } else {
                &DataType::Utf8
            }));
            continue;
        }
        let cells = column
            .as_any()
            .downcast_ref::<LargeBinaryArray>()
            .ok_or_else(|| container_error(&loc, "storage is not LargeBinary"))?;
        let offsets = cells.value_offsets();
        if cells.is_null(0) || offsets[rows] != offsets[1] {
            return Err(container_error(
                &loc,
                "the column container must be row 0's value and the other rows empty",
            ));
        }
        let col = GsstColumn::from_bytes(cells.value(0)).map_err(|e| locate(e, &loc))?;
        if col.rows != rows || col.large != large {
            return Err(container_error(
                &loc,
                format!(
                    "column container holds {} {} rows, the batch {} {} rows",
                    col.rows,
                    if col.large { "LargeUtf8" } else { "Utf8" },
                    rows,
                    ext.value_type
                ),
            ));
        }
        let layout = Frame::parse(&col.frame, &loc)?.layout;
        if layout.name() != ext.layout {
            return Err(container_error(
                &loc,
                format!(
                    "frame layout {} but the field says {}",
                    layout.name(),
                    ext.layout
                ),
            ));
        }
        columns.push(decompress_strings(&col, backend).map_err(|e| locate(e, &loc))?);
    }
    RecordBatch::try_new(schema.clone(), columns)
        .map_err(|e| Error::arrow(format!("rebuilding a batch at {location}"), e))
}

/// Decodes one batch of a Huffman column: its run-end encoded storage must
/// be row 0's column container and, after it, one empty run.
fn decode_huffman(
    column: &ArrayRef,
    rows: usize,
    field: &HuffmanField,
    backend: &dyn Backend,
    location: &Location,
) -> Result<ArrayRef> {
    if rows == 0 {
        return Ok(new_empty_array(&field.value_type));
    }
    let bad = || {
        container_error(
            location,
            "a Huffman column must be row 0's column container and one empty run after it",
        )
    };
    let run = column
        .as_any()
        .downcast_ref::<RunArray<Int64Type>>()
        .ok_or_else(bad)?;
    let ends = run.run_ends();
    let want: &[i64] = if rows == 1 { &[1] } else { &[1, rows as i64] };
    if run.len() != rows || ends.offset() != 0 || ends.values() != want {
        return Err(bad());
    }
    let cells = run
        .values()
        .as_any()
        .downcast_ref::<LargeBinaryArray>()
        .ok_or_else(bad)?;
    if cells.len() != want.len()
        || cells.is_null(0)
        || (rows > 1 && (cells.is_null(1) || !cells.value(1).is_empty()))
    {
        return Err(bad());
    }
    decompress_column(cells.value(0), rows, field, backend, location)
}

/// Whether a file starts with the Arrow IPC file magic.
pub fn is_arrow_file(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 6];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|_| &magic == b"ARROW1")
}

/// Reads an Arrow IPC file, decoding its GSST columns on `backend`
/// (a file without any is read as it is). `columns` keeps only those
/// top-level columns (all when empty), before anything is decoded. Every
/// length in the file is checked before it is trusted ([`ContainerFile`]):
/// a damaged file is an error naming it and the batch, never a panic or an
/// allocation the file's bytes cannot back.
pub fn read_container(
    path: &Path,
    columns: &[String],
    backend: &dyn Backend,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let file = ContainerFile::open(path)?;
    let schema = file.projected_schema(columns)?;
    let all: Vec<usize> = (0..file.blocks().len()).collect();
    let batches = file.read(&all, columns, backend)?;
    Ok((schema, batches))
}
