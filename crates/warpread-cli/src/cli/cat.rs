//! `warpread cat FILE`: decode a file (or some of its columns) to Arrow IPC,
//! CSV or JSON lines.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use clap::ValueEnum;

use crate::error::{Error, Result};
use crate::orc::{OrcFile, Predicate, ReadOptions};

/// Output formats.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// Arrow IPC file. An IPC file holds one dictionary per field: when a
    /// file's dictionaries change from one row group or stripe to the next,
    /// its dictionary-encoded columns are written as their values.
    Arrow,
    /// CSV with a header line (flat schemas only).
    Csv,
    /// JSON, one object per line.
    Json,
}

/// What `cat` was asked to do.
#[derive(Debug)]
pub struct CatArgs {
    /// Input file.
    pub input: PathBuf,
    /// Columns to keep.
    pub columns: Vec<String>,
    /// Pruning predicates: stripes, ORC row groups (row index), Parquet
    /// row groups and pages (page index).
    pub predicates: Vec<Predicate>,
    /// Output format.
    pub format: Format,
    /// Output path (`-` or none: standard output).
    pub output: Option<PathBuf>,
    /// Rows per batch.
    pub batch_size: usize,
}

/// Runs `cat`.
pub fn run(args: CatArgs, settings: &super::Settings) -> Result<()> {
    let backend = settings.select()?;
    let start = Instant::now();
    let mut options = ReadOptions::default()
        .with_batch_size(args.batch_size)
        .with_tuning(settings.tuning.clone());
    if !args.columns.is_empty() {
        options = options.with_columns(args.columns.clone());
    }
    options.predicates = args.predicates;
    let (schema, batches) = if crate::gsst::container::is_arrow_file(&args.input) {
        if !options.predicates.is_empty() {
            return Err(Error::Unsupported(
                "--where on Arrow IPC files (they have no statistics)".into(),
            ));
        }
        crate::gsst::container::read_container(&args.input, &args.columns, backend.as_ref())?
    } else if crate::parquet::is_parquet(&args.input) {
        let file = crate::parquet::ParquetFile::open(&args.input)?;
        let schema = file.projected_schema(&options)?;
        let (batches, stats) = file.read_with_stats(&options, backend.as_ref())?;
        tracing::info!(
            "{}: {} data pages decoded, {} skipped by the page index",
            args.input.display(),
            stats.pages_read,
            stats.pages_skipped
        );
        (schema, batches)
    } else {
        let file = OrcFile::open(&args.input)?;
        let schema = file.projected_schema(&options)?;
        let (batches, s) = file.read_with_stats(&options, backend.as_ref())?;
        if !options.predicates.is_empty() {
            tracing::info!(
                "{}: stripes read {} pruned {}; row groups read {} pruned {} (decoded and sliced {})",
                args.input.display(),
                s.stripes_read,
                s.stripes_pruned,
                s.row_groups_read,
                s.row_groups_pruned,
                s.row_groups_sliced
            );
        }
        (schema, batches)
    };
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    tracing::info!(
        "{}: {rows} rows decoded on {} in {:.3} s",
        args.input.display(),
        backend.describe(),
        start.elapsed().as_secs_f64()
    );
    let out_name = args
        .output
        .clone()
        .filter(|p| p.as_os_str() != "-")
        .unwrap_or_else(|| PathBuf::from("<stdout>"));
    let sink: Box<dyn Write> = match args.output.as_deref() {
        Some(p) if p != Path::new("-") => Box::new(File::create(p).map_err(|e| Error::io(p, e))?),
        _ => Box::new(std::io::stdout().lock()),
    };
    let sink = BufWriter::new(sink);
    let err = |e| Error::arrow(format!("writing {}", out_name.display()), e);
    match args.format {
        Format::Arrow => {
            let plain = if dictionaries_change(&schema, &batches) {
                plain_schema(&schema)
            } else {
                schema.clone()
            };
            let mut w = arrow::ipc::writer::FileWriter::try_new(sink, &plain).map_err(err)?;
            for b in &batches {
                w.write(&with_schema(b, &plain).map_err(err)?)
                    .map_err(err)?;
            }
            w.finish().map_err(err)?;
        }
        Format::Csv => {
            let mut w = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(sink);
            for b in &batches {
                w.write(b).map_err(err)?;
            }
        }
        Format::Json => {
            let mut w = arrow::json::LineDelimitedWriter::new(sink);
            for b in &batches {
                w.write(b).map_err(err)?;
            }
            w.finish().map_err(err)?;
        }
    }
    Ok(())
}

/// Whether one IPC file cannot hold `batches` with their dictionaries: a
/// top-level dictionary column whose values differ between batches, or a
/// dictionary nested deeper in a schema of several batches (not compared).
fn dictionaries_change(schema: &SchemaRef, batches: &[RecordBatch]) -> bool {
    schema
        .fields()
        .iter()
        .enumerate()
        .any(|(i, f)| match f.data_type() {
            DataType::Dictionary(..) => {
                let values = |b: &RecordBatch| b.column(i).as_any_dictionary().values().clone();
                let Some((first, rest)) = batches.split_first() else {
                    return false;
                };
                let first = values(first);
                // Batches of one row group share their dictionary's buffers.
                rest.iter().any(|b| {
                    let v = values(b);
                    !Arc::ptr_eq(&v, &first) && v.to_data() != first.to_data()
                })
            }
            ty => batches.len() > 1 && plain_type(ty) != *ty,
        })
}

/// `schema` with every dictionary type, nested ones included, replaced by
/// its value type.
fn plain_schema(schema: &SchemaRef) -> SchemaRef {
    let fields: Vec<Field> = schema.fields().iter().map(|f| plain_field(f)).collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

fn plain_field(field: &Field) -> Field {
    field.clone().with_data_type(plain_type(field.data_type()))
}

fn plain_type(ty: &DataType) -> DataType {
    match ty {
        DataType::Dictionary(_, value) => plain_type(value),
        DataType::List(f) => DataType::List(Arc::new(plain_field(f))),
        DataType::LargeList(f) => DataType::LargeList(Arc::new(plain_field(f))),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(Arc::new(plain_field(f)), *n),
        DataType::Map(f, sorted) => DataType::Map(Arc::new(plain_field(f)), *sorted),
        DataType::Struct(fields) => {
            DataType::Struct(fields.iter().map(|f| plain_field(f)).collect())
        }
        other => other.clone(),
    }
}

/// `batch` cast to `schema` (the same columns, dictionaries expanded).
fn with_schema(batch: &RecordBatch, schema: &SchemaRef) -> arrow::error::Result<RecordBatch> {
    if batch.schema() == *schema {
        return Ok(batch.clone());
    }
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| arrow::compute::cast(c, f.data_type()))
        .collect::<arrow::error::Result<Vec<_>>>()?;
    RecordBatch::try_new(schema.clone(), columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dictionaries_become_their_values_at_every_depth() {
        let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        let nested = DataType::List(Arc::new(Field::new("item", dict.clone(), true)));
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", dict, true),
            Field::new("b", nested, true),
            Field::new("c", DataType::Int64, false),
        ]));
        let plain = plain_schema(&schema);
        assert_eq!(plain.field(0).data_type(), &DataType::Utf8);
        assert_eq!(
            plain.field(1).data_type(),
            &DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
        );
        assert_eq!(plain.field(2).data_type(), &DataType::Int64);
    }
}
