//! Speculative parallel inflate on the device: the long streams of an
//! inflate stage with few streams are cut into spans that many warps
//! decode at once (`kernels/inflate_span.cu`), instead of one warp per
//! stream. The host keeps the books between kernels with the same
//! [`Speculation`] the CPU version uses: find candidate block starts
//! (one kernel), decode every span (one kernel per round), chain the spans
//! and pick the ones to redo on the host from their results, then replace
//! the markers (one kernel per stream). A stream the spans cannot cut (a
//! block larger than a slot, too many rounds) is inflated on the host; its
//! bytes are then uploaded into its slot.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, CudaView, LaunchConfig, PushKernelArg};

use super::as_bytes;
use crate::error::{Error, Result};
use crate::gpu::launch::{SPAN_TAIL_THREADS, SPAN_THREADS, SPAN_WARPS};
use crate::gpu::options::{SPAN_MAX_JOBS, SPAN_MIN_SPANS};
use crate::gpu::{DeviceScratch, GpuRuntime, PinnedScratch, kernels};
use crate::plan::{ChunkStatus, Stage, StageOp, StatusCode};
use warpread_codecs::deflate;
use warpread_codecs::deflate::span::{NO_STOP, SpanResult, WINDOW};
use warpread_codecs::deflate::speculative::{SpanOptions, Speculation, Walk};

/// Parallel rounds of resolving the spans' tails before the sequential
/// kernel takes over (`inflate_resolve_tails_round`).
const TAIL_ROUNDS: usize = 4;

/// A stream of the stage input; mirrors `span::Job` in the kernel.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct DeviceJob {
    in_off: u64,
    in_len: u64,
}

/// A span to decode; mirrors `span::Task` in the kernel.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct DeviceTask {
    start_bit: u64,
    stop_bit: u64,
    stop_key: u64,
    slot_at: u64,
    slot_len: u64,
    job: u32,
    first: u32,
}

/// The jobs of `stage` to inflate in spans: none unless it is an inflate
/// stage of fewer than [`SPAN_MAX_JOBS`] streams; then those of at least
/// [`SpanOptions::min_stream_bytes`] and [`SPAN_MIN_SPANS`] spans.
pub(super) fn pick(stage: &Stage, options: Option<&SpanOptions>) -> Vec<usize> {
    let Some(o) = options else {
        return Vec::new();
    };
    if stage.op != StageOp::Inflate || stage.jobs.len() >= SPAN_MAX_JOBS {
        return Vec::new();
    }
    (0..stage.jobs.len())
        .filter(|&i| {
            let r = &stage.jobs[i].input;
            let len = r.end - r.start;
            len >= o.min_stream_bytes && o.spans(len) >= SPAN_MIN_SPANS
        })
        .collect()
}

/// A lane's buffers for span inflate, kept across stages.
#[derive(Default)]
pub(super) struct SpanScratch {
    jobs: DeviceScratch,
    span_job: DeviceScratch,
    span_bit: DeviceScratch,
    found: DeviceScratch,
    tasks: DeviceScratch,
    results: DeviceScratch,
    symbols: DeviceScratch,
    chain_slot: DeviceScratch,
    chain_start: DeviceScratch,
    errors: DeviceScratch,
    pending: DeviceScratch,
    pinned_up: PinnedScratch,
    pinned_down: PinnedScratch,
}

impl SpanScratch {
    /// Device bytes its buffers hold.
    pub(super) fn device_bytes(&self) -> usize {
        [
            &self.jobs,
            &self.span_job,
            &self.span_bit,
            &self.found,
            &self.tasks,
            &self.results,
            &self.symbols,
            &self.chain_slot,
            &self.chain_start,
            &self.errors,
            &self.pending,
        ]
        .iter()
        .map(|b| b.bytes())
        .sum()
    }
}

/// Where one stream stands.
enum State {
    Decoding,
    Chained(usize),
    Failed(ChunkStatus),
    Host,
}

/// One stream's books.
struct Stream {
    spec: Speculation,
    /// First symbol of its slots in the scratch, and symbols per slot.
    symbols_at: u64,
    slot_len: u64,
    state: State,
}

/// What a stage's span-inflated jobs need from the lane.
pub(super) struct SpanRun<'a> {
    pub(super) rt: &'a GpuRuntime,
    pub(super) stream: &'a Arc<CudaStream>,
    pub(super) scratch: &'a mut SpanScratch,
}

fn cuda_err(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> Error {
    move |e| Error::cuda(what, e)
}

impl SpanRun<'_> {
    fn upload(
        &mut self,
        which: fn(&mut SpanScratch) -> &mut DeviceScratch,
        bytes: &[u8],
    ) -> Result<()> {
        let ctx = self.stream.context().clone();
        let err = cuda_err("copying span tasks to the device");
        let mut pinned = std::mem::take(&mut self.scratch.pinned_up);
        let copied = (|| -> Result<()> {
            let host = pinned.get(&ctx, bytes.len())?;
            host.as_mut_slice().map_err(&err)?[..bytes.len()].copy_from_slice(bytes);
            let dev = which(self.scratch).get(self.stream, bytes.len())?;
            self.stream
                .memcpy_htod(
                    &host.as_slice().map_err(&err)?[..bytes.len()],
                    &mut dev.slice_mut(..bytes.len()),
                )
                .map_err(&err)?;
            // The pinned buffer is rewritten by the next upload.
            self.stream.synchronize().map_err(&err)
        })();
        self.scratch.pinned_up = pinned;
        copied
    }

    fn download(
        &mut self,
        which: fn(&mut SpanScratch) -> &mut DeviceScratch,
        n: usize,
    ) -> Result<Vec<u8>> {
        let ctx = self.stream.context().clone();
        let err = cuda_err("running the span inflate kernels");
        let mut pinned = std::mem::take(&mut self.scratch.pinned_down);
        let copied = (|| -> Result<Vec<u8>> {
            let dev = which(self.scratch).get(self.stream, n)?;
            let host = pinned.get(&ctx, n)?;
            self.stream
                .memcpy_dtoh(
                    &dev.slice(..n),
                    &mut host.as_mut_slice().map_err(&err)?[..n],
                )
                .map_err(&err)?;
            self.stream.synchronize().map_err(&err)?;
            Ok(host.as_slice().map_err(&err)?[..n].to_vec())
        })();
        self.scratch.pinned_down = pinned;
        copied
    }

    fn launch_cfg(blocks: u32, threads: u32) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (blocks.max(1), 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// Inflates `stage`'s jobs (all of them long streams of the stage
    /// input, which `input` holds on the device and `host_input` on the
    /// host) into their slots of `output` (the stage's device output,
    /// zeroed); returns their statuses.
    pub(super) fn run(
        &mut self,
        stage: &Stage,
        host_input: &[u8],
        input: &CudaView<'_, u8>,
        output: &mut CudaSlice<u8>,
        options: &SpanOptions,
    ) -> Result<Vec<ChunkStatus>> {
        let t0 = std::time::Instant::now();
        let find = self
            .rt
            .function(&kernels::INFLATE_SPAN, "inflate_find_block_starts")?;
        let decode = self
            .rt
            .function(&kernels::INFLATE_SPAN, "inflate_decode_spans")?;
        let resolve = self
            .rt
            .function(&kernels::INFLATE_SPAN, "inflate_resolve_markers")?;
        let tails = self
            .rt
            .function(&kernels::INFLATE_SPAN, "inflate_resolve_tails")?;
        let tails_round = self
            .rt
            .function(&kernels::INFLATE_SPAN, "inflate_resolve_tails_round")?;
        let jobs: Vec<DeviceJob> = stage
            .jobs
            .iter()
            .map(|j| DeviceJob {
                in_off: j.input.start,
                in_len: j.input.end - j.input.start,
            })
            .collect();
        let stream_bytes = |j: usize| {
            &host_input[jobs[j].in_off as usize..(jobs[j].in_off + jobs[j].in_len) as usize]
        };
        self.upload(|s| &mut s.jobs, as_bytes(&jobs))?;

        // 1. Candidate block starts of every span after each stream's first.
        let span_bits = 8 * options.span_bytes.max(1024);
        let mut span_job: Vec<u32> = Vec::new();
        let mut span_bit: Vec<u64> = Vec::new();
        for (j, job) in jobs.iter().enumerate() {
            for s in 1..options.spans(job.in_len) {
                span_job.push(j as u32);
                span_bit.push(s * span_bits);
            }
        }
        let n_spans = span_job.len();
        let found = if n_spans == 0 {
            Vec::new()
        } else {
            self.upload(|s| &mut s.span_job, as_bytes(&span_job))?;
            self.upload(|s| &mut s.span_bit, as_bytes(&span_bit))?;
            let s = &mut *self.scratch;
            let (jd, sj, sb) = (
                s.jobs.get(self.stream, 0)?,
                s.span_job.get(self.stream, 0)?,
                s.span_bit.get(self.stream, 0)?,
            );
            let out = s.found.get(self.stream, 8 * n_spans)?;
            let n = n_spans as u32;
            let mut b = self.stream.launch_builder(&find);
            b.arg(input)
                .arg(&*jd)
                .arg(&*sj)
                .arg(&*sb)
                .arg(&n)
                .arg(&span_bits)
                .arg(&mut *out);
            // SAFETY: the arguments match `inflate_find_block_starts`; the
            // job and span tables were uploaded above with `n` spans, each
            // of a job whose input range lies inside `input` (the stage was
            // validated), and `found` holds `n` u64s.
            unsafe { b.launch(Self::launch_cfg(n, SPAN_THREADS)) }
                .map_err(cuda_err("launching the block finder"))?;
            let bytes = self.download(|s| &mut s.found, 8 * n_spans)?;
            bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect()
        };

        let t_find = t0.elapsed();
        // 2. The books of each stream, and its slots in the scratch.
        let mut streams: Vec<Stream> = Vec::with_capacity(jobs.len());
        let mut at = 0usize;
        let mut symbols = 0u64;
        for (j, job) in jobs.iter().enumerate() {
            let spans = options.spans(job.in_len);
            let mut cands = vec![None];
            for &f in &found[at..at + (spans - 1) as usize] {
                cands.push((f != NO_STOP).then_some(f));
            }
            at += (spans - 1) as usize;
            let slots = options.slots(spans);
            let slot_len = options.slot_symbols(stage.jobs[j].values, spans);
            streams.push(Stream {
                spec: Speculation::new(stream_bytes(j), &cands, slots as u32),
                symbols_at: symbols,
                slot_len,
                state: State::Decoding,
            });
            symbols += slots * slot_len;
        }
        self.scratch
            .symbols
            .get(self.stream, 2 * symbols as usize)?;

        // 3. Rounds: decode the tasks that need it, then walk each chain.
        let mut todo: Vec<(usize, usize)> = streams
            .iter()
            .enumerate()
            .flat_map(|(j, s)| (0..s.spec.tasks.len()).map(move |t| (j, t)))
            .collect();
        let mut rounds = 0u32;
        let mut decoded = Vec::new();
        while !todo.is_empty() {
            decoded.push(todo.len());
            let tasks: Vec<DeviceTask> = todo
                .iter()
                .map(|&(j, t)| {
                    let s = &streams[j];
                    let task = s.spec.tasks[t];
                    DeviceTask {
                        start_bit: task.start_bit,
                        stop_bit: task.stop_bit,
                        stop_key: task.stop_key,
                        slot_at: s.symbols_at + u64::from(task.slot) * s.slot_len,
                        slot_len: s.slot_len,
                        job: j as u32,
                        first: task.first,
                    }
                })
                .collect();
            self.upload(|s| &mut s.tasks, as_bytes(&tasks))?;
            let n = tasks.len() as u32;
            {
                let s = &mut *self.scratch;
                let (jd, td) = (s.jobs.get(self.stream, 0)?, s.tasks.get(self.stream, 0)?);
                let res = s.results.get(self.stream, 32 * tasks.len())?;
                let sym = s.symbols.get(self.stream, 0)?;
                let mut b = self.stream.launch_builder(&decode);
                b.arg(input)
                    .arg(&*jd)
                    .arg(&*td)
                    .arg(&n)
                    .arg(&mut *sym)
                    .arg(&mut *res);
                // SAFETY: the arguments match `inflate_decode_spans`; every
                // task's slot lies inside the symbol scratch sized above,
                // and `results` holds `n` results of 32 bytes.
                unsafe { b.launch(Self::launch_cfg(n.div_ceil(SPAN_WARPS), 32 * SPAN_WARPS)) }
                    .map_err(cuda_err("launching the span decoder"))?;
            }
            let bytes = self.download(|s| &mut s.results, 32 * tasks.len())?;
            for (&(j, t), c) in todo.iter().zip(bytes.chunks_exact(32)) {
                streams[j].spec.results[t] = parse_result(c);
            }
            let mut decoding: Vec<usize> = todo.iter().map(|&(j, _)| j).collect();
            decoding.dedup();
            todo.clear();
            for j in decoding {
                let s = &mut streams[j];
                match s.spec.walk(stream_bytes(j)) {
                    Walk::Done { count } => s.state = State::Chained(count),
                    Walk::Redo(ids) if rounds < options.max_rounds => {
                        todo.extend(ids.into_iter().map(|t| (j, t)));
                    }
                    Walk::Redo(_) | Walk::Sequential => s.state = State::Host,
                    Walk::Failed { code, task } => {
                        let (_, before) = s.spec.offsets(task);
                        let r = s.spec.results[task];
                        s.state = State::Failed(ChunkStatus::failed(
                            code,
                            r.end_bit / 8,
                            before + r.produced,
                        ));
                    }
                }
            }
            rounds += 1;
        }

        let t_decode = t0.elapsed();
        // 4. Markers replaced, stream by stream, into the output slots.
        let mut statuses = vec![ChunkStatus::PENDING; jobs.len()];
        let mut chain_slot: Vec<u64> = Vec::new();
        let mut chain_start: Vec<u64> = Vec::new();
        let mut chained: Vec<(usize, usize, usize, u64)> = Vec::new();
        for (j, s) in streams.iter().enumerate() {
            let capacity = stage.jobs[j].values;
            match s.state {
                State::Chained(count) => {
                    let (starts, total) = s.spec.offsets(count);
                    if total > capacity {
                        statuses[j] = ChunkStatus::failed(
                            StatusCode::OutputOverflow,
                            jobs[j].in_len,
                            capacity,
                        );
                        continue;
                    }
                    chained.push((j, chain_slot.len(), count, total));
                    chain_slot.extend(
                        s.spec.tasks[..count]
                            .iter()
                            .map(|t| s.symbols_at + u64::from(t.slot) * s.slot_len),
                    );
                    chain_start.extend(starts);
                }
                State::Failed(st) => statuses[j] = st,
                State::Host => {
                    let mut buf = vec![0u8; capacity as usize];
                    statuses[j] = deflate::inflate(stream_bytes(j), &mut buf);
                    let at = stage.jobs[j].output_offset as usize;
                    self.stream
                        .memcpy_htod(&buf, &mut output.slice_mut(at..at + buf.len()))
                        .map_err(cuda_err("copying host-inflated bytes to the device"))?;
                    self.stream
                        .synchronize()
                        .map_err(cuda_err("copying host-inflated bytes to the device"))?;
                }
                State::Decoding => unreachable!("every stream leaves the rounds decided"),
            }
        }
        if !chained.is_empty() {
            self.upload(|s| &mut s.chain_slot, as_bytes(&chain_slot))?;
            self.upload(|s| &mut s.chain_start, as_bytes(&chain_start))?;
            let zeros = vec![0u32; chained.len()];
            self.upload(|s| &mut s.errors, as_bytes(&zeros))?;
            for (e, &(j, first, count, total)) in chained.iter().enumerate() {
                let at = stage.jobs[j].output_offset as usize;
                let mut tail_rounds = 0;
                let n = count as u32;
                let chain = 8 * first..8 * (first + count);
                // The tails: parallel rounds while few hops remain, else
                // span after span.
                let mut sequential = true;
                for round in 0..TAIL_ROUNDS {
                    tail_rounds = tail_rounds.max(round + 1);
                    self.upload(|s| &mut s.pending, as_bytes(&[0u32]))?;
                    {
                        let s = &mut *self.scratch;
                        let sym = s.symbols.get(self.stream, 0)?;
                        let slot_view = s.chain_slot.get(self.stream, 0)?.slice(chain.clone());
                        let start_view = s.chain_start.get(self.stream, 0)?.slice(chain.clone());
                        let pending = s.pending.get(self.stream, 4)?;
                        let mut err_view =
                            s.errors.get(self.stream, 0)?.slice_mut(4 * e..4 * e + 4);
                        let blocks = (u64::from(n) * WINDOW)
                            .div_ceil(u64::from(SPAN_THREADS))
                            .clamp(1, 65_536) as u32;
                        let mut b = self.stream.launch_builder(&tails_round);
                        b.arg(&mut *sym)
                            .arg(&slot_view)
                            .arg(&start_view)
                            .arg(&n)
                            .arg(&total)
                            .arg(&mut *pending)
                            .arg(&mut err_view);
                        // SAFETY: the arguments match `inflate_resolve_tails_round`;
                        // the chain's `count` slots and starts were uploaded
                        // above and its symbols lie in their slots.
                        unsafe { b.launch(Self::launch_cfg(blocks, SPAN_THREADS)) }
                            .map_err(cuda_err("launching the marker resolution"))?;
                    }
                    if self.download(|s| &mut s.pending, 4)? == [0; 4] {
                        sequential = false;
                        break;
                    }
                }
                let s = &mut *self.scratch;
                let sym = s.symbols.get(self.stream, 0)?;
                let slot_view = s.chain_slot.get(self.stream, 0)?.slice(chain.clone());
                let start_view = s.chain_start.get(self.stream, 0)?.slice(chain.clone());
                let mut err_view = s.errors.get(self.stream, 0)?.slice_mut(4 * e..4 * e + 4);
                tracing::debug!(tail_rounds, sequential, "span inflate: tails resolved");
                if sequential {
                    let mut b = self.stream.launch_builder(&tails);
                    b.arg(&mut *sym)
                        .arg(&slot_view)
                        .arg(&start_view)
                        .arg(&n)
                        .arg(&total)
                        .arg(&mut err_view);
                    // SAFETY: the arguments match `inflate_resolve_tails`,
                    // as for the rounds above.
                    unsafe { b.launch(Self::launch_cfg(1, SPAN_TAIL_THREADS)) }
                        .map_err(cuda_err("launching the marker resolution"))?;
                }
                let mut out_view = output.slice_mut(at..at + total as usize);
                let blocks = total.div_ceil(u64::from(SPAN_THREADS)).clamp(1, 65_536) as u32;
                let mut b = self.stream.launch_builder(&resolve);
                b.arg(&*sym)
                    .arg(&slot_view)
                    .arg(&start_view)
                    .arg(&n)
                    .arg(&total)
                    .arg(&mut out_view)
                    .arg(&mut err_view);
                // SAFETY: the arguments match `inflate_resolve_markers`; the
                // output view holds `total` bytes (at most the job's
                // capacity).
                unsafe { b.launch(Self::launch_cfg(blocks, SPAN_THREADS)) }
                    .map_err(cuda_err("launching the marker resolution"))?;
            }
        }
        let errors = if chained.is_empty() {
            Vec::new()
        } else {
            self.download(|s| &mut s.errors, 4 * chained.len())?
        };
        tracing::debug!(
            streams = jobs.len(),
            spans = n_spans + jobs.len(),
            found = found.iter().filter(|&&f| f != NO_STOP).count(),
            tasks_per_round = ?decoded,
            largest_span = streams
                .iter()
                .flat_map(|s| s.spec.results.iter().map(|r| r.produced))
                .max()
                .unwrap_or(0),
            find_ms = t_find.as_secs_f64() * 1e3,
            decode_ms = (t_decode - t_find).as_secs_f64() * 1e3,
            resolve_ms = (t0.elapsed() - t_decode).as_secs_f64() * 1e3,
            "span inflate on the device"
        );
        for (e, &(j, _, _, total)) in chained.iter().enumerate() {
            let bad = errors[4 * e..4 * e + 4] != [0; 4];
            statuses[j] = if bad {
                ChunkStatus::failed(StatusCode::InputCorrupt, jobs[j].in_len, total)
            } else {
                ChunkStatus::ok(total)
            };
        }
        Ok(statuses)
    }
}

fn parse_result(c: &[u8]) -> SpanResult {
    let u64_at = |i: usize| u64::from_le_bytes(c[i..i + 8].try_into().expect("8 bytes"));
    let u32_at = |i: usize| u32::from_le_bytes(c[i..i + 4].try_into().expect("4 bytes"));
    SpanResult {
        end_bit: u64_at(0),
        end_key: u64_at(8),
        produced: u64_at(16),
        end: u32_at(24),
        capped: u32_at(28),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ChunkJob;

    #[test]
    fn the_device_structs_have_the_kernels_layout() {
        assert_eq!(std::mem::size_of::<DeviceJob>(), 16);
        assert_eq!(std::mem::size_of::<DeviceTask>(), 48);
        assert_eq!(std::mem::size_of::<SpanResult>(), 32);
        let r = SpanResult {
            end_bit: 1,
            end_key: 2,
            produced: 3,
            end: 4,
            capped: 5,
        };
        assert_eq!(parse_result(as_bytes(std::slice::from_ref(&r))), r);
    }

    #[test]
    fn only_long_streams_of_stages_with_few_streams_are_cut() {
        let job = |len: u64| ChunkJob {
            input: 0..len,
            output_offset: 0,
            values: 4 * len,
            aux: 0,
        };
        let o = SpanOptions::default()
            .with_span_bytes(64 * 1024)
            .with_min_stream_bytes(0);
        let stage = |jobs: Vec<ChunkJob>| Stage {
            op: StageOp::Inflate,
            output_values: 0,
            jobs,
            location: Default::default(),
        };
        let s = stage(vec![job(1 << 20), job(100_000), job(4 * 64 * 1024)]);
        assert_eq!(pick(&s, Some(&o)), vec![0, 2]);
        assert!(pick(&s, None).is_empty());
        let long_only = o.with_min_stream_bytes(1 << 20);
        assert_eq!(pick(&s, Some(&long_only)), vec![0]);
        let many = stage(vec![job(1 << 20); SPAN_MAX_JOBS]);
        assert!(pick(&many, Some(&o)).is_empty());
    }
}
