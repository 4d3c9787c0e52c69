//! Reads whose columns split into sets decoded side by side give exactly
//! the batches of an unsplit read, on every fixture and both backends. The
//! fixtures are small, so the split is forced (sets of at least 1 byte).

use std::path::Path;

use warpread::arrow::array::RecordBatch;
use warpread::exec::column_sets::Split;
use warpread::exec::{Backend, CpuBackend};
use warpread::orc::{OrcFile, ReadOptions};
use warpread::parquet::ParquetFile;

use crate::{common, orc_differential, parquet_differential};

const FORCED: Split = Split {
    max_sets: 4,
    min_bytes: 1,
};

fn read(path: &Path, split: Split, backend: &dyn Backend) -> warpread::Result<Vec<RecordBatch>> {
    // Small batches: the split must also hold across batch boundaries.
    let options = ReadOptions::default()
        .with_batch_size(1000)
        .with_column_sets(split);
    if warpread::parquet::is_parquet(path) {
        ParquetFile::open(path)?.read(&options, backend)
    } else {
        OrcFile::open(path)?.read(&options, backend)
    }
}

fn check(backend: &dyn Backend) {
    let files = orc_differential::fixtures()
        .into_iter()
        .chain(parquet_differential::fixtures());
    let mut checked = 0;
    for path in files {
        let whole = read(&path, Split::NONE, backend);
        let split = read(&path, FORCED, backend);
        match (whole, split) {
            (Ok(w), Ok(s)) => {
                assert_eq!(w, s, "{} on {}", path.display(), backend.name());
                checked += 1;
            }
            // A fixture the reader refuses must be refused either way.
            (Err(w), Err(s)) => assert_eq!(w.to_string(), s.to_string(), "{}", path.display()),
            (w, s) => panic!(
                "{}: unsplit {:?}, split {:?}",
                path.display(),
                w.map(|b| b.len()),
                s.map(|b| b.len())
            ),
        }
    }
    assert!(checked > 20, "only {checked} fixtures read");
}

#[test]
fn split_reads_match_whole_reads_on_cpu() {
    check(&CpuBackend::new());
}

#[test]
fn split_reads_match_whole_reads_on_cuda() {
    let Some(cuda) = common::cuda("split_reads_match_whole_reads_on_cuda") else {
        return;
    };
    check(cuda);
}
