//! `warpread bench codecs`: encode each suite column with a codec, decode it
//! with a backend, verify against the CPU reference, report throughput.
//!
//! Throughput is uncompressed (decoded) bytes over decode time. On CUDA the
//! time is kernel time from CUDA events with data already on the device,
//! median of the timed runs after warm-up; on the CPU it is wall time of the
//! whole stage on the rayon pool.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use super::suite::{self, ColumnData, SuiteColumn};
use crate::codecs::{CodecName, deflate, orc_rle_v1, orc_rle_v2};
use crate::error::{Error, Location, Result};
use crate::exec::{Backend, BackendChoice, CpuBackend, CudaBackend, CudaOptions, StageOutput};
use crate::plan::{ChunkJob, Stage, StageOp};

/// Which columns to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SuiteChoice {
    /// The CODAG-style real-data columns when the folder exists, else TPC-H.
    #[default]
    Auto,
    /// The CODAG-style real-data columns (an error when the folder is missing).
    Codag,
    /// TPC-H lineitem columns generated in-process.
    Tpch,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct CodecBenchConfig {
    /// The codec.
    pub codec: CodecName,
    /// The backend.
    pub backend: BackendChoice,
    /// How a CUDA backend runs.
    pub cuda: CudaOptions,
    /// The column set.
    pub suite: SuiteChoice,
    /// Column names to keep (empty: the codec's default set).
    pub columns: Vec<String>,
    /// Each column is tiled to this many uncompressed bytes.
    pub target_bytes: usize,
    /// Uncompressed bytes per chunk job.
    pub chunk_bytes: usize,
    /// Untimed runs first.
    pub warmup: usize,
    /// Timed runs (the median is reported).
    pub runs: usize,
    /// The real-data folder (default: [`suite::default_realdata_dir`]).
    pub realdata: Option<PathBuf>,
    /// Also write each column's encoded chunks here (`NAME.<codec>` and
    /// `NAME.jobs`, u64 triples in_off, in_len, out_len), so another decoder
    /// (nvCOMP, `scripts/nvcomp_bench.py`) can run on the same bytes.
    pub dump: Option<PathBuf>,
}

impl Default for CodecBenchConfig {
    fn default() -> Self {
        Self {
            codec: CodecName::OrcRleV1,
            backend: BackendChoice::Auto,
            cuda: CudaOptions::default(),
            suite: SuiteChoice::Auto,
            columns: Vec::new(),
            target_bytes: 256 << 20,
            chunk_bytes: 128 << 10,
            warmup: 3,
            runs: 11,
            realdata: None,
            dump: None,
        }
    }
}

/// One measured column.
#[derive(Debug, Clone, Serialize)]
pub struct CodecBenchRow {
    /// Column name (MC0, L_ORDERKEY, ...).
    pub dataset: String,
    /// What the column is.
    pub description: String,
    /// Where it came from.
    pub source: String,
    /// Element type decoded.
    pub element: String,
    /// Decoded bytes.
    pub uncompressed_bytes: u64,
    /// Encoded bytes.
    pub compressed_bytes: u64,
    /// Uncompressed over compressed.
    pub ratio: f64,
    /// Chunk jobs.
    pub chunks: usize,
    /// Median decode time in milliseconds.
    pub median_ms: f64,
    /// Fastest run.
    pub min_ms: f64,
    /// Slowest run.
    pub max_ms: f64,
    /// Uncompressed GB/s (1e9 bytes) at the median.
    pub gbps: f64,
    /// Output equals the CPU reference and the original values.
    pub verified: bool,
}

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct CodecBenchReport {
    /// The codec.
    pub codec: String,
    /// The backend that ran, described.
    pub backend: String,
    /// Timing method.
    pub timing: String,
    /// Timed runs per column.
    pub runs: usize,
    /// Rows.
    pub rows: Vec<CodecBenchRow>,
    /// Geometric mean of GB/s over the rows.
    pub geomean_gbps: f64,
}

fn default_columns(codec: CodecName, tpch: bool) -> Vec<&'static str> {
    match (codec, tpch) {
        (CodecName::OrcRleV1 | CodecName::OrcRleV2, false) => {
            vec!["MC0", "MC3", "TPC", "TPT", "CD2", "TC2", "HRG"]
        }
        (CodecName::Deflate, false) => vec!["MC0", "MC3", "TPC", "TPT", "CD2", "TC2", "HRG", "TXT"],
        (_, true) => vec![
            "L_ORDERKEY",
            "L_PARTKEY",
            "L_QUANTITY",
            "L_LINENUMBER",
            "L_SHIPDATE",
            "L_DISCOUNT",
            "L_RETURNFLAG",
        ],
    }
}

/// Loads the columns a config asks for.
pub fn load_columns(cfg: &CodecBenchConfig) -> Result<Vec<SuiteColumn>> {
    let realdata = cfg.realdata.clone().or_else(suite::default_realdata_dir);
    let use_codag = match cfg.suite {
        SuiteChoice::Codag => true,
        SuiteChoice::Tpch => false,
        SuiteChoice::Auto => realdata.is_some(),
    };
    let names: Vec<&str> = if cfg.columns.is_empty() {
        default_columns(cfg.codec, !use_codag)
    } else {
        cfg.columns.iter().map(String::as_str).collect()
    };
    if use_codag {
        let dir = realdata.ok_or_else(|| {
            Error::Unsupported(
                "the codag suite needs ../shared/realdata or $WARPREAD_REALDATA".into(),
            )
        })?;
        suite::codag_suite(&dir, &names, cfg.target_bytes)
    } else {
        suite::generated_suite(&names, cfg.target_bytes)
    }
}

/// zlib level of the deflate benchmark chunks (the CODAG setting).
pub const DEFLATE_LEVEL: u32 = 9;

/// The encoded form of a column: input bytes and one stage. `raw` is the
/// column's little-endian bytes (`col.data.to_le_bytes()`), which the caller
/// also needs for verification, so it is made once.
pub fn encode_column(
    codec: CodecName,
    col: &SuiteColumn,
    raw: &[u8],
    chunk_bytes: usize,
) -> (Vec<u8>, Stage) {
    let ty = col.data.int_type();
    let chunk_values = (chunk_bytes / ty.byte_width()).max(1);
    let (op, (bytes, jobs)): (StageOp, (Vec<u8>, Vec<ChunkJob>)) = match codec {
        CodecName::Deflate => (
            StageOp::Inflate,
            deflate::deflate_chunks(raw, chunk_bytes, DEFLATE_LEVEL),
        ),
        CodecName::OrcRleV1 => (
            StageOp::OrcRleV1(ty),
            super::suite::with_values!(&col.data, v => orc_rle_v1::encode_chunks(v, chunk_values)),
        ),
        CodecName::OrcRleV2 => (
            StageOp::OrcRleV2(ty),
            super::suite::with_values!(&col.data, v => orc_rle_v2::encode_chunks(v, chunk_values)),
        ),
    };
    let stage = Stage {
        op,
        jobs,
        output_values: (raw.len() / op.output_width()) as u64,
        location: Location::default().with_column(col.name.clone()),
    };
    (bytes, stage)
}

/// Median of a non-empty sample.
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Geometric mean of positive values.
pub fn geomean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp()
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    if a.len() != b.len() {
        return Some(a.len().min(b.len()));
    }
    a.iter().zip(b).position(|(x, y)| x != y)
}

/// Checks a backend's output against the CPU reference and the original
/// values.
pub fn verify(
    stage: &Stage,
    got: &StageOutput,
    reference: &StageOutput,
    original: &[u8],
) -> Result<()> {
    got.check(stage)?;
    if got.statuses != reference.statuses {
        return Err(Error::Mismatch {
            what: format!("{} statuses", stage.op.name()),
            detail: "backend statuses differ from the CPU reference".into(),
        });
    }
    for (what, want) in [
        ("CPU reference", reference.data.as_bytes()),
        ("original values", original),
    ] {
        if let Some(at) = first_difference(got.data.as_bytes(), want) {
            return Err(Error::Mismatch {
                what: format!("{} output of {}", stage.op.name(), stage.location),
                detail: format!("differs from the {what} at byte {at}"),
            });
        }
    }
    Ok(())
}

fn dump_chunks(
    dir: &std::path::Path,
    codec: CodecName,
    name: &str,
    input: &[u8],
    stage: &Stage,
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let data = dir.join(format!("{name}.{}", codec.as_str()));
    std::fs::write(&data, input).map_err(|e| Error::io(&data, e))?;
    let mut idx = Vec::with_capacity(stage.jobs.len() * 24);
    for j in &stage.jobs {
        for v in [j.input.start, j.input.end - j.input.start, j.values] {
            idx.extend_from_slice(&v.to_le_bytes());
        }
    }
    let jobs = dir.join(format!("{name}.jobs"));
    std::fs::write(&jobs, idx).map_err(|e| Error::io(&jobs, e))
}

/// Runs the benchmark; `progress` is told each column's name as it starts.
pub fn run(cfg: &CodecBenchConfig, mut progress: impl FnMut(&str)) -> Result<CodecBenchReport> {
    let cpu = CpuBackend::new();
    let cuda = CudaBackend::for_choice(cfg.backend, &cfg.cuda)?;
    let (backend_desc, timing) = match &cuda {
        Some(c) => (c.describe(), "kernel time, CUDA events, data on device"),
        None => (cpu.describe(), "wall time of the stage on the CPU"),
    };
    let columns = load_columns(cfg)?;
    let mut rows = Vec::new();
    for col in &columns {
        progress(&col.name);
        let original = col.data.to_le_bytes();
        let (input, stage) = encode_column(cfg.codec, col, &original, cfg.chunk_bytes);
        if let Some(dir) = &cfg.dump {
            dump_chunks(dir, cfg.codec, &col.name, &input, &stage)?;
        }
        let reference = cpu.run_stage(&stage, &input)?;
        let (output, times) = match &cuda {
            Some(c) => {
                let t = c.time_stage(&stage, &input, cfg.warmup, cfg.runs.max(1))?;
                (t.output, t.kernel_ms)
            }
            None => {
                let mut times = Vec::new();
                let mut last = None;
                for r in 0..cfg.warmup + cfg.runs.max(1) {
                    let t = Instant::now();
                    let out = cpu.run_stage(&stage, &input)?;
                    if r >= cfg.warmup {
                        times.push(t.elapsed().as_secs_f64() * 1e3);
                    }
                    last = Some(out);
                }
                (last.expect("at least one run"), times)
            }
        };
        verify(&stage, &output, &reference, &original)?;
        let med = median(&times);
        let bytes = original.len() as u64;
        rows.push(CodecBenchRow {
            dataset: col.name.clone(),
            description: col.description.clone(),
            source: col.source.clone(),
            element: col.data.int_type().name().to_string(),
            uncompressed_bytes: bytes,
            compressed_bytes: input.len() as u64,
            ratio: bytes as f64 / input.len().max(1) as f64,
            chunks: stage.jobs.len(),
            median_ms: med,
            min_ms: times.iter().copied().fold(f64::INFINITY, f64::min),
            max_ms: times.iter().copied().fold(0.0, f64::max),
            gbps: bytes as f64 / (med * 1e-3) / 1e9,
            verified: true,
        });
    }
    let geomean_gbps = geomean(&rows.iter().map(|r| r.gbps).collect::<Vec<_>>());
    Ok(CodecBenchReport {
        codec: cfg.codec.as_str().to_string(),
        backend: backend_desc,
        timing: timing.to_string(),
        runs: cfg.runs.max(1),
        rows,
        geomean_gbps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!((geomean(&[1.0, 100.0]) - 10.0).abs() < 1e-9);
    }

    #[test]
    fn verify_catches_a_flipped_byte() {
        let col = SuiteColumn {
            name: "T".into(),
            description: String::new(),
            source: String::new(),
            data: ColumnData::U16((0..5000).map(|i| (i / 9) as u16).collect()),
        };
        let original = col.data.to_le_bytes();
        let (input, stage) = encode_column(CodecName::OrcRleV1, &col, &original, 1024);
        let cpu = CpuBackend::new();
        let reference = cpu.run_stage(&stage, &input).unwrap();
        verify(&stage, &reference, &reference, &original).unwrap();
        let mut bad = reference.clone();
        bad.data.as_bytes_mut()[777] ^= 1;
        assert!(verify(&stage, &bad, &reference, &original).is_err());
    }
}
