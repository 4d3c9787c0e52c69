//! A device allocation or kernel launch that fails (injected with
//! `CudaOptions::faults`) fails that read with the driver's error (or is
//! recovered by a host path, giving the CPU's answer), gives back what the
//! read held, and leaves the backend reading as before.

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
        (
            "alloc",
            Faults::default().with_alloc(Some(1)),
            "allocating device memory",
        ),
        (
            "alloc",
            Faults::default().with_alloc(Some(5)),
            "allocating device memory",
        ),
        (
            "launch",
            Faults::default().with_launch(Some(1)),
            "launching a kernel",
        ),
        (
            "launch",
            Faults::default().with_launch(Some(7)),
            "launching a kernel",
        ),
    ];
    let mut failed = 0;
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
        // The read fails with the driver's error, or, where the failed
        // stage has a host path (the device CRC-32 check of Parquet pages
        // falls back to the host's), gives the CPU's batches.
        match read(cuda.clone()) {
            Err(e) => {
                let e = e.to_string();
                assert!(e.contains(message), "{what} {faults:?}: {e}");
                failed += 1;
            }
            Ok(got) => assert_eq!(got, want, "{what} {faults:?}: recovered read"),
        }
        // The groups still in flight when the read failed end and give
        // back what they held.
        let held = || {
            let (pinned, mirrored) = cuda.held_memory();
            pinned + mirrored
        };
        assert_eq!(
            super::stage_counting::settled(held),
            0,
            "{what}: held after the faulty read"
        );
        let again = read(cuda.clone()).unwrap();
        assert_eq!(again, want, "{what} {faults:?}: the read after the fault");
        drop(again);
        assert_eq!(
            cuda.held_memory(),
            (0, 0),
            "{what}: held after the second read"
        );
    }
    // The first allocation and the first launch belong to the first
    // stage, which has no host path.
    assert!(failed >= 2, "only {failed} of the faulty reads failed");
}

#[test]
fn a_device_fault_that_sticks_fails_its_read_and_later_reads_decode_on_the_host() {
    // A sticky fault poisons every context of the process, the other
    // tests' backends included: it runs in a process of its own.
    if !crate::common::in_own_process(
        "device_faults::a_device_fault_that_sticks_fails_its_read_and_later_reads_decode_on_the_host",
    ) {
        return;
    }
    let want = read(Arc::new(CpuBackend::new())).unwrap();
    let options = CudaOptions::default()
        .with_kernel_cache(std::env::var_os("WARPREAD_KERNEL_CACHE"))
        .with_kernel_dir(std::env::var_os("WARPREAD_KERNEL_DIR"))
        .with_host_share(false)
        .with_faults(Faults::default().with_sticky(Some(2)));
    let cuda = match CudaBackend::with_options(0, options) {
        Ok(b) => Arc::new(b),
        Err(e) => {
            println!("sticky device fault: skipped: no CUDA device ({e})");
            return;
        }
    };
    assert!(cuda.lost().is_none());
    // The read that meets the fault fails with the driver's error, naming
    // the file and the rows it was reading; or, where the stage that saw
    // it first has a host path, gives the CPU's batches.
    let name = super::cancellation::file();
    let name = name.file_name().unwrap().to_string_lossy().into_owned();
    match read(cuda.clone()) {
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{e}");
            assert!(e.contains(&name) && e.contains("rows "), "{e}");
        }
        Ok(got) => assert_eq!(got, want, "the read that met the fault"),
    }
    let why = cuda.lost().expect("the backend knows its device is lost");
    assert!(why.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{why}");
    assert!(
        cuda.describe().contains("device lost"),
        "{}",
        cuda.describe()
    );
    assert!(!cuda.aggregates_on_device());
    // Every later read decodes on the host and gives the CPU's answer.
    for round in 0..2 {
        assert_eq!(
            read(cuda.clone()).unwrap(),
            want,
            "read {round} after the fault"
        );
    }
}
