//! `warpread bench huffman`: compress a data set with the Huffman codec
//! (8- and 16-bit symbols), decode it on the CPU and (when present) with
//! both GPU decoders, verify byte-exact, report ratio, entropy and GB/s.
//!
//! GB/s are decoded bytes over decode time. GPU time is kernel time from
//! CUDA events with the frame already on the device, median of the timed
//! runs after warm-up; CPU times are wall times on the rayon pool (the
//! encoder's and the reference decoder's), median of up to 3 runs. GPU
//! encoding is timed from data in device memory to frame in device memory
//! (counts, the code built on the host, sizes, blocks), median of the timed
//! runs, and its frame must equal the CPU encoder's byte for byte.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use super::codecs::median;
use super::gsst::{GsstBenchConfig, GsstInput, load_input};
use crate::codecs::huffman::{self, Frame, HuffmanDecoder, HuffmanParams, Sampling, histogram};
use crate::error::{Error, Location, Result};
use crate::exec::{Backend, BackendChoice, CpuBackend, CudaBackend, CudaOptions};

/// Which data to compress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HuffmanInput {
    /// A text set of `bench gsst` (TPC-H comments, English, a file).
    Text(GsstInput),
    /// cuSZ-style quantization codes of the taxi fares of the real-data
    /// folder: Lorenzo (previous-value) prediction, error bound
    /// `error_bound`, 16-bit codes around 32768, outliers as code 0.
    TaxiCodes,
    /// One column of the CODAG suite (`codag:MC0`, ... see
    /// [`CODAG_NAMES`](super::suite::CODAG_NAMES)): its values' little-endian
    /// bytes.
    Codag(String),
}

impl std::str::FromStr for HuffmanInput {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "taxi-codes" => Self::TaxiCodes,
            other => match other.strip_prefix("codag:") {
                Some(name) if super::suite::CODAG_NAMES.contains(&name) => {
                    Self::Codag(name.to_string())
                }
                Some(name) => {
                    return Err(Error::Unsupported(format!(
                        "CODAG column {name} (expected one of {})",
                        super::suite::CODAG_NAMES.join(", ")
                    )));
                }
                None => Self::Text(other.parse()?),
            },
        })
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct HuffmanBenchConfig {
    /// The data.
    pub input: HuffmanInput,
    /// Bytes to measure: the input is cut or repeated to exactly this many
    /// (an order-0 code's ratio does not change with repetition).
    pub bytes: usize,
    /// Encoder settings to measure (one row per setting and decoder).
    pub params: Vec<HuffmanParams>,
    /// The backend for the timed decode (the CPU reference always runs).
    pub backend: BackendChoice,
    /// How a CUDA backend runs.
    pub cuda: CudaOptions,
    /// Untimed runs first.
    pub warmup: usize,
    /// Timed runs (the median is reported).
    pub runs: usize,
    /// Absolute error bound of the taxi-fare quantization, in dollars.
    pub error_bound: f64,
    /// The real-data folder (default: `suite::default_realdata_dir`).
    pub realdata: Option<PathBuf>,
    /// Also write the exact input bytes here, for nvCOMP on the same bytes
    /// (scripts/nvcomp_codecs_bench.py).
    pub dump: Option<PathBuf>,
}

impl Default for HuffmanBenchConfig {
    fn default() -> Self {
        Self {
            input: HuffmanInput::Text(GsstInput::Tpch),
            bytes: 256 << 20,
            params: vec![HuffmanParams::BYTES, HuffmanParams::PAIRS],
            backend: BackendChoice::Auto,
            cuda: CudaOptions::default(),
            warmup: 3,
            runs: 21,
            error_bound: 0.005,
            realdata: None,
            dump: None,
        }
    }
}

/// One measured setting and decoder.
#[derive(Debug, Clone, Serialize)]
pub struct HuffmanBenchRow {
    /// The data set.
    pub input: String,
    /// Symbol bits (8 or 16).
    pub symbol_bits: u32,
    /// Code length bound.
    pub max_len: u32,
    /// `exact` or `1/N` sampled.
    pub sampling: String,
    /// Gap subsequence bits (0: no gap arrays).
    pub gap_bits: u32,
    /// Parallel ways a block (1: the single-way layout).
    pub ways: u32,
    /// GPU decoder (`gap`, `sync`; `ways` for a frame in ways, which both
    /// decoders read the same way).
    pub decoder: String,
    /// Decoded bytes.
    pub uncompressed_bytes: u64,
    /// Frame bytes.
    pub compressed_bytes: u64,
    /// Decoded over frame bytes.
    pub ratio: f64,
    /// Order-0 entropy of the data at this symbol width, bits per byte.
    pub entropy_bits_per_byte: f64,
    /// The ratio the entropy allows.
    pub entropy_ratio: f64,
    /// CPU encode GB/s (rayon, all cores).
    pub cpu_encode_gbps: f64,
    /// CPU reference decode GB/s (median).
    pub cpu_decode_gbps: f64,
    /// GPU encode GB/s (input bytes over the median encode), when a GPU
    /// ran; its frame equalled the CPU encoder's.
    pub gpu_encode_gbps: Option<f64>,
    /// The median GPU encode's phases.
    pub gpu_encode: Option<crate::exec::HuffmanEncodeTimes>,
    /// GPU kernel median milliseconds, when a GPU ran.
    pub gpu_median_ms: Option<f64>,
    /// GPU decode GB/s at the median, when a GPU ran.
    pub gpu_gbps: Option<f64>,
    /// Every decode equalled the input byte for byte.
    pub verified: bool,
}

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct HuffmanBenchReport {
    /// The decoding GPU, if any.
    pub device: String,
    /// Timed runs per measurement.
    pub runs: usize,
    /// CPU threads of the encoder and reference decoder.
    pub cpu_threads: usize,
    /// Rows.
    pub rows: Vec<HuffmanBenchRow>,
}

/// 16-bit quantization codes of `values` under absolute error bound `eb`,
/// as cuSZ makes them: each value is predicted by the previous
/// reconstructed one, the residual quantized to a multiple of 2·eb; codes
/// whose magnitude does not fit become code 0 (an outlier cuSZ keeps on
/// the side), the others are offset by 32768.
pub fn quantize(values: &[f64], eb: f64) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 * values.len());
    let mut prev = 0.0f64;
    for &v in values {
        let q = ((v - prev) / (2.0 * eb)).round();
        let code = if q.is_finite() && q.abs() < 32_767.0 {
            prev += q * 2.0 * eb;
            (q as i32 + 32_768) as u16
        } else {
            prev = v;
            0
        };
        out.extend_from_slice(&code.to_le_bytes());
    }
    out
}

/// One column of the real-data folder's taxi sample, cast to f64 (nulls
/// as `None`), read on the CPU backend.
pub(crate) fn taxi_column(dir: &std::path::Path, column: &str) -> Result<Vec<Option<f64>>> {
    use warpread::arrow::array::{Array, AsArray};
    use warpread::arrow::datatypes::Float64Type;
    let path = dir.join("nyc_yellow_taxi_2018_2020_sample_360k.parquet");
    let reader = crate::parquet::ParquetReaderBuilder::try_new(&path)?
        .with_projection([column])
        .with_backend(std::sync::Arc::new(CpuBackend::new()))
        .build()?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| Error::arrow(format!("reading taxi {column}"), e))?;
        let col = warpread::arrow::compute::cast(
            batch.column(0),
            &warpread::arrow::datatypes::DataType::Float64,
        )
        .map_err(|e| Error::arrow(format!("casting taxi {column}"), e))?;
        let f = col.as_primitive::<Float64Type>();
        out.extend((0..f.len()).map(|i| f.is_valid(i).then(|| f.value(i))));
    }
    Ok(out)
}

/// The real-data folder: the configured one, else the default; `what`
/// names the data in the error when there is none.
pub(crate) fn realdata_dir(
    configured: &Option<std::path::PathBuf>,
    what: &str,
) -> Result<std::path::PathBuf> {
    configured
        .clone()
        .or_else(super::suite::default_realdata_dir)
        .ok_or_else(|| {
            Error::Unsupported(format!(
                "{what} need ../shared/realdata or $WARPREAD_REALDATA"
            ))
        })
}

/// `data` cut or repeated to exactly `bytes` bytes; empty data is an error.
pub(crate) fn fill_to(name: &str, mut data: Vec<u8>, bytes: usize) -> Result<Vec<u8>> {
    if data.is_empty() {
        return Err(Error::Unsupported(format!("{name} is empty")));
    }
    let have = data.len();
    while data.len() < bytes {
        let take = (bytes - data.len()).min(have);
        data.extend_from_within(..take);
    }
    data.truncate(bytes);
    Ok(data)
}

/// The name and bytes of a config's input, at exactly `cfg.bytes`.
pub fn load(cfg: &HuffmanBenchConfig) -> Result<(String, Vec<u8>)> {
    let (name, data) = match &cfg.input {
        HuffmanInput::Text(t) => load_input(&GsstBenchConfig {
            input: t.clone(),
            tpch_bytes: cfg.bytes,
            realdata: cfg.realdata.clone(),
            ..Default::default()
        })?,
        HuffmanInput::TaxiCodes => {
            let dir = realdata_dir(&cfg.realdata, "taxi fares")?;
            let fares: Vec<f64> = taxi_column(&dir, "fare_amount")?
                .into_iter()
                .flatten()
                .collect();
            (
                format!("taxi-fare-codes-eb{}", cfg.error_bound),
                quantize(&fares, cfg.error_bound),
            )
        }
        HuffmanInput::Codag(name) => {
            let dir = realdata_dir(&cfg.realdata, "CODAG columns")?;
            let column = super::suite::codag_suite(&dir, &[name.as_str()], cfg.bytes)?
                .into_iter()
                .next()
                .ok_or_else(|| Error::Unsupported(format!("CODAG column {name} not loaded")))?;
            (format!("codag-{name}"), column.data.to_le_bytes())
        }
    };
    let data = fill_to(&name, data, cfg.bytes)?;
    Ok((name, data))
}

/// Runs the benchmark; `progress` is told what happens next.
pub fn run(cfg: &HuffmanBenchConfig, mut progress: impl FnMut(&str)) -> Result<HuffmanBenchReport> {
    let cpu = CpuBackend::new();
    cfg.cuda.validate()?;
    let cuda = CudaBackend::for_choice(cfg.backend, &cfg.cuda)?;
    let device = match &cuda {
        Some(c) => c.describe(),
        None => "no GPU: CPU only".into(),
    };
    progress("loading input");
    let (name, data) = load(cfg)?;
    if let Some(p) = &cfg.dump {
        std::fs::write(p, &data).map_err(|e| Error::io(p, e))?;
    }
    let runs = cfg.runs.max(1);
    let gbps = |s: f64| data.len() as f64 / s / 1e9;
    let mut rows = Vec::new();
    for p in &cfg.params {
        let entropy = histogram::entropy_bits(&histogram::exact(&data, p.width));
        let label = format!("{} ({}-bit, max {})", name, 8 * p.width.bytes(), p.max_len);
        progress(&format!("encoding {label}"));
        let mut enc_s = Vec::new();
        let mut frame = Vec::new();
        for _ in 0..runs.min(3) {
            let t = Instant::now();
            frame = huffman::encode(&data, p)?;
            enc_s.push(t.elapsed().as_secs_f64());
        }
        let (gpu_encode, gpu_encode_gbps) = match &cuda {
            Some(c) => {
                progress(&format!("encoding {label} on the GPU"));
                let (gpu_frame, mut times) =
                    c.time_huffman_encode(&data, p, cfg.warmup.min(3), runs)?;
                if gpu_frame != frame {
                    let at = gpu_frame
                        .iter()
                        .zip(&frame)
                        .position(|(a, b)| a != b)
                        .unwrap_or(gpu_frame.len().min(frame.len()));
                    return Err(Error::Mismatch {
                        what: format!("GPU Huffman encoding of {label}"),
                        detail: format!(
                            "frame of {} bytes differs from the CPU encoder's {} at byte {at}",
                            gpu_frame.len(),
                            frame.len()
                        ),
                    });
                }
                times.sort_by(|a, b| a.total_ms.total_cmp(&b.total_ms));
                let m = times[times.len() / 2];
                (Some(m), Some(gbps(m.total_ms * 1e-3)))
            }
            None => (None, None),
        };
        let parsed = Frame::parse(&frame, &Location::default())?;
        let loc = Location::default().with_column(name.clone());
        progress(&format!("decoding {label} on the CPU"));
        let stage = parsed.stage(HuffmanDecoder::Gap, loc.clone());
        let mut dec_s = Vec::new();
        for _ in 0..runs.min(3) {
            let t = Instant::now();
            let out = cpu.run_stage(&stage, &frame)?;
            dec_s.push(t.elapsed().as_secs_f64());
            super::verify_output("CPU Huffman", &stage, &out, &data)?;
        }
        // Both kernels decode a frame in ways alike: one row for it.
        let decoders: &[HuffmanDecoder] = if p.ways_log2 == 0 {
            &HuffmanDecoder::ALL
        } else {
            &[HuffmanDecoder::Gap]
        };
        for &decoder in decoders {
            let stage = parsed.stage(decoder, loc.clone());
            let (gpu_median_ms, gpu_gbps) = match &cuda {
                Some(c) => {
                    progress(&format!("decoding {label} on the GPU ({})", decoder.name()));
                    let timing = c.time_stage(&stage, &frame, cfg.warmup, runs)?;
                    super::verify_output("GPU Huffman", &stage, &timing.output, &data)?;
                    let m = median(&timing.kernel_ms);
                    (Some(m), Some(gbps(m * 1e-3)))
                }
                None => (None, None),
            };
            rows.push(HuffmanBenchRow {
                input: name.clone(),
                symbol_bits: 8 * p.width.bytes() as u32,
                max_len: p.max_len,
                sampling: match p.sampling {
                    Sampling::Exact => "exact".into(),
                    Sampling::Every(n) => format!("1/{n}"),
                },
                gap_bits: if p.sub_log2 == 0 { 0 } else { 1 << p.sub_log2 },
                ways: 1 << p.ways_log2,
                decoder: if p.ways_log2 == 0 {
                    decoder.name().into()
                } else {
                    "ways".into()
                },
                uncompressed_bytes: data.len() as u64,
                compressed_bytes: frame.len() as u64,
                ratio: data.len() as f64 / frame.len().max(1) as f64,
                entropy_bits_per_byte: entropy / data.len() as f64,
                entropy_ratio: 8.0 * data.len() as f64 / entropy.max(1.0),
                cpu_encode_gbps: gbps(median(&enc_s)),
                cpu_decode_gbps: gbps(median(&dec_s)),
                gpu_encode_gbps,
                gpu_encode,
                gpu_median_ms,
                gpu_gbps,
                verified: true,
            });
        }
    }
    Ok(HuffmanBenchReport {
        device,
        runs,
        cpu_threads: rayon::current_num_threads(),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantization_keeps_the_error_bound() {
        let v: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.37).sin() * 20.0).collect();
        let codes = quantize(&v, 0.01);
        let mut prev = 0.0;
        for (x, c) in v.iter().zip(codes.chunks_exact(2)) {
            let c = u16::from_le_bytes([c[0], c[1]]);
            prev = if c == 0 {
                *x
            } else {
                prev + f64::from(i32::from(c) - 32_768) * 0.02
            };
            assert!((prev - x).abs() <= 0.01 + 1e-9, "{prev} vs {x}");
        }
    }

    #[test]
    fn bench_runs_and_verifies_on_the_cpu() {
        let cfg = HuffmanBenchConfig {
            bytes: 1 << 20,
            backend: BackendChoice::Cpu,
            runs: 1,
            warmup: 0,
            ..Default::default()
        };
        let r = run(&cfg, |_| {}).unwrap();
        assert_eq!(r.rows.len(), 4);
        for row in &r.rows {
            assert!(row.verified && row.ratio > 1.5, "{row:?}");
            assert!(row.ratio <= row.entropy_ratio, "{row:?}");
            assert!(row.gpu_gbps.is_none());
        }
    }
}
