//! A device allocation or kernel launch that fails (injected with
//! `CudaOptions::faults`) fails that read with the driver's error, gives
//! back what the read held, and leaves the backend reading as before.

use std::sync::Arc;

use arrow::array::RecordBatch;
use warpread::exec::{Backend, CpuBackend, CudaBackend, CudaOptions};
use warpread::gpu::Faults;
use warpread::parquet::ParquetReaderBuilder;
use warpread::read::ReadTuning;

fn read(backend: Arc<dyn Backend>) -> warpread::Result<Vec<RecordBatch>> {
    ParquetReaderBuilder::try_new(super::cancellation::file())?
        .with_backend(backend)
        .with_tuning(ReadTuning::default().with_group_bytes(Some(1)))
        .build()?
        .map(|b| b.map_err(|e| warpread::Error::Unsupported(e.to_string())))
        .collect()
}

#[test]
fn an_injected_device_fault_fails_one_read_and_the_backend_reads_on() {
    let want = read(Arc::new(CpuBackend::new())).unwrap();
    let cases = [
        ("alloc", Faults::default().with_alloc(Some(1)), "allocating device memory"),
        ("alloc", Faults::default().with_alloc(Some(5)), "allocating device memory"),
        ("launch", Faults::default().with_launch(Some(1)), "launching a kernel"),
        ("launch", Faults::default().with_launch(Some(7)), "launching a kernel"),
    ];
    for (what, faults, message) in cases {
        // Every job on the device, so that every stage allocates and
        // launches there.
        let options = CudaOptions::default()
            .with_kernel_cache(std::env::var_os("WARPREAD_KERNEL_CACHE"))
            .with_kernel_dir(std::env::var_os("WARPREAD_KERNEL_DIR"))
            .with_host_share(false)
            .with_faults(faults);
        let cuda = match CudaBackend::with_options(0, options) {
            Ok(b) => Arc::new(b),
            Err(e) => {
                println!("device faults: skipped: no CUDA device ({e})");
                return;
            }
        };
        let err = read(cuda.clone()).expect_err(what).to_string();
        assert!(err.contains(message), "{what} {faults:?}: {err}");
        assert_eq!(cuda.held_memory(), (0, 0), "{what}: held after the failed read");
        let again = read(cuda.clone()).unwrap();
        assert_eq!(again, want, "{what} {faults:?}: the read after the fault");
        drop(again);
        assert_eq!(cuda.held_memory(), (0, 0), "{what}: held after the second read");
    }
}
