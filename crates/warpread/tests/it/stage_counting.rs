//! A backend that counts the stages it runs, and a wait for a count to
//! settle: what the cancellation tests measure a dropped read with. Shared
//! with `warpread-datafusion`'s tests (included there by path), so it
//! names nothing of this test crate.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use warpread::exec::{Backend, CpuBackend, StageOutput};
use warpread::plan::{Stage, StageOp};

/// The CPU backend, counting the stages it runs.
#[derive(Default)]
pub struct Counting {
    cpu: CpuBackend,
    stages: AtomicUsize,
}

impl Counting {
    pub fn stages(&self) -> usize {
        self.stages.load(Ordering::SeqCst)
    }
}

impl Backend for Counting {
    fn name(&self) -> &'static str {
        self.cpu.name()
    }
    fn describe(&self) -> String {
        self.cpu.describe()
    }
    fn run_stage(&self, stage: &Stage, input: &[u8]) -> warpread::Result<StageOutput> {
        self.stages.fetch_add(1, Ordering::SeqCst);
        self.cpu.run_stage(stage, input)
    }
    fn reads_host_input(&self, op: &StageOp) -> bool {
        self.cpu.reads_host_input(op)
    }
}

/// `count()` once it has stopped changing for 300 ms (at most 10 s).
pub fn settled(count: impl Fn() -> usize) -> usize {
    let start = Instant::now();
    let mut last = count();
    let mut since = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
        let now = count();
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() > Duration::from_millis(300) {
            break;
        }
    }
    last
}
