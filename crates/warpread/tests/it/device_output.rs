//! Reads whose batches stay on the device (`build_device`): on CUDA, every
//! fixture's device batches, copied back, equal the CPU backend's read;
//! DLPack tensors hold a column's values and validity; the C Device Data
//! Interface structs point at the batch's device buffers; the device memory
//! comes back once the consumer releases what it took. Without CUDA,
//! asking for device output is a clear error.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, RecordBatch};
use arrow::compute::concat_batches;
use warpread::device::{DeviceBatch, DeviceBytes, column_validity, column_values};
use warpread::exec::{Backend, CpuBackend};
use warpread::orc::OrcReaderBuilder;
use warpread::parquet::ParquetReaderBuilder;

use super::common::{cuda_options, cuda_own, cuda_shared, in_own_process};
use super::stage_counting::write_gzip_parquet;

fn testdata(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == dir))
        .collect();
    files.sort();
    files
}

fn host_read(path: &Path) -> Vec<RecordBatch> {
    let cpu: Arc<dyn Backend> = Arc::new(CpuBackend::new());
    let batches: Result<Vec<_>, _> = if path.extension().is_some_and(|e| e == "orc") {
        OrcReaderBuilder::try_new(path)
            .unwrap()
            .with_backend(cpu)
            .build()
            .unwrap()
            .collect()
    } else {
        ParquetReaderBuilder::try_new(path)
            .unwrap()
            .with_backend(cpu)
            .build()
            .unwrap()
            .collect()
    };
    batches.unwrap()
}

fn device_read(path: &Path, backend: Arc<dyn Backend>) -> warpread::Result<Vec<DeviceBatch>> {
    if path.extension().is_some_and(|e| e == "orc") {
        OrcReaderBuilder::try_new(path)?
            .with_backend(backend)
            .build_device()?
            .collect()
    } else {
        ParquetReaderBuilder::try_new(path)?
            .with_backend(backend)
            .build_device()?
            .collect()
    }
}

#[test]
fn device_output_without_cuda_is_a_clear_error() {
    let path = &testdata("parquet")[0];
    let cpu: Arc<dyn Backend> = Arc::new(CpuBackend::new());
    let err = ParquetReaderBuilder::try_new(path)
        .unwrap()
        .with_backend(cpu)
        .build_device()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("device output needs the CUDA backend"),
        "{err}"
    );
    assert!(err.contains("cpu"), "{err}");
}

#[test]
fn device_batches_copied_back_equal_the_cpu_read() {
    let Some(backend) = cuda_shared("device_batches_copied_back_equal_the_cpu_read") else {
        return;
    };
    let cuda = backend.as_cuda().unwrap();
    let mut bytes = DeviceBytes::default();
    let files: Vec<PathBuf> = testdata("parquet")
        .into_iter()
        .chain(testdata("orc"))
        .collect();
    for path in &files {
        let host = host_read(path);
        let device = device_read(path, backend.clone())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(host.len(), device.len(), "{}", path.display());
        for (h, d) in host.iter().zip(&device) {
            assert_eq!(d.device_ordinal(), 0);
            assert_eq!(d.num_rows(), h.num_rows(), "{}", path.display());
            let back = d
                .to_host(cuda)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(&back, h, "{}", path.display());
            let b = d.device_bytes();
            bytes.decoded += b.decoded;
            bytes.uploaded += b.uploaded;
            if path.ends_with("types_int_decimals.parquet") {
                // Its INT32 / INT64 decimals are widened on the device.
                assert!(b.derived > 0, "{b:?}");
            }
        }
    }
    println!("device bytes over {} fixtures: {bytes:?}", files.len());
    // Decode outputs are taken where the kernels wrote them, not uploaded.
    assert!(bytes.decoded > 0, "{bytes:?}");
}

#[test]
fn dlpack_tensors_hold_values_and_validity() {
    let Some(backend) = cuda_shared("dlpack_tensors_hold_values_and_validity") else {
        return;
    };
    let cuda = backend.as_cuda().unwrap();
    let mut checked = 0;
    for path in testdata("parquet").iter().chain(&testdata("orc")) {
        let host = host_read(path);
        if host.is_empty() {
            continue;
        }
        let host = concat_batches(&host[0].schema(), &host).unwrap();
        let device = device_read(path, backend.clone()).unwrap();
        for (i, field) in host.schema().fields().iter().enumerate() {
            let Ok(tensor) = column_values(cuda, &device, i) else {
                continue;
            };
            let col = host.column(i);
            assert_eq!(tensor.len(), col.len());
            let got = cuda.copy_to_host(tensor.buffer()).unwrap();
            let validity = column_validity(cuda, &device, i).unwrap();
            let valid: Vec<bool> = (0..col.len()).map(|r| col.is_valid(r)).collect();
            match &validity {
                Some(v) => {
                    let bytes = cuda.copy_to_host(v.buffer()).unwrap();
                    let got: Vec<bool> = bytes.iter().map(|&b| b == 1).collect();
                    assert_eq!(got, valid, "{} {}", path.display(), field.name());
                }
                None => assert_eq!(col.null_count(), 0),
            }
            let data = col.to_data();
            if field.data_type() == &arrow::datatypes::DataType::Boolean {
                let b = col
                    .as_any()
                    .downcast_ref::<arrow::array::BooleanArray>()
                    .unwrap();
                for r in (0..col.len()).filter(|&r| valid[r]) {
                    assert_eq!(got[r], u8::from(b.value(r)), "{} row {r}", field.name());
                }
            } else {
                let width = tensor.dtype().bits as usize / 8;
                let values = &data.buffers()[0].as_slice()[data.offset() * width..];
                for r in (0..col.len()).filter(|&r| valid[r]) {
                    assert_eq!(
                        &got[r * width..(r + 1) * width],
                        &values[r * width..(r + 1) * width],
                        "{} {} row {r}",
                        path.display(),
                        field.name()
                    );
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} columns had a DLPack type");
}

#[test]
fn c_device_arrays_point_at_the_batch_buffers() {
    let Some(backend) = cuda_shared("c_device_arrays_point_at_the_batch_buffers") else {
        return;
    };
    let path = testdata("parquet")
        .into_iter()
        .find(|p| p.ends_with("types_gzip_v1.parquet"))
        .unwrap();
    let device = device_read(&path, backend).unwrap();
    let batch = &device[0];
    let (schema, mut array) = batch.to_ffi().unwrap();
    assert_eq!(schema.format(), "+s");
    assert_eq!(array.device_type, warpread::device::ARROW_DEVICE_CUDA);
    assert_eq!(array.device_id, 0);
    assert!(!array.sync_event.is_null());
    assert_eq!(array.array.length as usize, batch.num_rows());
    assert_eq!(array.array.n_children as usize, batch.num_columns());
    for (c, col) in batch.columns().iter().enumerate() {
        // SAFETY: the struct was just exported with `n_children` children,
        // each with `n_buffers` buffer addresses.
        let child = unsafe { &**array.array.children.add(c) };
        assert_eq!(child.n_buffers as usize, col.buffers().len());
        for (i, b) in col.buffers().iter().enumerate() {
            let ptr = unsafe { *child.buffers.add(i) } as u64;
            assert_eq!(ptr, b.as_ref().map_or(0, |b| b.device_ptr()));
        }
    }
    // A consumer releases what it moved out; the struct is then empty.
    let release = array.array.release.unwrap();
    unsafe { release(&mut array.array) };
    assert!(array.is_released());
}

#[test]
fn device_memory_comes_back_when_the_consumer_releases_it() {
    // Every backend of a process allocates from the device's one memory
    // pool, so other tests' reads would move the figures: the measurement
    // runs alone, in a process of its own.
    let test = "device_memory_comes_back_when_the_consumer_releases_it";
    if !in_own_process(&format!("device_output::{test}")) {
        return;
    }
    let Some(backend) = cuda_own(cuda_options(), test) else {
        return;
    };
    let shared: Arc<dyn Backend> = backend.clone();
    // A file whose batches hold tens of MB on the device, and a fixture.
    let big = std::env::temp_dir().join(format!("warpread-{test}-{}.parquet", std::process::id()));
    write_big_parquet(&big);
    let files = [
        big.clone(),
        testdata("orc")
            .into_iter()
            .find(|p| p.ends_with("types_v12_zlib.orc"))
            .unwrap(),
    ];
    // Device memory no read holds: the pool's live bytes less what the
    // idle lanes keep for their next stages (buffers grown to the largest
    // stage each lane has run; which lane runs which stage varies).
    let kept = || backend.device_memory_in_use().unwrap() - backend.lane_device_bytes() as u64;
    // Room for small buffers the backend keeps between reads.
    const SLACK: u64 = 256 << 10;
    // One round: each file read to the device, exported through the C
    // Device Data Interface, the batches dropped, then the exports released
    // as a consumer that moved them out would.
    let round = |baseline: Option<u64>| {
        for f in &files {
            let batches = device_read(f, shared.clone()).unwrap();
            let bytes = DeviceBytes::of(&batches);
            let mut exported: Vec<_> = batches.iter().map(|b| b.to_ffi().unwrap()).collect();
            drop(batches);
            if let Some(base) = baseline
                && f == &big
            {
                let total = bytes.decoded + bytes.uploaded + bytes.derived;
                assert!(total > 8 << 20, "{total} device bytes");
                assert!(
                    kept() >= base + total,
                    "the exported arrays hold less than their {total} bytes"
                );
            }
            for (_, array) in &mut exported {
                let release = array.array.release.unwrap();
                // SAFETY: each struct was exported above and is released
                // once.
                unsafe { release(&mut array.array) };
            }
        }
    };
    round(None);
    let baseline = kept();
    for _ in 0..3 {
        round(Some(baseline));
        let after = kept();
        assert!(
            after <= baseline + SLACK,
            "device memory held after the release: {after} bytes, {baseline} before"
        );
        assert_eq!(backend.held_memory(), (0, 0));
    }
    std::fs::remove_file(&big).unwrap();
}

/// A Parquet file (GZIP) of 2^20 rows: integers, doubles and strings.
fn write_big_parquet(path: &Path) {
    use arrow::array::{Float64Array, Int64Array, StringArray};
    let n = 1 << 20;
    let ints = Int64Array::from_iter_values((0..n).map(|i| i * 7919 % 1_000_003));
    let doubles = Float64Array::from_iter_values((0..n).map(|i| i as f64 * 0.25));
    let strings = StringArray::from_iter_values((0..n).map(|i| format!("row {}", i % 5000)));
    let batch = RecordBatch::try_from_iter([
        ("i", Arc::new(ints) as _),
        ("d", Arc::new(doubles) as _),
        ("s", Arc::new(strings) as _),
    ])
    .unwrap();
    write_gzip_parquet(path, &batch, n as usize, true);
}
