//! Huffman stages (`StageOp::Huffman`): both CUDA decoders
//! (`kernels/huffman.cu`) against the CPU backend, byte for byte and
//! status for status, on frames of every setting and on damaged frames.
//! Without a device only the CPU backend is checked, against the data.

use warpread::codecs::huffman::{self, Frame, HuffmanDecoder, HuffmanParams, Sampling};
use warpread::codecs::testing::huffman_ab;
use warpread::exec::{Backend, CpuBackend};
use warpread::plan::{Stage, StatusCode};

use crate::common::{Rng, cuda};

/// Text-like bytes: words from a skewed vocabulary.
fn text(rng: &mut Rng, n: usize) -> Vec<u8> {
    const WORDS: [&str; 12] = [
        "the ",
        "of ",
        "and ",
        "regular ",
        "deposits ",
        "quickly ",
        "furiously ",
        "a ",
        "carefully ",
        "pending ",
        "accounts ",
        "ironic ",
    ];
    let mut v = Vec::with_capacity(n + 16);
    while v.len() < n {
        let r = rng.next();
        let w = (r % 12).min((r >> 8) % 12) as usize;
        v.extend_from_slice(WORDS[w].as_bytes());
        if r >> 60 == 0 {
            v.push((r >> 20) as u8);
        }
    }
    v.truncate(n);
    v
}

/// Quantization-code-like 16-bit values around a centre.
fn codes(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n + 2);
    while v.len() < n {
        let r = rng.next();
        let spread = 1 + (r >> 58);
        let x = 512u16.wrapping_add(((r % (2 * spread)) as u16).wrapping_sub(spread as u16));
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(n);
    v
}

/// The encoder settings the frames are made with, by name.
fn settings() -> Vec<(&'static str, HuffmanParams)> {
    vec![
        ("bytes", HuffmanParams::BYTES),
        ("pairs", HuffmanParams::PAIRS),
        (
            "bytes-nogap-8k",
            HuffmanParams {
                sub_log2: 0,
                block_bytes: 8192,
                ..HuffmanParams::BYTES
            },
        ),
        (
            "bytes-len16-sub5-100k",
            HuffmanParams {
                max_len: 16,
                sub_log2: 5,
                block_bytes: 100_000,
                ..HuffmanParams::BYTES
            },
        ),
        (
            "pairs-sampled",
            HuffmanParams {
                sampling: Sampling::Every(8),
                ..HuffmanParams::PAIRS
            },
        ),
        (
            "bytes-ways7",
            HuffmanParams {
                sub_log2: 0,
                ways_log2: 7,
                ..HuffmanParams::BYTES
            },
        ),
        (
            "pairs-ways5-10k",
            HuffmanParams {
                sub_log2: 0,
                ways_log2: 5,
                block_bytes: 10_000,
                ..HuffmanParams::PAIRS
            },
        ),
        (
            "bytes-ways10-1000",
            HuffmanParams {
                sub_log2: 0,
                ways_log2: 10,
                block_bytes: 1000,
                ..HuffmanParams::BYTES
            },
        ),
    ]
}

/// Frames of varied settings and data, with their data.
fn frames(rng: &mut Rng) -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let noise: Vec<u8> = (0..50_000).map(|_| rng.next() as u8).collect();
    let datasets = [
        ("text", text(rng, 300_001)),
        ("codes", codes(rng, 200_000)),
        ("noise", noise),
        ("one-symbol", vec![7u8; 70_000]),
        ("tiny", b"ab".to_vec()),
    ];
    for (name, data) in datasets {
        for (pname, p) in settings() {
            let frame = huffman::encode(&data, &p).unwrap();
            out.push((format!("{name}/{pname}"), data.clone(), frame));
        }
    }
    out
}

fn stage_of(frame: &[u8], decoder: HuffmanDecoder) -> Stage {
    Frame::parse(frame, &Default::default())
        .unwrap()
        .stage(decoder, Default::default())
}

#[test]
fn huffman_frames_decode_alike_on_both_backends() {
    let test = "huffman_frames_decode_alike_on_both_backends";
    let mut rng = Rng::fresh(test);
    let gpu = cuda(test);
    for (name, data, frame) in frames(&mut rng) {
        for decoder in HuffmanDecoder::ALL {
            let stage = stage_of(&frame, decoder);
            let cpu = CpuBackend::new().run_stage(&stage, &frame).unwrap();
            cpu.check(&stage).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(cpu.data.as_bytes(), data.as_slice(), "{name}");
            if let Some(gpu) = gpu {
                let got = gpu.run_stage(&stage, &frame).unwrap();
                assert_eq!(got.statuses, cpu.statuses, "{name} {decoder:?}");
                assert!(
                    got.data.as_bytes() == data.as_slice(),
                    "{name} {decoder:?}: output differs"
                );
            }
        }
    }
}

#[test]
fn damaged_huffman_frames_fail_alike_on_both_backends() {
    let test = "damaged_huffman_frames_fail_alike_on_both_backends";
    let mut rng = Rng::fresh(test);
    let gpu = cuda(test);
    let all = frames(&mut rng);
    let mut failures = 0;
    for round in 0..200 {
        let (name, _, frame) = &all[rng.below(all.len() as u64) as usize];
        let decoder = HuffmanDecoder::ALL[round % 2];
        // The plan of the undamaged frame; the damage is in the blocks and
        // the code section, which the decoders check.
        let stage = stage_of(frame, decoder);
        let mut bad = frame.clone();
        for _ in 0..1 + rng.below(4) {
            let i = 32 + rng.below(bad.len() as u64 - 32) as usize;
            bad[i] ^= 1 << rng.below(8);
        }
        let cpu = CpuBackend::new().run_stage(&stage, &bad).unwrap();
        failures += cpu.statuses.iter().filter(|s| !s.is_ok()).count();
        for (job, st) in stage.jobs.iter().zip(&cpu.statuses) {
            assert!(st.produced <= job.values, "{name}: {st}");
        }
        if let Some(gpu) = gpu {
            let got = gpu.run_stage(&stage, &bad).unwrap();
            assert_eq!(
                got.statuses, cpu.statuses,
                "{name} {decoder:?} round {round}"
            );
            // Jobs that succeed wrote the same bytes.
            for (job, st) in stage.jobs.iter().zip(&cpu.statuses) {
                if st.is_ok() {
                    let r = job.output_offset as usize..(job.output_offset + job.values) as usize;
                    assert!(
                        got.data.as_bytes()[r.clone()] == cpu.data.as_bytes()[r],
                        "{name} {decoder:?} round {round}"
                    );
                }
            }
        }
    }
    assert!(failures > 50, "{failures} failed jobs");
}

#[test]
fn huffman_frames_encode_alike_on_both_backends() {
    let test = "huffman_frames_encode_alike_on_both_backends";
    let mut rng = Rng::fresh(test);
    let Some(gpu) = cuda(test) else {
        return;
    };
    let mut cases = frames(&mut rng);
    // No data at all, and 16-bit symbols over an odd number of bytes in
    // blocks of a size that is not a multiple of four.
    cases.push(("empty/bytes".into(), Vec::new(), Vec::new()));
    let params_of = |name: &str| {
        let setting = name.split('/').nth(1);
        settings()
            .into_iter()
            .find(|(n, _)| Some(*n) == setting)
            .map_or(HuffmanParams::BYTES, |(_, p)| p)
    };
    let odd = codes(&mut rng, 50_001);
    let odd_params = HuffmanParams {
        block_bytes: 1_002,
        ..HuffmanParams::PAIRS
    };
    let mut all: Vec<(String, Vec<u8>, HuffmanParams)> = cases
        .into_iter()
        .map(|(name, data, _)| {
            let p = params_of(&name);
            (name, data, p)
        })
        .collect();
    all.push(("codes-odd/pairs-1002".into(), odd, odd_params));
    for (name, data, p) in all {
        let want = huffman::encode(&data, &p).unwrap();
        let got = gpu.huffman_encode(&data, &p).unwrap();
        assert!(got == want, "{name}: the GPU frame differs from the CPU's");
        assert_eq!(huffman::decode(&got).unwrap(), data, "{name}");
    }
}

#[test]
fn hand_made_ways_blocks_fail_alike_on_both_backends() {
    let test = "hand_made_ways_blocks_fail_alike_on_both_backends";
    let gpu = cuda(test);
    // "ab" x 16 in two ways of 24 bits each.
    let way = huffman_ab::way();
    let both = way.repeat(2);
    let frame = huffman_ab::two_ways;
    let cut = format!("{way}11{}", &way[2..]);
    let cases = [
        ("valid", frame(48, 24, &both), StatusCode::Ok),
        (
            "directory past the payload",
            frame(48, 49, &both),
            StatusCode::InputCorrupt,
        ),
        (
            "way 0 cut",
            frame(48, 23, &both),
            StatusCode::InputTruncated,
        ),
        (
            "way 0 with bits left",
            frame(48, 40, &both),
            StatusCode::OutputOverflow,
        ),
        (
            "unused code in way 1",
            frame(48, 24, &cut),
            StatusCode::InputCorrupt,
        ),
        (
            "way 1 with bits left",
            frame(50, 24, &both),
            StatusCode::OutputOverflow,
        ),
        (
            "way 1 out of bits",
            frame(45, 24, &both),
            StatusCode::OutputShort,
        ),
    ];
    for (name, bytes, want) in cases {
        for decoder in HuffmanDecoder::ALL {
            let stage = stage_of(&bytes, decoder);
            let cpu = CpuBackend::new().run_stage(&stage, &bytes).unwrap();
            assert_eq!(cpu.statuses[0].status(), want, "{name}");
            if let Some(gpu) = gpu {
                let got = gpu.run_stage(&stage, &bytes).unwrap();
                assert_eq!(got.statuses, cpu.statuses, "{name} {decoder:?}");
                if want == StatusCode::Ok {
                    assert_eq!(got.data.as_bytes(), b"ab".repeat(16), "{name}");
                }
            }
        }
    }
}
