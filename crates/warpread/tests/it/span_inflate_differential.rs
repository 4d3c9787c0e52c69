//! Speculative parallel inflate: long deflate streams cut into spans, on
//! the CPU (`deflate::speculative`) and on the device (`cuda::span_inflate`),
//! against zlib on every block kind, on span sizes small enough for many
//! false candidates and split spans, and on truncated and corrupted
//! streams (same acceptance, same bytes where accepted).

use std::sync::OnceLock;

use warpread::codecs::deflate;
use warpread::codecs::deflate::speculative::{SpanOptions, inflate_speculative};
use warpread::exec::{Backend, CpuBackend, CudaBackend, CudaOptions};
use warpread::plan::{ChunkJob, Stage, StageOp};

use crate::common::Rng;

/// The CUDA backend with every stream of at least four `span_bytes`
/// spans inflated in spans (however short), no host share.
fn cuda_spans(test: &str, span_bytes: u64) -> Option<&'static CudaBackend> {
    static BACKENDS: OnceLock<std::sync::Mutex<Vec<(u64, &'static CudaBackend)>>> = OnceLock::new();
    static FAILED: OnceLock<String> = OnceLock::new();
    if let Some(why) = FAILED.get() {
        println!("{test}: skipped: no CUDA device ({why})");
        return None;
    }
    let mut all = BACKENDS.get_or_init(Default::default).lock().unwrap();
    if let Some(&(_, b)) = all.iter().find(|(s, _)| *s == span_bytes) {
        return Some(b);
    }
    let options = CudaOptions::default()
        .with_host_share(false)
        .with_span_inflate(Some(
            SpanOptions::default()
                .with_span_bytes(span_bytes)
                .with_min_stream_bytes(0),
        ))
        .with_kernel_cache(std::env::var_os("WARPREAD_KERNEL_CACHE"))
        .with_kernel_dir(std::env::var_os("WARPREAD_KERNEL_DIR"));
    match CudaBackend::with_options(0, options) {
        Ok(b) => {
            let b: &'static CudaBackend = Box::leak(Box::new(b));
            all.push((span_bytes, b));
            Some(b)
        }
        Err(e) => {
            let _ = FAILED.set(e.to_string());
            println!("{test}: skipped: no CUDA device ({e})");
            None
        }
    }
}

/// Text whose words repeat at every distance (dynamic blocks), with runs
/// long enough for 258-byte matches and stretches of noise (stored blocks
/// at low levels).
fn mixed(rng: &mut Rng, n: usize) -> Vec<u8> {
    let words = [
        "span ", "marker ", "window ", "block ", "the ", "of ", "deflate ", "\n", "warp ",
    ];
    let mut v = Vec::with_capacity(n + 1024);
    while v.len() < n {
        match rng.below(40) {
            0 => v.extend(std::iter::repeat_n(
                rng.next() as u8,
                200 + rng.below(2000) as usize,
            )),
            1 => v.extend((0..rng.below(3000)).map(|_| rng.next() as u8)),
            _ => v.extend_from_slice(words[rng.below(words.len() as u64) as usize].as_bytes()),
        }
    }
    v.truncate(n);
    v
}

/// One stage of `streams` (their raw bytes and deflate levels), each a job.
fn stage_of(streams: &[(Vec<u8>, u32)]) -> (Vec<u8>, Stage) {
    let mut bytes = Vec::new();
    let mut jobs = Vec::new();
    let mut out_at = 0u64;
    for (i, (raw, level)) in streams.iter().enumerate() {
        // Odd offsets: the device reads words across the stream's edges.
        bytes.extend(std::iter::repeat_n(0xA5u8, i % 4));
        let start = bytes.len() as u64;
        bytes.extend(deflate::deflate(raw, *level));
        jobs.push(ChunkJob {
            input: start..bytes.len() as u64,
            output_offset: out_at,
            values: raw.len() as u64 + (i as u64 % 3) * 17,
            aux: 0,
        });
        out_at += raw.len() as u64 + (i as u64 % 3) * 17;
    }
    let stage = Stage {
        op: StageOp::Inflate,
        jobs,
        output_values: out_at,
        location: Default::default(),
    };
    (bytes, stage)
}

fn compare(what: &str, stage: &Stage, bytes: &[u8], span_bytes: u64) {
    let want = CpuBackend::new().run_stage(stage, bytes).unwrap();
    // The CPU's speculative inflate, stream by stream.
    let options = SpanOptions::default().with_span_bytes(span_bytes);
    for (i, j) in stage.jobs.iter().enumerate() {
        let input = &bytes[j.input.start as usize..j.input.end as usize];
        let mut out = vec![0u8; j.values as usize];
        let st = inflate_speculative(input, &mut out, &options);
        let w = want.statuses[i];
        assert_eq!(
            st.is_ok(),
            w.is_ok(),
            "{what}: stream {i} on the CPU: {st} vs {w}"
        );
        if w.is_ok() {
            assert_eq!(
                st.produced, w.produced,
                "{what}: stream {i} size on the CPU"
            );
            let r = j.output_offset as usize..(j.output_offset + j.values) as usize;
            assert!(
                out == want.data.as_bytes()[r],
                "{what}: stream {i} bytes on the CPU"
            );
        }
    }
    let Some(gpu) = cuda_spans(what, span_bytes) else {
        return;
    };
    let got = gpu.run_stage(stage, bytes).unwrap();
    crate::deflate_differential::assert_same(stage, &got, &want, &format!("{what} on the GPU"));
}

#[test]
fn long_streams_of_every_block_kind_match_zlib() {
    let mut rng = Rng::fresh("long_streams_of_every_block_kind_match_zlib");
    let n = 3 << 20;
    let streams = vec![
        (mixed(&mut rng, n), 6),
        (mixed(&mut rng, n), 1),
        (mixed(&mut rng, n), 9),
        ((0..n).map(|_| rng.next() as u8).collect(), 0),
        ((0..n).map(|i| (i / 4000) as u8).collect(), 9),
        (mixed(&mut rng, 100_000), 6),
    ];
    let (bytes, stage) = stage_of(&streams);
    for span in [1024, 16 * 1024, 64 * 1024] {
        compare(&format!("span {span}"), &stage, &bytes, span);
    }
}

#[test]
fn damaged_long_streams_are_rejected_like_zlib_rejects_them() {
    let mut rng = Rng::fresh("damaged_long_streams_are_rejected_like_zlib_rejects_them");
    for round in 0..6 {
        let streams: Vec<(Vec<u8>, u32)> = (0..4).map(|_| (mixed(&mut rng, 1 << 20), 6)).collect();
        let (mut bytes, mut stage) = stage_of(&streams);
        for j in &mut stage.jobs {
            let len = j.input.end - j.input.start;
            match rng.below(4) {
                0 => j.input.end -= 1 + rng.below(len / 2),
                1 => {
                    for _ in 0..1 + rng.below(4) {
                        let at = j.input.start + rng.below(len);
                        bytes[at as usize] ^= 1 << rng.below(8);
                    }
                }
                2 => j.values -= 1 + rng.below(j.values / 2),
                _ => {}
            }
        }
        compare(&format!("round {round}"), &stage, &bytes, 4096);
    }
}
