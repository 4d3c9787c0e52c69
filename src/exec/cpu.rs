//! The CPU reference backend: plain Rust decoders, parallel across chunks.

use rayon::prelude::*;

use super::{Backend, HostBuffer, StageOutput};
use crate::codecs::int::IntElem;
use crate::codecs::{block, deflate, orc_byte_rle, orc_rle_v1, orc_rle_v2};
use crate::error::Result;
use crate::gsst;
use crate::plan::{ChunkJob, ChunkStatus, Stage, StageOp};

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
            op: StageOp::OrcRleV1(IntType::I64),
            jobs: vec![ChunkJob {
                input: 0..2,
                output_offset: 0,
                values: 4,
                aux: 0,
            }],
            output_values: 4,
            location: crate::error::Location::file("x.orc").with_column("a"),
        };
        let out = CpuBackend::new().run_stage(&stage, &[0x01, 0x00]).unwrap();
        let err = out.check(&stage).unwrap_err().to_string();
        assert!(
            err.contains("x.orc") && err.contains("column a") && err.contains("chunk 0"),
            "{err}"
        );
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
