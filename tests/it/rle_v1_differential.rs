//! ORC RLE v1: CUDA against the CPU reference on fresh random streams of
//! every element type and shape, and CPU against the values encoded.

use warpread::codecs::int::IntElem;
use warpread::codecs::orc_rle_v1;
use warpread::exec::{Backend, CpuBackend};
use warpread::plan::{ChunkJob, IntType, Stage, StageOp};

use crate::common::{Rng, cuda};

/// Values of one shape: the kinds of data that stress different paths.
fn values<T: IntElem>(rng: &mut Rng, n: usize, shape: u64) -> Vec<T> {
    let bits = T::TYPE.bits();
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let mut out = Vec::with_capacity(n);
    let mut cur = rng.next();
    while out.len() < n {
        match shape {
            // long constant runs, longer than one header can hold
            0 => {
                let v = rng.next();
                let len = 1 + rng.below(400) as usize;
                out.extend(std::iter::repeat_n(T::from_bits(v), len));
            }
            // small random values: 1-byte varints, literal-heavy
            1 => out.push(T::from_bits(rng.below(60))),
            // full-width random values: longest varints
            2 => out.push(T::from_bits(rng.next())),
            // runs with deltas, at the type's extremes too
            3 => {
                let delta = rng.below(256) as i64 - 128;
                let len = 1 + rng.below(200);
                for k in 0..len {
                    out.push(T::from_bits(cur.wrapping_add((k as i64 * delta) as u64)));
                }
                cur = if rng.below(2) == 0 {
                    rng.next()
                } else {
                    rng.next() & 0xff
                };
            }
            // extremes and their neighbours
            _ => {
                let pick = [0, 1, mask, mask - 1, mask >> 1, (mask >> 1) + 1, rng.next()];
                out.push(T::from_bits(pick[rng.below(pick.len() as u64) as usize]));
            }
        }
    }
    out.truncate(n);
    // Values must be representable: truncate through the type and back.
    out.into_iter()
        .map(|v: T| T::from_bits(v.to_bits() & mask))
        .collect()
}

/// A stage over `vals` cut into chunks of random sizes (some empty, some of
/// one value), each an independent stream.
pub fn random_stage<T: IntElem>(rng: &mut Rng, vals: &[T]) -> (Vec<u8>, Stage) {
    let mut bytes = Vec::new();
    let mut jobs = Vec::new();
    let mut at = 0usize;
    while at < vals.len() {
        let len = match rng.below(6) {
            0 => 0,
            1 => 1,
            2 => rng.below(64) as usize,
            _ => rng.below(40_000) as usize,
        }
        .min(vals.len() - at);
        // odd padding so chunk starts take every alignment
        bytes.extend(std::iter::repeat_n(0xEEu8, rng.below(4) as usize));
        let start = bytes.len() as u64;
        bytes.extend(orc_rle_v1::encode(&vals[at..at + len]));
        jobs.push(ChunkJob {
            input: start..bytes.len() as u64,
            output_offset: at as u64,
            values: len as u64,
        });
        at += len;
    }
    let stage = Stage {
        op: StageOp::OrcRleV1(T::TYPE),
        jobs,
        output_values: vals.len() as u64,
        location: Default::default(),
    };
    (bytes, stage)
}

fn check_type<T: IntElem>(rng: &mut Rng) {
    let cpu = CpuBackend::new();
    let gpu = cuda("rle_v1_differential");
    for shape in 0..5 {
        let n = 1 + rng.below(300_000) as usize;
        let vals = values::<T>(rng, n, shape);
        let (bytes, stage) = random_stage(rng, &vals);
        let want = cpu.run_stage(&stage, &bytes).unwrap();
        want.check(&stage).unwrap();
        assert_eq!(
            want.data.typed::<T>(),
            vals.as_slice(),
            "{:?} shape {shape}",
            T::TYPE
        );
        if let Some(gpu) = gpu {
            let got = gpu.run_stage(&stage, &bytes).unwrap();
            assert_eq!(got.statuses, want.statuses, "{:?} shape {shape}", T::TYPE);
            assert!(
                got.data == want.data,
                "{:?} shape {shape}: GPU output differs from the CPU reference",
                T::TYPE
            );
        }
    }
}

#[test]
fn every_type_every_shape_matches() {
    let mut rng = Rng::fresh("every_type_every_shape_matches");
    for ty in IntType::ALL {
        warpread::with_int_type!(ty, T => check_type::<T>(&mut rng));
    }
}

#[test]
fn many_small_chunks_and_empty_stage() {
    let mut rng = Rng::fresh("many_small_chunks_and_empty_stage");
    let vals: Vec<u8> = (0..200_000).map(|_| rng.below(4) as u8).collect();
    let (bytes, jobs) = orc_rle_v1::encode_chunks(&vals, 37);
    let stage = Stage {
        op: StageOp::OrcRleV1(IntType::U8),
        jobs,
        output_values: vals.len() as u64,
        location: Default::default(),
    };
    let cpu = CpuBackend::new();
    let want = cpu.run_stage(&stage, &bytes).unwrap();
    assert_eq!(want.data.typed::<u8>(), vals.as_slice());
    let empty = Stage {
        jobs: Vec::new(),
        output_values: 0,
        ..stage.clone()
    };
    assert!(cpu.run_stage(&empty, &[]).unwrap().statuses.is_empty());
    if let Some(gpu) = cuda("many_small_chunks_and_empty_stage") {
        let got = gpu.run_stage(&stage, &bytes).unwrap();
        assert_eq!(got.statuses, want.statuses);
        assert!(got.data == want.data);
        assert!(gpu.run_stage(&empty, &[]).unwrap().statuses.is_empty());
    }
}
