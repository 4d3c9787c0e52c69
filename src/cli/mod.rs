//! The `warpread` command line.

mod bench;
mod gsst;
mod info;

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
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Bench { what } => bench::run(what, cli.backend),
        Command::Gsst { what } => gsst::run(what, cli.backend),
        Command::Info => info::run(cli.backend),
    }
}
