//! The GSST file container: an Arrow IPC file in which each top-level Utf8
//! or LargeUtf8 column is stored as a LargeBinary column marked with the
//! `warpread.gsst` Arrow extension type. Row 0 of each record batch holds
//! that batch's string column container ([`GsstColumn`] bytes: varint
//! lengths, validity, GSST frame); the other rows are empty. Tools that do
//! not know the extension still open the file and see every other column as
//! it was (docs/gsst-format.md, "File container").

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, LargeBinaryArray, RecordBatch, new_empty_array};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::ipc::writer::FileWriter;
use serde::{Deserialize, Serialize};

use super::arrow::{GsstColumn, compress_strings, decompress_strings};
use super::container_file::ContainerFile;
use super::format::Frame;
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

/// How string columns are compressed.
#[derive(Debug, Clone, Copy)]
pub struct ContainerOptions {
    /// Code layout.
    pub layout: GsstLayout,
    /// The device the block and split defaults are derived for.
    pub target: TargetDevice,
    /// Uncompressed bytes per block (default: derived per column and batch).
    pub block_bytes: Option<usize>,
    /// Splits per block (default: one per kernel thread).
    pub splits: Option<usize>,
}

impl ContainerOptions {
    /// Defaults for a layout, derived for an H100.
    pub fn new(layout: GsstLayout) -> Self {
        Self {
            layout,
            target: TargetDevice::H100,
            block_bytes: None,
            splits: None,
        }
    }

    fn params(&self, len: usize) -> GsstParams {
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContainerStats {
    /// Rows written.
    pub rows: u64,
    /// Record batches written.
    pub batches: u64,
    /// String value bytes compressed (before GSST).
    pub string_bytes: u64,
    /// Bytes of the string column containers (after GSST).
    pub gsst_bytes: u64,
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
            DataType::Utf8 | DataType::LargeUtf8 => {
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
            _ => f.as_ref().clone(),
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The decoded schema of a container schema.
pub fn decode_schema(schema: &Schema, location: &Location) -> Result<SchemaRef> {
    let mut fields = Vec::with_capacity(schema.fields().len());
    for f in schema.fields() {
        fields.push(match extension_of(f, location)? {
            Some(ext) => {
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
            None => f.as_ref().clone(),
        });
    }
    Ok(Arc::new(Schema::new_with_metadata(
        fields,
        schema.metadata().clone(),
    )))
}

/// Compresses one source batch into a container batch of `schema`
/// (from [`encode_schema`]), adding to `stats`.
pub fn encode_batch(
    batch: &RecordBatch,
    schema: &SchemaRef,
    options: &ContainerOptions,
    stats: &mut ContainerStats,
) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
    for (column, field) in batch.columns().iter().zip(schema.fields()) {
        if field.metadata().get(KEY_NAME).map(String::as_str) != Some(EXTENSION_NAME) {
            columns.push(column.clone());
            continue;
        }
        let values = col_values_len(column.as_ref());
        let col = compress_strings(column.as_ref(), &options.params(values))?;
        let bytes = col.to_bytes();
        stats.string_bytes += values as u64;
        stats.gsst_bytes += bytes.len() as u64;
        // A batch without rows has no row to carry the column: it decodes
        // to an empty array without one.
        let cells = (0..rows).map(|i| if i == 0 { &bytes[..] } else { &[][..] });
        columns.push(Arc::new(LargeBinaryArray::from_iter_values(cells)));
    }
    stats.rows += rows as u64;
    stats.batches += 1;
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| Error::arrow("building a batch", e))
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
    let encoded = encode_schema(schema, options.layout);
    let err = |e| Error::arrow("writing the GSST container", e);
    let has_dictionary = schema
        .fields()
        .iter()
        .any(|f| matches!(f.data_type(), DataType::Dictionary(..)));
    let batches: Box<dyn Iterator<Item = Result<RecordBatch>>> = if has_dictionary {
        let all = batches.into_iter().collect::<Result<Vec<_>>>()?;
        let schema = Arc::new(schema.clone());
        let one = arrow::compute::concat_batches(&schema, &all)
            .map_err(|e| Error::arrow("joining batches with dictionaries", e))?;
        Box::new(std::iter::once(Ok(one)))
    } else {
        Box::new(batches.into_iter())
    };
    let mut w = FileWriter::try_new(sink, &encoded).map_err(err)?;
    let mut stats = ContainerStats::default();
    for b in batches {
        let b = encode_batch(&b?, &encoded, options, &mut stats)?;
        w.write(&b).map_err(err)?;
    }
    w.finish().map_err(err)?;
    Ok(stats)
}

/// Decodes one container batch to the decoded `schema` (from
/// [`decode_schema`]): each GSST column's frame runs as a GSST stage on
/// `backend`.
pub fn decode_batch(
    batch: &RecordBatch,
    schema: &SchemaRef,
    backend: &dyn Backend,
    location: &Location,
) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (column, field) in batch.columns().iter().zip(batch.schema().fields()) {
        let Some(ext) = extension_of(field, location)? else {
            columns.push(column.clone());
            continue;
        };
        let loc = location.clone().with_column(field.name());
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
