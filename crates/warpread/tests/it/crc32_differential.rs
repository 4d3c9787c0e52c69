//! CRC-32 stages (`StageOp::Crc32`): the CUDA kernel (`kernels/crc32.cu`)
//! against the CPU backend, on jobs of every length class at every input
//! alignment, and on jobs a stage should not hold. Without a device only the
//! CPU backend is checked, against the definition.

use warpread::exec::{Backend, CpuBackend, StageOutput};
use warpread::plan::{ChunkJob, ChunkStatus, Stage, StageOp, StatusCode};

use crate::common::{Rng, cuda};

/// The gzip CRC-32, a byte at a time from a table built here: the test's
/// own reference.
fn reference(bytes: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        (0..256u32)
            .map(|mut r| {
                for _ in 0..8 {
                    r = (r >> 1) ^ (0xEDB8_8320 & (r & 1).wrapping_neg());
                }
                r
            })
            .collect()
    });
    !bytes.iter().fold(u32::MAX, |r, &b| {
        table[((r ^ u32::from(b)) & 0xff) as usize] ^ (r >> 8)
    })
}

/// One job per `(len, values)`, each reading `len` bytes from a random
/// offset of `input` (jobs may share bytes), outputs in order with a gap
/// before some.
fn stage(rng: &mut Rng, input_len: usize, jobs: &[(usize, u64)]) -> Stage {
    let mut out = 0u64;
    let jobs = jobs
        .iter()
        .map(|&(len, values)| {
            let start = rng.below((input_len - len) as u64 + 1);
            out += rng.below(2);
            let job = ChunkJob {
                input: start..start + len as u64,
                output_offset: out,
                values,
                aux: 0,
            };
            out += values;
            job
        })
        .collect();
    Stage {
        op: StageOp::Crc32,
        jobs,
        output_values: out + rng.below(3),
        location: Default::default(),
    }
}

fn random_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n + 8);
    while v.len() < n {
        v.extend_from_slice(&rng.next().to_le_bytes());
    }
    v.truncate(n);
    v
}

/// The CPU's output checked against the reference, job by job.
fn check_cpu(stage: &Stage, input: &[u8], out: &StageOutput) {
    let crcs = out.data.typed::<u32>();
    for (i, (job, st)) in stage.jobs.iter().zip(&out.statuses).enumerate() {
        let bytes = &input[job.input.start as usize..job.input.end as usize];
        let want = match job.values {
            0 => ChunkStatus::failed(StatusCode::OutputOverflow, 0, 0),
            1 => ChunkStatus::ok(1),
            _ => ChunkStatus::failed(StatusCode::OutputShort, bytes.len() as u64, 0),
        };
        assert_eq!(*st, want, "job {i}");
        if job.values == 1 {
            let got = crcs[job.output_offset as usize];
            assert_eq!(got, reference(bytes), "job {i}: {} bytes", bytes.len());
        }
    }
}

/// Runs `stage` on both backends; the device's statuses and whole output
/// must be the CPU's.
fn differential(test: &str, stage: &Stage, input: &[u8]) {
    let want = CpuBackend::new().run_stage(stage, input).unwrap();
    check_cpu(stage, input, &want);
    if let Some(gpu) = cuda(test) {
        let got = gpu.run_stage(stage, input).unwrap();
        for (i, (g, w)) in got.statuses.iter().zip(&want.statuses).enumerate() {
            assert_eq!(g, w, "{test}: job {i} of {:?}", stage.jobs[i]);
        }
        assert_eq!(got.statuses.len(), want.statuses.len());
        let (g, w) = (got.data.typed::<u32>(), want.data.typed::<u32>());
        for (i, job) in stage.jobs.iter().enumerate() {
            let r = job.output().start as usize..job.output().end as usize;
            assert_eq!(&g[r.clone()], &w[r], "{test}: job {i} of {job:?}");
        }
        assert!(got.data == want.data, "{test}: outputs differ");
        match (got.check(stage), want.check(stage)) {
            (Ok(()), Ok(())) => {}
            (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string()),
            (g, w) => panic!("{test}: gpu {g:?}, cpu {w:?}"),
        }
    }
}

#[test]
fn every_length_at_every_alignment_matches_the_cpu() {
    let test = "crc32 every_length_at_every_alignment_matches_the_cpu";
    let mut rng = Rng::fresh(test);
    let input = random_bytes(&mut rng, (4 << 20) + 61);
    let mut lens: Vec<usize> = vec![
        0,
        1,
        2,
        3,
        4,
        5,
        15,
        16,
        17,
        31,
        32,
        33,
        63,
        64,
        65,
        511,
        512,
        513,
        527,
        528,
        529,
        1000,
        4096 + 7,
        8192,
        65_536 + 3,
        (1 << 20) + 13,
    ];
    lens.extend((0..4).map(|_| rng.below(2 << 20) as usize));
    // Each length at several alignments of its first byte.
    let mut jobs: Vec<(usize, u64)> = Vec::new();
    for &len in &lens {
        jobs.extend(std::iter::repeat_n((len, 1), 5));
    }
    let s = stage(&mut rng, input.len(), &jobs);
    differential(test, &s, &input);
}

#[test]
fn many_short_jobs_match_the_cpu() {
    // More jobs than warps in flight, so warps take several jobs each.
    let test = "crc32 many_short_jobs_match_the_cpu";
    let mut rng = Rng::fresh(test);
    let input = random_bytes(&mut rng, 1 << 20);
    let jobs: Vec<(usize, u64)> = (0..20_000)
        .map(|_| {
            let len = match rng.below(4) {
                0 => rng.below(40),
                1 => rng.below(600),
                _ => rng.below(5000),
            };
            (len as usize, 1)
        })
        .collect();
    let s = stage(&mut rng, input.len(), &jobs);
    differential(test, &s, &input);
}

#[test]
fn jobs_not_asking_for_one_value_fail_alike() {
    let test = "crc32 jobs_not_asking_for_one_value_fail_alike";
    let mut rng = Rng::fresh(test);
    let input = random_bytes(&mut rng, 300_000);
    let jobs: Vec<(usize, u64)> = (0..200)
        .map(|_| {
            let len = rng.below(70_000) as usize;
            let values = match rng.below(4) {
                0 => 0,
                1 => 2 + rng.below(5),
                _ => 1,
            };
            (len, values)
        })
        .chain([(0, 0), (0, 2), (3, 0), (3, 7)])
        .collect();
    let s = stage(&mut rng, input.len(), &jobs);
    differential(test, &s, &input);
    let cpu = CpuBackend::new().run_stage(&s, &input).unwrap();
    let err = cpu.check(&s).unwrap_err().to_string();
    assert!(err.contains("chunk"), "{err}");
}

#[test]
fn inputs_past_the_end_are_refused_alike() {
    // Stage::validate refuses them before any job runs, on both backends.
    let test = "crc32 inputs_past_the_end_are_refused_alike";
    let input = vec![7u8; 100];
    let s = Stage {
        op: StageOp::Crc32,
        jobs: vec![
            ChunkJob {
                input: 0..10,
                output_offset: 0,
                values: 1,
                aux: 0,
            },
            ChunkJob {
                input: 90..101,
                output_offset: 1,
                values: 1,
                aux: 0,
            },
        ],
        output_values: 2,
        location: Default::default(),
    };
    let want = CpuBackend::new().run_stage(&s, &input).unwrap_err();
    assert!(want.to_string().contains("crc32 job 1"), "{want}");
    if let Some(gpu) = cuda(test) {
        let got = gpu.run_stage(&s, &input).unwrap_err();
        assert_eq!(got.to_string(), want.to_string());
    }
}
