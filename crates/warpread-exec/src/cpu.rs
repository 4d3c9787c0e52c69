//! The CPU reference backend: plain Rust decoders, parallel across chunks.

use rayon::prelude::*;

use super::{Backend, HostBuffer, StageOutput};
use crate::codecs::int::IntElem;
use crate::codecs::{block, deflate, orc_byte_rle, orc_rle_v1, orc_rle_v2};
use crate::error::Result;
use crate::gsst;
use crate::plan::{ChunkJob, ChunkStatus, Stage, StageOp, StatusCode};

/// Runs plans with the reference decoders on a rayon pool.
#[derive(Debug, Default, Clone)]
pub struct CpuBackend;

impl CpuBackend {
    /// A CPU backend on the global rayon pool.
    pub fn new() -> Self {
        Self
    }
}

/// Splits `out` into one disjoint slice per job (jobs are sorted and
/// disjoint, which `Stage::validate` has checked).
fn job_slices<'a, T>(
    jobs: &'a [ChunkJob],
    mut out: &'a mut [T],
) -> Vec<(&'a ChunkJob, &'a mut [T])> {
    let mut consumed = 0u64;
    let mut parts = Vec::with_capacity(jobs.len());
    for job in jobs {
        let skip = (job.output_offset - consumed) as usize;
        let rest = std::mem::take(&mut out);
        let (_, rest) = rest.split_at_mut(skip);
        let (mine, rest) = rest.split_at_mut(job.values as usize);
        out = rest;
        consumed = job.output_offset + job.values;
        parts.push((job, mine));
    }
    parts
}

fn run_typed<T: IntElem>(
    stage: &Stage,
    input: &[u8],
    out: &mut [u8],
    decode: fn(&[u8], &mut [T]) -> ChunkStatus,
) -> Vec<ChunkStatus> {
    job_slices(&stage.jobs, super::buffer::typed_mut::<T>(out))
        .into_par_iter()
        .map(|(job, out)| {
            decode(
                &input[job.input.start as usize..job.input.end as usize],
                out,
            )
        })
        .collect()
}

/// The CRC-32 of `bytes` (IEEE, as gzip and zlib: reflected polynomial
/// 0xEDB88320, initial value and final xor 0xFFFFFFFF), through zlib-rs
/// (`flate2::Crc`, as the GZIP page checks; its `std` feature gives it the
/// PCLMULQDQ path).
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    crc.sum()
}

/// One job of a [`StageOp::Crc32`] stage: the CRC-32 of `input` into
/// `out`, which must hold exactly one element (the job's `values`). An
/// empty slot is `OutputOverflow` at byte 0, more than one is `OutputShort`
/// at the end of the input; nothing is written then (`kernels/crc32.cu`
/// reports the same).
pub(crate) fn crc32_job(input: &[u8], out: &mut [u32]) -> ChunkStatus {
    match out {
        [] => ChunkStatus::failed(StatusCode::OutputOverflow, 0, 0),
        [slot] => {
            *slot = crc32(input);
            ChunkStatus::ok(1)
        }
        _ => ChunkStatus::failed(StatusCode::OutputShort, input.len() as u64, 0),
    }
}

impl CpuBackend {
    /// Runs `stage` (validated by the caller) into `out`, which holds
    /// `stage.output_bytes()` bytes, 8-byte aligned, zero wherever no job
    /// writes; returns the jobs' statuses. The CUDA backend runs its ops
    /// without a kernel through this, into pinned blocks.
    pub(crate) fn run_into(&self, stage: &Stage, input: &[u8], out: &mut [u8]) -> Vec<ChunkStatus> {
        match stage.op {
            StageOp::OrcRleV1(ty) => crate::with_int_type!(ty, T => {
                run_typed::<T>(stage, input, out, orc_rle_v1::decode::<T>)
            }),
            StageOp::OrcRleV2(ty) => crate::with_int_type!(ty, T => {
                run_typed::<T>(stage, input, out, orc_rle_v2::decode::<T>)
            }),
            StageOp::OrcByteRle => run_typed::<u8>(stage, input, out, orc_byte_rle::decode),
            StageOp::OrcBoolRle => run_typed::<u8>(stage, input, out, orc_byte_rle::decode_bools),
            StageOp::Inflate => run_typed::<u8>(stage, input, out, deflate::inflate),
            StageOp::Crc32 => run_typed::<u32>(stage, input, out, crc32_job),
            StageOp::Gsst(layout) => job_slices(&stage.jobs, out)
                .into_par_iter()
                .map(|(job, out)| {
                    gsst::decode_block(
                        &input[job.input.start as usize..job.input.end as usize],
                        job.input.start,
                        layout,
                        out,
                    )
                })
                .collect(),
            StageOp::Huffman(_) => job_slices(&stage.jobs, out)
                .into_par_iter()
                .map(|(job, out)| {
                    crate::codecs::huffman::decode_block(
                        &input[job.input.start as usize..job.input.end as usize],
                        job.input.start,
                        job.aux,
                        out,
                    )
                })
                .collect(),
            StageOp::Decompress(codec) => job_slices(&stage.jobs, out)
                .into_par_iter()
                .map(|(job, out)| {
                    block::decompress(
                        codec,
                        &input[job.input.start as usize..job.input.end as usize],
                        out,
                    )
                })
                .collect(),
            StageOp::Parquet(op) => {
                // Parquet decoders write bytes: scale the jobs' outputs.
                let w = op.output_width() as u64;
                let bytes: Vec<ChunkJob> = (stage.jobs.iter())
                    .map(|j| ChunkJob {
                        input: j.input.clone(),
                        output_offset: j.output_offset * w,
                        values: j.values * w,
                        aux: j.aux,
                    })
                    .collect();
                job_slices(&bytes, out)
                    .into_par_iter()
                    .map(|(job, out)| {
                        let input = &input[job.input.start as usize..job.input.end as usize];
                        crate::codecs::parquet_ops::decode(op, input, job.aux, out)
                    })
                    .collect()
            }
        }
    }
}

/// Inflates the jobs of an `Inflate` stage into their slots of `out` (the
/// whole stage output; jobs sorted and disjoint, as `Stage::validate`
/// checks; each slot zeroed first, nothing outside the slots written) on
/// up to `threads` threads of the caller's own, not rayon's
/// (`exec::threads`): the CUDA backend runs its host share so while it
/// holds a lane, and a rayon worker joining parallel work there could pick
/// up a task that waits for a lane itself. Returns the statuses in job
/// order.
pub(crate) fn inflate_on_threads(
    jobs: &[ChunkJob],
    input: &[u8],
    out: &mut [u8],
    threads: usize,
) -> Vec<ChunkStatus> {
    super::threads::map(job_slices(jobs, out), threads, |(job, slot)| {
        // A job may write less than its slot (a stream's last chunk), and
        // the caller's buffer may hold old bytes.
        slot.fill(0);
        let r = job.input.start as usize..job.input.end as usize;
        deflate::inflate(&input[r], slot)
    })
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn describe(&self) -> String {
        format!("cpu ({} threads)", rayon::current_num_threads())
    }

    fn reads_host_input(&self, _op: &StageOp) -> bool {
        true
    }

    fn run_stage(&self, stage: &Stage, input: &[u8]) -> Result<StageOutput> {
        stage.validate(input.len() as u64)?;
        let mut data = HostBuffer::try_zeroed(stage.output_bytes())?;
        let statuses = self.run_into(stage, input, data.as_bytes_mut());
        Ok(StageOutput { data, statuses })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Location;
    use crate::plan::IntType;

    #[test]
    fn decodes_chunks_in_parallel_with_gaps() {
        let vals: Vec<u32> = (0..5000).map(|i| i / 3).collect();
        let (bytes, mut jobs) = orc_rle_v1::encode_chunks(&vals, 700);
        // Leave a gap of 10 untouched elements before the last chunk.
        let last = jobs.last_mut().unwrap();
        last.output_offset += 10;
        let stage = Stage {
            op: StageOp::OrcRleV1(IntType::U32),
            jobs,
            output_values: vals.len() as u64 + 10,
            location: Location::default(),
        };
        let out = CpuBackend::new().run_stage(&stage, &bytes).unwrap();
        out.check(&stage).unwrap();
        let got = out.data.typed::<u32>();
        let split = 7 * 700;
        assert_eq!(&got[..split], &vals[..split]);
        assert!(got[split..split + 10].iter().all(|&x| x == 0));
        assert_eq!(&got[split + 10..], &vals[split..]);
    }

    #[test]
    fn corrupt_chunk_is_reported_with_location() {
        let stage = Stage {
            location: crate::error::Location::file("x.orc").with_column("a"),
            ..Stage::single(StageOp::OrcRleV1(IntType::I64), 0..2, 4)
        };
        let out = CpuBackend::new().run_stage(&stage, &[0x01, 0x00]).unwrap();
        let err = out.check(&stage).unwrap_err().to_string();
        assert!(
            err.contains("x.orc") && err.contains("column a") && err.contains("chunk 0"),
            "{err}"
        );
    }

    /// Bit at a time, from the definition: the reference for `crc32`.
    fn crc32_bitwise(bytes: &[u8]) -> u32 {
        let mut r = u32::MAX;
        for &b in bytes {
            r ^= u32::from(b);
            for _ in 0..8 {
                r = (r >> 1) ^ (0xEDB8_8320 & (r & 1).wrapping_neg());
            }
        }
        !r
    }

    #[test]
    fn crc32_known_vectors() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b"a"), 0xE8B7_BE43);
        assert_eq!(
            crc32(b"The quick brown fox jumps over the lazy dog"),
            0x414F_A339
        );
        assert_eq!(crc32(&[0u8; 32]), 0x190A_55AD);
        assert_eq!(crc32(&[0xFFu8; 32]), 0xFF6C_AB0B);
    }

    #[test]
    fn crc32_matches_the_definition_on_random_data() {
        let mut next = crate::testing::xorshift(0x5eed_c3c2);
        let data: Vec<u8> = (0..70_000).map(|_| next() as u8).collect();
        for len in [
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
            255,
            4096 + 7,
            65_537,
        ] {
            let at = (next() % 1000) as usize;
            let bytes = &data[at..at + len];
            assert_eq!(crc32(bytes), crc32_bitwise(bytes), "{len} bytes at {at}");
        }
    }

    #[test]
    fn crc32_stage_gives_one_value_per_job() {
        let mut next = crate::testing::xorshift(77);
        let input: Vec<u8> = (0..300_000).map(|_| next() as u8).collect();
        // (start, len, output offset, values): gaps in the output, jobs that
        // share input bytes, empty jobs, and jobs asking for 0 or 2 values.
        let spec = [
            (0u64, 0u64, 0u64, 1u64),
            (3, 9, 1, 1),
            (1, 200_000, 3, 1),
            (7, 1, 4, 1),
            (100, 5, 5, 0),
            (100, 5, 5, 2),
            (299_999, 1, 7, 1),
            (123, 176_001, 8, 1),
        ];
        let jobs: Vec<ChunkJob> = spec
            .iter()
            .map(|&(start, len, output_offset, values)| ChunkJob {
                input: start..start + len,
                output_offset,
                values,
                aux: 0,
            })
            .collect();
        let stage = Stage {
            op: StageOp::Crc32,
            jobs,
            output_values: 9,
            location: Location::default(),
        };
        assert_eq!(stage.output_bytes(), 36);
        let out = CpuBackend::new().run_stage(&stage, &input).unwrap();
        let got = out.data.typed::<u32>();
        for (i, (job, st)) in stage.jobs.iter().zip(&out.statuses).enumerate() {
            let bytes = &input[job.input.start as usize..job.input.end as usize];
            match job.values {
                1 => {
                    assert_eq!(*st, ChunkStatus::ok(1), "job {i}");
                    let want = crc32_bitwise(bytes);
                    assert_eq!(got[job.output_offset as usize], want, "job {i}");
                }
                0 => assert_eq!(
                    *st,
                    ChunkStatus::failed(StatusCode::OutputOverflow, 0, 0),
                    "job {i}"
                ),
                _ => assert_eq!(
                    *st,
                    ChunkStatus::failed(StatusCode::OutputShort, 5, 0),
                    "job {i}"
                ),
            }
        }
        // The slots of the failed jobs and the gap stay zero.
        assert_eq!(got[2], 0);
        assert_eq!(&got[5..7], &[0, 0]);
        assert!(out.check(&stage).is_err());
        assert_eq!(StageOp::Crc32.name(), "crc32");
    }

    #[test]
    fn inflating_on_threads_of_its_own_equals_the_stage() {
        // Chunks of varied sizes, one of them cut short, with spare output.
        let mut bytes = Vec::new();
        let mut jobs = Vec::new();
        let mut at = 0u64;
        for i in 0..40u64 {
            let raw: Vec<u8> = (0..(i * 977 % 20_000) as usize)
                .map(|k| (k % 251) as u8 ^ (k / 7) as u8)
                .collect();
            let mut z = deflate::deflate(&raw, 6);
            if i == 17 {
                z.truncate(z.len() / 2);
            }
            let start = bytes.len() as u64;
            bytes.extend_from_slice(&z);
            jobs.push(ChunkJob {
                input: start..bytes.len() as u64,
                output_offset: at,
                values: raw.len() as u64 + 3,
                aux: 0,
            });
            at += raw.len() as u64 + 3;
        }
        let stage = Stage {
            op: StageOp::Inflate,
            jobs,
            output_values: at,
            location: Location::default(),
        };
        let want = CpuBackend::new().run_stage(&stage, &bytes).unwrap();
        assert!(!want.statuses[17].is_ok());
        for threads in [1, 3, 8, 100] {
            // Old bytes everywhere: every slot is zeroed before it is written
            // (the jobs here leave no gaps between slots).
            let mut out = vec![0xA5u8; at as usize];
            let st = inflate_on_threads(&stage.jobs, &bytes, &mut out, threads);
            assert_eq!(st, want.statuses, "{threads} threads");
            assert_eq!(out.as_slice(), want.data.as_bytes(), "{threads} threads");
        }
    }
}
