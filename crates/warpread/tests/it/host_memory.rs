//! A read's host budget (`ReadTuning::host_memory`): stages take their
//! output bytes from it before they allocate, a read group over it is read
//! again one row group at a time, and a row group over it fails with an
//! error naming the file and the claim; the bytes come back when the
//! read ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow::array::RecordBatch;
use warpread::exec::CpuBackend;
use warpread::exec::memory::{HostBudget, HostLimit, HostMemory};
use warpread::parquet::ParquetReaderBuilder;
use warpread::read::ReadTuning;

use super::cancellation::file;

/// A budget without a limit that keeps the most it lent at once.
#[derive(Debug, Default)]
struct Peak {
    now: AtomicU64,
    most: AtomicU64,
}

impl HostMemory for Peak {
    fn try_grow(&self, bytes: u64) -> Result<(), String> {
        let now = self.now.fetch_add(bytes, Ordering::SeqCst) + bytes;
        self.most.fetch_max(now, Ordering::SeqCst);
        Ok(())
    }
    fn shrink(&self, bytes: u64) {
        self.now.fetch_sub(bytes, Ordering::SeqCst);
    }
}

fn read(tuning: ReadTuning) -> warpread::Result<Vec<RecordBatch>> {
    ParquetReaderBuilder::try_new(file())?
        .with_backend(Arc::new(CpuBackend::new()))
        .with_tuning(tuning)
        .build()?
        .map(|b| b.map_err(|e| warpread::Error::arrow("reading", e)))
        .collect()
}

/// The most a read with `tuning`'s grouping takes at once.
fn peak(tuning: ReadTuning) -> u64 {
    let probe = Arc::new(Peak::default());
    read(tuning.with_host_memory(Some(HostBudget(probe.clone())))).unwrap();
    assert_eq!(probe.now.load(Ordering::SeqCst), 0, "bytes not given back");
    probe.most.load(Ordering::SeqCst)
}

#[test]
fn a_group_over_the_host_budget_reads_row_group_by_row_group() {
    let want = read(ReadTuning::default()).unwrap();
    let unit = peak(ReadTuning::default().with_group_bytes(Some(1)));
    let whole = peak(ReadTuning::default());
    assert!(
        whole > 4 * unit,
        "one group {whole} bytes, one row group {unit}"
    );
    let limit = Arc::new(HostLimit::new(unit));
    let budget = HostBudget(limit.clone());
    let got = read(ReadTuning::default().with_host_memory(Some(budget))).unwrap();
    assert_eq!(got, want);
    assert_eq!(limit.used(), 0, "bytes not given back");
}

#[test]
fn a_row_group_over_the_host_budget_names_the_file_and_the_claim() {
    let unit = peak(ReadTuning::default().with_group_bytes(Some(1)));
    let tuning = ReadTuning::default().with_host_memory_limit(Some(unit / 2));
    let e = read(tuning).unwrap_err().to_string();
    let name = file().file_name().unwrap().to_string_lossy().into_owned();
    assert!(e.contains("host memory"), "{e}");
    assert!(
        e.contains(&name) && e.contains("column") && e.contains("claims"),
        "{e}"
    );
}
