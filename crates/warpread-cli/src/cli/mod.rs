//! The `warpread` command line.

mod bench;
mod cat;
mod convert;
mod demo;
mod gsst;
mod info;
mod inspect;
mod inspect_parquet;
mod sql;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::error::Result;
use crate::exec::BackendChoice;

/// Read compressed ORC and Parquet with the GPU doing the heavy work.
#[derive(Debug, Parser)]
#[command(name = "warpread", version, about)]
pub struct Cli {
    /// Which backend decodes: cpu, cuda, or auto (CUDA when a device is usable).
    #[arg(long, global = true, default_value = "auto")]
    pub backend: BackendChoice,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Benchmarks (codec kernels against the CPU reference).
    Bench {
        /// What to benchmark.
        #[command(subcommand)]
        what: bench::BenchCommand,
    },
    /// GSST string compression (docs/gsst-format.md).
    Gsst {
        /// compress or decompress.
        #[command(subcommand)]
        what: gsst::GsstCommand,
    },
    /// Shows whether CUDA is usable and which device and backend `auto` picks.
    Info,
    /// The embedded default: generates TPC-H at scale 0.1 as ZLIB ORC into
    /// the cache ($WARPREAD_CACHE, else ~/.cache/warpread) on first run, runs
    /// TPC-H Q1 through the warpread provider and shows where the time went.
    Demo,
    /// Runs SQL over ORC and Parquet files read by warpread (Parquet by
    /// DataFusion's built-in reader with `--parquet-reader datafusion`);
    /// without a query, an interactive shell reading `;`-terminated
    /// statements from stdin.
    Sql {
        /// A table: NAME=PATH, where PATH is a file, a folder or a glob of
        /// .orc or .parquet files (repeatable).
        #[arg(long = "table")]
        tables: Vec<String>,
        /// Reader of .parquet tables: warpread, or datafusion (its built-in
        /// reader, to compare).
        #[arg(long, default_value = "warpread")]
        parquet_reader: warpread_datafusion::ParquetReader,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: sql::OutputFormat,
        /// A session setting KEY=VALUE, as `SET` takes it (repeatable):
        /// `warpread.*` (e.g. warpread.join_key_sets=false) or DataFusion's
        /// `datafusion.*`; an unknown key is an error.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        settings: Vec<String>,
        /// The SQL (one or more `;`-separated statements).
        query: Option<String>,
    },
    /// Converts a Parquet, ORC, CSV or Arrow IPC file to an Arrow IPC file
    /// whose string columns are GSST-compressed (docs/gsst-format.md, "File
    /// container"); `cat` decodes it.
    Convert {
        /// Parquet, ORC, CSV (header line, types inferred) or Arrow IPC.
        input: PathBuf,
        /// The Arrow IPC file to write.
        output: PathBuf,
        /// String columns: gsst or plain.
        #[arg(long, value_enum, default_value = "gsst")]
        strings: convert::Strings,
        /// GSST code layout: splits or coalesced.
        #[arg(long, default_value = "splits")]
        layout: crate::gsst::GsstLayout,
        /// Rows per record batch; each batch's string column is one GSST
        /// frame, so larger batches give the GPU more blocks at once.
        #[arg(long, default_value_t = 1 << 20)]
        batch_size: usize,
        /// Uncompressed KiB per GSST block (default: derived from the device).
        #[arg(long)]
        block_kib: Option<usize>,
        /// Splits per GSST block (default: one per kernel thread).
        #[arg(long)]
        splits: Option<usize>,
    },
    /// Generates data sets.
    Gen {
        /// What to generate.
        #[command(subcommand)]
        what: GenCommand,
    },
    /// Shows a file's schema, stripes, streams, encodings, compression and
    /// statistics.
    Inspect {
        /// The ORC or Parquet file.
        file: PathBuf,
        /// List every stripe or row group (default: the first three).
        #[arg(long)]
        all_stripes: bool,
    },
    /// Decodes a file (or some columns) to Arrow IPC, CSV or JSON lines.
    Cat {
        /// The ORC, Parquet or Arrow IPC file (GSST columns of a `convert`
        /// container are decoded on the backend).
        file: PathBuf,
        /// Only these top-level columns (comma-separated).
        #[arg(long, value_delimiter = ',')]
        columns: Vec<String>,
        /// Skip stripes and row groups whose statistics rule out `COLUMN
        /// OP LITERAL` (ORC row groups by the row index), and Parquet pages
        /// whose page index does (repeatable; rows of kept stripes, row
        /// groups and pages are not filtered).
        #[arg(long = "where")]
        predicates: Vec<crate::orc::Predicate>,
        /// Output format.
        #[arg(long, value_enum, default_value = "arrow")]
        format: cat::Format,
        /// Output file (default: standard output).
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// Rows per record batch.
        #[arg(long, default_value_t = 65536)]
        batch_size: usize,
    },
}

/// `warpread gen` subcommands.
#[derive(Debug, Subcommand)]
pub enum GenCommand {
    /// TPC-H tables generated in-process (tpchgen), one file per table.
    Tpch {
        /// Scale factor (1 = lineitem of 6 million rows).
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        /// File format: parquet, or orc (warpread's writer: RLE v1, no
        /// dictionaries; for pyarrow-style ORC convert the Parquet output
        /// with scripts/parquet_to_orc.py).
        #[arg(long, value_enum, default_value = "parquet")]
        format: crate::datagen::tpch::GenFormat,
        /// Compression: gzip (Parquet), zlib (ORC), snappy, zstd or none
        /// (default: snappy for Parquet, zlib for ORC).
        #[arg(long, value_enum)]
        compression: Option<crate::datagen::tpch::GenCompression>,
        /// Rows per ORC stripe or Parquet row group.
        #[arg(long, default_value_t = 1 << 18)]
        rows_per_group: usize,
        /// Only these tables (comma-separated).
        #[arg(long, value_delimiter = ',')]
        tables: Vec<String>,
        /// Output folder.
        out_dir: PathBuf,
    },
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    // A GSST launch-shape override (WARPREAD_GSST_*) that does not hold is
    // an error up front rather than a silent fallback in the compressor.
    crate::gpu::launch::gsst_shape()?;
    match cli.command {
        Command::Bench { what } => bench::run(what, cli.backend),
        Command::Gsst { what } => gsst::run(what, cli.backend),
        Command::Info => info::run(cli.backend),
        Command::Demo => demo::run(cli.backend),
        Command::Sql {
            tables,
            parquet_reader,
            format,
            settings,
            query,
        } => sql::run(
            sql::SqlArgs {
                tables,
                parquet_reader,
                format,
                settings,
                query,
            },
            cli.backend,
        ),
        Command::Convert {
            input,
            output,
            strings,
            layout,
            batch_size,
            block_kib,
            splits,
        } => convert::run(
            convert::ConvertArgs {
                input,
                output,
                strings,
                layout,
                batch_size,
                block_kib,
                splits,
            },
            cli.backend,
        ),
        Command::Gen {
            what:
                GenCommand::Tpch {
                    scale,
                    format,
                    compression,
                    rows_per_group,
                    tables,
                    out_dir,
                },
        } => {
            use crate::datagen::tpch::{GenCompression, GenFormat, GenOptions};
            if scale.is_nan() || scale <= 0.0 || rows_per_group == 0 {
                return Err(crate::error::Error::Unsupported(format!(
                    "scale factor {scale}, {rows_per_group} rows per group"
                )));
            }
            let compression = compression.unwrap_or(match format {
                GenFormat::Parquet => GenCompression::Snappy,
                GenFormat::Orc => GenCompression::Zlib,
            });
            let options = GenOptions {
                rows_per_group,
                ..GenOptions::new(format, compression)
            };
            for (path, rows) in crate::datagen::tpch::generate(scale, &options, &out_dir, &tables)?
            {
                println!("{}: {rows} rows", path.display());
            }
            Ok(())
        }
        Command::Inspect { file, all_stripes } => inspect::run(&file, all_stripes),
        Command::Cat {
            file,
            columns,
            predicates,
            format,
            output,
            batch_size,
        } => cat::run(
            cat::CatArgs {
                input: file,
                columns,
                predicates,
                format,
                output,
                batch_size,
            },
            cli.backend,
        ),
    }
}
