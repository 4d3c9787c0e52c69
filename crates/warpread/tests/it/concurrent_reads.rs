//! Many readers, one backend: 16 threads reading every fixture at once
//! through one shared backend (the CPU backend here and in CI; the CUDA
//! backend, its lanes and pinned pool, on a GPU host) get what one read at
//! a time gets, through the sync builder and the async builder over an
//! object store, and finish: a deadlock fails the test after a deadline
//! instead of hanging it.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use arrow::array::RecordBatch;
use futures::TryStreamExt;
use object_store::memory::InMemory;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use warpread::exec::{Backend, CpuBackend};
use warpread::orc::{OrcReaderBuilder, OrcStreamBuilder};
use warpread::parquet::{ParquetReaderBuilder, ParquetStreamBuilder};

use crate::common::root;

const READERS: usize = 16;
const DEADLINE: Duration = Duration::from_secs(600);

fn fixtures() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for ext in ["parquet", "orc"] {
        let dir = root().join("testdata").join(ext);
        v.extend(
            std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == ext)),
        );
    }
    v.sort();
    v
}

fn is_orc(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|e| e == "orc")
}

/// An ORC or Parquet file (by extension) read whole through the sync
/// builder on `backend`; `None` if the reader refuses it.
pub(crate) fn read_sync(
    path: &std::path::Path,
    backend: Arc<dyn Backend>,
    batch_size: usize,
) -> Option<Vec<RecordBatch>> {
    let out: Result<Vec<RecordBatch>, _> = if is_orc(path) {
        OrcReaderBuilder::try_new(path)
            .ok()?
            .with_backend(backend)
            .with_batch_size(batch_size)
            .build()
            .ok()?
            .collect()
    } else {
        ParquetReaderBuilder::try_new(path)
            .ok()?
            .with_backend(backend)
            .with_batch_size(batch_size)
            .build()
            .ok()?
            .collect()
    };
    out.ok()
}

/// An ORC (`orc`) or Parquet object read whole through the async builder
/// on `backend`.
pub(crate) async fn read_async(
    store: Arc<dyn ObjectStore>,
    location: ObjectPath,
    orc: bool,
    backend: Arc<dyn Backend>,
    batch_size: usize,
) -> Vec<RecordBatch> {
    if orc {
        OrcStreamBuilder::new(store, location)
            .await
            .unwrap()
            .with_backend(backend)
            .with_batch_size(batch_size)
            .build()
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap()
    } else {
        ParquetStreamBuilder::new(store, location)
            .await
            .unwrap()
            .with_backend(backend)
            .with_batch_size(batch_size)
            .build()
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap()
    }
}

/// Reads every fixture with `READERS` threads at once through `backend`
/// (even threads through the sync builder, odd ones through the async
/// builder on one shared runtime), each from a different first file, and
/// checks every result against `want`.
fn read_all_at_once(
    what: &str,
    backend: Arc<dyn Backend>,
    want: Arc<Vec<(PathBuf, Vec<RecordBatch>)>>,
) {
    let rt = Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .enable_all()
            .build()
            .unwrap(),
    );
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    rt.block_on(async {
        for (path, _) in want.iter() {
            let bytes = std::fs::read(path).unwrap();
            let at = ObjectPath::from(path.file_name().unwrap().to_string_lossy().as_ref());
            store.put(&at, PutPayload::from(bytes)).await.unwrap();
        }
    });
    let (done, finished) = mpsc::channel();
    for reader in 0..READERS {
        let (backend, want, rt, store, done) = (
            backend.clone(),
            want.clone(),
            rt.clone(),
            store.clone(),
            done.clone(),
        );
        let what = what.to_string();
        std::thread::spawn(move || {
            let n = want.len();
            for k in 0..n {
                let (path, expected) = &want[(reader + k) % n];
                let got = if reader % 2 == 0 {
                    read_sync(path, backend.clone(), 4096)
                        .unwrap_or_else(|| panic!("{what}: {}: read failed", path.display()))
                } else {
                    let at = ObjectPath::from(path.file_name().unwrap().to_string_lossy().as_ref());
                    rt.block_on(read_async(
                        store.clone(),
                        at,
                        is_orc(path),
                        backend.clone(),
                        4096,
                    ))
                };
                assert!(
                    &got == expected,
                    "{what}: reader {reader}: {} differs from the read alone",
                    path.display()
                );
            }
            let _ = done.send(reader);
        });
    }
    drop(done);
    for _ in 0..READERS {
        match finished.recv_timeout(DEADLINE) {
            Ok(_) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("{what}: readers still running after {DEADLINE:?}: deadlock?")
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                panic!("{what}: a reader failed (its panic is above)")
            }
        }
    }
}

#[test]
fn sixteen_readers_share_one_backend() {
    let cpu: Arc<dyn Backend> = Arc::new(CpuBackend::new());
    // One at a time first: what each read must give. Files the readers
    // refuse (the corrupt fixtures) are left out.
    let want: Vec<(PathBuf, Vec<RecordBatch>)> = fixtures()
        .into_iter()
        .filter_map(|p| read_sync(&p, cpu.clone(), 4096).map(|b| (p, b)))
        .collect();
    assert!(want.len() >= 40, "only {} readable fixtures", want.len());
    let want = Arc::new(want);
    read_all_at_once("cpu", cpu, want.clone());
    if let Some(cuda) = crate::common::cuda_shared("sixteen_readers_share_one_backend") {
        read_all_at_once("cuda", cuda, want);
    }
}
