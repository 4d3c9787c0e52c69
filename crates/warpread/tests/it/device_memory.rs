//! A read group larger than the device's memory limit is read again one
//! row group at a time and gives the whole file; a row group over the
//! limit fails with the device-memory error. On the CPU (CI) a backend
//! stands in for a small device (it refuses stages over a limit as the
//! CUDA backend does); on CUDA, `CudaOptions::device_memory_limit`.

use std::sync::Arc;

use arrow::array::RecordBatch;
use futures::StreamExt;
use object_store::memory::InMemory;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use warpread::exec::{Backend, CpuBackend};
use warpread::parquet::{ParquetReaderBuilder, ParquetStreamBuilder};
use warpread::read::ReadTuning;

use super::cancellation::file;
use super::common::{cuda_options, cuda_own};
use super::stage_counting::SmallDevice;

/// The whole file, read in one group (default group bytes) with `depth`
/// groups in flight.
fn read_sync(backend: Arc<dyn Backend>, depth: usize) -> warpread::Result<Vec<RecordBatch>> {
    ParquetReaderBuilder::try_new(file())?
        .with_backend(backend)
        .with_groups_in_flight(depth)
        .build()?
        .map(|b| b.map_err(|e| warpread::Error::arrow("reading", e)))
        .collect()
}

fn read_async(backend: Arc<dyn Backend>) -> warpread::Result<Vec<RecordBatch>> {
    let bytes = std::fs::read(file()).unwrap();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let location = ObjectPath::from("device-memory.parquet");
        store.put(&location, PutPayload::from(bytes)).await.unwrap();
        let mut stream = ParquetStreamBuilder::new(store, location)
            .await?
            .with_backend(backend)
            .build()
            .await?;
        let mut out = Vec::new();
        while let Some(b) = stream.next().await {
            out.push(b?);
        }
        Ok(out)
    })
}

/// The largest stage of a read one row group per group.
fn largest_unit_stage() -> u64 {
    let probe = Arc::new(SmallDevice::new(u64::MAX));
    let rows: usize = ParquetReaderBuilder::try_new(file())
        .unwrap()
        .with_backend(probe.clone())
        .with_tuning(ReadTuning::default().with_group_bytes(Some(1)))
        .build()
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .sum();
    assert!(rows > 0);
    probe.largest()
}

#[test]
fn a_group_over_the_device_limit_is_read_row_group_by_row_group() {
    let want = read_sync(Arc::new(CpuBackend::new()), 1).unwrap();
    let unit = largest_unit_stage();
    let whole = Arc::new(SmallDevice::new(u64::MAX));
    read_sync(whole.clone(), 1).unwrap();
    assert!(
        whole.largest() > unit,
        "one group's stages ({}) are no larger than one row group's ({unit})",
        whole.largest()
    );
    for depth in [1, 3] {
        let small = Arc::new(SmallDevice::new(unit));
        let got = read_sync(small.clone(), depth).unwrap();
        assert!(small.refused() > 0, "depth {depth}: nothing was refused");
        assert_eq!(got, want, "depth {depth}");
    }
    let small = Arc::new(SmallDevice::new(unit));
    assert_eq!(read_async(small.clone()).unwrap(), want);
    assert!(small.refused() > 0, "async: nothing was refused");
    // A row group that does not fit either: the device's error (inside
    // the reader's Arrow error).
    let e = read_sync(Arc::new(SmallDevice::new(unit - 1)), 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("device memory: a test stage needs"), "{e}");
}

#[test]
fn a_cuda_backend_without_a_limit_takes_a_share_of_the_free_memory() {
    let Some(cuda) = cuda_own(cuda_options(), "default device limit") else {
        return;
    };
    let info = cuda.runtime().info();
    let limit = cuda.device_memory_limit();
    assert_eq!(
        limit,
        warpread::exec::gpu::options::default_stage_memory(
            info.free_memory,
            warpread::exec::cuda::MAX_LANES
        )
    );
    assert!(
        limit > 0 && info.free_memory <= info.total_memory,
        "{info:?}"
    );
    let want = read_sync(Arc::new(CpuBackend::new()), 1).unwrap();
    assert_eq!(read_sync(cuda, 1).unwrap(), want);
}

#[test]
fn a_cuda_read_over_its_device_memory_limit_gives_the_whole_file() {
    let want = read_sync(Arc::new(CpuBackend::new()), 1).unwrap();
    let unit = largest_unit_stage();
    let options = |limit: u64| cuda_options().with_device_memory_limit(Some(limit as usize));
    let Some(cuda) = cuda_own(options(2 * unit), "device memory") else {
        return;
    };
    for depth in [1, 3] {
        assert_eq!(
            read_sync(cuda.clone(), depth).unwrap(),
            want,
            "depth {depth}"
        );
    }
    assert_eq!(read_async(cuda.clone()).unwrap(), want);
    assert_eq!(cuda.held_memory(), (0, 0), "held after the reads");
    let tiny = cuda_own(options(16), "device memory").unwrap();
    let e = read_sync(tiny, 1).unwrap_err().to_string();
    assert!(e.contains("device memory: a decode stage needs"), "{e}");
}
