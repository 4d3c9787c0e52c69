//! Truncated, bit-flipped and garbage RLE v1, RLE v2, byte RLE and boolean
//! RLE streams: both backends report the same status per chunk, never panic,
//! and agree on every chunk they accept.

use warpread::exec::{Backend, CpuBackend, StageOutput};
use warpread::plan::{IntType, Stage, StageOp, StatusCode};

use crate::common::{Rng, cuda, mutate};
use crate::int_rle_differential::{byte_stage, random_stage};

fn same_on_ok_chunks(stage: &Stage, a: &StageOutput, b: &StageOutput, w: usize) {
    assert_eq!(a.statuses, b.statuses);
    for (job, st) in stage.jobs.iter().zip(&a.statuses) {
        if st.is_ok() {
            let r = job.output_offset as usize * w..(job.output_offset + job.values) as usize * w;
            assert_eq!(a.data.as_bytes()[r.clone()], b.data.as_bytes()[r]);
        }
    }
}

#[test]
fn corrupt_streams_give_statuses_not_panics() {
    let mut rng = Rng::fresh("corrupt_streams_give_statuses_not_panics");
    let cpu = CpuBackend::new();
    let gpu = cuda("corrupt_streams_give_statuses_not_panics");
    let mut seen = std::collections::HashSet::new();
    for round in 0..120 {
        let ty = IntType::ALL[round % IntType::ALL.len()];
        let op = if round % 2 == 0 {
            StageOp::OrcRleV1(ty)
        } else {
            StageOp::OrcRleV2(ty)
        };
        let n = 1 + rng.below(50_000) as usize;
        let (mut bytes, mut stage) = warpread::with_int_type!(ty, T => {
            let vals: Vec<T> = (0..n)
                .map(|i| warpread::codecs::int::IntElem::from_bits(if i % 97 < 50 { (i / 13) as u64 } else { rng.next() >> rng.below(64) }))
                .collect();
            random_stage(&mut rng, op, &vals)
        });
        // values that do not fit narrow types are filtered by from_bits; the
        // encoder is given what the type holds, so the clean stage decodes.
        mutate(&mut rng, &mut bytes, &mut stage);
        // shrunken jobs leave gaps; widen nothing, keep output size
        let want = cpu.run_stage(&stage, &bytes).unwrap();
        for st in &want.statuses {
            assert_ne!(st.status(), StatusCode::Pending);
            seen.insert(st.status());
        }
        if let Some(gpu) = gpu {
            let got = gpu.run_stage(&stage, &bytes).unwrap();
            same_on_ok_chunks(&stage, &got, &want, op.output_width());
        }
    }
    // The mutations must actually exercise the error paths.
    assert!(seen.len() >= 4, "only saw {seen:?}");
}

#[test]
fn corrupt_byte_and_bool_streams_give_statuses_not_panics() {
    let mut rng = Rng::fresh("corrupt_byte_and_bool_streams_give_statuses_not_panics");
    let cpu = CpuBackend::new();
    let gpu = cuda("corrupt_byte_and_bool_streams_give_statuses_not_panics");
    let mut seen = std::collections::HashSet::new();
    for round in 0..40 {
        let op = [StageOp::OrcByteRle, StageOp::OrcBoolRle][round % 2];
        let (mut bytes, mut stage, _) = byte_stage(&mut rng, op);
        mutate(&mut rng, &mut bytes, &mut stage);
        let want = cpu.run_stage(&stage, &bytes).unwrap();
        for st in &want.statuses {
            assert_ne!(st.status(), StatusCode::Pending);
            seen.insert(st.status());
        }
        if let Some(gpu) = gpu {
            let got = gpu.run_stage(&stage, &bytes).unwrap();
            same_on_ok_chunks(&stage, &got, &want, 1);
        }
    }
    assert!(seen.len() >= 3, "only saw {seen:?}");
}

#[test]
fn hostile_plans_are_rejected_before_decoding() {
    let stage = Stage {
        op: StageOp::OrcRleV1(IntType::I32),
        jobs: vec![warpread::plan::ChunkJob {
            input: 0..1_000,
            output_offset: 0,
            values: 10,
            aux: 0,
        }],
        output_values: 10,
        location: warpread::Location::file("hostile.orc"),
    };
    let err = CpuBackend::new().run_stage(&stage, &[0u8; 10]).unwrap_err();
    assert!(err.to_string().contains("hostile.orc"), "{err}");
    if let Some(gpu) = cuda("hostile_plans_are_rejected_before_decoding") {
        assert!(gpu.run_stage(&stage, &[0u8; 10]).is_err());
    }
}

#[test]
fn absurd_output_sizes_are_errors_not_aborts() {
    // Metadata claiming ~2^60 output values with no jobs: the backend must
    // refuse the allocation with an error.
    let stage = Stage {
        op: StageOp::OrcRleV1(IntType::U64),
        jobs: Vec::new(),
        output_values: 1 << 60,
        location: warpread::Location::file("huge.orc"),
    };
    assert!(CpuBackend::new().run_stage(&stage, &[]).is_err());
    if let Some(gpu) = cuda("absurd_output_sizes_are_errors_not_aborts") {
        assert!(gpu.run_stage(&stage, &[]).is_err());
    }
}
