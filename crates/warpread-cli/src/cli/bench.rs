//! `warpread bench codecs`, `bench gsst`, `bench huffman`, `bench read` and
//! `bench sql`.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use super::Settings;
use crate::bench::codecs::{self, CodecBenchConfig, CodecBenchReport, SuiteChoice};
use crate::bench::gsst::{self, GsstBenchConfig, GsstInput};
use crate::bench::huffman::{self as huffman_bench, HuffmanBenchConfig, HuffmanInput};
use crate::bench::inflate_stream::{self, InflateStreamConfig, StreamInput as InflateStreamInput};
use crate::codecs::CodecName;
use crate::error::{Error, Result};
use crate::exec::BackendChoice;
use crate::plan::GsstLayout;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SuiteArg {
    /// Real-data CODAG columns when ../shared/realdata exists, else TPC-H.
    Auto,
    /// The CODAG-style real-data columns.
    Codag,
    /// TPC-H lineitem integer columns generated in-process.
    Tpch,
}

/// The options of `bench codecs`.
#[derive(Debug, Args)]
pub struct CodecsArgs {
    /// Codec: orc-rle-v1 or deflate.
    #[arg(long, default_value = "orc-rle-v1")]
    pub codec: String,
    /// Column set.
    #[arg(long, value_enum, default_value = "auto")]
    pub suite: SuiteArg,
    /// Only these columns (comma-separated names, e.g. MC0,TPC).
    #[arg(long, value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Uncompressed MiB per column (default 256 on CUDA, 64 on the CPU).
    #[arg(long)]
    pub size_mib: Option<usize>,
    /// Uncompressed KiB per chunk job.
    #[arg(long, default_value_t = 128)]
    pub chunk_kib: usize,
    /// Timed runs; the median is reported.
    #[arg(long, default_value_t = 11)]
    pub runs: usize,
    /// Untimed warm-up runs.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// Real-data folder (default: $WARPREAD_REALDATA or ../shared/realdata).
    #[arg(long)]
    pub realdata: Option<PathBuf>,
    /// Also write each column's encoded chunks to this folder (for
    /// scripts/nvcomp_bench.py).
    #[arg(long)]
    pub dump: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Decode throughput of one codec over the benchmark columns, verified
    /// against the CPU reference.
    Codecs(CodecsArgs),
    /// GSST compression ratio and decode throughput per layout, CPU and
    /// GPU, verified byte-exact against the input.
    Gsst {
        /// tpch (dbgen comment columns), english (the real-data corpus) or a
        /// file path (`.xz` is decompressed first).
        #[arg(long, default_value = "tpch")]
        input: GsstInput,
        /// splits, coalesced or both.
        #[arg(long, default_value = "both")]
        layout: String,
        /// MiB of TPC-H text to generate.
        #[arg(long, default_value_t = 1024)]
        size_mib: usize,
        /// Uncompressed KiB per block (default: derived from the device).
        #[arg(long)]
        block_kib: Option<usize>,
        /// Splits per block (default: one per kernel thread).
        #[arg(long)]
        splits: Option<usize>,
        /// Timed GPU runs; the median is reported.
        #[arg(long, default_value_t = 11)]
        runs: usize,
        /// Untimed warm-up runs.
        #[arg(long, default_value_t = 3)]
        warmup: usize,
        /// Real-data folder (default: $WARPREAD_REALDATA or ../shared/realdata).
        #[arg(long)]
        realdata: Option<PathBuf>,
        /// Write the exact input bytes to this file (for measuring other
        /// codecs on the same bytes).
        #[arg(long)]
        dump: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Skip the CPU reference decode (GPU output is still verified
        /// against the input); for launch-shape sweeps.
        #[arg(long)]
        no_cpu: bool,
    },
    /// Huffman compression ratio (8- and 16-bit symbols), decode
    /// throughput of both GPU decoders and GPU encode throughput, verified
    /// byte-exact.
    Huffman {
        /// tpch, english, taxi-codes (quantized taxi fares), codag:NAME (a
        /// CODAG suite column: MC0, MC3, TPC, TPT, CD2, TC2, HRG, TXT) or a
        /// file path.
        #[arg(long, default_value = "tpch")]
        input: HuffmanInput,
        /// MiB to measure (the input is cut or repeated to this size).
        #[arg(long, default_value_t = 256)]
        size_mib: usize,
        /// Symbol widths: 8, 16 or both.
        #[arg(long, default_value = "both")]
        symbols: String,
        /// Code length bound (default: 12 for 8-bit, 20 for 16-bit symbols).
        #[arg(long)]
        max_len: Option<u32>,
        /// Count one 4 KiB window in every N (E²MC sampling); 1 = exact.
        #[arg(long, default_value_t = 1)]
        sample_every: u32,
        /// log2 of the gap-array subsequence bits; 0 = no gap arrays.
        #[arg(long, default_value_t = 9)]
        gap_log2: u8,
        /// log2 of the parallel ways each block is cut into (E²MC's
        /// decoding ways, decoded once per symbol); non-zero turns gap
        /// arrays off.
        #[arg(long, default_value_t = 0)]
        ways_log2: u8,
        /// Decoded KiB per block (one GPU thread block each).
        #[arg(long, default_value_t = 32)]
        block_kib: u32,
        /// Absolute error bound of the taxi-fare quantization.
        #[arg(long, default_value_t = 0.005)]
        error_bound: f64,
        /// Timed GPU runs; the median is reported.
        #[arg(long, default_value_t = 21)]
        runs: usize,
        /// Untimed warm-up runs.
        #[arg(long, default_value_t = 3)]
        warmup: usize,
        /// Real-data folder (default: $WARPREAD_REALDATA or ../shared/realdata).
        #[arg(long)]
        realdata: Option<PathBuf>,
        /// Write the exact input bytes to this file (nvCOMP on the same bytes).
        #[arg(long)]
        dump: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// One long deflate stream per data set: zlib on one core, speculative
    /// span inflate on the host's cores and on the GPU (and one warp per
    /// stream), verified byte-exact.
    InflateStream {
        /// Data sets, comma-separated: tpch, english, taxi-passengers,
        /// taxi-codes or file paths.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "english,taxi-passengers,tpch"
        )]
        inputs: Vec<InflateStreamInput>,
        /// MiB per stream (the data is cut or repeated to this size).
        #[arg(long, default_value_t = 64)]
        size_mib: usize,
        /// zlib level of the streams.
        #[arg(long, default_value_t = 6)]
        level: u32,
        /// Also time one warp per stream (one run; slow).
        #[arg(long)]
        one_warp: bool,
        /// Timed runs; the median is reported.
        #[arg(long, default_value_t = 11)]
        runs: usize,
        /// Untimed warm-up runs.
        #[arg(long, default_value_t = 2)]
        warmup: usize,
        /// Real-data folder (default: $WARPREAD_REALDATA or ../shared/realdata).
        #[arg(long)]
        realdata: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// TPC-H queries through DataFusion: warpread's provider (ORC and/or
    /// Parquet, the chosen backend) against DataFusion's built-in Parquet
    /// reader on the same generated data (kept in the cache), results
    /// compared.
    Sql {
        /// TPC-H scale factor.
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        /// Formats warpread reads, each timed: orc, parquet, or both
        /// (`orc,parquet`). warpread's Parquet side reads DataFusion's files.
        #[arg(long, value_enum, value_delimiter = ',', default_value = "orc")]
        format: Vec<crate::datagen::tpch::GenFormat>,
        /// Compression (zlib for ORC is gzip for the Parquet twin).
        #[arg(long, value_enum, default_value = "zlib")]
        compression: crate::datagen::tpch::GenCompression,
        /// Only these queries (comma-separated numbers; default all 22).
        #[arg(long, value_delimiter = ',')]
        queries: Vec<usize>,
        /// Timed runs per query and reader; the median is reported.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Untimed runs of each query on every reader first.
        #[arg(long, default_value_t = 0)]
        warmup: usize,
        /// Data folder (default: $WARPREAD_CACHE or ~/.cache/warpread).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Backends of warpread's side, each timed in the same run
        /// (e.g. `cpu,cuda`); default: the global --backend.
        #[arg(long, value_delimiter = ',')]
        backends: Vec<BackendChoice>,
        /// A setting KEY=VALUE of warpread's sessions, as `SET` takes it
        /// (repeatable): `warpread.*` (e.g. warpread.join_key_sets=false)
        /// or `datafusion.*`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        settings: Vec<String>,
        /// A setting KEY=VALUE of the session of DataFusion's own reader
        /// (repeatable; default: DataFusion's defaults).
        #[arg(long = "datafusion-set", value_name = "KEY=VALUE")]
        datafusion_settings: Vec<String>,
        /// Run DataFusion's reader only in the last N runs of each query
        /// (default: every run, warm-ups included); its rows still check
        /// warpread's.
        #[arg(long, value_name = "N")]
        datafusion_runs: Option<usize>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Where warpread's queries run their stages (DataFusion's reader
        /// runs in this process).
        #[command(flatten)]
        cluster: super::cluster::ClusterArgs,
    },
    /// End-to-end read of ORC files into host Arrow (I/O, decompression,
    /// decoding, assembly), median wall-clock of several runs.
    Read {
        /// The files: paths or URLs (as `cat` takes them; an object is
        /// fetched in every run, through the async reader).
        #[arg(required = true)]
        files: Vec<String>,
        /// Only these top-level columns (comma-separated).
        #[arg(long, value_delimiter = ',')]
        columns: Vec<String>,
        /// Skip stripes and ORC row groups (Parquet row groups) whose
        /// statistics rule out `COLUMN OP LITERAL` (repeatable; rows of kept
        /// groups are not filtered).
        #[arg(long = "where")]
        predicates: Vec<crate::orc::Predicate>,
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
    /// The scan alone on every device of `--devices`: each local ORC or
    /// Parquet file read into host Arrow by each device's backend alone,
    /// then by all at once, each reading one byte range of the file (its
    /// row groups or stripes); the concurrent read is checked against the
    /// first device's whole-file read.
    ReadDevices {
        /// Local ORC or Parquet files.
        #[arg(required = true)]
        files: Vec<String>,
        /// Byte ranges the file is cut into for the concurrent read, part
        /// `i` on device `i mod n` (default: one per device).
        #[arg(long)]
        parts: Option<usize>,
        /// Timed runs; the median is reported.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Untimed warm-up runs.
        #[arg(long, default_value_t = 1)]
        warmup: usize,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: BenchCommand, settings: &Settings) -> Result<()> {
    let backend = settings.backend;
    match cmd {
        BenchCommand::Gsst {
            input,
            layout,
            size_mib,
            block_kib,
            splits,
            runs,
            warmup,
            realdata,
            dump,
            json,
            no_cpu,
        } => {
            let layouts = match layout.as_str() {
                "both" => GsstLayout::ALL.to_vec(),
                one => vec![one.parse()?],
            };
            if runs == 0 || size_mib == 0 {
                return Err(Error::Unsupported(
                    "--runs and --size-mib must be positive".into(),
                ));
            }
            let cfg = GsstBenchConfig {
                input,
                layouts,
                backend,
                cuda: settings.cuda.clone(),
                tpch_bytes: size_mib << 20,
                block_bytes: block_kib.map(|k| k << 10),
                splits,
                warmup,
                runs,
                cpu_decode: !no_cpu,
                realdata,
                dump,
            };
            run_gsst(&cfg, json)
        }
        BenchCommand::Huffman {
            input,
            size_mib,
            symbols,
            max_len,
            sample_every,
            gap_log2,
            ways_log2,
            block_kib,
            error_bound,
            runs,
            warmup,
            realdata,
            dump,
            json,
        } => {
            use crate::codecs::huffman::{HuffmanParams, Sampling};
            if runs == 0 || size_mib == 0 {
                return Err(Error::Unsupported(
                    "--runs and --size-mib must be positive".into(),
                ));
            }
            let bases = match symbols.as_str() {
                "8" => vec![HuffmanParams::BYTES],
                "16" => vec![HuffmanParams::PAIRS],
                "both" => vec![HuffmanParams::BYTES, HuffmanParams::PAIRS],
                other => {
                    return Err(Error::Unsupported(format!(
                        "--symbols {other} (expected 8, 16 or both)"
                    )));
                }
            };
            let params = bases
                .into_iter()
                .map(|b| HuffmanParams {
                    max_len: max_len.unwrap_or(b.max_len),
                    sampling: if sample_every <= 1 {
                        Sampling::Exact
                    } else {
                        Sampling::Every(sample_every)
                    },
                    sub_log2: if ways_log2 == 0 { gap_log2 } else { 0 },
                    ways_log2,
                    block_bytes: block_kib.saturating_mul(1024),
                    ..b
                })
                .collect();
            let cfg = HuffmanBenchConfig {
                input,
                bytes: size_mib << 20,
                params,
                backend,
                cuda: settings.cuda.clone(),
                warmup,
                runs,
                error_bound,
                realdata,
                dump,
            };
            run_huffman(&cfg, json)
        }
        BenchCommand::InflateStream {
            inputs,
            size_mib,
            level,
            one_warp,
            runs,
            warmup,
            realdata,
            json,
        } => {
            if runs == 0 || size_mib == 0 || level > 9 {
                return Err(Error::Unsupported(
                    "--runs and --size-mib must be positive, --level at most 9".into(),
                ));
            }
            let cfg = InflateStreamConfig {
                inputs,
                bytes: size_mib << 20,
                level,
                // The global --span-kib (0 or unset: the default span).
                spans: settings.cuda.span_inflate.unwrap_or_default(),
                backend,
                cuda: settings.cuda.clone(),
                warmup,
                runs,
                one_warp,
                realdata,
            };
            run_inflate_stream(&cfg, json)
        }
        BenchCommand::Codecs(args) => run_codecs(args, settings),
        BenchCommand::Read {
            files,
            columns,
            predicates,
            runs,
            warmup,
            json,
        } => run_read(&files, &columns, &predicates, settings, warmup, runs, json),
        BenchCommand::ReadDevices {
            files,
            parts,
            runs,
            warmup,
            json,
        } => run_read_devices(&files, parts, settings, warmup, runs, json),
        BenchCommand::Sql {
            scale,
            format,
            compression,
            queries,
            runs,
            warmup,
            data_dir,
            backends,
            settings: sets,
            datafusion_settings,
            datafusion_runs,
            json,
            cluster,
        } => {
            let workers = cluster.workers(settings)?;
            let cfg = crate::bench::sql::SqlBenchConfig {
                scale,
                formats: format,
                compression,
                queries: if queries.is_empty() {
                    (1..=22).collect()
                } else {
                    queries
                },
                runs,
                warmup,
                backends: if backends.is_empty() {
                    vec![backend]
                } else {
                    backends
                },
                cuda: settings.cuda.clone(),
                devices: settings.devices.clone(),
                data_dir,
                settings: sets,
                datafusion_settings,
                workers: workers.as_ref().map(|w| w.workers.clone()),
                datafusion_runs,
            };
            run_sql_bench(&cfg, json)
        }
    }
}

/// Prints a report as pretty JSON on stdout.
fn print_json(report: &impl serde::Serialize) -> Result<()> {
    let text =
        serde_json::to_string_pretty(report).map_err(|e| Error::Unsupported(e.to_string()))?;
    println!("{text}");
    Ok(())
}

/// Runs a benchmark behind a spinner that shows its progress; with `json`
/// prints the report as JSON and gives `None`, else gives the report for
/// the caller's table.
fn behind_spinner<R: serde::Serialize>(
    json: bool,
    run: impl FnOnce(&dyn Fn(&str)) -> Result<R>,
) -> Result<Option<R>> {
    let bar = spinner();
    let report = run(&|m: &str| bar.set_message(m.to_string()));
    bar.finish_and_clear();
    let r = report?;
    if json {
        print_json(&r)?;
        return Ok(None);
    }
    Ok(Some(r))
}

fn run_sql_bench(cfg: &crate::bench::sql::SqlBenchConfig, json: bool) -> Result<()> {
    let Some(r) = behind_spinner(json, |progress| crate::bench::sql::run(cfg, progress))? else {
        return Ok(());
    };
    println!(
        "TPC-H scale {}: warpread {} ({}) against DataFusion {} (median of {} runs after {} untimed)",
        r.scale,
        r.warpread_inputs.join(", "),
        r.backends.join("; "),
        r.datafusion_input,
        cfg.runs,
        cfg.warmup
    );
    let (warp_limit, df_limit) = r.join_share_limits;
    println!(
        "hash joins share build sides estimated up to {} KiB (warpread) and {} KiB (DataFusion)",
        warp_limit >> 10,
        df_limit >> 10
    );
    // Per warpread input: seconds, DataFusion's time over it, and its
    // decompression and decode stage sums.
    let mut head = format!("{:>5} {:>8}", "query", "rows");
    for input in &r.warpread_inputs {
        head += &format!(
            " {:>14} {:>8} {:>9} {:>9}",
            format!("{input} s"),
            "speedup",
            "decomp s",
            "decode s"
        );
    }
    println!("{head} {:>14} {:>6}", "datafusion s", "same");
    for q in &r.rows {
        let mut line = format!("{:>5} {:>8}", format!("Q{}", q.query), q.rows);
        for w in &q.warpread {
            line += &format!(
                " {:>14.4} {:>7.2}x {:>9.4} {:>9.4}",
                w.seconds, w.speedup, w.stages.decompress_s, w.stages.decode_s
            );
        }
        println!(
            "{line} {:>14.4} {:>6}",
            q.datafusion_s,
            if q.results_match() { "yes" } else { "NO" }
        );
    }
    let d: f64 = r.rows.iter().map(|q| q.datafusion_s).sum();
    let mut total = String::from("total:");
    for (i, input) in r.warpread_inputs.iter().enumerate() {
        let w: f64 = r.rows.iter().map(|q| q.warpread[i].seconds).sum();
        total += &format!(" warpread {input} {w:.3} s,");
    }
    println!("{total} DataFusion {d:.3} s");
    let (device, host) = r.device_aggregates;
    if device + host > 0 {
        println!(
            "scan aggregates: {device} batches aggregated on the device, {host} refused by it (their partitions restarted on DataFusion's operators)"
        );
    }
    if r.rows.iter().any(|q| !q.results_match()) {
        return Err(Error::Mismatch {
            what: "TPC-H results".into(),
            detail: "warpread and DataFusion disagree on the queries marked NO".into(),
        });
    }
    Ok(())
}

fn spinner() -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("static template"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

fn run_gsst(cfg: &GsstBenchConfig, json: bool) -> Result<()> {
    let Some(r) = behind_spinner(json, |progress| gsst::run(cfg, progress))? else {
        return Ok(());
    };
    println!("gsst on {}", r.device);
    println!("GSST kernel shape: {}", r.shape);
    println!(
        "GPU: kernel time, CUDA events, data on device, median of {} runs; CPU: wall time",
        r.runs
    );
    println!(
        "{:<16} {:<10} {:>9} {:>7} {:>6} {:>6} {:>10} {:>9} {:>9}  verified",
        "input", "layout", "MiB", "ratio", "blocks", "splits", "compress s", "CPU GB/s", "GPU GB/s"
    );
    for row in &r.rows {
        println!(
            "{:<16} {:<10} {:>9.1} {:>7.3} {:>6} {:>6} {:>10.2} {:>9} {:>9}  {}",
            row.input,
            row.layout,
            row.uncompressed_bytes as f64 / (1 << 20) as f64,
            row.ratio,
            row.blocks,
            row.splits,
            row.compress_s,
            row.cpu_gbps.map_or("-".to_string(), |g| format!("{g:.2}")),
            row.gpu_gbps.map_or("-".to_string(), |g| format!("{g:.1}")),
            if row.verified { "yes" } else { "NO" }
        );
    }
    Ok(())
}

fn run_inflate_stream(cfg: &InflateStreamConfig, json: bool) -> Result<()> {
    let Some(r) = behind_spinner(json, |progress| inflate_stream::run(cfg, progress))? else {
        return Ok(());
    };
    println!("inflate-stream on {}", r.device);
    println!(
        "one raw deflate stream per row; wall time host input -> host output, median of {} runs; CPU spans on {} threads; {} KiB spans",
        r.runs,
        r.cpu_threads,
        r.span_bytes / 1024
    );
    println!(
        "{:<22} {:>8} {:>7} {:>10} {:>10} {:>10} {:>10}  verified",
        "input", "MiB", "ratio", "zlib GB/s", "CPU spans", "GPU spans", "GPU 1 warp"
    );
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |g| format!("{g:.2}"));
    for row in &r.rows {
        println!(
            "{:<22} {:>8.1} {:>7.2} {:>10.3} {:>10.2} {:>10} {:>10}  yes",
            row.input,
            row.bytes as f64 / (1 << 20) as f64,
            row.bytes as f64 / row.compressed.max(1) as f64,
            row.zlib_gbps,
            row.cpu_spans_gbps,
            opt(row.gpu_spans_gbps),
            opt(row.gpu_one_warp_gbps),
        );
    }
    Ok(())
}

fn run_huffman(cfg: &HuffmanBenchConfig, json: bool) -> Result<()> {
    let Some(r) = behind_spinner(json, |progress| huffman_bench::run(cfg, progress))? else {
        return Ok(());
    };
    println!("huffman on {}", r.device);
    println!(
        "GPU: kernel time, CUDA events, data on device, median of {} runs; CPU: wall time on {} threads",
        r.runs, r.cpu_threads
    );
    println!(
        "{:<24} {:>3} {:>3} {:>6} {:>5} {:>5} {:>8} {:>7} {:>7} {:>8} {:>8} {:>8} {:>9}  verified",
        "input",
        "sym",
        "len",
        "sample",
        "gap",
        "dec",
        "MiB",
        "ratio",
        "H ratio",
        "enc GB/s",
        "GPU enc",
        "CPU GB/s",
        "GPU GB/s"
    );
    for row in &r.rows {
        println!(
            "{:<24} {:>3} {:>3} {:>6} {:>5} {:>5} {:>8.1} {:>7.4} {:>7.4} {:>8.2} {:>8} {:>8.2} {:>9}  {}",
            row.input,
            row.symbol_bits,
            row.max_len,
            row.sampling,
            row.gap_bits,
            row.decoder,
            row.uncompressed_bytes as f64 / (1 << 20) as f64,
            row.ratio,
            row.entropy_ratio,
            row.cpu_encode_gbps,
            row.gpu_encode_gbps
                .map_or("-".to_string(), |g| format!("{g:.1}")),
            row.cpu_decode_gbps,
            row.gpu_gbps.map_or("-".to_string(), |g| format!("{g:.1}")),
            if row.verified { "yes" } else { "NO" }
        );
    }
    Ok(())
}

fn run_codecs(args: CodecsArgs, settings: &Settings) -> Result<()> {
    let backend = settings.backend;
    let CodecsArgs {
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
    } = args;
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
        cuda: settings.cuda.clone(),
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
    let bar = spinner();
    bar.set_message("loading columns");
    let report = codecs::run(&cfg, |name| {
        bar.set_message(format!("encoding, decoding and verifying {name}"))
    });
    bar.finish_and_clear();
    let report = report?;
    if json {
        print_json(&report)?;
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

fn run_read_devices(
    files: &[String],
    parts: Option<usize>,
    settings: &Settings,
    warmup: usize,
    runs: usize,
    json: bool,
) -> Result<()> {
    let backends = crate::exec::devices::open(settings.backend, &settings.cuda, &settings.devices)?;
    let rows =
        crate::bench::read_devices::run(files, &backends, &settings.tuning, parts, warmup, runs)?;
    if json {
        print_json(&rows)?;
        return Ok(());
    }
    println!(
        "scan on {} backend(s), median of {runs} runs: {}",
        backends.len(),
        backends
            .iter()
            .map(|b| b.describe())
            .collect::<Vec<_>>()
            .join("; ")
    );
    println!(
        "{:<40} {:>10} {:>10} {:>24} {:>9} {:>6} {:>10} {:>9} {:>10}  verified",
        "file", "rows", "Arrow MiB", "alone GB/s", "sum", "parts", "together s", "GB/s", "of sum"
    );
    for r in rows {
        let alone: Vec<String> = r.alone_gbps.iter().map(|g| format!("{g:.2}")).collect();
        println!(
            "{:<40} {:>10} {:>10.1} {:>24} {:>9.2} {:>6} {:>10.3} {:>9.2} {:>9.0}%  yes",
            r.file.display(),
            r.rows,
            r.arrow_bytes as f64 / (1 << 20) as f64,
            alone.join(" "),
            r.alone_gbps.iter().sum::<f64>(),
            r.parts.len(),
            r.together_s,
            r.together_gbps,
            100.0 * r.efficiency(),
        );
    }
    Ok(())
}

fn run_read(
    files: &[String],
    columns: &[String],
    predicates: &[crate::orc::Predicate],
    settings: &Settings,
    warmup: usize,
    runs: usize,
    json: bool,
) -> Result<()> {
    let backend: std::sync::Arc<dyn crate::exec::Backend> = settings.select()?.into();
    let rows = crate::bench::read::run(
        files,
        columns,
        predicates,
        &backend,
        &settings.tuning,
        warmup,
        runs,
    )?;
    if json {
        print_json(&rows)?;
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
        let c = &r.cuda;
        if c.stages > 0 {
            println!(
                "{:<40} cuda per run: {} stages; lane wait {:.3} s, pinned fill {:.3} s ({:.1} MiB in), \
                 device {:.3} s, pinned drain {:.3} s ({:.1} MiB out; {:.1} MiB read from device mirrors) (thread-seconds){}",
                "",
                c.stages,
                c.wait_s,
                c.fill_s,
                c.bytes_in as f64 / (1 << 20) as f64,
                c.device_s,
                c.drain_s,
                c.bytes_out as f64 / (1 << 20) as f64,
                c.bytes_mirrored as f64 / (1 << 20) as f64,
                if c.span_streams > 0 {
                    format!("; {} streams inflated in spans", c.span_streams)
                } else {
                    String::new()
                }
            );
            let ops: Vec<String> = r
                .kernels
                .iter()
                .take(8)
                .map(|k| {
                    format!(
                        "{} {:.1} ms/{:.0} ({:.0} MiB up)",
                        k.name,
                        k.kernel_s * 1e3,
                        k.stages,
                        k.bytes_in / (1 << 20) as f64
                    )
                })
                .collect();
            println!(
                "{:<40} cuda events: upload {:.3} s, kernels {:.3} s, download {:.3} s; kernels by op: {}",
                "",
                c.upload_s,
                c.kernel_s,
                c.download_s,
                ops.join(", ")
            );
        }
        if !predicates.is_empty() {
            let s = &r.stages;
            println!(
                "{:<40} stripes read {} pruned {}; row groups read {} pruned {} (of which decoded and sliced {}); row index fallbacks {}",
                "",
                s.stripes_read,
                s.stripes_pruned,
                s.row_groups_read,
                s.row_groups_pruned,
                s.row_groups_sliced,
                s.row_index_fallbacks
            );
        }
    }
    Ok(())
}
