//! GSST: round trips on random and edge inputs in both layouts, CPU and GPU
//! byte-identical (outputs and statuses), damaged frames and blocks giving
//! errors or statuses, never panics or out-of-bounds accesses.

use warpread::Error;
use warpread::exec::{Backend, CpuBackend};
use warpread::gsst::{self, Frame, GsstLayout, GsstParams, TargetDevice};
use warpread::plan::StatusCode;

use crate::cli::{json_report, warpread};
use crate::common::{Rng, cuda};

fn params(layout: GsstLayout, block_bytes: usize, splits: usize) -> GsstParams {
    GsstParams {
        layout,
        block_bytes,
        splits,
    }
}

/// Text-like strings from a small vocabulary, newline-separated.
fn words(rng: &mut Rng, n: usize) -> Vec<u8> {
    const W: [&str; 12] = [
        "furiously ",
        "pending ",
        "requests ",
        "boost ",
        "slyly ",
        "express ",
        "accounts ",
        "haggle ",
        "blithely ",
        "regular ",
        "ideas\n",
        "; ",
    ];
    let mut s = Vec::with_capacity(n + 16);
    while s.len() < n {
        s.extend_from_slice(W[rng.below(W.len() as u64) as usize].as_bytes());
    }
    s.truncate(n);
    s
}

fn binary(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next() as u8).collect()
}

/// Inputs that stress the edges: empty, one byte, all-escape binary data,
/// zero bytes (symbols with trailing zeros), long runs, mixed.
fn edge_inputs(rng: &mut Rng) -> Vec<(&'static str, Vec<u8>)> {
    let mut mixed = words(rng, 30_000);
    mixed.extend(binary(rng, 3000));
    mixed.extend(words(rng, 20_000));
    vec![
        ("empty", Vec::new()),
        ("one byte", vec![b'x']),
        ("one escape byte", vec![0xff]),
        ("binary", binary(rng, 70_001)),
        ("all 0xff", vec![0xff; 5000]),
        ("zeros", vec![0; 40_000]),
        ("text", words(rng, 200_003)),
        ("mixed", mixed),
    ]
}

fn roundtrip_on(backend: &dyn Backend, data: &[u8], p: &GsstParams) -> Vec<u8> {
    let frame = gsst::compress(data, p);
    gsst::decompress_with(backend, &frame, &Default::default())
        .unwrap()
        .as_bytes()
        .to_vec()
}

#[test]
fn gsst_roundtrips_edge_inputs_on_the_cpu() {
    let mut rng = Rng::fresh("gsst_roundtrips_edge_inputs_on_the_cpu");
    for (name, data) in edge_inputs(&mut rng) {
        for layout in GsstLayout::ALL {
            for (block, splits) in [(1 << 20, 192), (4096, 7), (1000, 1), (65_536, 1024)] {
                let got = roundtrip_on(&CpuBackend::new(), &data, &params(layout, block, splits));
                assert!(
                    got == data,
                    "{name}, {layout:?}, block {block}, {splits} splits"
                );
            }
        }
    }
}

#[test]
fn gsst_roundtrips_huge_values() {
    // One 3 MiB "value" without separators, over several blocks.
    let mut rng = Rng::fresh("gsst_roundtrips_huge_values");
    let data = words(&mut rng, 3 << 20)
        .into_iter()
        .filter(|&b| b != b'\n')
        .collect::<Vec<_>>();
    for layout in GsstLayout::ALL {
        let p = GsstParams::for_device(&TargetDevice::H100, data.len(), layout);
        let frame = gsst::compress(&data, &p);
        assert!(frame.len() * 2 < data.len(), "ratio below 2 on words");
        assert_eq!(gsst::decompress(&frame).unwrap(), data);
    }
}

#[test]
fn gsst_cpu_and_gpu_agree() {
    let Some(gpu) = cuda("gsst_cpu_and_gpu_agree") else {
        return;
    };
    let mut rng = Rng::fresh("gsst_cpu_and_gpu_agree");
    for (name, data) in edge_inputs(&mut rng) {
        for layout in GsstLayout::ALL {
            for (block, splits) in [(1 << 20, 192), (4096, 7), (1000, 1), (65_536, 1024)] {
                let p = params(layout, block, splits);
                let frame = gsst::compress(&data, &p);
                let stage = Frame::parse(&frame, &Default::default())
                    .unwrap()
                    .stage(Default::default());
                let want = CpuBackend::new().run_stage(&stage, &frame).unwrap();
                let got = gpu.run_stage(&stage, &frame).unwrap();
                assert_eq!(
                    got.statuses, want.statuses,
                    "{name} {layout:?} {block}/{splits}"
                );
                assert!(
                    got.data.as_bytes() == data.as_slice(),
                    "{name} {layout:?} {block}/{splits}: GPU output differs"
                );
            }
        }
    }
}

/// Damages blocks (not the frame header, which the CPU checks before any
/// backend runs) and checks that both backends classify every block the
/// same way, and that a damaged frame never panics.
#[test]
fn gsst_damaged_blocks_give_identical_statuses() {
    let mut rng = Rng::fresh("gsst_damaged_blocks_give_identical_statuses");
    let gpu = cuda("gsst_damaged_blocks_give_identical_statuses");
    let data = words(&mut rng, 120_000);
    for layout in GsstLayout::ALL {
        let frame = gsst::compress(&data, &params(layout, 16_384, 9));
        let parsed = Frame::parse(&frame, &Default::default()).unwrap();
        let first = parsed.blocks[0].offset as usize;
        let mut failures = 0;
        for round in 0..200 {
            let mut bad = frame.clone();
            let mut stage = parsed.stage(Default::default());
            match round % 4 {
                0 => {
                    for _ in 0..1 + rng.below(4) {
                        let i = first + rng.below((bad.len() - first) as u64) as usize;
                        bad[i] ^= 1 << rng.below(8);
                    }
                }
                1 => {
                    // damage a header or table byte of one block
                    let b = &parsed.blocks[rng.below(parsed.blocks.len() as u64) as usize];
                    let i =
                        b.offset as usize + rng.below(200.min(u64::from(b.compressed))) as usize;
                    bad[i] = rng.next() as u8;
                }
                2 => {
                    // truncate or misalign some jobs
                    for job in &mut stage.jobs {
                        if rng.below(3) == 0 {
                            job.input.end -= 1 + rng.below(job.input.end - job.input.start);
                        } else if rng.below(5) == 0 && job.input.end < bad.len() as u64 {
                            job.input.start += 1;
                            job.input.end += 1;
                        }
                    }
                }
                _ => {
                    for b in bad[first..].iter_mut() {
                        if rng.below(300) == 0 {
                            *b = rng.next() as u8;
                        }
                    }
                }
            }
            let want = CpuBackend::new().run_stage(&stage, &bad).unwrap();
            failures += want.statuses.iter().filter(|s| !s.is_ok()).count();
            for s in &want.statuses {
                assert_ne!(s.status(), StatusCode::Pending);
            }
            if let Some(gpu) = gpu {
                let got = gpu.run_stage(&stage, &bad).unwrap();
                assert_eq!(got.statuses, want.statuses, "round {round} {layout:?}");
            }
        }
        assert!(failures > 100, "damage went unnoticed: {failures} failures");
    }
}

#[test]
fn gsst_damaged_frames_are_errors_not_panics() {
    let mut rng = Rng::fresh("gsst_damaged_frames_are_errors_not_panics");
    let data = words(&mut rng, 50_000);
    let frame = gsst::compress(&data, &params(GsstLayout::Splits, 8192, 16));
    for cut in (0..frame.len()).step_by(97) {
        assert!(gsst::decompress(&frame[..cut]).is_err(), "cut at {cut}");
    }
    let mut errors = 0;
    for _ in 0..300 {
        let mut bad = frame.clone();
        let i = rng.below(bad.len() as u64) as usize;
        bad[i] ^= 1 << rng.below(8);
        match gsst::decompress(&bad) {
            Ok(out) => assert_eq!(out.len(), data.len()),
            Err(Error::Format { .. } | Error::Corrupt { .. }) => errors += 1,
            Err(e) => panic!("unexpected error kind: {e}"),
        }
    }
    assert!(errors > 0);
}

#[test]
fn gsst_cli_compresses_and_decompresses_a_text_file() {
    let mut rng = Rng::fresh("gsst_cli_compresses_and_decompresses_a_text_file");
    let dir = std::env::temp_dir().join(format!("warpread-gsst-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (txt, frame, back) = (dir.join("in.txt"), dir.join("in.gsst"), dir.join("out.txt"));
    let data = words(&mut rng, 300_000);
    std::fs::write(&txt, &data).unwrap();
    for layout in ["splits", "coalesced"] {
        for (cmd, a, b, extra) in [
            (
                "compress",
                &txt,
                &frame,
                vec!["--layout", layout, "--block-kib", "64"],
            ),
            ("decompress", &frame, &back, vec![]),
        ] {
            let out = warpread()
                .args(["--backend", "auto", "gsst", cmd])
                .arg(a)
                .arg(b)
                .args(extra)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert_eq!(std::fs::read(&back).unwrap(), data, "{layout}");
        assert!(std::fs::metadata(&frame).unwrap().len() * 2 < data.len() as u64);
    }
    let out = warpread()
        .args(["--backend", "cpu", "gsst", "decompress"])
        .arg(&txt)
        .arg(&back)
        .output()
        .unwrap();
    assert!(!out.status.success(), "a text file is not a frame");
    assert!(String::from_utf8_lossy(&out.stderr).contains("GSST"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn gsst_bench_reports_ratio_and_verifies() {
    let v = json_report(
        warpread()
            .args(["--backend", "cpu", "bench", "gsst", "--input", "tpch"])
            .args(["--size-mib", "2", "--runs", "1", "--warmup", "0", "--json"]),
        "bench gsst",
    );
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert_eq!(r["verified"], true);
        assert!(r["ratio"].as_f64().unwrap() > 2.5, "{r}");
    }
}

/// Split tables crafted so that 32-bit arithmetic would wrap: a split of
/// almost 2^32 codes in an empty coalesced block, and output ends past the
/// block. Both decoders must reject the header without touching the codes.
#[test]
fn gsst_hostile_split_tables_are_rejected_identically() {
    use warpread::gsst::format::{BLOCK_FIXED_BYTES, write_frame_header};
    let gpu = cuda("gsst_hostile_split_tables_are_rejected_identically");
    for (layout, code_end, out_end, at) in [
        (
            GsstLayout::Coalesced,
            0xffff_fff5u32,
            0u32,
            BLOCK_FIXED_BYTES,
        ),
        (GsstLayout::Splits, 0xffff_fff5, 0, BLOCK_FIXED_BYTES),
        (GsstLayout::Splits, 0, 0xffff_ffff, BLOCK_FIXED_BYTES),
    ] {
        let mut block = gsst::compress_block(&[], 1, layout);
        block[16..20].copy_from_slice(&code_end.to_le_bytes());
        block[20..24].copy_from_slice(&out_end.to_le_bytes());
        let mut frame = Vec::new();
        write_frame_header(layout, &[(block.len() as u32, 0)], &mut frame);
        frame.extend_from_slice(&block);
        let stage = Frame::parse(&frame, &Default::default())
            .unwrap()
            .stage(Default::default());
        let want = CpuBackend::new().run_stage(&stage, &frame).unwrap();
        assert_eq!(want.statuses[0].status(), StatusCode::InputCorrupt);
        assert_eq!(want.statuses[0].detail as usize, at);
        if let Some(gpu) = gpu {
            let got = gpu.run_stage(&stage, &frame).unwrap();
            assert_eq!(got.statuses, want.statuses, "{layout:?}");
        }
    }
}
