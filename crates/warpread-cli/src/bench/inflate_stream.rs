//! `warpread bench inflate-stream`: one long raw deflate stream (zlib
//! level 6 over a data set), inflated by zlib on one core, by the
//! speculative span inflate on the host's cores, and on the GPU with span
//! inflate and with one warp per stream; every output verified byte-exact.
//!
//! GB/s are decoded bytes over wall time of the whole decode: on the GPU
//! `run_stage` from host input to host output (upload of the compressed
//! stream, the kernels, the host's bookkeeping between rounds, the download
//! of the bytes), median of the timed runs after warm-up.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use super::codecs::median;
use super::huffman::{
    HuffmanBenchConfig, HuffmanInput, fill_to, load as load_text, realdata_dir, taxi_column,
};
use crate::codecs::deflate::{self, speculative};
use crate::error::{Error, Result};
use crate::exec::{Backend, BackendChoice, CudaBackend, CudaOptions};
use crate::plan::{Stage, StageOp};

/// Which data to compress into the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamInput {
    /// A data set of `bench huffman` (TPC-H comments, English, taxi fare
    /// codes, a file).
    Text(HuffmanInput),
    /// The taxi trips' passenger counts of the real-data folder, a byte
    /// per trip.
    TaxiPassengers,
}

impl std::str::FromStr for StreamInput {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "taxi-passengers" => Self::TaxiPassengers,
            other => Self::Text(other.parse()?),
        })
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct InflateStreamConfig {
    /// The data sets, one stream each.
    pub inputs: Vec<StreamInput>,
    /// Bytes per stream (the data is cut or repeated to this size).
    pub bytes: usize,
    /// zlib level of the stream.
    pub level: u32,
    /// How streams are cut into spans.
    pub spans: speculative::SpanOptions,
    /// The backend for the GPU rows.
    pub backend: BackendChoice,
    /// How a CUDA backend runs.
    pub cuda: CudaOptions,
    /// Untimed runs first.
    pub warmup: usize,
    /// Timed runs (the median is reported).
    pub runs: usize,
    /// Also time one warp per stream (slow: one run).
    pub one_warp: bool,
    /// Real-data folder.
    pub realdata: Option<PathBuf>,
}

/// One stream's figures.
#[derive(Debug, Clone, Serialize)]
pub struct InflateStreamRow {
    /// Data set.
    pub input: String,
    /// Decoded bytes.
    pub bytes: u64,
    /// Compressed bytes.
    pub compressed: u64,
    /// zlib-rs on one core.
    pub zlib_gbps: f64,
    /// Speculative span inflate on the host's threads.
    pub cpu_spans_gbps: f64,
    /// Span inflate on the GPU.
    pub gpu_spans_gbps: Option<f64>,
    /// One warp per stream on the GPU.
    pub gpu_one_warp_gbps: Option<f64>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct InflateStreamReport {
    /// The device, or why none.
    pub device: String,
    /// Host threads of the CPU span inflate.
    pub cpu_threads: usize,
    /// Compressed bytes per span.
    pub span_bytes: u64,
    /// Timed runs.
    pub runs: usize,
    /// One row per stream.
    pub rows: Vec<InflateStreamRow>,
}

fn load(cfg: &InflateStreamConfig, input: &StreamInput) -> Result<(String, Vec<u8>)> {
    match input {
        StreamInput::Text(t) => load_text(&HuffmanBenchConfig {
            input: t.clone(),
            bytes: cfg.bytes,
            params: Vec::new(),
            backend: BackendChoice::Cpu,
            cuda: CudaOptions::default(),
            warmup: 0,
            runs: 1,
            error_bound: 0.005,
            realdata: cfg.realdata.clone(),
            dump: None,
        }),
        StreamInput::TaxiPassengers => {
            let dir = realdata_dir(&cfg.realdata, "taxi passenger counts")?;
            let counts = taxi_column(&dir, "passenger_count")?
                .into_iter()
                .map(|c| c.map_or(0, |c| c as u8))
                .collect();
            Ok((
                "taxi-passengers".into(),
                fill_to("taxi passenger counts", counts, cfg.bytes)?,
            ))
        }
    }
}

fn time<T>(runs: usize, mut f: impl FnMut() -> Result<T>) -> Result<f64> {
    let mut s = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        f()?;
        s.push(t.elapsed().as_secs_f64());
    }
    Ok(median(&s))
}

/// Runs the benchmark; `progress` is told what happens next.
pub fn run(
    cfg: &InflateStreamConfig,
    mut progress: impl FnMut(&str),
) -> Result<InflateStreamReport> {
    cfg.cuda.validate()?;
    let spans_on = cfg
        .cuda
        .clone()
        .with_host_share(false)
        .with_span_inflate(Some(cfg.spans.with_min_stream_bytes(0)));
    let cuda = CudaBackend::for_choice(cfg.backend, &spans_on)?;
    let one_warp = match (&cuda, cfg.one_warp) {
        (Some(_), true) => Some(CudaBackend::with_options(
            0,
            cfg.cuda
                .clone()
                .with_host_share(false)
                .with_span_inflate(None),
        )?),
        _ => None,
    };
    let device = match &cuda {
        Some(c) => c.describe(),
        None => "no GPU: CPU only".into(),
    };
    let mut rows = Vec::new();
    for input in &cfg.inputs {
        progress("loading input");
        let (name, data) = load(cfg, input)?;
        progress(&format!("compressing {name}"));
        let z = deflate::deflate(&data, cfg.level);
        let gbps = |s: f64| data.len() as f64 / s / 1e9;
        let mut out = vec![0u8; data.len()];
        progress(&format!("{name}: zlib on one core"));
        let zlib_s = time(cfg.runs.min(3), || {
            let st = deflate::inflate(&z, &mut out);
            st.is_ok()
                .then_some(())
                .ok_or_else(|| Error::Unsupported(format!("zlib: {st}")))
        })?;
        super::verify_bytes("zlib", &out, &data)?;
        progress(&format!("{name}: spans on the CPU"));
        let cpu_s = time(cfg.runs.min(5), || {
            let st = speculative::inflate_speculative(&z, &mut out, &cfg.spans);
            st.is_ok()
                .then_some(())
                .ok_or_else(|| Error::Unsupported(format!("CPU spans: {st}")))
        })?;
        super::verify_bytes("CPU spans", &out, &data)?;
        let stage = Stage::single(StageOp::Inflate, 0..z.len() as u64, data.len() as u64);
        let gpu = |b: &CudaBackend, warmup: usize, runs: usize| -> Result<f64> {
            for _ in 0..warmup {
                b.run_stage(&stage, &z)?;
            }
            let mut last = None;
            let s = time(runs, || {
                last = Some(b.run_stage(&stage, &z)?);
                Ok(())
            })?;
            let out = last.expect("at least one run");
            super::verify_output("GPU inflate", &stage, &out, &data)?;
            Ok(s)
        };
        let gpu_spans = match &cuda {
            Some(c) => {
                progress(&format!("{name}: spans on the GPU"));
                let before = c.profile().span_streams;
                let s = gpu(c, cfg.warmup, cfg.runs)?;
                // The backend's own count says the span path ran.
                if c.profile().span_streams == before {
                    return Err(Error::Unsupported(format!(
                        "{name}: the stream was not inflated in spans ({} compressed bytes)",
                        z.len()
                    )));
                }
                Some(gbps(s))
            }
            None => None,
        };
        let gpu_one = match &one_warp {
            Some(c) => {
                progress(&format!("{name}: one warp on the GPU"));
                Some(gbps(gpu(c, 0, 1)?))
            }
            None => None,
        };
        rows.push(InflateStreamRow {
            input: name,
            bytes: data.len() as u64,
            compressed: z.len() as u64,
            zlib_gbps: gbps(zlib_s),
            cpu_spans_gbps: gbps(cpu_s),
            gpu_spans_gbps: gpu_spans,
            gpu_one_warp_gbps: gpu_one,
        });
    }
    Ok(InflateStreamReport {
        device,
        cpu_threads: rayon::current_num_threads(),
        span_bytes: cfg.spans.span_bytes,
        runs: cfg.runs,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_runs_and_verifies_on_the_cpu() {
        let cfg = InflateStreamConfig {
            inputs: vec!["tpch".parse().unwrap()],
            bytes: 1 << 20,
            level: 6,
            spans: speculative::SpanOptions::default().with_span_bytes(16 * 1024),
            backend: BackendChoice::Cpu,
            cuda: CudaOptions::default(),
            warmup: 0,
            runs: 1,
            one_warp: false,
            realdata: None,
        };
        let r = run(&cfg, |_| {}).unwrap();
        assert_eq!(r.rows.len(), 1);
        let row = &r.rows[0];
        assert_eq!(row.bytes, 1 << 20);
        assert!(row.compressed > 0 && row.compressed < row.bytes);
        assert!(row.zlib_gbps > 0.0 && row.cpu_spans_gbps > 0.0);
        assert!(row.gpu_spans_gbps.is_none());
    }
}
