//! The CUDA backend: stages run as CODAG kernels, one warp per chunk job.
//!
//! Inputs are staged through pinned host memory; device and pinned buffers
//! are kept and reused across calls. Every status starts as `Pending`, so a
//! job a kernel failed to reach can never read as success.

use std::sync::Mutex;

use cudarc::driver::{CudaFunction, CudaSlice, DevicePtrMut, LaunchConfig, PushKernelArg};

use super::{Backend, HostBuffer, StageOutput};
use crate::error::{Error, Result};
use crate::gpu::{DeviceScratch, GpuRuntime, PinnedScratch, kernels, launch};
use crate::plan::{ChunkStatus, JobDesc, Stage, StageOp};

#[derive(Default)]
struct Scratch {
    input: DeviceScratch,
    output: DeviceScratch,
    jobs: DeviceScratch,
    status: DeviceScratch,
    pinned_in: PinnedScratch,
    pinned_out: PinnedScratch,
}

/// Runs plans on a CUDA device.
pub struct CudaBackend {
    rt: GpuRuntime,
    scratch: Mutex<Scratch>,
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

impl CudaBackend {
    /// Opens device 0.
    pub fn new() -> Result<Self> {
        Self::with_device(0)
    }

    /// The CUDA backend a choice asks for: `None` for `Cpu`, and for `Auto`
    /// when no device is usable (logged); an error for `Cuda` without one.
    pub fn for_choice(choice: super::BackendChoice) -> Result<Option<Self>> {
        match choice {
            super::BackendChoice::Cpu => Ok(None),
            super::BackendChoice::Cuda => Self::new().map(Some),
            super::BackendChoice::Auto => Ok(Self::new()
                .inspect_err(|e| tracing::info!("auto backend: using cpu ({e})"))
                .ok()),
        }
    }

    /// Opens the given device.
    pub fn with_device(ordinal: usize) -> Result<Self> {
        Ok(Self {
            rt: GpuRuntime::open(ordinal)?,
            scratch: Mutex::new(Scratch::default()),
        })
    }

    /// The device runtime.
    pub fn runtime(&self) -> &GpuRuntime {
        &self.rt
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Scratch> {
        self.scratch.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Uploads the stage's input and job table; returns the entry point.
    fn upload(&self, s: &mut Scratch, stage: &Stage, input: &[u8]) -> Result<CudaFunction> {
        stage.validate(input.len() as u64)?;
        if stage.jobs.len() > u32::MAX as usize {
            return Err(Error::InvalidPlan(format!(
                "{} jobs in one stage (at most {})",
                stage.jobs.len(),
                u32::MAX
            )));
        }
        let (src, entry) = kernels::entry_for(&stage.op)
            .ok_or_else(|| Error::Unsupported(format!("no CUDA kernel for {}", stage.op.name())))?;
        let func = self.rt.function(src, &entry)?;
        let stream = self.rt.stream();
        let ctx = self.rt.context();
        let err = |e| Error::cuda("copying input to the device", e);

        let pinned = s.pinned_in.get(ctx, input.len())?;
        super::copy::par_copy(
            &mut pinned.as_mut_slice().map_err(err)?[..input.len()],
            input,
        );
        let host = &pinned.as_slice().map_err(err)?[..input.len()];
        let dev = s.input.get(stream, input.len())?;
        stream
            .memcpy_htod(host, &mut dev.slice_mut(..input.len()))
            .map_err(err)?;

        let descs: Vec<JobDesc> = stage.jobs.iter().map(JobDesc::from).collect();
        let bytes = as_bytes(&descs);
        let dev = s.jobs.get(stream, bytes.len())?;
        stream
            .memcpy_htod(bytes, &mut dev.slice_mut(..bytes.len()))
            .map_err(err)?;
        Ok(func)
    }

    /// Marks every status `Pending` and fills the output with `fill`.
    fn reset(&self, s: &mut Scratch, stage: &Stage, fill: u8) -> Result<()> {
        let stream = self.rt.stream();
        let err = |e| Error::cuda("resetting device buffers", e);
        let pending = vec![ChunkStatus::PENDING; stage.jobs.len()];
        let bytes = as_bytes(&pending);
        let dev = s.status.get(stream, bytes.len())?;
        stream
            .memcpy_htod(bytes, &mut dev.slice_mut(..bytes.len()))
            .map_err(err)?;
        let out_bytes = stage.output_bytes();
        let out = s.output.get(stream, out_bytes)?;
        let (ptr, _sync) = out.device_ptr_mut(stream);
        // SAFETY: `out` holds at least `out_bytes` bytes on this stream.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, fill, out_bytes, stream.cu_stream()) }
            .map_err(err)
    }

    fn launch(&self, s: &mut Scratch, func: &CudaFunction, stage: &Stage) -> Result<()> {
        let njobs = stage.jobs.len() as u32;
        let shape = launch::shape_for(&stage.op, stage.jobs.len());
        let cfg = LaunchConfig {
            grid_dim: (shape.blocks, 1, 1),
            block_dim: (shape.threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let stream = self.rt.stream();
        let Scratch {
            input,
            output,
            jobs,
            status,
            ..
        } = s;
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
        let mut b = stream.launch_builder(func);
        b.arg(i).arg(j).arg(&njobs).arg(o).arg(st);
        if let Some(p) = &param {
            b.arg(p);
        }
        // SAFETY: argument types match the entry's signature (byte pointers,
        // a u32 count, and the op's u32 parameter for the entries that take
        // one, `kernels::launch_param`); buffers hold what `upload` and
        // `reset` sized them for, and the kernel bounds-checks every access
        // against the job table.
        unsafe { b.launch(cfg) }.map_err(|e| Error::cuda("launching a kernel", e))?;
        Ok(())
    }

    fn download(&self, s: &mut Scratch, stage: &Stage) -> Result<StageOutput> {
        let stream = self.rt.stream();
        let ctx = self.rt.context();
        let err = |e| Error::cuda("copying results to the host", e);
        let out_bytes = stage.output_bytes();
        let pinned = s.pinned_out.get(ctx, out_bytes)?;
        let dev = s.output.get(stream, out_bytes)?;
        stream
            .memcpy_dtoh(
                &dev.slice(..out_bytes),
                &mut pinned.as_mut_slice().map_err(err)?[..out_bytes],
            )
            .map_err(err)?;
        let mut statuses = vec![ChunkStatus::PENDING; stage.jobs.len()];
        // SAFETY: ChunkStatus is plain old data; the slice covers the vector.
        let status_bytes = unsafe {
            std::slice::from_raw_parts_mut(
                statuses.as_mut_ptr().cast::<u8>(),
                std::mem::size_of_val(statuses.as_slice()),
            )
        };
        let dev = s.status.get(stream, status_bytes.len())?;
        stream
            .memcpy_dtoh(&dev.slice(..status_bytes.len()), status_bytes)
            .map_err(err)?;
        stream
            .synchronize()
            .map_err(|e| Error::cuda("running a kernel", e))?;
        let data = HostBuffer::copy_of(&pinned.as_slice().map_err(err)?[..out_bytes])?;
        Ok(StageOutput { data, statuses })
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
        let mut s = self.lock();
        let func = self.upload(&mut s, stage, input)?;
        let ctx = self.rt.context();
        let stream = self.rt.stream();
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let ev = |e| Error::cuda("timing a kernel", e);
        let start = ctx.new_event(timing).map_err(ev)?;
        let stop = ctx.new_event(timing).map_err(ev)?;
        let mut kernel_ms = Vec::with_capacity(runs);
        for r in 0..warmup + runs {
            self.reset(&mut s, stage, 0xA5)?;
            start.record(stream).map_err(ev)?;
            self.launch(&mut s, &func, stage)?;
            stop.record(stream).map_err(ev)?;
            stop.synchronize().map_err(ev)?;
            if r >= warmup {
                kernel_ms.push(f64::from(start.elapsed_ms(&stop).map_err(ev)?));
            }
        }
        let output = self.download(&mut s, stage)?;
        Ok(StageTiming { output, kernel_ms })
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn describe(&self) -> String {
        let i = self.rt.info();
        format!("cuda ({}, {}, {} SMs)", i.name, i.arch(), i.sm_count)
    }

    fn reads_host_input(&self, op: &StageOp) -> bool {
        // Ops without a kernel run on the CPU backend, in place.
        kernels::entry_for(op).is_none()
    }

    fn run_stage(&self, stage: &Stage, input: &[u8]) -> Result<StageOutput> {
        if kernels::entry_for(&stage.op).is_none() {
            tracing::debug!(
                "{} has no CUDA kernel: running it on the CPU",
                stage.op.name()
            );
            return super::CpuBackend::new().run_stage(stage, input);
        }
        if stage.jobs.is_empty() {
            stage.validate(input.len() as u64)?;
            return Ok(StageOutput {
                data: HostBuffer::try_zeroed(stage.output_bytes())?,
                statuses: Vec::new(),
            });
        }
        let mut s = self.lock();
        let func = self.upload(&mut s, stage, input)?;
        self.reset(&mut s, stage, 0)?;
        self.launch(&mut s, &func, stage)?;
        self.download(&mut s, stage)
    }
}
