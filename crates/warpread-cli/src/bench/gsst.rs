//! `warpread bench gsst`: compress a text set with GSST, decode it on the
//! CPU and (when present) the GPU, verify byte-exact, report ratio and GB/s.
//!
//! GB/s are uncompressed bytes over decode time. GPU time is kernel time
//! from CUDA events with the frame already on the device, median of the
//! timed runs after warm-up; CPU time is the wall time of the stage on the
//! rayon pool, median of up to 3 runs after one warm-up.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::codecs::median;
use crate::error::{Error, Location, Result};
use crate::exec::{Backend, BackendChoice, CpuBackend, CudaBackend, CudaOptions};
use crate::gsst::{self, Frame, GsstLayout, GsstParams, TargetDevice};

/// Which text to compress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GsstInput {
    /// TPC-H dbgen comment columns generated in-process (`tpchgen`).
    Tpch,
    /// The English corpus of the real-data folder.
    English,
    /// A file, taken as bytes (`.xz` files are decompressed first).
    Path(PathBuf),
}

impl std::str::FromStr for GsstInput {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "tpch" => Self::Tpch,
            "english" => Self::English,
            p => Self::Path(PathBuf::from(p)),
        })
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct GsstBenchConfig {
    /// The text.
    pub input: GsstInput,
    /// Layouts to measure.
    pub layouts: Vec<GsstLayout>,
    /// The backend for the timed decode (the CPU reference always runs).
    pub backend: BackendChoice,
    /// How a CUDA backend runs (its GSST launch shape among it).
    pub cuda: CudaOptions,
    /// Bytes of TPC-H text to generate.
    pub tpch_bytes: usize,
    /// Uncompressed bytes per block (default: derived from the device).
    pub block_bytes: Option<usize>,
    /// Splits per block (default: one per kernel thread).
    pub splits: Option<usize>,
    /// Untimed runs first.
    pub warmup: usize,
    /// Timed runs (the median is reported).
    pub runs: usize,
    /// Also time the CPU reference decode (a launch-shape sweep skips it:
    /// the GPU output is verified against the input bytes either way).
    pub cpu_decode: bool,
    /// The real-data folder (default: `suite::default_realdata_dir`).
    pub realdata: Option<PathBuf>,
    /// Also write the exact input bytes here, so that other codecs (nvCOMP,
    /// scripts/nvcomp_codecs_bench.py) can be measured on the same bytes.
    pub dump: Option<PathBuf>,
}

impl Default for GsstBenchConfig {
    fn default() -> Self {
        Self {
            input: GsstInput::Tpch,
            layouts: GsstLayout::ALL.to_vec(),
            backend: BackendChoice::Auto,
            cuda: CudaOptions::default(),
            tpch_bytes: 1 << 30,
            block_bytes: None,
            splits: None,
            warmup: 3,
            runs: 11,
            cpu_decode: true,
            realdata: None,
            dump: None,
        }
    }
}

/// One measured layout.
#[derive(Debug, Clone, Serialize)]
pub struct GsstBenchRow {
    /// The text set.
    pub input: String,
    /// Code layout.
    pub layout: String,
    /// Uncompressed bytes.
    pub uncompressed_bytes: u64,
    /// Frame bytes.
    pub compressed_bytes: u64,
    /// Uncompressed over compressed.
    pub ratio: f64,
    /// Blocks in the frame.
    pub blocks: usize,
    /// Splits per block.
    pub splits: usize,
    /// Compression wall time in seconds (CPU, rayon).
    pub compress_s: f64,
    /// CPU reference decode GB/s (median), unless skipped.
    pub cpu_gbps: Option<f64>,
    /// GPU kernel median milliseconds, when a GPU ran.
    pub gpu_median_ms: Option<f64>,
    /// GPU decode GB/s at the median, when a GPU ran.
    pub gpu_gbps: Option<f64>,
    /// Every decode equalled the input byte for byte.
    pub verified: bool,
}

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct GsstBenchReport {
    /// The device defaults were derived for and the decoding GPU, if any.
    pub device: String,
    /// The GSST kernels' launch shape (threads = default splits, resident
    /// blocks per SM, input rings), after any environment override.
    pub shape: String,
    /// Timed runs per measurement.
    pub runs: usize,
    /// Rows.
    pub rows: Vec<GsstBenchRow>,
}

/// `target` bytes of TPC-H comment text: `l_comment`, `o_comment` and
/// `ps_comment` values, one per line, generated at the scale factor that
/// yields at least `target` bytes (about 330 MB per unit of scale), then cut
/// to exactly `target`.
pub fn tpch_comments(target: usize) -> Vec<u8> {
    use tpchgen::generators::{LineItemGenerator, OrderGenerator, PartSuppGenerator};
    const BYTES_PER_SF: f64 = 300e6;
    const PARTS: i32 = 64;
    let sf = ((target as f64 / BYTES_PER_SF * 100.0).ceil() / 100.0).max(0.01);
    let table = |which: usize| -> Vec<u8> {
        let parts: Vec<Vec<u8>> = (1..=PARTS)
            .into_par_iter()
            .map(|part| {
                let mut s = Vec::new();
                let mut push = |c: &str| {
                    s.extend_from_slice(c.as_bytes());
                    s.push(b'\n');
                };
                match which {
                    0 => LineItemGenerator::new(sf, part, PARTS)
                        .iter()
                        .for_each(|r| push(r.l_comment)),
                    1 => OrderGenerator::new(sf, part, PARTS)
                        .iter()
                        .for_each(|r| push(r.o_comment)),
                    _ => PartSuppGenerator::new(sf, part, PARTS)
                        .iter()
                        .for_each(|r| push(r.ps_comment)),
                }
                s
            })
            .collect();
        parts.concat()
    };
    let mut out = Vec::with_capacity(target + (64 << 20));
    for which in 0..3 {
        out.extend(table(which));
        if out.len() >= target {
            break;
        }
    }
    // Should the estimate fall short, repeat the text: each block has its
    // own table, so neither ratio nor speed profits from the repetition.
    let generated = out.len();
    while out.len() < target && generated > 0 {
        let take = (target - out.len()).min(generated);
        out.extend_from_within(..take);
    }
    out.truncate(target);
    out
}

fn read_maybe_xz(path: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    if path.extension().is_some_and(|e| e == "xz") {
        let mut out = Vec::new();
        lzma_rs::xz_decompress(&mut std::io::Cursor::new(bytes), &mut out).map_err(|e| {
            Error::io(
                path,
                std::io::Error::new(std::io::ErrorKind::InvalidData, format!("xz: {e:?}")),
            )
        })?;
        Ok(out)
    } else {
        Ok(bytes)
    }
}

/// The name and bytes of a config's input.
pub fn load_input(cfg: &GsstBenchConfig) -> Result<(String, Vec<u8>)> {
    match &cfg.input {
        GsstInput::Tpch => Ok(("tpch-comments".into(), tpch_comments(cfg.tpch_bytes.max(1)))),
        GsstInput::English => {
            let dir = cfg
                .realdata
                .clone()
                .or_else(super::suite::default_realdata_dir)
                .ok_or_else(|| {
                    Error::Unsupported(
                        "the English corpus needs ../shared/realdata or $WARPREAD_REALDATA".into(),
                    )
                })?;
            Ok((
                "english".into(),
                read_maybe_xz(&dir.join("english_corpus_19mb.txt.xz"))?,
            ))
        }
        GsstInput::Path(p) => Ok((p.display().to_string(), read_maybe_xz(p)?)),
    }
}

/// Runs the benchmark; `progress` is told what happens next.
pub fn run(cfg: &GsstBenchConfig, mut progress: impl FnMut(&str)) -> Result<GsstBenchReport> {
    let cpu = CpuBackend::new();
    // an invalid shape fails here, before minutes of compression
    cfg.cuda.validate()?;
    let shape = cfg.cuda.gsst_shape;
    let cuda = CudaBackend::for_choice(cfg.backend, &cfg.cuda)?;
    if cuda.is_none() && !cfg.cpu_decode {
        return Err(Error::Unsupported(
            "no GPU and the CPU decode skipped: nothing to measure".into(),
        ));
    }
    let target = cuda
        .as_ref()
        .map(|c| c.runtime().info().gsst_target())
        .unwrap_or(TargetDevice::H100);
    let device = match &cuda {
        Some(c) => c.describe(),
        None => "no GPU: defaults for an H100 (132 SMs), CPU decode only".into(),
    };
    progress("loading input");
    let (name, data) = load_input(cfg)?;
    if let Some(p) = &cfg.dump {
        std::fs::write(p, &data).map_err(|e| Error::io(p, e))?;
    }
    let runs = cfg.runs.max(1);
    let mut rows = Vec::new();
    for &layout in &cfg.layouts {
        // The frames' splits follow the shape the kernels are compiled with.
        let mut params = GsstParams::for_shape(&target, &shape, data.len(), layout);
        if let Some(b) = cfg.block_bytes {
            params.block_bytes = b.max(1);
        }
        if let Some(s) = cfg.splits {
            params.splits = s.max(1);
        }
        progress(&format!("compressing {name} ({})", layout.name()));
        let t = Instant::now();
        let frame = gsst::compress(&data, &params);
        let compress_s = t.elapsed().as_secs_f64();
        let parsed = Frame::parse(&frame, &Location::default())?;
        let stage = parsed.stage(Location::default().with_column(name.clone()));

        let gbps = |ms: f64| data.len() as f64 / (ms * 1e-3) / 1e9;
        let mut cpu_ms = Vec::new();
        if cfg.cpu_decode {
            progress(&format!("decoding {name} ({}) on the CPU", layout.name()));
            for r in 0..cfg.warmup.min(1) + runs.min(3) {
                let t = Instant::now();
                let out = cpu.run_stage(&stage, &frame)?;
                if r >= cfg.warmup.min(1) {
                    cpu_ms.push(t.elapsed().as_secs_f64() * 1e3);
                }
                super::verify_output("CPU GSST", &stage, &out, &data)?;
            }
        }
        let (gpu_median_ms, gpu_gbps) = match &cuda {
            Some(c) => {
                progress(&format!("decoding {name} ({}) on the GPU", layout.name()));
                let timing = c.time_stage(&stage, &frame, cfg.warmup, runs)?;
                super::verify_output("GPU GSST", &stage, &timing.output, &data)?;
                let m = median(&timing.kernel_ms);
                (Some(m), Some(gbps(m)))
            }
            None => (None, None),
        };
        rows.push(GsstBenchRow {
            input: name.clone(),
            layout: layout.name().into(),
            uncompressed_bytes: data.len() as u64,
            compressed_bytes: frame.len() as u64,
            ratio: data.len() as f64 / frame.len().max(1) as f64,
            blocks: parsed.blocks.len(),
            splits: params.splits_for(params.effective_block_bytes().min(data.len())),
            compress_s,
            cpu_gbps: (!cpu_ms.is_empty()).then(|| gbps(median(&cpu_ms))),
            gpu_median_ms,
            gpu_gbps,
            verified: true,
        });
    }
    Ok(GsstBenchReport {
        device,
        shape: shape.to_string(),
        runs,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tpch_comments_are_exactly_the_target() {
        let t = tpch_comments(3 << 20);
        assert_eq!(t.len(), 3 << 20);
        assert!(t.iter().filter(|&&b| b == b'\n').count() > 50_000);
        assert!(t.is_ascii());
    }

    #[test]
    fn bench_runs_and_verifies_on_the_cpu() {
        let cfg = GsstBenchConfig {
            tpch_bytes: 2 << 20,
            backend: BackendChoice::Cpu,
            runs: 1,
            warmup: 0,
            ..Default::default()
        };
        let r = run(&cfg, |_| {}).unwrap();
        assert_eq!(r.rows.len(), 2);
        for row in &r.rows {
            assert!(row.verified && row.ratio > 2.0, "{row:?}");
            assert!(row.cpu_gbps.is_some() && row.gpu_gbps.is_none());
        }
    }

    #[test]
    fn skipping_the_cpu_needs_a_gpu() {
        let cfg = GsstBenchConfig {
            tpch_bytes: 1 << 20,
            backend: BackendChoice::Cpu,
            cpu_decode: false,
            ..Default::default()
        };
        let e = run(&cfg, |_| {}).unwrap_err();
        assert!(e.to_string().contains("nothing to measure"), "{e}");
    }
}
