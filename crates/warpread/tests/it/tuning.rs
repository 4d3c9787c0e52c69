//! A read's tuning changes how it runs, never what it returns: every
//! fixture read with each switch flipped gives the batches of a default
//! read, the reads side by side in one process, on both backends.

use std::path::Path;

use warpread::arrow::array::RecordBatch;
use warpread::exec::column_sets::Split;
use warpread::exec::{Backend, CpuBackend};
use warpread::orc::OrcFile;
use warpread::parquet::ParquetFile;
use warpread::read::{ReadOptions, ReadTuning};

use crate::{common, orc_differential, parquet_differential};

fn read(
    path: &Path,
    tuning: ReadTuning,
    backend: &dyn Backend,
) -> warpread::Result<Vec<RecordBatch>> {
    let options = ReadOptions::default()
        .with_batch_size(1000)
        .with_tuning(tuning);
    if warpread::parquet::is_parquet(path) {
        ParquetFile::open(path)?.read(&options, backend)
    } else {
        OrcFile::open(path)?.read(&options, backend)
    }
}

/// Each switch away from its default, by name.
fn variants() -> Vec<(&'static str, ReadTuning)> {
    let d = ReadTuning::default;
    vec![
        ("host CRC32", d().with_device_crc(false)),
        ("pages to the host", d().with_pages_on_device(false)),
        (
            "byte dictionaries by stages",
            d().with_device_byte_dicts(Some(true)),
        ),
        (
            "byte dictionaries on the host",
            d().with_device_byte_dicts(Some(false)),
        ),
        (
            "decimals widened on the host",
            d().with_widen_decimals(false),
        ),
        ("no column sets", d().with_column_sets(Split::NONE)),
        (
            "tiny groups, two in flight",
            d().with_group_bytes(Some(1)).with_groups_in_flight(2),
        ),
    ]
}

fn check(backend: &dyn Backend) {
    let files = orc_differential::fixtures()
        .into_iter()
        .chain(parquet_differential::fixtures());
    let mut checked = 0;
    for path in files {
        let Ok(base) = read(&path, ReadTuning::default(), backend) else {
            continue;
        };
        for (name, tuning) in variants() {
            let other = read(&path, tuning, backend)
                .unwrap_or_else(|e| panic!("{} with {name}: {e}", path.display()));
            assert_eq!(base, other, "{} with {name}", path.display());
        }
        checked += 1;
    }
    assert!(checked > 20, "only {checked} fixtures read");
}

#[test]
fn tuning_never_changes_the_batches_on_cpu() {
    check(&CpuBackend::new());
}

#[test]
fn tuning_never_changes_the_batches_on_cuda() {
    let Some(cuda) = common::cuda_host_share("tuning_never_changes_the_batches_on_cuda") else {
        return;
    };
    check(cuda);
}
