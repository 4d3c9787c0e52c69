//! ORC integer RLE v1 and v2, byte RLE and boolean RLE: CUDA against the CPU
//! reference on fresh random streams of every element type and shape, and
//! CPU against the values encoded.

use warpread::codecs::int::IntElem;
use warpread::codecs::{orc_byte_rle, orc_rle_v1, orc_rle_v2};
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
            // small values with rare wide outliers (RLE v2 PATCHED_BASE)
            5 => {
                let v = if rng.below(40) == 0 {
                    rng.next()
                } else {
                    1000 + rng.below(100)
                };
                out.push(T::from_bits(v));
            }
            // monotonic with varying steps (RLE v2 DELTA with packed deltas)
            6 => {
                let len = 1 + rng.below(700);
                let down = rng.below(2) == 0;
                for _ in 0..len {
                    let bits = rng.below(20);
                    let step = rng.below(1 << bits);
                    cur = if down {
                        cur.wrapping_sub(step)
                    } else {
                        cur.wrapping_add(step)
                    };
                    out.push(T::from_bits(cur));
                }
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

/// Shapes `values` knows.
const SHAPES: u64 = 7;

/// One stream of `vals` in the encoding of `op` (an integer RLE).
fn encode<T: IntElem>(op: StageOp, vals: &[T]) -> Vec<u8> {
    match op {
        StageOp::OrcRleV1(_) => orc_rle_v1::encode(vals),
        StageOp::OrcRleV2(_) => orc_rle_v2::encode(vals),
        other => panic!("{other:?} is not an integer RLE"),
    }
}

/// A stage of `op` over `vals` cut into chunks of random sizes (some empty,
/// some of one value), each an independent stream.
pub fn random_stage<T: IntElem>(rng: &mut Rng, op: StageOp, vals: &[T]) -> (Vec<u8>, Stage) {
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
        bytes.extend(encode(op, &vals[at..at + len]));
        jobs.push(ChunkJob {
            input: start..bytes.len() as u64,
            output_offset: at as u64,
            values: len as u64,
            aux: 0,
        });
        at += len;
    }
    let stage = Stage {
        op,
        jobs,
        output_values: vals.len() as u64,
        location: Default::default(),
    };
    (bytes, stage)
}

fn check_type<T: IntElem>(rng: &mut Rng, op: StageOp) {
    let cpu = CpuBackend::new();
    let gpu = cuda("int_rle_differential");
    for shape in 0..SHAPES {
        let n = 1 + rng.below(300_000) as usize;
        let vals = values::<T>(rng, n, shape);
        let (bytes, stage) = random_stage(rng, op, &vals);
        let want = cpu.run_stage(&stage, &bytes).unwrap();
        want.check(&stage).unwrap();
        assert_eq!(
            want.data.typed::<T>(),
            vals.as_slice(),
            "{op:?} shape {shape}"
        );
        if let Some(gpu) = gpu {
            let got = gpu.run_stage(&stage, &bytes).unwrap();
            assert_eq!(got.statuses, want.statuses, "{op:?} shape {shape}");
            assert!(
                got.data == want.data,
                "{op:?} shape {shape}: GPU output differs from the CPU reference"
            );
        }
    }
}

#[test]
fn every_type_every_shape_matches() {
    let mut rng = Rng::fresh("every_type_every_shape_matches");
    for ty in IntType::ALL {
        for op in [StageOp::OrcRleV1(ty), StageOp::OrcRleV2(ty)] {
            warpread::with_int_type!(ty, T => check_type::<T>(&mut rng, op));
        }
    }
}

/// Byte RLE and boolean RLE streams of random shapes, one stream per chunk.
pub fn byte_stage(rng: &mut Rng, op: StageOp) -> (Vec<u8>, Stage, Vec<u8>) {
    let mut bytes = Vec::new();
    let mut jobs = Vec::new();
    let mut want = Vec::new();
    for _ in 0..1 + rng.below(300) {
        let n = match rng.below(4) {
            0 => rng.below(3),
            1 => rng.below(100),
            _ => rng.below(20_000),
        } as usize;
        let vals: Vec<u8> = match rng.below(3) {
            0 => (0..n).map(|_| rng.below(2) as u8).collect(),
            1 => (0..n).map(|i| (i / (1 + n / 7)) as u8 & 1).collect(),
            _ => (0..n).map(|_| rng.next() as u8).collect(),
        };
        let vals: Vec<u8> = match op {
            StageOp::OrcBoolRle => vals.iter().map(|v| v & 1).collect(),
            _ => vals,
        };
        bytes.extend(std::iter::repeat_n(0xEEu8, rng.below(4) as usize));
        let start = bytes.len() as u64;
        bytes.extend(match op {
            StageOp::OrcBoolRle => orc_byte_rle::encode_bools(&vals),
            _ => orc_byte_rle::encode(&vals),
        });
        jobs.push(ChunkJob {
            input: start..bytes.len() as u64,
            output_offset: want.len() as u64,
            values: n as u64,
            aux: 0,
        });
        want.extend(vals);
    }
    let stage = Stage {
        op,
        jobs,
        output_values: want.len() as u64,
        location: Default::default(),
    };
    (bytes, stage, want)
}

#[test]
fn byte_and_bool_rle_match() {
    let mut rng = Rng::fresh("byte_and_bool_rle_match");
    let cpu = CpuBackend::new();
    let gpu = cuda("byte_and_bool_rle_match");
    for round in 0..10 {
        let op = [StageOp::OrcByteRle, StageOp::OrcBoolRle][round % 2];
        let (bytes, stage, vals) = byte_stage(&mut rng, op);
        let want = cpu.run_stage(&stage, &bytes).unwrap();
        want.check(&stage).unwrap();
        assert_eq!(want.data.as_bytes(), vals.as_slice(), "{op:?}");
        if let Some(gpu) = gpu {
            let got = gpu.run_stage(&stage, &bytes).unwrap();
            assert_eq!(got.statuses, want.statuses, "{op:?}");
            assert!(got.data == want.data, "{op:?}: GPU output differs");
        }
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

/// Stages of different sizes from many threads at once: each thread takes
/// its own CUDA lane (stream and buffers), and no thread may see another's
/// output or statuses.
#[test]
fn concurrent_stages_from_many_threads_match() {
    let mut rng = Rng::fresh("concurrent_stages_from_many_threads_match");
    let Some(gpu) = cuda("concurrent_stages_from_many_threads_match") else {
        return;
    };
    let cpu = CpuBackend::new();
    let cases: Vec<_> = (0..24)
        .map(|i| {
            let n = 1 + rng.below(if i % 3 == 0 { 400_000 } else { 5_000 }) as usize;
            let vals = values::<i64>(&mut rng, n, i % SHAPES);
            let (bytes, stage) = random_stage(&mut rng, StageOp::OrcRleV2(IntType::I64), &vals);
            let want = cpu.run_stage(&stage, &bytes).unwrap();
            (bytes, stage, want)
        })
        .collect();
    std::thread::scope(|s| {
        for t in 0..16 {
            let cases = &cases;
            s.spawn(move || {
                for round in 0..6 {
                    let (bytes, stage, want) = &cases[(t * 7 + round * 5) % cases.len()];
                    let got = gpu.run_stage(stage, bytes).unwrap();
                    assert_eq!(got.statuses, want.statuses, "thread {t} round {round}");
                    assert!(
                        got.data == want.data,
                        "thread {t} round {round}: output differs from the CPU reference"
                    );
                }
            });
        }
    });
}
