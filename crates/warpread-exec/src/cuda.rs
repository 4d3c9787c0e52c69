//! The CUDA backend: stages run as CODAG kernels, one warp per chunk job.
//!
//! Inputs are staged through pinned host memory; device and pinned buffers
//! are kept and reused across calls. Every status starts as `Pending`, so a
//! job a kernel failed to reach can never read as success.
//!
//! Stages from different threads (DataFusion partitions, files read in
//! parallel) run on separate lanes, each a stream with its own buffers, so
//! one thread's transfers overlap another's kernels instead of queueing
//! behind a single lock.

use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex};

use rayon::prelude::*;

use cudarc::driver::{
    CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtrMut, LaunchConfig, PushKernelArg,
};

use super::{Backend, HostBuffer, StageOutput};
use crate::error::{Error, Result};
pub use crate::gpu::{CudaOptions, SyncMode};
use crate::gpu::{
    DeviceScratch, GpuRuntime, PinnedBlock, PinnedPool, PinnedScratch, kernels, launch,
};
use crate::plan::{ChunkStatus, JobDesc, Stage, StageOp};

/// Where a CUDA backend's time went, summed over every stage it ran on all
/// its lanes (so seconds are thread-seconds, which overlap):
/// the GPU host has no profiler, and a read's stage times alone do not say
/// whether transfers, kernels or host copies bound it.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Profile {
    /// Stages run.
    pub stages: u64,
    /// Waiting for a free lane.
    pub wait_s: f64,
    /// Copying inputs into pinned memory.
    pub fill_s: f64,
    /// Upload, kernel and download, until the stream is done.
    pub device_s: f64,
    /// Copying outputs out of pinned memory.
    pub drain_s: f64,
    /// Input bytes uploaded.
    pub bytes_in: u64,
    /// Output bytes downloaded.
    pub bytes_out: u64,
    /// Input bytes read from device mirrors instead of uploaded.
    pub bytes_mirrored: u64,
    /// Of `device_s`, by CUDA events on the lanes' streams: input staging
    /// and upload (with the job table), kernels, and output download.
    pub upload_s: f64,
    /// Kernel time (CUDA events), summed over lanes.
    pub kernel_s: f64,
    /// Output and status download time (CUDA events).
    pub download_s: f64,
    /// Deflate streams inflated in spans by many warps (`span_inflate`)
    /// rather than one warp each.
    pub span_streams: u64,
}

impl Profile {
    /// What was spent between `earlier` and `self`, divided by `runs`.
    pub fn since(&self, earlier: &Profile, runs: usize) -> Profile {
        let n = runs.max(1) as f64;
        let per = |a: u64, b: u64| ((a - b) as f64 / n) as u64;
        Profile {
            stages: per(self.stages, earlier.stages),
            wait_s: (self.wait_s - earlier.wait_s) / n,
            fill_s: (self.fill_s - earlier.fill_s) / n,
            device_s: (self.device_s - earlier.device_s) / n,
            drain_s: (self.drain_s - earlier.drain_s) / n,
            bytes_in: per(self.bytes_in, earlier.bytes_in),
            bytes_out: per(self.bytes_out, earlier.bytes_out),
            bytes_mirrored: per(self.bytes_mirrored, earlier.bytes_mirrored),
            upload_s: (self.upload_s - earlier.upload_s) / n,
            kernel_s: (self.kernel_s - earlier.kernel_s) / n,
            download_s: (self.download_s - earlier.download_s) / n,
            span_streams: per(self.span_streams, earlier.span_streams),
        }
    }
}

/// One operation's stages, summed over every stage of it a backend ran
/// (or, from [`OpProfile::per_run`], per run of a benchmark).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OpProfile {
    /// The operation's name (`StageOp::name`).
    pub name: String,
    /// Stages run.
    pub stages: f64,
    /// Kernel time, CUDA events.
    pub kernel_s: f64,
    /// Input bytes uploaded (not read from a device mirror).
    pub bytes_in: f64,
}

impl OpProfile {
    /// What `after` added to `before` (per operation), divided by `runs`,
    /// most kernel time first; operations that did not run are left out.
    pub fn per_run(before: &[OpProfile], after: &[OpProfile], runs: usize) -> Vec<OpProfile> {
        let n = runs.max(1) as f64;
        let mut v: Vec<OpProfile> = after
            .iter()
            .map(|a| {
                let b = before.iter().find(|b| b.name == a.name);
                let was = |f: fn(&OpProfile) -> f64| b.map_or(0.0, f);
                OpProfile {
                    name: a.name.clone(),
                    stages: (a.stages - was(|b| b.stages)) / n,
                    kernel_s: (a.kernel_s - was(|b| b.kernel_s)) / n,
                    bytes_in: (a.bytes_in - was(|b| b.bytes_in)) / n,
                }
            })
            .filter(|k| k.stages > 0.0)
            .collect();
        v.sort_by(|a, b| b.kernel_s.total_cmp(&a.kernel_s));
        v
    }
}

/// The counters behind [`CudaBackend::profile`] and
/// [`CudaBackend::kernel_ops`]: nanoseconds and bytes, one set per backend.
mod counters {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    #[derive(Default)]
    pub struct Counters {
        pub stages: AtomicU64,
        pub wait: AtomicU64,
        pub fill: AtomicU64,
        pub device: AtomicU64,
        pub drain: AtomicU64,
        pub bytes_in: AtomicU64,
        pub bytes_out: AtomicU64,
        pub bytes_mirrored: AtomicU64,
        pub upload: AtomicU64,
        pub kernel: AtomicU64,
        pub download: AtomicU64,
        pub span_streams: AtomicU64,
        /// Per operation name: stages, kernel nanoseconds, bytes uploaded.
        pub ops: std::sync::Mutex<std::collections::BTreeMap<String, (u64, u64, u64)>>,
        /// Batches aggregated on the device, and those it refused (inputs
        /// with nulls, keys that do not pack, full group tables).
        pub device_batches: AtomicU64,
        /// See `device_batches`.
        pub host_batches: AtomicU64,
    }

    /// Adds the time since `since` to `c`.
    pub fn add(c: &AtomicU64, since: std::time::Instant) {
        c.fetch_add(since.elapsed().as_nanos() as u64, Relaxed);
    }

    /// Adds `n` to `c`.
    pub fn count(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Relaxed);
    }

    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Relaxed)
    }
}

#[derive(Default)]
struct Scratch {
    input: DeviceScratch,
    output: DeviceScratch,
    jobs: DeviceScratch,
    status: DeviceScratch,
    pinned_in: PinnedScratch,
    pinned_out: PinnedScratch,
    /// Job descriptors on their way to the device.
    pinned_jobs: PinnedScratch,
    /// Statuses on their way to and from the device.
    pinned_status: PinnedScratch,
    /// Buffers of the span-inflated jobs (`span_inflate`).
    spans: span_inflate::SpanScratch,
}

impl Scratch {
    /// Device bytes the lane's buffers hold.
    fn device_bytes(&self) -> usize {
        self.input.bytes()
            + self.output.bytes()
            + self.jobs.bytes()
            + self.status.bytes()
            + self.spans.device_bytes()
    }
}

/// Copies `bytes` to the device buffer `dev` on `stream`, through the
/// lane's pinned buffer `pinned`, which no other copy of the stage uses (the
/// copy is complete before the lane's next stage: each stage ends in a
/// stream synchronization). Not from pageable memory: a pageable copy
/// waited for other lanes' kernels (on the H100 host a stage's upload call
/// took as long as the inflate then running on another lane, 60 ms), which
/// serialized the column sets of a read and the partitions of a query.
fn small_htod(
    stream: &Arc<CudaStream>,
    pinned: &mut PinnedScratch,
    bytes: &[u8],
    dev: &mut CudaSlice<u8>,
) -> Result<()> {
    let err = |e| Error::cuda("copying job descriptors to the device", e);
    let ctx = stream.context().clone();
    let host = pinned.get(&ctx, bytes.len())?;
    host.as_mut_slice().map_err(err)?[..bytes.len()].copy_from_slice(bytes);
    stream
        .memcpy_htod(
            &host.as_slice().map_err(err)?[..bytes.len()],
            &mut dev.slice_mut(..bytes.len()),
        )
        .map_err(err)
}

/// Most lanes (streams with their own buffers) one backend opens: enough to
/// keep the copy engines and the SMs busy from many threads, few enough that
/// the per-lane pinned and device buffers stay a small share of memory.
pub const MAX_LANES: usize = 8;

/// A stream and the buffers only work on that stream touches.
struct Lane {
    stream: Arc<CudaStream>,
    scratch: Scratch,
    /// Timing events: before the upload, the kernel, the download, and
    /// after it (created on the lane's first stage).
    events: Option<[CudaEvent; 4]>,
    /// Work may be in flight on the stream: set when the lane is taken,
    /// cleared where a stage's synchronization succeeded.
    busy: bool,
}

/// Idle lanes, and how many exist in all (idle or taken).
#[derive(Default)]
struct Lanes {
    idle: Vec<Lane>,
    opened: usize,
}

/// A lane taken by one stage; goes back to the pool when dropped.
struct Taken<'a> {
    lane: Option<Lane>,
    backend: &'a CudaBackend,
}

impl std::ops::Deref for Taken<'_> {
    type Target = Lane;
    fn deref(&self) -> &Lane {
        self.lane.as_ref().expect("present until drop")
    }
}

impl std::ops::DerefMut for Taken<'_> {
    fn deref_mut(&mut self) -> &mut Lane {
        self.lane.as_mut().expect("present until drop")
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        if let Some(lane) = self.lane.take() {
            // A stage that failed part-way may have left copies in flight
            // from the lane's pinned buffers, which its next stage may
            // rewrite or reallocate: the lane goes back idle, or not at all
            // when its stream cannot be waited for (its buffers are then
            // leaked, not freed under a running copy). A stage that
            // finished has synchronized already: no driver call then.
            let idle = !lane.busy || lane.stream.synchronize().is_ok();
            let mut pool = self.backend.pool();
            if idle {
                pool.idle.push(lane);
            } else {
                pool.opened -= 1;
                std::mem::forget(lane);
            }
            drop(pool);
            self.backend.freed.notify_one();
        }
    }
}

/// Runs plans on a CUDA device.
pub struct CudaBackend {
    rt: GpuRuntime,
    /// Pinned blocks outputs are downloaded into and handed out as they are.
    pool: PinnedPool,
    lanes: Mutex<Lanes>,
    freed: Condvar,
    /// Whether inflate stages may give jobs to the host's cores.
    host_share: bool,
    /// What the backend was created with.
    options: CudaOptions,
    /// Time and bytes of every stage it ran.
    counters: counters::Counters,
    /// Kernel sources of aggregate programs, one per distinct text: the
    /// runtime caches entry points by `'static` source, so each text is
    /// leaked once (a session has a handful of distinct programs).
    programs: Mutex<std::collections::HashMap<String, &'static crate::gpu::kernels::KernelSource>>,
    /// Holders of [`Backend::retain_decoded`]: while any, decode stages'
    /// outputs stay on the device as their blocks' mirrors too.
    retain_decoded: std::sync::atomic::AtomicUsize,
    /// Operations counted for [`CudaOptions::faults`].
    faults: crate::gpu::faults::FaultCounters,
    /// Why the device's context can no longer be used, once a sticky
    /// driver error said so ([`Error::is_device_lost`]): stages decode on
    /// the host from then on.
    lost: std::sync::OnceLock<String>,
    /// Most device bytes one stage may take: the options' limit, else the
    /// default share of the memory free at open.
    stage_memory: u64,
}

impl std::fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBackend").field("rt", &self.rt).finish()
    }
}

/// Kernel times of a benchmarked stage.
#[derive(Debug, Clone)]
pub struct StageTiming {
    /// The output of the last timed run (checked by the caller).
    pub output: StageOutput,
    /// Kernel time of each timed run in milliseconds, CUDA events.
    pub kernel_ms: Vec<f64>,
}

fn as_bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: T is a plain #[repr(C)] record of integers without padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

fn ev_err(e: cudarc::driver::DriverError) -> Error {
    Error::cuda("timing a stage", e)
}

/// Where a stage's input is on the device.
enum DeviceInput {
    /// Uploaded into the lane's input buffer.
    Scratch,
    /// These bytes of a pool block's device mirror.
    Mirror(Arc<CudaSlice<u8>>, std::ops::Range<usize>),
}

/// Whether a stage's output is kept on the device as its pool block's
/// mirror: decompressed pages and streams, which later stages decode.
fn keeps_mirror(op: &StageOp) -> bool {
    matches!(op, StageOp::Inflate | StageOp::Decompress(_))
}

mod aggregate;
mod device_output;
mod huffman_encode;
mod span_inflate;

pub use huffman_encode::HuffmanEncodeTimes;

/// The parts of the sorted, disjoint ranges `a` inside the sorted ranges
/// `b` (which may touch or overlap each other).
fn intersect(a: &[Range<usize>], b: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut j = 0;
    for r in a {
        while j < b.len() && b[j].end <= r.start {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].start < r.end {
            let c = r.start.max(b[k].start)..r.end.min(b[k].end);
            match out.last_mut() {
                Some(last) if last.end >= c.start => last.end = last.end.max(c.end),
                _ => out.push(c),
            }
            k += 1;
        }
    }
    out
}

/// The byte ranges of `0..len` outside the sorted, disjoint `filled`.
fn gaps(filled: &[Range<usize>], len: usize) -> Vec<Range<usize>> {
    let mut out = Vec::with_capacity(filled.len() + 1);
    let mut at = 0;
    for r in filled {
        if r.start > at {
            out.push(at..r.start);
        }
        at = at.max(r.end);
    }
    if at < len {
        out.push(at..len);
    }
    out
}

/// Runs the host's share of a stage (`stage` holds only those jobs, all
/// inflate jobs) into their slots of `block`, each slot zeroed first as
/// the device output is, on threads of its own (this thread holds a lane
/// meanwhile: `cpu::inflate_on_threads`); returns their statuses and the
/// byte ranges written. The rest of the block (other jobs' slots and the
/// gaps between slots) still holds its last use's bytes: the download
/// overwrites all of it from the device output.
fn run_share_on_host(
    stage: &Stage,
    input: &[u8],
    block: &mut PinnedBlock,
    threads: usize,
) -> Result<(Vec<ChunkStatus>, Vec<Range<usize>>)> {
    let bytes = stage.output_bytes();
    let out = &mut block.slice_mut().as_mut_slice()[..bytes];
    let w = stage.op.output_width();
    let slots: Vec<Range<usize>> = stage
        .jobs
        .iter()
        .map(|j| j.output_offset as usize * w..(j.output_offset + j.values) as usize * w)
        .collect();
    let statuses = super::cpu::inflate_on_threads(&stage.jobs, input, out, threads);
    Ok((statuses, slots))
}

/// A stage's jobs split between the device's warps (one per job), the
/// host's cores and span inflate: each part a stage of the same input and
/// output layout, with the indices of its jobs in the whole stage.
struct Shared {
    device: Stage,
    device_ids: Vec<usize>,
    host: Stage,
    host_ids: Vec<usize>,
    spans: Stage,
    span_ids: Vec<usize>,
}

impl Shared {
    fn new(stage: &Stage, host_ids: Vec<usize>, span_ids: Vec<usize>) -> Self {
        let mut elsewhere = vec![false; stage.jobs.len()];
        for &i in host_ids.iter().chain(&span_ids) {
            elsewhere[i] = true;
        }
        let device_ids: Vec<usize> = (0..stage.jobs.len()).filter(|&i| !elsewhere[i]).collect();
        let part = |ids: &[usize]| Stage {
            op: stage.op,
            jobs: ids.iter().map(|&i| stage.jobs[i].clone()).collect(),
            output_values: stage.output_values,
            location: stage.location.clone(),
        };
        Self {
            device: part(&device_ids),
            host: part(&host_ids),
            spans: part(&span_ids),
            device_ids,
            host_ids,
            span_ids,
        }
    }

    /// The whole stage's statuses in job order, from its parts'.
    fn merge(
        &self,
        device: &[ChunkStatus],
        host: &[ChunkStatus],
        spans: &[ChunkStatus],
    ) -> Vec<ChunkStatus> {
        let n = self.device_ids.len() + self.host_ids.len() + self.span_ids.len();
        let mut all = vec![ChunkStatus::PENDING; n];
        for (&i, &st) in (self.device_ids.iter().zip(device))
            .chain(self.host_ids.iter().zip(host))
            .chain(self.span_ids.iter().zip(spans))
        {
            all[i] = st;
        }
        all
    }
}

impl CudaBackend {
    /// Opens device 0 with the default [`CudaOptions`].
    pub fn new() -> Result<Self> {
        Self::with_options(0, CudaOptions::default())
    }

    /// The CUDA backend a choice asks for, with `options`: `None` for
    /// `Cpu`, and for `Auto` when no device is usable (logged); an error
    /// for `Cuda` without one.
    pub fn for_choice(choice: super::BackendChoice, options: &CudaOptions) -> Result<Option<Self>> {
        Self::for_choice_on(choice, 0, options)
    }

    /// [`for_choice`](Self::for_choice) on device `ordinal`.
    pub fn for_choice_on(
        choice: super::BackendChoice,
        ordinal: usize,
        options: &CudaOptions,
    ) -> Result<Option<Self>> {
        let open = || Self::with_options(ordinal, options.clone());
        match choice {
            super::BackendChoice::Cpu => Ok(None),
            super::BackendChoice::Cuda => open().map(Some),
            super::BackendChoice::Auto => Ok(open()
                .inspect_err(|e| tracing::warn!("no usable CUDA device ({e}): decoding on the CPU"))
                .ok()),
        }
    }

    /// Opens the given device with the default [`CudaOptions`].
    pub fn with_device(ordinal: usize) -> Result<Self> {
        Self::with_options(ordinal, CudaOptions::default())
    }

    /// Opens the given device with `options` (an invalid GSST shape is an
    /// error here, before anything is compiled).
    pub fn with_options(ordinal: usize, options: CudaOptions) -> Result<Self> {
        let rt = GpuRuntime::open_with(ordinal, &options)?;
        let stage_memory = match options.device_memory_limit {
            Some(limit) => limit as u64,
            None => crate::gpu::options::default_stage_memory(rt.info().free_memory, MAX_LANES),
        };
        Ok(Self {
            pool: PinnedPool::with_options(rt.context().clone(), rt.info().total_memory, &options),
            rt,
            lanes: Mutex::new(Lanes::default()),
            freed: Condvar::new(),
            host_share: options.host_share,
            options,
            counters: counters::Counters::default(),
            programs: Mutex::default(),
            retain_decoded: std::sync::atomic::AtomicUsize::new(0),
            faults: crate::gpu::faults::FaultCounters::default(),
            lost: std::sync::OnceLock::new(),
            stage_memory,
        })
    }

    /// Most device bytes one decode stage may take, its input and output
    /// together: [`CudaOptions::device_memory_limit`], or by default a
    /// share of the device memory that was free when the backend opened
    /// ([`default_stage_memory`](crate::gpu::options::default_stage_memory)).
    /// A read group over it is read again one stripe or row group at a
    /// time.
    pub fn device_memory_limit(&self) -> u64 {
        self.stage_memory
    }

    /// Why the device can no longer be used, if a sticky driver error (an
    /// illegal address, a trap, a kernel that died) left its context
    /// unusable: the read that met it failed with that error, and every
    /// stage since decodes on the host's cores (the CPU reference), so
    /// later reads give the same results, more slowly. `None` while the
    /// device works.
    pub fn lost(&self) -> Option<&str> {
        self.lost.get().map(String::as_str)
    }

    /// `result`, noting a lost device when it is a sticky driver error.
    fn watch<T>(&self, result: Result<T>) -> Result<T> {
        if let Err(e) = &result
            && e.is_device_lost()
        {
            let mut first = false;
            self.lost.get_or_init(|| {
                first = true;
                e.to_string()
            });
            if first {
                tracing::warn!(
                    "CUDA device {} is lost ({e}); its reads decode on the host from now on",
                    self.rt.info().ordinal
                );
            }
        }
        result
    }

    /// The options the backend was created with (its host share as
    /// [`with_host_share`](Self::with_host_share) last set it).
    pub fn options(&self) -> CudaOptions {
        self.options.clone().with_host_share(self.host_share)
    }

    /// Memory that reads on this backend hold now: pinned bytes lent out
    /// of its pool and device bytes kept as mirrors of them. Both are 0
    /// once every read has ended and its batches are dropped (a read
    /// dropped mid-way included).
    pub fn held_memory(&self) -> (usize, usize) {
        (self.pool.in_use(), self.pool.mirrored())
    }

    /// Device bytes that live allocations hold in the device's memory pool
    /// (decode stages' buffers, device batches' uploads and views), after
    /// the device's queued work: back where it stood once every device
    /// batch is dropped or its consumer has released it. The pool is the
    /// device's, shared by every backend of the process on that device.
    pub fn device_memory_in_use(&self) -> Result<u64> {
        self.rt.pool_bytes_in_use()
    }

    /// Device bytes the device's memory pool has mapped: live allocations
    /// and freed memory it keeps for reuse (the pool is the device's,
    /// shared by every backend of the process on that device). It does not
    /// shrink, so it is at least the most that was live at once.
    pub fn device_memory_reserved(&self) -> Result<u64> {
        self.rt.pool_bytes_reserved()
    }

    /// Pinned host bytes this backend's pool holds: blocks lent out and
    /// blocks kept for reuse (at most its cap).
    pub fn pinned_pool_bytes(&self) -> usize {
        self.pool.held()
    }

    /// Device bytes the idle lanes keep for their next stages (buffers that
    /// grow to the largest stage a lane has run and stay): part of
    /// [`device_memory_in_use`](Self::device_memory_in_use) that no read
    /// holds. Lanes running a stage now are not counted.
    pub fn lane_device_bytes(&self) -> usize {
        self.pool()
            .idle
            .iter()
            .map(|l| l.scratch.device_bytes())
            .sum()
    }

    /// This backend's counters so far (see [`Profile`]).
    pub fn profile(&self) -> Profile {
        use counters::get;
        let c = &self.counters;
        let s = |c| get(c) as f64 / 1e9;
        Profile {
            stages: get(&c.stages),
            wait_s: s(&c.wait),
            fill_s: s(&c.fill),
            device_s: s(&c.device),
            drain_s: s(&c.drain),
            bytes_in: get(&c.bytes_in),
            bytes_out: get(&c.bytes_out),
            bytes_mirrored: get(&c.bytes_mirrored),
            upload_s: s(&c.upload),
            kernel_s: s(&c.kernel),
            download_s: s(&c.download),
            span_streams: get(&c.span_streams),
        }
    }

    /// Every operation's totals on this backend so far, by name
    /// ([`OpProfile::per_run`] sorts a run's by kernel time).
    pub fn kernel_ops(&self) -> Vec<OpProfile> {
        let ops = self.counters.ops.lock().unwrap_or_else(|p| p.into_inner());
        ops.iter()
            .map(|(k, &(n, ns, bytes))| OpProfile {
                name: k.clone(),
                stages: n as f64,
                kernel_s: ns as f64 / 1e9,
                bytes_in: bytes as f64,
            })
            .collect()
    }

    /// Batches this backend aggregated on the device, and those the device
    /// refused (inputs with nulls, keys that do not pack, full group
    /// tables: their callers restart on other operators or run the CPU
    /// reference).
    pub fn aggregate_batches(&self) -> (u64, u64) {
        (
            counters::get(&self.counters.device_batches),
            counters::get(&self.counters.host_batches),
        )
    }

    /// [`keeps_mirror`], and every decode stage's output while a caller
    /// retains decoded outputs (their consumers, such as aggregate
    /// programs, read them on the device); CRC32 checks are never read.
    fn keeps_mirror(&self, op: &StageOp) -> bool {
        keeps_mirror(op)
            || (*op != StageOp::Crc32
                && self
                    .retain_decoded
                    .load(std::sync::atomic::Ordering::Relaxed)
                    > 0)
    }

    /// The same backend with the host's share of inflate stages on or off
    /// ([`CudaOptions::host_share`]): off, every job of every stage runs
    /// on the device, which is what kernel tests need.
    pub fn with_host_share(mut self, on: bool) -> Self {
        self.host_share = on;
        self
    }

    /// The device runtime.
    pub fn runtime(&self) -> &GpuRuntime {
        &self.rt
    }

    fn pool(&self) -> std::sync::MutexGuard<'_, Lanes> {
        self.lanes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An idle lane, a new one while fewer than [`MAX_LANES`] exist, else
    /// the next one another thread gives back. The first lane uses the
    /// runtime's stream.
    fn take(&self) -> Result<Taken<'_>> {
        let mut pool = self.pool();
        loop {
            if let Some(mut lane) = pool.idle.pop() {
                lane.busy = true;
                return Ok(Taken {
                    lane: Some(lane),
                    backend: self,
                });
            }
            if pool.opened < MAX_LANES {
                let first = pool.opened == 0;
                pool.opened += 1;
                drop(pool);
                let stream = if first {
                    Ok(self.rt.stream().clone())
                } else {
                    self.rt.context().new_stream()
                };
                return match stream {
                    Ok(stream) => Ok(Taken {
                        lane: Some(Lane {
                            stream,
                            scratch: Scratch::default(),
                            events: None,
                            busy: true,
                        }),
                        backend: self,
                    }),
                    Err(e) => {
                        self.pool().opened -= 1;
                        Err(Error::cuda("creating a stream", e))
                    }
                };
            }
            pool = self.freed.wait(pool).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// The jobs of `stage` its host's cores should run (`exec::host_share`):
    /// only inflate, whose warps are slow enough for a few large pages to
    /// bound a stage.
    fn host_share(&self, stage: &Stage) -> Vec<usize> {
        if stage.op != StageOp::Inflate || !self.host_share {
            return Vec::new();
        }
        let sizes: Vec<u64> = stage.jobs.iter().map(|j| j.values).collect();
        let model = super::host_share::Model::INFLATE;
        super::host_share::split(&sizes, self.host_threads(), &model)
    }

    /// Host threads a stage's host share runs on
    /// ([`CudaOptions::host_threads`]).
    fn host_threads(&self) -> usize {
        self.options
            .host_threads
            .unwrap_or_else(rayon::current_num_threads)
    }

    /// The lane's timing events, taken out of it while a stage runs.
    fn events(&self, lane: &mut Lane) -> Result<[CudaEvent; 4]> {
        if let Some(e) = lane.events.take() {
            return Ok(e);
        }
        let ctx = self.rt.context();
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let one = || ctx.new_event(timing).map_err(ev_err);
        Ok([one()?, one()?, one()?, one()?])
    }

    /// Uploads the stage's input (unless a device mirror holds it) and job
    /// table; returns the entry point, where the input is on the device, and
    /// the time spent filling pinned memory.
    fn upload(
        &self,
        lane: &mut Lane,
        stage: &Stage,
        input: &[u8],
    ) -> Result<(CudaFunction, DeviceInput, std::time::Duration)> {
        stage.validate(input.len() as u64)?;
        self.faults
            .alloc(&self.options.faults)
            .map_err(|e| Error::cuda("allocating device memory", e))?;
        let needed = (input.len() as u64).saturating_add(stage.output_bytes() as u64);
        if needed > self.stage_memory {
            return Err(Error::DeviceMemory {
                during: "a decode stage",
                needed,
                limit: self.stage_memory,
            });
        }
        if stage.jobs.len() > u32::MAX as usize {
            return Err(Error::InvalidPlan(format!(
                "{} jobs in one stage (at most {})",
                stage.jobs.len(),
                u32::MAX
            )));
        }
        let (src, entry) = kernels::entry_for(&stage.op)
            .ok_or_else(|| Error::Unsupported(format!("no CUDA kernel for {}", stage.op.name())))?;
        let span = crate::trace::span("cuda.function");
        let func = self.rt.function(src, &entry)?;
        drop(span);
        let Lane {
            stream, scratch: s, ..
        } = lane;
        let ctx = self.rt.context();
        let err = |e| Error::cuda("copying input to the device", e);

        let span = crate::trace::span("cuda.jobs_htod");
        let descs: Vec<JobDesc> = stage.jobs.iter().map(JobDesc::from).collect();
        let bytes = as_bytes(&descs);
        let dev = s.jobs.get(stream, bytes.len())?;
        small_htod(stream, &mut s.pinned_jobs, bytes, dev)?;
        drop(span);

        // Already on the device: the mirror of the pool block it lies in
        // (decompressed pages or streams), complete since the stage that
        // made it synchronized.
        if let Some((mirror, at)) = self.pool.mirror_of(input) {
            counters::count(&self.counters.bytes_mirrored, input.len() as u64);
            let input = DeviceInput::Mirror(mirror, at..at + input.len());
            return Ok((func, input, std::time::Duration::ZERO));
        }
        let t = std::time::Instant::now();
        // An input inside a pool block (a previous stage's output, such as
        // the decompressed streams) is pinned already: no staging copy.
        let host = if self.pool.contains(input) {
            input
        } else {
            let pinned = s.pinned_in.get(ctx, input.len())?;
            super::copy::par_copy(
                &mut pinned.as_mut_slice().map_err(err)?[..input.len()],
                input,
            );
            &pinned.as_slice().map_err(err)?[..input.len()]
        };
        let fill = t.elapsed();
        counters::count(&self.counters.bytes_in, input.len() as u64);
        let dev = s.input.get(stream, input.len())?;
        stream
            .memcpy_htod(host, &mut dev.slice_mut(..input.len()))
            .map_err(err)?;
        Ok((func, DeviceInput::Scratch, fill))
    }

    /// Marks every status `Pending` and fills the output with `fill`.
    fn reset(&self, lane: &mut Lane, stage: &Stage, fill: u8) -> Result<()> {
        let Lane {
            stream, scratch: s, ..
        } = lane;
        let err = |e| Error::cuda("resetting device buffers", e);
        let pending = vec![ChunkStatus::PENDING; stage.jobs.len()];
        let bytes = as_bytes(&pending);
        let dev = s.status.get(stream, bytes.len())?;
        small_htod(stream, &mut s.pinned_status, bytes, dev)?;
        let out_bytes = stage.output_bytes();
        let out = s.output.get(stream, out_bytes)?;
        let (ptr, _sync) = out.device_ptr_mut(stream);
        // SAFETY: `out` holds at least `out_bytes` bytes on this stream.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, fill, out_bytes, stream.cu_stream()) }
            .map_err(err)
    }

    fn launch(
        &self,
        lane: &mut Lane,
        func: &CudaFunction,
        stage: &Stage,
        from: &DeviceInput,
    ) -> Result<()> {
        let njobs = stage.jobs.len() as u32;
        let shape = launch::shape_for(&stage.op, stage.jobs.len(), &self.options.gsst_shape);
        let cfg = LaunchConfig {
            grid_dim: (shape.blocks, 1, 1),
            block_dim: (shape.threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let Lane {
            stream,
            scratch:
                Scratch {
                    input,
                    output,
                    jobs,
                    status,
                    ..
                },
            ..
        } = lane;
        let (i, j, o, st): (
            &CudaSlice<u8>,
            &CudaSlice<u8>,
            &CudaSlice<u8>,
            &CudaSlice<u8>,
        ) = (
            input.get(stream, 0)?,
            jobs.get(stream, 0)?,
            output.get(stream, 0)?,
            status.get(stream, 0)?,
        );
        let param = kernels::launch_param(&stage.op);
        let view;
        let mut b = stream.launch_builder(func);
        match from {
            DeviceInput::Scratch => b.arg(i),
            DeviceInput::Mirror(m, r) => {
                view = m.slice(r.clone());
                b.arg(&view)
            }
        };
        b.arg(j).arg(&njobs).arg(o).arg(st);
        if let Some(p) = &param {
            b.arg(p);
        }
        // SAFETY: argument types match the entry's signature (byte pointers,
        // a u32 count, and the op's u32 parameter for the entries that take
        // one, `kernels::launch_param`); buffers hold what `upload` and
        // `reset` sized them for, and the kernel bounds-checks every access
        // against the job table.
        self.faults
            .launch(&self.options.faults)
            .map_err(|e| Error::cuda("launching a kernel", e))?;
        unsafe { b.launch(cfg) }.map_err(|e| Error::cuda("launching a kernel", e))?;
        if self.faults.sticky(&self.options.faults) {
            let fault = self.rt.function(&kernels::FAULT, "warpread_fault")?;
            let mut b = stream.launch_builder(&fault);
            let marker = 1u32;
            b.arg(&marker);
            let one = LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (32, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: the entry takes one u32 and faults the device on
            // purpose (fault injection); nothing reads what it writes.
            unsafe { b.launch(one) }.map_err(|e| Error::cuda("launching a kernel", e))?;
        }
        Ok(())
    }

    /// Inflates the long streams of `spans` (a part of an inflate stage
    /// whose input `from` holds on the device) into the lane's output,
    /// speculatively in parallel spans (`span_inflate`).
    fn run_spans(
        &self,
        lane: &mut Lane,
        spans: &Stage,
        input: &[u8],
        from: &DeviceInput,
    ) -> Result<Vec<ChunkStatus>> {
        let options = self.options.span_inflate.unwrap_or_default();
        let Lane {
            stream, scratch: s, ..
        } = lane;
        let out_bytes = spans.output_bytes();
        let Scratch {
            input: dev_input,
            output,
            spans: span_scratch,
            ..
        } = s;
        let view = match from {
            DeviceInput::Scratch => dev_input.get(stream, input.len())?.slice(..input.len()),
            DeviceInput::Mirror(m, r) => m.slice(r.clone()),
        };
        let output = output.get(stream, out_bytes)?;
        span_inflate::SpanRun {
            rt: &self.rt,
            stream,
            scratch: span_scratch,
        }
        .run(spans, input, &view, output, &options)
    }

    /// Downloads the output and statuses; also returns the time spent
    /// copying out of pinned memory. The output goes into `block` (a pool
    /// block that becomes the output as it is), or, past the pool's cap,
    /// into the lane's staging buffer and is then copied. The byte ranges
    /// `host_filled` of `block` the host wrote already (jobs it ran):
    /// they are uploaded instead, so the device copy that stays as the
    /// block's mirror is whole too. With `host_reads` (sorted output byte
    /// ranges) and a block that becomes a mirror, only those bytes come
    /// down: the rest stays on the device alone, where the stages after
    /// read it; if the block cannot be mirrored, the rest comes down too.
    fn download(
        &self,
        lane: &mut Lane,
        stage: &Stage,
        mut block: Option<PinnedBlock>,
        host_filled: &[Range<usize>],
        host_reads: Option<&[Range<usize>]>,
    ) -> Result<(StageOutput, std::time::Duration)> {
        let Lane {
            stream,
            scratch: s,
            busy,
            ..
        } = lane;
        let ctx = self.rt.context();
        let err = |e| Error::cuda("copying results to the host", e);
        let out_bytes = stage.output_bytes();
        // Read once: `retain_decoded` may change meanwhile, and a partial
        // download must end as a mirror or be completed below.
        let keeps_mirror = self.keeps_mirror(&stage.op);
        let partial = host_reads.filter(|_| block.is_some() && keeps_mirror);
        let wanted = match partial {
            Some(reads) => intersect(&gaps(host_filled, out_bytes), reads),
            None => gaps(host_filled, out_bytes),
        };
        let copied = (|| -> Result<Vec<ChunkStatus>> {
            let pinned = match &mut block {
                Some(b) => b.slice_mut().as_mut_slice(),
                None if host_filled.is_empty() => s
                    .pinned_out
                    .get(ctx, out_bytes)?
                    .as_mut_slice()
                    .map_err(err)?,
                None => {
                    return Err(Error::InvalidPlan(
                        "host-run jobs of a stage without a pinned output".into(),
                    ));
                }
            };
            let dev = s.output.get(stream, out_bytes)?;
            let host = &mut pinned[..out_bytes];
            for r in wanted.iter().cloned() {
                stream
                    .memcpy_dtoh(&dev.slice(r.clone()), &mut host[r])
                    .map_err(err)?;
            }
            for r in host_filled {
                stream
                    .memcpy_htod(&host[r.clone()], &mut dev.slice_mut(r.clone()))
                    .map_err(err)?;
            }
            let mut statuses = vec![ChunkStatus::PENDING; stage.jobs.len()];
            // SAFETY: ChunkStatus is plain old data; the slice covers the vector.
            let status_bytes = unsafe {
                std::slice::from_raw_parts_mut(
                    statuses.as_mut_ptr().cast::<u8>(),
                    std::mem::size_of_val(statuses.as_slice()),
                )
            };
            // Through pinned memory: a copy into pageable memory blocks
            // other lanes' copies until this lane's kernel is done.
            let n = status_bytes.len();
            let dev = s.status.get(stream, n)?;
            let host = s.pinned_status.get(ctx, n)?;
            stream
                .memcpy_dtoh(&dev.slice(..n), &mut host.as_mut_slice().map_err(err)?[..n])
                .map_err(err)?;
            stream
                .synchronize()
                .map_err(|e| Error::cuda("running a kernel", e))?;
            *busy = false;
            status_bytes.copy_from_slice(&host.as_slice().map_err(err)?[..n]);
            Ok(statuses)
        })();
        let statuses = match copied {
            Ok(st) => st,
            Err(e) => {
                // A download into the block may still be in flight: it must
                // never go back to the pool (its memory is lost instead).
                std::mem::forget(block);
                return Err(e);
            }
        };
        let t = std::time::Instant::now();
        let mut downloaded: usize = wanted.iter().map(|r| r.len()).sum();
        if let Some(b) = &mut block
            && keeps_mirror
        {
            if partial.is_some() {
                let dev = s.output.take().expect("the stage's output buffer");
                if let Some(dev) = b.mirror_or_return(out_bytes, dev)? {
                    // No mirror: the bytes left on the device come down.
                    let mut done: Vec<Range<usize>> =
                        host_filled.iter().chain(&wanted).cloned().collect();
                    done.sort_unstable_by_key(|r| r.start);
                    let rest = gaps(&done, out_bytes);
                    downloaded += rest.iter().map(|r| r.len()).sum::<usize>();
                    let copied = (|| -> Result<()> {
                        let host = &mut b.slice_mut().as_mut_slice()[..out_bytes];
                        for r in rest {
                            stream
                                .memcpy_dtoh(&dev.slice(r.clone()), &mut host[r])
                                .map_err(err)?;
                        }
                        stream
                            .synchronize()
                            .map_err(|e| Error::cuda("copying results to the host", e))
                    })();
                    s.output.put(dev);
                    if let Err(e) = copied {
                        // A copy into the block may still be in flight: it
                        // must never go back to the pool.
                        std::mem::forget(block);
                        return Err(e);
                    }
                }
            } else {
                b.mirror(out_bytes, |_| s.output.take())?;
            }
        }
        let data = match block {
            Some(b) => HostBuffer::shared(b.into_buffer(out_bytes)?),
            None => HostBuffer::copy_of(
                &s.pinned_out.get(ctx, out_bytes)?.as_slice().map_err(err)?[..out_bytes],
            )?,
        };
        let drain = t.elapsed();
        counters::count(&self.counters.bytes_out, downloaded as u64);
        Ok((StageOutput { data, statuses }, drain))
    }

    /// Runs a stage `warmup + runs` times on device-resident input and
    /// returns the kernel time of the last `runs` runs (CUDA events) and the
    /// output of the last one. The output is poisoned before every run, so
    /// an element the kernel failed to write shows up in verification.
    pub fn time_stage(
        &self,
        stage: &Stage,
        input: &[u8],
        warmup: usize,
        runs: usize,
    ) -> Result<StageTiming> {
        let mut lane = self.take()?;
        let (func, from, _) = self.upload(&mut lane, stage, input)?;
        let ctx = self.rt.context();
        let stream = lane.stream.clone();
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let ev = |e| Error::cuda("timing a kernel", e);
        let start = ctx.new_event(timing).map_err(ev)?;
        let stop = ctx.new_event(timing).map_err(ev)?;
        let mut kernel_ms = Vec::with_capacity(runs);
        for r in 0..warmup + runs {
            self.reset(&mut lane, stage, 0xA5)?;
            start.record(&stream).map_err(ev)?;
            self.launch(&mut lane, &func, stage, &from)?;
            stop.record(&stream).map_err(ev)?;
            stop.synchronize().map_err(ev)?;
            if r >= warmup {
                kernel_ms.push(f64::from(start.elapsed_ms(&stop).map_err(ev)?));
            }
        }
        let block = self.pool.take(stage.output_bytes())?;
        let (output, _) = self.download(&mut lane, stage, block, &[], None)?;
        Ok(StageTiming { output, kernel_ms })
    }
}

impl CudaBackend {
    /// Runs an op without a kernel on the CPU, into a pool block when one
    /// is free: its output (decompressed pages or streams) is what the next
    /// stage uploads, and from a pool block that upload needs no staging.
    fn run_on_host(&self, stage: &Stage, input: &[u8]) -> Result<StageOutput> {
        let cpu = super::CpuBackend::new();
        stage.validate(input.len() as u64)?;
        let bytes = stage.output_bytes();
        let Some(mut block) = self.pool.take(bytes)? else {
            return cpu.run_stage(stage, input);
        };
        let out = &mut block.slice_mut().as_mut_slice()[..bytes];
        // Zeroed first, as a fresh output is: besides the gaps between jobs,
        // a job may write less than its slot (a stream's last chunk), and
        // the block still holds whatever its last use left there.
        out.par_chunks_mut(1 << 20).for_each(|c| c.fill(0));
        let statuses = cpu.run_into(stage, input, out);
        if self.keeps_mirror(&stage.op) {
            self.upload_mirror(&mut block, bytes)?;
        }
        Ok(StageOutput {
            data: HostBuffer::shared(block.into_buffer(bytes)?),
            statuses,
        })
    }

    /// Gives a block the CPU wrote (decompressed pages or streams) a device
    /// mirror, uploaded whole once, so the stages decoding it read it there
    /// rather than each uploading (or first gathering) its pieces. Without
    /// device memory to spare the block simply stays unmirrored.
    fn upload_mirror(&self, block: &mut PinnedBlock, len: usize) -> Result<()> {
        let lane = self.take()?;
        let stream = lane.stream.clone();
        let t = std::time::Instant::now();
        let mirrored = block.mirror(len, |host| {
            let copy = || -> std::result::Result<CudaSlice<u8>, cudarc::driver::DriverError> {
                // SAFETY: the copy below writes all `len` bytes before any
                // stage reads them (the stream is synchronized first).
                let mut dev = unsafe { stream.alloc::<u8>(len) }?;
                stream.memcpy_htod(&host.as_slice()[..len], &mut dev)?;
                stream.synchronize()?;
                Ok(dev)
            };
            copy()
                .inspect_err(|e| tracing::debug!("no device mirror for {len} bytes: {e}"))
                .ok()
        })?;
        if mirrored {
            counters::add(&self.counters.device, t);
            counters::count(&self.counters.bytes_in, len as u64);
        }
        Ok(())
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn describe(&self) -> String {
        let i = self.rt.info();
        let lost = match self.lost() {
            Some(why) => format!("; device lost, decoding on the host: {why}"),
            None => String::new(),
        };
        format!("cuda ({}, {}, {} SMs{lost})", i.name, i.arch(), i.sm_count)
    }

    fn reads_host_input(&self, op: &StageOp) -> bool {
        // Ops without a kernel run on the CPU backend, in place.
        kernels::entry_for(op).is_none()
    }

    fn holds_on_device(&self, source: &[u8]) -> bool {
        self.lost().is_none() && !source.is_empty() && self.pool.mirror_of(source).is_some()
    }

    /// 1 GiB: one warp inflates one compressed page or chunk at ~20 MB/s,
    /// so the GPU fills only with thousands of them per stage (TPC-H
    /// lineitem SF 10 Parquet GZIP: 4.53 GB/s with 256 MiB groups, 6.25
    /// with 1 GiB, 5.49 with one group of the whole 1.7 GB file;
    /// benchmarks/parquet-read.md).
    fn group_bytes(&self) -> u64 {
        1 << 30
    }

    /// 32 MiB of compressed bytes: a streaming read's groups are small for
    /// the device, whose per-stage round trips then set the pace, so
    /// several run side by side
    /// ([`stream_groups_in_flight`](Self::stream_groups_in_flight)) in the
    /// memory one larger group would hold.
    fn stream_group_bytes(&self) -> u64 {
        32 << 20
    }

    /// 3: one group's stages leave the device idle between their round
    /// trips, which the others fill.
    fn stream_groups_in_flight(&self) -> usize {
        3
    }

    fn device_ordinal(&self) -> Option<usize> {
        Some(self.rt.info().ordinal)
    }

    /// [`CudaOptions::scan_partitions`] (four by default).
    fn scan_partitions(&self) -> Option<usize> {
        self.options.scan_partitions
    }

    fn as_cuda(&self) -> Option<&CudaBackend> {
        Some(self)
    }

    fn input_buffer(&self, len: usize) -> Result<super::InputBuffer> {
        if self.lost().is_some() {
            return super::InputBuffer::zeroed(len);
        }
        match self.watch(self.pool.take(len))? {
            Some(block) => super::InputBuffer::pinned(block, len),
            None => super::InputBuffer::zeroed(len),
        }
    }

    fn release_on_device(&self, source: &[u8]) {
        self.pool.release_mirror(source);
    }

    fn aggregates_on_device(&self) -> bool {
        self.lost().is_none()
    }

    fn aggregate_on_device(
        &self,
        program: &crate::query::AggProgram,
        batches: &[arrow::record_batch::RecordBatch],
    ) -> Result<Option<crate::query::Groups>> {
        if self.lost().is_some() {
            return Ok(None);
        }
        self.watch(self.aggregate_with_device(program, batches))
    }

    fn retain_decoded(&self, on: bool) {
        use std::sync::atomic::Ordering;
        if on {
            self.retain_decoded.fetch_add(1, Ordering::Relaxed);
        } else {
            let _ = self
                .retain_decoded
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        }
    }

    fn aggregate(
        &self,
        program: &crate::query::AggProgram,
        batch: &arrow::record_batch::RecordBatch,
    ) -> Result<crate::query::Groups> {
        match self.aggregate_on_device(program, std::slice::from_ref(batch))? {
            Some(groups) => Ok(groups),
            None => crate::query::eval::aggregate(program, batch),
        }
    }

    fn run_stage(&self, stage: &Stage, input: &[u8]) -> Result<StageOutput> {
        self.run_stage_reading(stage, input, None)
    }

    fn run_stage_reading(
        &self,
        stage: &Stage,
        input: &[u8],
        host_reads: Option<&[Range<usize>]>,
    ) -> Result<StageOutput> {
        if self.lost().is_some() {
            return super::CpuBackend::new().run_stage(stage, input);
        }
        self.watch(self.run_stage_on_device(stage, input, host_reads))
    }
}

impl CudaBackend {
    /// [`Backend::run_stage_reading`] while the device works.
    fn run_stage_on_device(
        &self,
        stage: &Stage,
        input: &[u8],
        host_reads: Option<&[Range<usize>]>,
    ) -> Result<StageOutput> {
        if kernels::entry_for(&stage.op).is_none() {
            tracing::debug!(
                "{} has no CUDA kernel: running it on the CPU",
                stage.op.name()
            );
            return self.run_on_host(stage, input);
        }
        if stage.jobs.is_empty() {
            stage.validate(input.len() as u64)?;
            return Ok(StageOutput {
                data: HostBuffer::try_zeroed(stage.output_bytes())?,
                statuses: Vec::new(),
            });
        }
        let _stage = crate::trace::span_with(|| format!("cuda {}", stage.op.name()));
        let span_jobs = span_inflate::pick(stage, self.options.span_inflate.as_ref());
        let mut host_jobs = self.host_share(stage);
        host_jobs.retain(|i| span_jobs.binary_search(i).is_err());
        if span_jobs.is_empty() && !host_jobs.is_empty() && host_jobs.len() == stage.jobs.len() {
            let _span = crate::trace::span("cuda.host_share");
            return self.run_on_host(stage, input);
        }
        // The host writes its share straight into the output's pool block;
        // without one the device runs every job. The host's jobs and the
        // span-inflated ones read the input where the device's upload
        // checks only its own.
        let mut block = None;
        if !host_jobs.is_empty() || !span_jobs.is_empty() {
            stage.validate(input.len() as u64)?;
        }
        if !host_jobs.is_empty() {
            block = self.pool.take(stage.output_bytes())?;
            if block.is_none() {
                host_jobs.clear();
            }
        }
        let shared = (!host_jobs.is_empty() || !span_jobs.is_empty())
            .then(|| Shared::new(stage, host_jobs, span_jobs));
        let on_device = shared.as_ref().map_or(stage, |s| &s.device);
        let t = std::time::Instant::now();
        let wait = crate::trace::span("cuda.lane_wait");
        let mut lane = self.take()?;
        drop(wait);
        counters::add(&self.counters.wait, t);
        counters::count(&self.counters.stages, 1);
        let t = std::time::Instant::now();
        let events = self.events(&mut lane)?;
        events[0].record(&lane.stream).map_err(ev_err)?;
        let span = crate::trace::span("cuda.upload_call");
        let (func, from, fill) = self.upload(&mut lane, on_device, input)?;
        drop(span);
        self.reset(&mut lane, on_device, 0)?;
        events[1].record(&lane.stream).map_err(ev_err)?;
        if !on_device.jobs.is_empty() {
            self.launch(&mut lane, &func, on_device, &from)?;
        }
        let span_statuses = match &shared {
            Some(s) if !s.spans.jobs.is_empty() => {
                let _span = crate::trace::span("cuda.span_inflate");
                counters::count(&self.counters.span_streams, s.spans.jobs.len() as u64);
                self.run_spans(&mut lane, &s.spans, input, &from)?
            }
            _ => Vec::new(),
        };
        events[2].record(&lane.stream).map_err(ev_err)?;
        // Into a pool block that becomes the output as it is; the host's
        // share of the jobs runs into it while the kernel runs.
        if block.is_none() {
            block = self.pool.take(stage.output_bytes())?;
        }
        let (host_statuses, host_filled) = match (&shared, &mut block) {
            (Some(s), Some(b)) => {
                let _span = crate::trace::span("cuda.host_share");
                run_share_on_host(&s.host, input, b, self.host_threads())?
            }
            _ => (Vec::new(), Vec::new()),
        };
        let span = crate::trace::span("cuda.download_sync");
        let (mut out, drain) =
            self.download(&mut lane, on_device, block, &host_filled, host_reads)?;
        drop(span);
        if let Some(s) = &shared {
            out.statuses = s.merge(&out.statuses, &host_statuses, &span_statuses);
        }
        let uploaded = match from {
            DeviceInput::Scratch => input.len() as u64,
            DeviceInput::Mirror(..) => 0,
        };
        // Held until the stream is done with it (the download synchronized).
        drop(from);
        events[3].record(&lane.stream).map_err(ev_err)?;
        events[3].synchronize().map_err(ev_err)?;
        let ms = |a: usize, b: usize| -> Result<u64> {
            let ms = events[a].elapsed_ms(&events[b]).map_err(ev_err)?;
            Ok((f64::from(ms) * 1e6) as u64)
        };
        let (up, kernel, down) = (ms(0, 1)?, ms(1, 2)?, ms(2, 3)?);
        lane.events = Some(events);
        {
            let c = &self.counters;
            counters::count(&c.upload, up);
            counters::count(&c.kernel, kernel);
            counters::count(&c.download, down);
            let mut ops = c.ops.lock().unwrap_or_else(|p| p.into_inner());
            let e = ops.entry(stage.op.name()).or_default();
            e.0 += 1;
            e.1 += kernel;
            e.2 += uploaded;
        }
        let nanos = |d: std::time::Duration| d.as_nanos() as u64;
        counters::count(&self.counters.fill, nanos(fill));
        counters::count(&self.counters.drain, nanos(drain));
        counters::count(
            &self.counters.device,
            nanos(t.elapsed()).saturating_sub(nanos(fill + drain)),
        );
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::{OpProfile, gaps, intersect};
    use std::ops::Range;

    fn op(name: &str, stages: f64, kernel_s: f64, bytes_in: f64) -> OpProfile {
        OpProfile {
            name: name.into(),
            stages,
            kernel_s,
            bytes_in,
        }
    }

    #[test]
    fn op_profiles_per_run_are_differences_sorted_by_kernel_time() {
        let before = [op("inflate", 2.0, 1.0, 10.0), op("hybrid", 4.0, 0.5, 0.0)];
        let after = [
            op("hybrid", 8.0, 1.3, 4.0),
            op("inflate", 6.0, 2.0, 30.0),
            op("plain", 2.0, 0.2, 0.0),
        ];
        let d = OpProfile::per_run(&before, &after, 2);
        let names: Vec<&str> = d.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["inflate", "hybrid", "plain"]);
        assert_eq!(d[0], op("inflate", 2.0, 0.5, 10.0));
        assert!((d[1].kernel_s - 0.4).abs() < 1e-12);
        assert_eq!(d[2], op("plain", 1.0, 0.1, 0.0));
        // An operation that ran only before the window is left out.
        assert!(OpProfile::per_run(&before, &before, 1).is_empty());
    }

    #[test]
    fn downloads_are_the_gaps_the_host_reads() {
        // Gaps of the host's own slots, cut to what the host reads
        // (touching and overlapping reads merge).
        let g = gaps(&[10..20, 40..50], 60);
        assert_eq!(g, vec![0..10, 20..40, 50..60]);
        assert_eq!(
            intersect(&g, &[5..12, 12..25, 30..35, 45..58]),
            vec![5..10, 20..25, 30..35, 50..58]
        );
        assert_eq!(intersect(&g, &[]), Vec::<Range<usize>>::new());
        let all: Vec<Range<usize>> = std::iter::once(0..60).collect();
        assert_eq!(intersect(&g, &all), g);
        assert!(intersect(&[], &all).is_empty());
    }
}
