//! The `warpread` command line.

mod bench;
mod cat;
mod info;
mod inspect;

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
    /// Shows whether CUDA is usable and which device and backend `auto` picks.
    Info,
    /// Shows a file's schema, stripes, streams, encodings, compression and
    /// statistics.
    Inspect {
        /// The ORC file.
        file: PathBuf,
        /// List every stripe (default: the first three).
        #[arg(long)]
        all_stripes: bool,
    },
    /// Decodes a file (or some columns) to Arrow IPC, CSV or JSON lines.
    Cat {
        /// The ORC file.
        file: PathBuf,
        /// Only these top-level columns (comma-separated).
        #[arg(long, value_delimiter = ',')]
        columns: Vec<String>,
        /// Skip stripes whose statistics rule out `COLUMN OP LITERAL`
        /// (repeatable; rows of kept stripes are not filtered).
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

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Bench { what } => bench::run(what, cli.backend),
        Command::Info => info::run(cli.backend),
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
