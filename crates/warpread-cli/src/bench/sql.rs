//! TPC-H through DataFusion: each query timed with warpread's table
//! provider (ORC, Parquet or both, on the chosen backend) and with
//! DataFusion's built-in Parquet reader on the same generated data, results
//! compared. warpread's Parquet side reads the very files DataFusion reads.

use std::path::{Path, PathBuf};
use std::time::Instant;

use datafusion::prelude::SessionContext;
use serde::Serialize;

use crate::datagen::cache::{cache_root, ensure_tpch, tpch_dir_name};
use crate::datagen::tpch::{GenCompression, GenFormat, GenOptions};
use crate::error::{Error, Result};
use crate::exec::{BackendChoice, CudaOptions};
use crate::orc::ReadStats;
use warpread_datafusion::{
    ParquetReader, StatementResult, TPCH, WarpreadConfig, compare_results, parse_setting,
    register_tpch_with, run_sql, runtime, session, session_config, set_options,
};

/// What to run.
#[derive(Debug, Clone)]
pub struct SqlBenchConfig {
    /// TPC-H scale factor.
    pub scale: f64,
    /// Formats read by warpread, each timed (ORC, Parquet or both).
    pub formats: Vec<GenFormat>,
    /// Compression: of the ORC data, and of the Parquet data after
    /// [`parquet_twin`] (ZLIB for ORC is GZIP for Parquet).
    pub compression: GenCompression,
    /// Queries (1..=22).
    pub queries: Vec<usize>,
    /// Timed runs per query and reader; the median is reported.
    pub runs: usize,
    /// Untimed runs of each query on every reader before its timed ones
    /// (the first query of a process otherwise pays for faulting in the
    /// memory every later one reuses, and the engines take turns).
    pub warmup: usize,
    /// Backends of the warpread side, each timed on every format (one run
    /// can time both backends against a single DataFusion pass).
    pub backends: Vec<BackendChoice>,
    /// How a CUDA backend among them runs.
    pub cuda: CudaOptions,
    /// The CUDA devices each CUDA side spreads its scans over.
    pub devices: crate::exec::Devices,
    /// Data folder root (default: the cache).
    pub data_dir: Option<PathBuf>,
    /// `KEY=VALUE` settings of warpread's sessions (`warpread.*` or
    /// `datafusion.*`, as `SET` takes them): the A/B switches of a run.
    pub settings: Vec<String>,
    /// `KEY=VALUE` settings of the session of DataFusion's own reader
    /// (default: none, DataFusion's defaults), to compare like with like.
    pub datafusion_settings: Vec<String>,
    /// Run warpread's queries on these workers (each side's session is a
    /// coordinator; the workers decode on the backend they were started
    /// with, and `backends` only labels the side).
    pub workers: Option<warpread_distributed::StaticWorkers>,
    /// Run DataFusion's reader only in the last this many runs of each
    /// query (its warm-up included; `None`: every run). Its rows still
    /// check warpread's; fewer runs save time at large scales.
    pub datafusion_runs: Option<usize>,
}

/// `KEY=VALUE` settings, split.
fn split_settings(list: &[String]) -> Result<Vec<(String, String)>> {
    list.iter()
        .map(|s| parse_setting(s).map_err(|e| Error::datafusion("reading --set", e)))
        .collect()
}

/// One warpread input's timing of one query.
#[derive(Debug, Clone, Serialize)]
pub struct WarpTiming {
    /// The input and backend, e.g. `orc/zlib on cuda`.
    pub input: String,
    /// Median seconds.
    pub seconds: f64,
    /// DataFusion's median over this one.
    pub speedup: f64,
    /// Reader stages of the last run (summed over files).
    pub stages: ReadStats,
    /// Whether the rows equal DataFusion's.
    pub results_match: bool,
}

/// One query's timings.
#[derive(Debug, Clone, Serialize)]
pub struct SqlBenchRow {
    /// Query number.
    pub query: usize,
    /// Result rows (DataFusion's).
    pub rows: usize,
    /// The warpread provider, one entry per format in the configured order.
    pub warpread: Vec<WarpTiming>,
    /// Median seconds with DataFusion's Parquet reader.
    pub datafusion_s: f64,
}

impl SqlBenchRow {
    /// Whether every warpread input gave DataFusion's rows.
    pub fn results_match(&self) -> bool {
        self.warpread.iter().all(|w| w.results_match)
    }
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct SqlBenchReport {
    /// Scale factor.
    pub scale: f64,
    /// warpread's inputs and backends, e.g. `orc/zlib on cuda`.
    pub warpread_inputs: Vec<String>,
    /// DataFusion's input, e.g. `parquet/gzip`.
    pub datafusion_input: String,
    /// The warpread backends, described.
    pub backends: Vec<String>,
    /// The largest estimated build side (bytes) a hash join shares as one
    /// table, in warpread's sessions and in DataFusion's.
    pub join_share_limits: (usize, usize),
    /// Per query.
    pub rows: Vec<SqlBenchRow>,
    /// Batches the CUDA backends aggregated on the device, and those the
    /// device refused (their partitions restarted on DataFusion's
    /// operators).
    pub device_aggregates: (u64, u64),
}

/// The Parquet twin of an ORC compression (ZLIB is GZIP's deflate body).
pub fn parquet_twin(c: GenCompression) -> GenCompression {
    match c {
        GenCompression::Zlib => GenCompression::Gzip,
        other => other,
    }
}

fn data_dir(root: &Path, scale: f64, o: &GenOptions) -> Result<PathBuf> {
    let dir = root.join(tpch_dir_name(scale, o));
    ensure_tpch(scale, o, &dir)?;
    Ok(dir)
}

fn input_name(o: &GenOptions) -> String {
    format!("{}/{:?}", o.format.extension(), o.compression).to_ascii_lowercase()
}

/// One timed side: a session with the eight tables.
struct Side {
    input: String,
    ctx: SessionContext,
    stats: std::sync::Arc<warpread_datafusion::StatsSink>,
}

/// Runs the benchmark; `progress` hears which query runs.
pub fn run(cfg: &SqlBenchConfig, progress: impl Fn(&str)) -> Result<SqlBenchReport> {
    if cfg.runs == 0 || cfg.queries.iter().any(|q| !(1..=22).contains(q)) {
        return Err(Error::Unsupported(
            "--runs must be positive and queries in 1..=22".into(),
        ));
    }
    if cfg.formats.is_empty() || cfg.backends.is_empty() {
        return Err(Error::Unsupported(
            "--format: name orc, parquet or both; --backends: cpu, cuda or auto".into(),
        ));
    }
    let settings = split_settings(&cfg.settings)?;
    let datafusion_settings = split_settings(&cfg.datafusion_settings)?;
    let root = cfg.data_dir.clone().unwrap_or_else(cache_root);
    let df_opts = GenOptions::new(GenFormat::Parquet, parquet_twin(cfg.compression));
    let df_dir = data_dir(&root, cfg.scale, &df_opts)?;
    // One backend per choice, shared by every format's side: a CUDA context
    // is costly, and the sides then share its kernel cache and warm state.
    // With workers this process only plans and runs last stages: it
    // opens no device the workers use.
    let backends = match cfg.workers {
        Some(_) => vec![vec![std::sync::Arc::new(crate::exec::CpuBackend::new())
            as std::sync::Arc<dyn crate::exec::Backend>]],
        None => cfg
            .backends
            .iter()
            .map(|&c| crate::exec::devices::open(c, &cfg.cuda, &cfg.devices))
            .collect::<Result<Vec<_>>>()?,
    };
    let described = backends
        .iter()
        .map(|list| match list.len() {
            1 => list[0].describe(),
            n => format!("{} x{n}", list[0].describe()),
        })
        .collect();
    let rt = runtime()?;
    let rows = rt.block_on(async {
        let mut sides = Vec::new();
        for (backend, &format) in backends
            .iter()
            .flat_map(|b| cfg.formats.iter().map(move |f| (b, f)))
        {
            let (opts, dir) = match format {
                GenFormat::Orc => {
                    let o = GenOptions::new(GenFormat::Orc, cfg.compression);
                    let d = data_dir(&root, cfg.scale, &o)?;
                    (o, d)
                }
                // The same files as DataFusion's side.
                GenFormat::Parquet => (df_opts, df_dir.clone()),
            };
            let (ctx, stats, on) = match &cfg.workers {
                Some(w) => {
                    // Stage timings stay in the workers.
                    let config = WarpreadConfig::with_backend(std::sync::Arc::new(
                        crate::exec::CpuBackend::new(),
                    ));
                    let stats = config.stats.clone();
                    let n = w.urls().len();
                    let ctx = warpread_distributed::coordinator_session(
                        config,
                        session_config(),
                        w.clone(),
                    );
                    (ctx, stats, format!("{n} workers"))
                }
                None => {
                    let config = WarpreadConfig::with_devices(backend.clone())?;
                    let stats = config.stats.clone();
                    let ctx = session(config, session_config());
                    (ctx, stats, backend[0].name().to_string())
                }
            };
            // After `session`, so that a join limit given here wins.
            set_options(&ctx, &settings).map_err(|e| Error::datafusion("applying --set", e))?;
            register_tpch_with(&ctx, &dir, format.extension(), ParquetReader::Warpread).await?;
            sides.push(Side {
                input: format!("{} on {on}", input_name(&opts)),
                ctx,
                stats,
            });
        }
        // DataFusion's reader at DataFusion's defaults (warpread's sessions
        // plan joins their own way), or with `--datafusion-set`'s settings
        // to compare like with like.
        let df = SessionContext::new();
        set_options(&df, &datafusion_settings)
            .map_err(|e| Error::datafusion("applying --datafusion-set", e))?;
        register_tpch_with(&df, &df_dir, "parquet", ParquetReader::Datafusion).await?;
        let mut rows = Vec::new();
        for &q in &cfg.queries {
            let sql = TPCH[q - 1];
            let mut times = vec![Vec::new(); sides.len()];
            let mut df_times = Vec::new();
            let mut last: Vec<Vec<StatementResult>> = vec![Vec::new(); sides.len()];
            let mut df_last = Vec::new();
            let mut stages = vec![ReadStats::default(); sides.len()];
            for run in 0..cfg.warmup + cfg.runs {
                let timed = run >= cfg.warmup;
                progress(&if timed {
                    format!("Q{q} run {}/{}", run - cfg.warmup + 1, cfg.runs)
                } else {
                    format!("Q{q} warm-up {}/{}", run + 1, cfg.warmup)
                });
                for (i, side) in sides.iter().enumerate() {
                    side.stats.take();
                    // `scripts/trace_summary.py` counts the timed runs' spans.
                    let span = timed.then(|| {
                        crate::trace::span_with(|| format!("bench.run Q{q} {}", side.input))
                    });
                    let t = Instant::now();
                    last[i] = run_sql(&side.ctx, sql).await?;
                    drop(span);
                    if timed {
                        times[i].push(t.elapsed().as_secs_f64());
                        stages[i] = side.stats.take();
                    }
                }
                let all = cfg.warmup + cfg.runs;
                if cfg.datafusion_runs.is_none_or(|n| run + n.max(1) >= all) {
                    let t = Instant::now();
                    df_last = run_sql(&df, sql).await?;
                    if timed {
                        df_times.push(t.elapsed().as_secs_f64());
                    }
                }
            }
            let batches =
                |r: &[StatementResult]| r.last().map(|s| s.batches.clone()).unwrap_or_default();
            let reference = batches(&df_last);
            let d = super::codecs::median(&df_times);
            let warpread = sides
                .iter()
                .zip(times)
                .zip(last.iter().zip(stages))
                .map(|((side, t), (result, stages))| {
                    let seconds = super::codecs::median(&t);
                    WarpTiming {
                        input: side.input.clone(),
                        seconds,
                        speedup: d / seconds,
                        stages,
                        results_match: compare_results(&batches(result), &reference, 1e-9).is_ok(),
                    }
                })
                .collect();
            rows.push(SqlBenchRow {
                query: q,
                rows: reference.iter().map(|x| x.num_rows()).sum(),
                warpread,
                datafusion_s: d,
            });
        }
        let share_limit = |ctx: &SessionContext| {
            ctx.copied_config()
                .options()
                .optimizer
                .hash_join_single_partition_threshold
        };
        let limits = (
            sides.first().map_or(0, |s| share_limit(&s.ctx)),
            share_limit(&df),
        );
        Ok::<_, Error>((
            sides.iter().map(|s| s.input.clone()).collect(),
            rows,
            limits,
        ))
    })?;
    let device_aggregates = backends
        .iter()
        .flatten()
        .filter_map(|b| b.as_cuda())
        .map(|c| c.aggregate_batches())
        .fold((0, 0), |(d, h), (bd, bh)| (d + bd, h + bh));
    Ok(SqlBenchReport {
        device_aggregates,
        scale: cfg.scale,
        warpread_inputs: rows.0,
        datafusion_input: input_name(&df_opts),
        backends: described,
        join_share_limits: rows.2,
        rows: rows.1,
    })
}
