//! `cat`'s backend while a CUDA device opens. Creating a context takes a
//! quarter of a second or more, which a streaming read into a file pays
//! before its first batch and never wins back (the sink sets the pace
//! after that: benchmarks/streaming.md). So the device opens on a thread of
//! its own while the read starts: stages run on the CPU reference until it
//! is ready, on the device from then on. Both give the same bytes, and a
//! stage planned for one runs correctly on the other (only its input's
//! layout may be the one the other prefers).

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::exec::{
    Backend, BackendChoice, CpuBackend, CudaBackend, CudaOptions, InputBuffer, StageOutput,
};
use crate::plan::{Stage, StageOp};

/// The CPU reference until a CUDA backend opening beside it is ready.
pub struct WarmStart {
    cpu: CpuBackend,
    /// The device once opened, or why it could not be.
    cuda: Arc<OnceLock<std::result::Result<CudaBackend, String>>>,
    /// `--backend cuda`: a device that fails to open fails the read.
    required: bool,
}

impl WarmStart {
    /// Starts opening device `ordinal` with `options` for `choice` (`Cuda`
    /// or `Auto`; `Cpu` needs no warm start).
    pub fn open(choice: BackendChoice, ordinal: usize, options: &CudaOptions) -> Self {
        let cuda = Arc::new(OnceLock::new());
        let slot = Arc::clone(&cuda);
        let options = options.clone();
        let spawned = std::thread::Builder::new()
            .name("cuda-open".into())
            .spawn(move || {
                let opened = CudaBackend::with_options(ordinal, options).map_err(|e| e.to_string());
                if let Err(why) = &opened {
                    tracing::info!("cuda: {why}; decoding on the cpu");
                }
                let _ = slot.set(opened);
            });
        if let Err(e) = spawned {
            let _ = cuda.set(Err(format!(
                "cannot start a thread to open the device: {e}"
            )));
        }
        Self {
            cpu: CpuBackend::new(),
            cuda,
            required: choice == BackendChoice::Cuda,
        }
    }

    /// The backend stages run on now.
    fn now(&self) -> Result<&dyn Backend> {
        match self.cuda.get() {
            Some(Ok(cuda)) => Ok(cuda),
            Some(Err(why)) if self.required => Err(Error::CudaUnavailable(why.clone())),
            _ => Ok(&self.cpu),
        }
    }

    /// The backend stages run on now, where an answer must be given.
    fn now_or_cpu(&self) -> &dyn Backend {
        self.now().unwrap_or(&self.cpu)
    }
}

impl Backend for WarmStart {
    fn name(&self) -> &'static str {
        self.now_or_cpu().name()
    }
    fn describe(&self) -> String {
        self.now_or_cpu().describe()
    }
    fn run_stage(&self, stage: &Stage, input: &[u8]) -> Result<StageOutput> {
        self.now()?.run_stage(stage, input)
    }
    fn run_stage_reading(
        &self,
        stage: &Stage,
        input: &[u8],
        host_reads: Option<&[Range<usize>]>,
    ) -> Result<StageOutput> {
        self.now()?.run_stage_reading(stage, input, host_reads)
    }
    fn reads_host_input(&self, op: &StageOp) -> bool {
        self.now_or_cpu().reads_host_input(op)
    }
    fn holds_on_device(&self, source: &[u8]) -> bool {
        self.now_or_cpu().holds_on_device(source)
    }
    fn input_buffer(&self, len: usize) -> Result<InputBuffer> {
        self.now()?.input_buffer(len)
    }
    /// The device's sizes from the start: the read is planned for it.
    fn stream_group_bytes(&self) -> u64 {
        CudaBackend::STREAM_GROUP_BYTES
    }
    fn stream_groups_in_flight(&self) -> usize {
        CudaBackend::STREAM_GROUPS_IN_FLIGHT
    }
    fn release_on_device(&self, source: &[u8]) {
        self.now_or_cpu().release_on_device(source)
    }
    fn as_cuda(&self) -> Option<&CudaBackend> {
        match self.cuda.get() {
            Some(Ok(cuda)) => Some(cuda),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_device_stages_run_on_the_cpu_or_fail_when_cuda_was_asked() {
        let wait = |w: &WarmStart| {
            while w.cuda.get().is_none() {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        };
        let options = CudaOptions::default();
        let auto = WarmStart::open(BackendChoice::Auto, 0, &options);
        wait(&auto);
        if auto.as_cuda().is_some() {
            println!("warm start: skipped: a CUDA device opened");
            return;
        }
        assert!(auto.now().is_ok());
        assert_eq!(auto.name(), "cpu");
        assert_eq!(
            auto.stream_groups_in_flight(),
            CudaBackend::STREAM_GROUPS_IN_FLIGHT
        );
        let cuda = WarmStart::open(BackendChoice::Cuda, 0, &options);
        wait(&cuda);
        let e = cuda.input_buffer(8).map(|_| ()).unwrap_err();
        assert!(matches!(e, Error::CudaUnavailable(_)), "{e}");
    }
}
