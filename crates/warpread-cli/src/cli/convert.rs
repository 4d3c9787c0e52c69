//! `warpread convert IN OUT --strings gsst`: Parquet, ORC, CSV or Arrow IPC
//! in, an Arrow IPC file out whose string columns are GSST-compressed (the
//! container of `src/gsst/container.rs`) or left plain.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use clap::ValueEnum;

use crate::error::{Error, Result};
use crate::exec::{self, CpuBackend};
use crate::gsst::container::{self, ContainerOptions};
use crate::gsst::{GsstLayout, TargetDevice};
use crate::orc::{OrcFile, ReadOptions, ReadTuning};

/// How `convert` stores string columns.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Strings {
    /// GSST-compressed, marked with the `warpread.gsst` extension type.
    Gsst,
    /// As they are (a plain Arrow IPC file).
    Plain,
}

/// What `convert` was asked to do.
#[derive(Debug)]
pub struct ConvertArgs {
    /// Parquet, ORC, CSV (with a header line) or Arrow IPC file.
    pub input: PathBuf,
    /// The Arrow IPC file to write.
    pub output: PathBuf,
    /// String column storage.
    pub strings: Strings,
    /// GSST code layout.
    pub layout: GsstLayout,
    /// Rows per record batch (and so per GSST frame).
    pub batch_size: usize,
    /// Uncompressed KiB per GSST block.
    pub block_kib: Option<usize>,
    /// Splits per GSST block.
    pub splits: Option<usize>,
}

fn has_magic(path: &Path, magic: &[u8]) -> bool {
    let mut head = vec![0u8; magic.len()];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|_| head == magic)
}

/// Reads a CSV file with a header line, inferring the schema from every
/// record so that a late value cannot contradict the inferred types.
fn read_csv(path: &Path, batch_size: usize) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let err = |e| Error::arrow(format!("reading CSV {}", path.display()), e);
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let format = arrow::csv::reader::Format::default().with_header(true);
    let (schema, _) = format
        .infer_schema(BufReader::new(&mut file), None)
        .map_err(err)?;
    file.rewind().map_err(|e| Error::io(path, e))?;
    let schema = Arc::new(schema);
    let reader = arrow::csv::ReaderBuilder::new(schema.clone())
        .with_format(format)
        .with_batch_size(batch_size)
        .build(BufReader::new(file))
        .map_err(err)?;
    let batches = reader.collect::<Result<Vec<_>, _>>().map_err(err)?;
    Ok((schema, batches))
}

/// Reads any supported input to Arrow with `backend` (ORC and Parquet
/// with `tuning`).
pub fn read_any(
    path: &Path,
    batch_size: usize,
    backend: &dyn exec::Backend,
    tuning: &ReadTuning,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let options = ReadOptions::default()
        .with_batch_size(batch_size)
        .with_tuning(tuning.clone());
    if crate::parquet::is_parquet(path) {
        let file = crate::parquet::ParquetFile::open(path)?;
        Ok((
            file.projected_schema(&options)?,
            file.read(&options, backend)?,
        ))
    } else if has_magic(path, b"ORC") {
        let file = OrcFile::open(path)?;
        Ok((
            file.projected_schema(&options)?,
            file.read(&options, backend)?,
        ))
    } else if container::is_arrow_file(path) {
        container::read_container(path, &[], backend)
    } else {
        read_csv(path, batch_size)
    }
}

/// Runs `convert`.
pub fn run(args: ConvertArgs, settings: &super::Settings) -> Result<()> {
    if args.batch_size == 0 {
        return Err(Error::Unsupported("--batch-size must be positive".into()));
    }
    let cuda = settings.cuda_backend()?;
    // Block and split defaults suit the GPU that will decode; the one here
    // is the best guess of it.
    let target = cuda
        .as_ref()
        .map(|c| c.runtime().info().gsst_target())
        .unwrap_or(TargetDevice::H100);
    let backend: Box<dyn exec::Backend> = match cuda {
        Some(c) => Box::new(c),
        None => Box::new(CpuBackend::new()),
    };
    let start = Instant::now();
    let (schema, batches) = read_any(
        &args.input,
        args.batch_size,
        backend.as_ref(),
        &settings.tuning,
    )?;
    let read_s = start.elapsed().as_secs_f64();
    let out = &args.output;
    let sink = BufWriter::new(File::create(out).map_err(|e| Error::io(out, e))?);
    match args.strings {
        Strings::Plain => {
            let err = |e| Error::arrow(format!("writing {}", out.display()), e);
            let mut w = arrow::ipc::writer::FileWriter::try_new(sink, &schema).map_err(err)?;
            for b in &batches {
                w.write(b).map_err(err)?;
            }
            w.finish().map_err(err)?;
            eprintln!("{}: plain Arrow IPC", out.display());
        }
        Strings::Gsst => {
            let options = ContainerOptions {
                layout: args.layout,
                target,
                block_bytes: args.block_kib.map(|k| k.max(1) << 10),
                splits: args.splits,
            };
            let t = Instant::now();
            let stats =
                container::write_container(sink, &schema, batches.into_iter().map(Ok), &options)?;
            eprintln!(
                "{}: {} rows in {} batches; strings {} -> {} bytes (ratio {:.3}, layout {}); \
                 read {read_s:.2} s, compress+write {:.2} s",
                out.display(),
                stats.rows,
                stats.batches,
                stats.string_bytes,
                stats.gsst_bytes,
                stats.string_bytes as f64 / stats.gsst_bytes.max(1) as f64,
                args.layout.name(),
                t.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}
