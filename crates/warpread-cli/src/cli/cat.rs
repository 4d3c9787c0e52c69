//! `warpread cat FILE`: decode a file (or some of its columns) to Arrow IPC,
//! CSV or JSON lines.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::ValueEnum;

use crate::error::{Error, Result};
use crate::orc::{OrcFile, Predicate, ReadOptions};

/// Output formats.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// Arrow IPC file.
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
            let mut w = arrow::ipc::writer::FileWriter::try_new(sink, &schema).map_err(err)?;
            for b in &batches {
                w.write(b).map_err(err)?;
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
