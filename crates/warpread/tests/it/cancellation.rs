//! A read dropped mid-way stops decoding the rest of its file, and on CUDA
//! gives back every pinned block and device mirror it held; the backend
//! then reads on as before.

use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch, StringArray};
use futures::StreamExt;
use object_store::memory::InMemory;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use warpread::exec::{Backend, CpuBackend};
use warpread::parquet::{ParquetReaderBuilder, ParquetStreamBuilder};
use warpread::read::ReadTuning;

use super::common::{cuda_options, cuda_own};
use super::stage_counting::{Counting, settled, write_gzip_parquet};

/// Row groups in the test file: many more than a read keeps in flight.
const GROUPS: usize = 40;

/// A GZIP Parquet file of [`GROUPS`] row groups of 2,000 rows.
pub fn file() -> PathBuf {
    static FILE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    FILE.get_or_init(write_file).clone()
}

fn write_file() -> PathBuf {
    let path = std::env::temp_dir().join(format!("warpread-cancel-{}.parquet", std::process::id()));
    let n = (GROUPS * 2000) as i64;
    let batch = RecordBatch::try_from_iter([
        (
            "k",
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i * 31 % 977))) as _,
        ),
        (
            "s",
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|i| format!("row {i} of the cancelled read")),
            )) as _,
        ),
    ])
    .unwrap();
    write_gzip_parquet(&path, &batch, 2000, true);
    path
}

/// One row group per read group, three in flight.
fn builder(backend: Arc<dyn Backend>) -> ParquetReaderBuilder {
    ParquetReaderBuilder::try_new(file())
        .unwrap()
        .with_backend(backend)
        .with_batch_size(500)
        .with_groups_in_flight(3)
        .with_tuning(ReadTuning::default().with_group_bytes(Some(1)))
}

#[test]
fn a_dropped_reader_stops_decoding_its_file() {
    let whole = Arc::new(Counting::default());
    let rows: usize = builder(whole.clone())
        .build()
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .sum();
    assert_eq!(rows, GROUPS * 2000);
    let all = whole.stages();
    let per_group = all / GROUPS;
    assert!(per_group > 0, "{all} stages");
    // Sync builder: one batch taken, then the reader dropped.
    let part = Arc::new(Counting::default());
    let mut reader = builder(part.clone()).build().unwrap();
    assert_eq!(reader.next().unwrap().unwrap().num_rows(), 500);
    drop(reader);
    let ran = settled(|| part.stages());
    // The group handed out, one waiting, three in flight, and one whose
    // thread had started: at most six groups' stages, not forty.
    assert!(ran <= 6 * per_group, "{ran} of {all} stages ran");
    // Async builder over an object store: the stream dropped after its
    // first batch.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let part = Arc::new(Counting::default());
    let bytes = std::fs::read(file()).unwrap();
    rt.block_on(async {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let location = ObjectPath::from("cancel.parquet");
        store.put(&location, PutPayload::from(bytes)).await.unwrap();
        let mut stream = ParquetStreamBuilder::new(store, location)
            .await
            .unwrap()
            .with_backend(part.clone())
            .with_tuning(ReadTuning::default().with_group_bytes(Some(1)))
            .build()
            .await
            .unwrap();
        stream.next().await.unwrap().unwrap();
    });
    let ran = settled(|| part.stages());
    assert!(
        ran <= 3 * per_group,
        "{ran} of {all} stages ran after the drop"
    );
}

#[test]
fn a_dropped_cuda_read_gives_back_its_pinned_blocks_and_mirrors() {
    let Some(cuda) = cuda_own(cuda_options(), "cancellation") else {
        return;
    };
    let want: Vec<RecordBatch> = builder(Arc::new(CpuBackend::new()))
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect();
    for round in 0..3 {
        let mut reader = builder(cuda.clone()).build().unwrap();
        let first = reader.next().unwrap().unwrap();
        assert_eq!(first, want[0], "round {round}");
        let during = cuda.held_memory();
        drop((reader, first));
        let held = || {
            let (pinned, mirrored) = cuda.held_memory();
            pinned + mirrored
        };
        assert_eq!(
            settled(held),
            0,
            "round {round}: pinned and mirrored bytes held after the drop (during: {during:?})"
        );
    }
    // The backend reads on, and the whole read is the CPU's.
    let got: Vec<RecordBatch> = builder(cuda.clone())
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect();
    assert_eq!(got, want);
    drop(got);
    let (pinned, mirrored) = cuda.held_memory();
    assert_eq!((pinned, mirrored), (0, 0), "held after a whole read");
}
