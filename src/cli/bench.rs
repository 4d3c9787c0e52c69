//! `warpread bench codecs`.

use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use crate::bench::codecs::{self, CodecBenchConfig, CodecBenchReport, SuiteChoice};
use crate::codecs::CodecName;
use crate::error::{Error, Result};
use crate::exec::BackendChoice;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SuiteArg {
    /// Real-data CODAG columns when ../shared/realdata exists, else TPC-H.
    Auto,
    /// The CODAG-style real-data columns.
    Codag,
    /// TPC-H lineitem integer columns generated in-process.
    Tpch,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Decode throughput of one codec over the benchmark columns, verified
    /// against the CPU reference.
    Codecs {
        /// Codec: orc-rle-v1 or deflate.
        #[arg(long, default_value = "orc-rle-v1")]
        codec: String,
        /// Column set.
        #[arg(long, value_enum, default_value = "auto")]
        suite: SuiteArg,
        /// Only these columns (comma-separated names, e.g. MC0,TPC).
        #[arg(long, value_delimiter = ',')]
        columns: Vec<String>,
        /// Uncompressed MiB per column (default 256 on CUDA, 64 on the CPU).
        #[arg(long)]
        size_mib: Option<usize>,
        /// Uncompressed KiB per chunk job.
        #[arg(long, default_value_t = 128)]
        chunk_kib: usize,
        /// Timed runs; the median is reported.
        #[arg(long, default_value_t = 11)]
        runs: usize,
        /// Untimed warm-up runs.
        #[arg(long, default_value_t = 3)]
        warmup: usize,
        /// Real-data folder (default: $WARPREAD_REALDATA or ../shared/realdata).
        #[arg(long)]
        realdata: Option<PathBuf>,
        /// Also write each column's encoded chunks to this folder (for
        /// scripts/nvcomp_bench.py).
        #[arg(long)]
        dump: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// End-to-end read of ORC files into host Arrow (I/O, decompression,
    /// decoding, assembly), median wall-clock of several runs.
    Read {
        /// The files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Only these top-level columns (comma-separated).
        #[arg(long, value_delimiter = ',')]
        columns: Vec<String>,
        /// Timed runs; the median is reported.
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Untimed warm-up runs.
        #[arg(long, default_value_t = 1)]
        warmup: usize,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: BenchCommand, backend: BackendChoice) -> Result<()> {
    if let BenchCommand::Read {
        files,
        columns,
        runs,
        warmup,
        json,
    } = cmd
    {
        return run_read(&files, &columns, backend, warmup, runs, json);
    }
    let BenchCommand::Codecs {
        codec,
        suite,
        columns,
        size_mib,
        chunk_kib,
        runs,
        warmup,
        realdata,
        dump,
        json,
    } = cmd
    else {
        unreachable!("Read returned above")
    };
    let codec = CodecName::parse(&codec).ok_or_else(|| {
        let known: Vec<_> = CodecName::ALL.iter().map(|c| c.as_str()).collect();
        Error::Unsupported(format!("codec `{codec}` (known: {})", known.join(", ")))
    })?;
    let cuda_likely = backend != BackendChoice::Cpu && crate::gpu::probe().is_ok();
    let size_mib = size_mib.unwrap_or(if cuda_likely { 256 } else { 64 });
    if runs == 0 || chunk_kib == 0 || size_mib == 0 {
        return Err(Error::Unsupported(
            "--runs, --chunk-kib and --size-mib must be positive".into(),
        ));
    }
    let cfg = CodecBenchConfig {
        codec,
        backend,
        suite: match suite {
            SuiteArg::Auto => SuiteChoice::Auto,
            SuiteArg::Codag => SuiteChoice::Codag,
            SuiteArg::Tpch => SuiteChoice::Tpch,
        },
        columns,
        target_bytes: size_mib << 20,
        chunk_bytes: chunk_kib << 10,
        warmup,
        runs,
        realdata,
        dump,
    };
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("static template"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar.set_message("loading columns");
    let report = codecs::run(&cfg, |name| {
        bar.set_message(format!("encoding, decoding and verifying {name}"))
    });
    bar.finish_and_clear();
    let report = report?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| Error::Unsupported(e.to_string()))?
        );
    } else {
        print_table(&report);
    }
    Ok(())
}

fn print_table(r: &CodecBenchReport) {
    println!("codec {} on {}", r.codec, r.backend);
    println!("timing: {}, median of {} runs", r.timing, r.runs);
    println!(
        "{:<13} {:>4} {:>9} {:>7} {:>7} {:>10} {:>9}  verified",
        "dataset", "type", "MiB", "ratio", "chunks", "median ms", "GB/s"
    );
    for row in &r.rows {
        println!(
            "{:<13} {:>4} {:>9.1} {:>7.2} {:>7} {:>10.3} {:>9.1}  {}",
            row.dataset,
            row.element,
            row.uncompressed_bytes as f64 / (1 << 20) as f64,
            row.ratio,
            row.chunks,
            row.median_ms,
            row.gbps,
            if row.verified { "yes" } else { "NO" }
        );
    }
    println!("geomean GB/s: {:.1}", r.geomean_gbps);
}

fn run_read(
    files: &[PathBuf],
    columns: &[String],
    choice: BackendChoice,
    warmup: usize,
    runs: usize,
    json: bool,
) -> Result<()> {
    let backend = crate::exec::select(choice)?;
    let rows = crate::bench::read::run(files, columns, backend.as_ref(), warmup, runs)?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).map_err(|e| Error::Unsupported(e.to_string()))?
        );
        return Ok(());
    }
    println!(
        "end-to-end read on {}, median of {runs} runs",
        backend.describe()
    );
    println!(
        "{:<40} {:>10} {:>9} {:>10} {:>9} {:>8}  verified  (io / decompress / decode / assemble s)",
        "file", "rows", "file MiB", "Arrow MiB", "median s", "GB/s"
    );
    for r in rows {
        println!(
            "{:<40} {:>10} {:>9.1} {:>10.1} {:>9.3} {:>8.2}  {:<8}  ({:.3} / {:.3} / {:.3} / {:.3})",
            r.file.display(),
            r.rows,
            r.file_bytes as f64 / (1 << 20) as f64,
            r.arrow_bytes as f64 / (1 << 20) as f64,
            r.median_s,
            r.gbps,
            if r.verified { "yes" } else { "NO" },
            r.stages.io_s,
            r.stages.decompress_s,
            r.stages.decode_s,
            r.stages.assemble_s
        );
    }
    Ok(())
}
