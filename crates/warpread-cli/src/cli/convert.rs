//! `warpread convert IN OUT --codec auto|gsst|huffman|none`: Parquet, ORC,
//! CSV or Arrow IPC in, an Arrow IPC file out whose columns are GSST- or
//! Huffman-compressed (the container of `src/gsst/container.rs`) or left
//! plain, with what each column became and its ratio on standard error.

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
use crate::gsst::codec_choice::{CodecPolicy, STAGE_WEIGHT};
use crate::gsst::container::{self, ColumnStats, ContainerOptions};
use crate::gsst::{GsstLayout, TargetDevice};
use crate::orc::{OrcFile, ReadOptions, ReadTuning};

/// How `convert` stores columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Codec {
    /// Per column, the smallest of the encodings it may have (plain; GSST,
    /// Huffman, GSST then Huffman for strings; Huffman for fixed-width
    /// columns), measured on the first 32 MiB of batches with each decode
    /// stage weighted x1.1: plain unless an encoding saves over ~9%.
    Auto,
    /// Utf8 and LargeUtf8 columns GSST (`warpread.gsst`), others plain.
    Gsst,
    /// Every integer, float, date, time, timestamp, duration, interval,
    /// decimal and string column Huffman (`warpread.huffman`), at the
    /// symbol width (8 or 16 bits) that measures smaller.
    Huffman,
    /// Every column plain (an ordinary Arrow IPC file).
    None,
}

impl Codec {
    fn policy(self) -> CodecPolicy {
        match self {
            Self::Auto => CodecPolicy::Auto,
            Self::Gsst => CodecPolicy::Gsst,
            Self::Huffman => CodecPolicy::Huffman,
            Self::None => CodecPolicy::None,
        }
    }
}

/// `--strings`, the deprecated spelling of `--codec gsst|none`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Strings {
    /// `--codec gsst`.
    Gsst,
    /// `--codec none`.
    Plain,
}

/// The codec of a command line's `--codec` and `--strings` (clap lets
/// only one through); `gsst` when neither is given, as before `--codec`.
pub fn codec_of(codec: Option<Codec>, strings: Option<Strings>) -> Codec {
    match (codec, strings) {
        (Some(c), _) => c,
        (None, Some(s)) => {
            let c = match s {
                Strings::Gsst => Codec::Gsst,
                Strings::Plain => Codec::None,
            };
            eprintln!(
                "warning: --strings is deprecated; use --codec {}",
                c.to_possible_value()
                    .map_or_else(String::new, |v| v.get_name().to_string())
            );
            c
        }
        (None, None) => Codec::Gsst,
    }
}

/// What `convert` was asked to do.
#[derive(Debug)]
pub struct ConvertArgs {
    /// Parquet, ORC, CSV (with a header line) or Arrow IPC file.
    pub input: PathBuf,
    /// The Arrow IPC file to write.
    pub output: PathBuf,
    /// How columns are stored.
    pub codec: Codec,
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
    if args.codec == Codec::None {
        let err = |e| Error::arrow(format!("writing {}", out.display()), e);
        let mut w = arrow::ipc::writer::FileWriter::try_new(sink, &schema).map_err(err)?;
        for b in &batches {
            w.write(b).map_err(err)?;
        }
        w.finish().map_err(err)?;
        eprintln!("{}: plain Arrow IPC", out.display());
        return Ok(());
    }
    let options = ContainerOptions {
        codec: args.codec.policy(),
        layout: args.layout,
        target,
        block_bytes: args.block_kib.map(|k| k.max(1) << 10),
        splits: args.splits,
    };
    let t = Instant::now();
    let stats = container::write_container(sink, &schema, batches.into_iter().map(Ok), &options)?;
    let plain: u64 = stats.columns.iter().map(|c| c.plain_bytes).sum();
    let stored: u64 = stats.columns.iter().map(|c| c.stored_bytes).sum();
    eprintln!(
        "{}: {} rows in {} batches, codec {}; columns {plain} -> {stored} bytes (ratio {:.3}); \
         read {read_s:.2} s, compress+write {:.2} s",
        out.display(),
        stats.rows,
        stats.batches,
        options.codec.name(),
        plain as f64 / stored.max(1) as f64,
        t.elapsed().as_secs_f64()
    );
    report_columns(&stats.columns, &schema);
    Ok(())
}

/// One line per column: the encoding chosen, its bytes and ratio, and for
/// choices that were measured, each candidate's ratio on the sample.
fn report_columns(columns: &[ColumnStats], schema: &SchemaRef) {
    let width = columns.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for (c, f) in columns.iter().zip(schema.fields()) {
        let mut line = format!(
            "  {:width$}  {:<14} {:>12} -> {:>12} bytes (ratio {:.3})  {}",
            c.name,
            c.encoding.name(),
            c.plain_bytes,
            c.stored_bytes,
            c.ratio(),
            f.data_type(),
        );
        let plain = c
            .measured
            .iter()
            .find(|(e, _)| e.stages() == 0)
            .map(|&(_, b)| b);
        if let Some(plain) = plain.filter(|&p| p > 0) {
            let ratios: Vec<String> = c
                .measured
                .iter()
                .map(|(e, b)| format!("{} {:.3}", e.name(), plain as f64 / (*b).max(1) as f64))
                .collect();
            line.push_str(&format!(
                "; measured: {} (x{STAGE_WEIGHT} a stage)",
                ratios.join(", ")
            ));
        }
        eprintln!("{line}");
    }
}
