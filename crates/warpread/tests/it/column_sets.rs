//! Reads whose columns split into sets decoded side by side, or whose read
//! groups are in flight side by side, give exactly the batches of a plain
//! read, on every fixture and both backends. The fixtures are small, so the
//! split is forced (sets of at least 1 byte), and so are the groups (one
//! stripe or row group each).

use std::path::Path;

use warpread::arrow::array::RecordBatch;
use warpread::exec::column_sets::Split;
use warpread::exec::{Backend, CpuBackend};
use warpread::orc::{OrcFile, ReadOptions};
use warpread::parquet::ParquetFile;
use warpread::read::ReadTuning;

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
    read_with(path, &options, backend)
}

fn read_with(
    path: &Path,
    options: &ReadOptions,
    backend: &dyn Backend,
) -> warpread::Result<Vec<RecordBatch>> {
    let options = options.clone();
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
            // A fixture the reader refuses must be refused either way (the
            // first error found may differ: sets run side by side).
            (Err(_), Err(_)) => {}
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

/// Every stripe or row group a group of its own, `depth` of them in flight,
/// against one group at a time.
fn check_in_flight(backend: &dyn Backend) {
    let files = orc_differential::fixtures()
        .into_iter()
        .chain(parquet_differential::fixtures());
    let mut multi = 0;
    for path in files {
        let options = |depth| {
            ReadOptions::default().with_batch_size(1000).with_tuning(
                ReadTuning::default()
                    .with_group_bytes(Some(1))
                    .with_groups_in_flight(depth)
                    .with_column_sets(FORCED),
            )
        };
        let one = read_with(&path, &options(1), backend);
        for depth in [2, 3] {
            let many = read_with(&path, &options(depth), backend);
            match (&one, many) {
                (Ok(o), Ok(m)) => assert_eq!(o, &m, "{} at depth {depth}", path.display()),
                (Err(_), Err(_)) => {}
                (o, m) => panic!(
                    "{}: one at a time {:?}, {depth} in flight {:?}",
                    path.display(),
                    o.as_ref().map(|b| b.len()),
                    m.map(|b| b.len())
                ),
            }
        }
        let groups = if warpread::parquet::is_parquet(&path) {
            ParquetFile::open(&path).map_or(0, |f| f.metadata().num_row_groups())
        } else {
            OrcFile::open(&path).map_or(0, |f| f.stripes().len())
        };
        if one.is_ok() && groups > 2 {
            multi += 1;
        }
    }
    assert!(
        multi >= 3,
        "only {multi} fixtures read had more than two groups"
    );
}

#[test]
fn groups_in_flight_match_one_at_a_time_on_cpu() {
    check_in_flight(&CpuBackend::new());
}

#[test]
fn groups_in_flight_match_one_at_a_time_on_cuda() {
    let Some(cuda) = common::cuda("groups_in_flight_match_one_at_a_time_on_cuda") else {
        return;
    };
    check_in_flight(cuda);
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

/// No columns at all (DataFusion's `SELECT count(*)`): every fixture gives
/// its rows and no columns, split or not.
#[test]
fn empty_projections_give_rows() {
    let files = orc_differential::fixtures()
        .into_iter()
        .chain(parquet_differential::fixtures());
    for path in files {
        let cpu = CpuBackend::new();
        let Ok(all) = read(&path, Split::NONE, &cpu) else {
            continue;
        };
        let rows: usize = all.iter().map(|b| b.num_rows()).sum();
        for split in [Split::NONE, FORCED] {
            let options = ReadOptions::default()
                .with_columns(Vec::<String>::new())
                .with_column_sets(split);
            let got = if warpread::parquet::is_parquet(&path) {
                ParquetFile::open(&path).and_then(|f| f.read(&options, &cpu))
            } else {
                OrcFile::open(&path).and_then(|f| f.read(&options, &cpu))
            }
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                got.iter().all(|b| b.num_columns() == 0),
                "{}",
                path.display()
            );
            let n: usize = got.iter().map(|b| b.num_rows()).sum();
            assert_eq!(n, rows, "{}", path.display());
        }
    }
}
