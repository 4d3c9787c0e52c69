//! `warpread cat FILE`: decode a file (or some of its columns) to Arrow IPC,
//! CSV or JSON lines.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use clap::ValueEnum;

use super::input::{Input, Kind};
use super::output::OutputFile;
use crate::error::{Error, Result};
use crate::exec::Backend;
use crate::orc::{Predicate, ReadTuning};
use crate::read::{GroupedFile, ReaderBuilder};

/// Output formats.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// Arrow IPC file. An IPC file holds one dictionary per field, and the
    /// batches are written as they are read: dictionary-encoded columns of
    /// an ORC or Parquet file of several stripes or row groups (each with
    /// its own dictionaries) are written as their values; an IPC input, or
    /// a single stripe or row group, keeps them.
    Arrow,
    /// CSV with a header line (flat schemas only).
    Csv,
    /// JSON, one object per line.
    Json,
}

/// What `cat` was asked to do.
#[derive(Debug)]
pub struct CatArgs {
    /// Input file: a path or an object store URL.
    pub input: String,
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
    /// Read groups decoded side by side (`None`: the backend's choice).
    pub groups_in_flight: Option<usize>,
}

/// Batches as a read hands them out, one read group at a time.
type Batches = Box<dyn Iterator<Item = Result<RecordBatch>>>;

/// What a streaming read of the input gives: its schema, its batches, and
/// whether its dictionary columns may keep their dictionaries in an IPC
/// file (one dictionary serves every batch).
struct Opened {
    schema: SchemaRef,
    batches: Batches,
    one_dictionary: bool,
}

/// Sets the builder methods both builder kinds share.
macro_rules! configure {
    ($builder:expr, $args:expr, $backend:expr, $tuning:expr) => {{
        let mut b = $builder
            .with_backend($backend)
            .with_batch_size($args.batch_size)
            .with_tuning($tuning);
        if let Some(n) = $args.groups_in_flight {
            b = b.with_groups_in_flight(n);
        }
        if !$args.columns.is_empty() {
            b = b.with_projection($args.columns.clone());
        }
        for p in &$args.predicates {
            b = b.with_predicate(p.clone());
        }
        b
    }};
}

/// A stream of batches read on the calling thread, polled on `rt`.
struct Blocking {
    rt: tokio::runtime::Runtime,
    stream: crate::read::BatchStream,
}

impl Iterator for Blocking {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        use futures::StreamExt;
        self.rt.block_on(self.stream.next())
    }
}

fn sync<F: GroupedFile + std::fmt::Debug>(
    b: ReaderBuilder<F>,
    args: &CatArgs,
    backend: Arc<dyn Backend>,
    tuning: ReadTuning,
    one_dictionary: bool,
) -> Result<Opened> {
    let b = configure!(b, args, backend, tuning);
    let schema = b.schema()?;
    let mut reader = b.build()?;
    Ok(Opened {
        schema,
        batches: Box::new(std::iter::from_fn(move || reader.next_batch())),
        one_dictionary,
    })
}

/// Opens the input for a streaming read.
fn open(args: &CatArgs, backend: Arc<dyn Backend>, tuning: ReadTuning) -> Result<Opened> {
    let input = Input::parse(&args.input)?;
    let no_where = |kind: Kind| {
        if kind == Kind::Arrow && !args.predicates.is_empty() {
            Err(Error::Unsupported(
                "--where on Arrow IPC files (they have no statistics)".into(),
            ))
        } else {
            Ok(())
        }
    };
    match input {
        Input::Local(path) => {
            let kind = Input::local_kind(&path)?;
            no_where(kind)?;
            match kind {
                Kind::Parquet => {
                    let b = crate::parquet::ParquetReaderBuilder::try_new(&path)?;
                    let one = b.metadata().num_row_groups() <= 1;
                    sync(b, args, backend, tuning, one)
                }
                Kind::Orc => {
                    let b = crate::orc::OrcReaderBuilder::try_new(&path)?;
                    let one = b.file().stripes().len() <= 1;
                    sync(b, args, backend, tuning, one)
                }
                Kind::Arrow => {
                    let b = crate::gsst::GsstReaderBuilder::try_new(&path)?;
                    sync(b, args, backend, tuning, true)
                }
            }
        }
        Input::Object(o) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .map_err(|e| Error::io("tokio runtime", e))?;
            let (size, head) = rt.block_on(o.head())?;
            let kind = Kind::of(&head, o.url.as_str())?;
            no_where(kind)?;
            let (store, location) = (o.store.clone(), o.location.clone());
            let (stream, one_dictionary) = rt.block_on(async move {
                Ok::<_, Error>(match kind {
                    Kind::Parquet => {
                        let b =
                            crate::parquet::ParquetStreamBuilder::with_size(store, location, size)
                                .await?;
                        let one = b.metadata().num_row_groups() <= 1;
                        (configure!(b, args, backend, tuning).build().await?, one)
                    }
                    Kind::Orc => {
                        let b =
                            crate::orc::OrcStreamBuilder::with_size(store, location, size).await?;
                        let one = b.file().stripes().len() <= 1;
                        (configure!(b, args, backend, tuning).build().await?, one)
                    }
                    Kind::Arrow => {
                        let b = crate::gsst::GsstStreamBuilder::with_size(store, location, size)
                            .await?;
                        (configure!(b, args, backend, tuning).build().await?, true)
                    }
                })
            })?;
            Ok(Opened {
                schema: stream.schema(),
                batches: Box::new(Blocking { rt, stream }),
                one_dictionary,
            })
        }
    }
}

/// Bytes `cat` gathers before a write: a column buffer of 4,096 values of
/// 8 bytes or more bypasses it.
const SINK_BUFFER: usize = 32 << 10;

/// Runs `cat`: batches are written as the read hands them out, so memory
/// holds a read group or two (see `ReaderBuilder::with_read_ahead`), not
/// the file.
pub fn run(args: CatArgs, settings: &super::Settings) -> Result<()> {
    let opening = Instant::now();
    let backend: Arc<dyn Backend> = Arc::from(settings.select()?);
    tracing::debug!(
        "{} opened in {:.3} s",
        backend.name(),
        opening.elapsed().as_secs_f64()
    );
    let start = Instant::now();
    let used = super::usage::this_thread();
    let opened = open(&args, backend.clone(), settings.tuning.clone())?;
    let out_name = args
        .output
        .clone()
        .filter(|p| p.as_os_str() != "-")
        .unwrap_or_else(|| PathBuf::from("<stdout>"));
    let mut file = match args.output.as_deref() {
        Some(p) if p != Path::new("-") => Some(OutputFile::create(p)?),
        _ => None,
    };
    let mut stdout;
    let sink: &mut dyn Write = match &mut file {
        Some(f) => f,
        None => {
            stdout = std::io::stdout().lock();
            &mut stdout
        }
    };
    // Arrow buffers at least this long go to the sink as they are; only
    // the small pieces (message headers, padding, bitmaps) are gathered.
    // A larger buffer copied every column buffer once more on the way (a
    // second pass over 10 GB of lineitem, a quarter of `cat`'s time).
    // The writers borrow it, so that its last bytes are flushed here,
    // where a failure is an error, not in a drop that would lose it.
    let mut sink = BufWriter::with_capacity(SINK_BUFFER, sink);
    let err = |e| Error::arrow(format!("writing {}", out_name.display()), e);
    let mut rows = 0usize;
    // Traced as waits for the read and writes, to tell which sets the pace.
    let mut batches = opened.batches;
    let mut counted = std::iter::from_fn(|| {
        let _wait = crate::trace::span("cat.wait");
        batches.next()
    })
    .inspect(|b| {
        if let Ok(b) = b {
            rows += b.num_rows();
        }
    });
    match args.format {
        Format::Arrow => {
            // An IPC file holds one dictionary per field: dictionary
            // columns keep their type only where one dictionary serves
            // every batch (an IPC input, or a single stripe or row group).
            let plain = if opened.one_dictionary {
                opened.schema.clone()
            } else {
                plain_schema(&opened.schema)
            };
            let mut w = arrow::ipc::writer::FileWriter::try_new(&mut sink, &plain).map_err(err)?;
            for b in &mut counted {
                let b = with_schema(&b?, &plain).map_err(err)?;
                let _write = crate::trace::span("cat.write");
                w.write(&b).map_err(err)?;
            }
            w.finish().map_err(err)?;
        }
        Format::Csv => {
            let mut w = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut sink);
            for b in &mut counted {
                w.write(&b?).map_err(err)?;
            }
        }
        Format::Json => {
            let mut w = arrow::json::LineDelimitedWriter::new(&mut sink);
            for b in &mut counted {
                w.write(&b?).map_err(err)?;
            }
            w.finish().map_err(err)?;
        }
    }
    drop(counted);
    drop(batches);
    sink.into_inner()
        .map_err(|e| Error::io(&out_name, e.into_error()))?
        .flush()
        .map_err(|e| Error::io(&out_name, e))?;
    if let Some(f) = file {
        f.finish()?;
    }
    tracing::info!(
        "{}: {rows} rows decoded on {} and written in {:.3} s",
        args.input,
        backend.describe(),
        start.elapsed().as_secs_f64()
    );
    // The writes are this thread's kernel time (the copy into the page
    // cache): its system time next to `cat`'s span tells a writer-bound
    // run from one waiting on the decode (benchmarks/streaming.md). Counted
    // from `start`, past the backend's opening on this thread.
    tracing::debug!(
        "writer thread from the input's opening: {}",
        super::usage::this_thread().since(used)
    );
    // The process ends after this command: its exit releases the device
    // context and the pinned pool at once, where closing them one by one
    // took a tenth of a second of the command's time (benchmarks/streaming.md).
    std::mem::forget(backend);
    Ok(())
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
