//! Test backends over the CPU reference: one that counts the stages it
//! runs (with a wait for a count to settle: what the cancellation tests
//! measure a dropped read with), one that stands in for a device with
//! little memory, and the GZIP Parquet writer of their files. Shared with `warpread-datafusion`'s tests (included there
//! by path), so it names nothing of this test crate.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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

/// The CPU reference refusing, as the CUDA backend does under
/// `CudaOptions::device_memory_limit`, every stage whose input and output
/// together exceed `limit` bytes; it keeps the largest stage it saw and
/// counts those it refused.
pub struct SmallDevice {
    cpu: CpuBackend,
    limit: u64,
    largest: AtomicU64,
    refused: AtomicUsize,
}

impl SmallDevice {
    /// A device that takes stages of up to `limit` bytes.
    pub fn new(limit: u64) -> Self {
        Self {
            cpu: CpuBackend::new(),
            limit,
            largest: AtomicU64::new(0),
            refused: AtomicUsize::new(0),
        }
    }

    /// The largest stage it was given, in bytes.
    pub fn largest(&self) -> u64 {
        self.largest.load(Ordering::SeqCst)
    }

    /// Stages it refused.
    pub fn refused(&self) -> usize {
        self.refused.load(Ordering::SeqCst)
    }
}

impl Backend for SmallDevice {
    fn name(&self) -> &'static str {
        self.cpu.name()
    }
    fn describe(&self) -> String {
        format!(
            "{} with {} bytes per stage",
            self.cpu.describe(),
            self.limit
        )
    }
    fn run_stage(&self, stage: &Stage, input: &[u8]) -> warpread::Result<StageOutput> {
        let needed = (input.len() as u64).saturating_add(stage.output_bytes() as u64);
        self.largest.fetch_max(needed, Ordering::SeqCst);
        if needed > self.limit {
            self.refused.fetch_add(1, Ordering::SeqCst);
            return Err(warpread::Error::DeviceMemory {
                during: "a test stage",
                needed,
                limit: self.limit,
            });
        }
        self.cpu.run_stage(stage, input)
    }
    fn reads_host_input(&self, op: &StageOp) -> bool {
        self.cpu.reads_host_input(op)
    }
}

/// Writes `batch` to `path` as GZIP Parquet in row groups of `rows` rows
/// (dictionary pages off when `dictionary` is false).
pub fn write_gzip_parquet(
    path: &std::path::Path,
    batch: &arrow::array::RecordBatch,
    rows: usize,
    dictionary: bool,
) {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows))
        .set_compression(parquet::basic::Compression::GZIP(Default::default()))
        .set_dictionary_enabled(dictionary)
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        batch.schema(),
        Some(props),
    )
    .unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}
