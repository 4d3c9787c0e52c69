//! TPC-H through DataFusion: each query timed with warpread's table
//! provider (ORC, the chosen backend) and with DataFusion's built-in
//! Parquet reader on the same generated data, results compared.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::datafusion::{
    TPCH, WarpreadConfig, compare_results, register_tpch, run_sql, runtime, session,
};
use crate::datagen::cache::{cache_root, ensure_tpch, tpch_dir_name};
use crate::datagen::tpch::{GenCompression, GenFormat, GenOptions};
use crate::error::{Error, Result};
use crate::exec::BackendChoice;
use crate::orc::ReadStats;

/// What to run.
#[derive(Debug, Clone)]
pub struct SqlBenchConfig {
    /// TPC-H scale factor.
    pub scale: f64,
    /// Format read by warpread (ORC; Parquet once warpread reads it).
    pub format: GenFormat,
    /// Compression of both data sets.
    pub compression: GenCompression,
    /// Queries (1..=22).
    pub queries: Vec<usize>,
    /// Timed runs per query and reader; the median is reported.
    pub runs: usize,
    /// Backend of the warpread side.
    pub backend: BackendChoice,
    /// Data folder root (default: the cache).
    pub data_dir: Option<PathBuf>,
}

/// One query's timings.
#[derive(Debug, Clone, Serialize)]
pub struct SqlBenchRow {
    /// Query number.
    pub query: usize,
    /// Result rows.
    pub rows: usize,
    /// Median seconds with the warpread provider.
    pub warpread_s: f64,
    /// Median seconds with DataFusion's Parquet reader.
    pub datafusion_s: f64,
    /// `datafusion_s / warpread_s`.
    pub speedup: f64,
    /// Reader stages of the warpread side's last run (summed over files).
    pub warpread_stages: ReadStats,
    /// Whether both readers gave the same rows.
    pub results_match: bool,
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct SqlBenchReport {
    /// Scale factor.
    pub scale: f64,
    /// warpread's input, e.g. `orc/zlib`.
    pub warpread_input: String,
    /// DataFusion's input, e.g. `parquet/gzip`.
    pub datafusion_input: String,
    /// The warpread backend.
    pub backend: String,
    /// Per query.
    pub rows: Vec<SqlBenchRow>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The Parquet twin of an ORC compression for the DataFusion side.
fn parquet_twin(c: GenCompression) -> GenCompression {
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

/// Runs the benchmark; `progress` hears which query runs.
pub fn run(cfg: &SqlBenchConfig, progress: impl Fn(&str)) -> Result<SqlBenchReport> {
    if cfg.format != GenFormat::Orc {
        return Err(Error::Unsupported(
            "bench sql --format parquet: warpread's Parquet reader is not plugged into \
             DataFusion yet; only ORC is read by warpread"
                .into(),
        ));
    }
    if cfg.runs == 0 || cfg.queries.iter().any(|q| !(1..=22).contains(q)) {
        return Err(Error::Unsupported(
            "--runs must be positive and queries in 1..=22".into(),
        ));
    }
    let root = cfg.data_dir.clone().unwrap_or_else(cache_root);
    let warp_opts = GenOptions::new(cfg.format, cfg.compression);
    let df_opts = GenOptions::new(GenFormat::Parquet, parquet_twin(cfg.compression));
    let warp_dir = data_dir(&root, cfg.scale, &warp_opts)?;
    let df_dir = data_dir(&root, cfg.scale, &df_opts)?;
    let config = WarpreadConfig::new(cfg.backend)?;
    let backend = config.backend.describe();
    let stats = config.stats.clone();
    let rt = runtime()?;
    let rows = rt.block_on(async {
        let warp = session(config, Default::default());
        register_tpch(&warp, &warp_dir, warp_opts.format.extension()).await?;
        let df = session(WarpreadConfig::new(BackendChoice::Cpu)?, Default::default());
        register_tpch(&df, &df_dir, "parquet").await?;
        let mut rows = Vec::new();
        for &q in &cfg.queries {
            let sql = TPCH[q - 1];
            let mut times = (Vec::new(), Vec::new());
            let mut last = (Vec::new(), Vec::new());
            let mut stages = ReadStats::default();
            for run in 0..cfg.runs {
                progress(&format!("Q{q} run {}/{}", run + 1, cfg.runs));
                stats.take();
                let t = Instant::now();
                let a = run_sql(&warp, sql).await?;
                times.0.push(t.elapsed().as_secs_f64());
                stages = stats.take();
                let t = Instant::now();
                let b = run_sql(&df, sql).await?;
                times.1.push(t.elapsed().as_secs_f64());
                last = (a, b);
            }
            let batches = |r: &Vec<crate::datafusion::StatementResult>| {
                r.last().map(|s| s.batches.clone()).unwrap_or_default()
            };
            let (a, b) = (batches(&last.0), batches(&last.1));
            let (w, d) = (median(times.0), median(times.1));
            rows.push(SqlBenchRow {
                query: q,
                rows: a.iter().map(|x| x.num_rows()).sum(),
                warpread_s: w,
                datafusion_s: d,
                speedup: d / w,
                warpread_stages: stages,
                results_match: compare_results(&a, &b, 1e-9).is_ok(),
            });
        }
        Ok::<_, Error>(rows)
    })?;
    Ok(SqlBenchReport {
        scale: cfg.scale,
        warpread_input: format!("orc/{:?}", cfg.compression).to_ascii_lowercase(),
        datafusion_input: format!("parquet/{:?}", df_opts.compression).to_ascii_lowercase(),
        backend,
        rows,
    })
}
