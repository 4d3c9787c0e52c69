//! The ORC reader against pyarrow: every fixture in `testdata/orc` (whose
//! expected Arrow IPC was written by pyarrow, `scripts/gen_orc_fixtures.py`),
//! and every ORC file of the third-party corpus when `../shared/corpora`
//! exists and python3 with pyarrow is available. On a GPU machine the CUDA
//! backend must give exactly the CPU's arrays.

use std::path::{Path, PathBuf};
use std::process::Command;

use arrow::array::{Array, RecordBatch};
use arrow::compute::concat_batches;
use arrow::datatypes::SchemaRef;
use warpread::exec::{Backend, CpuBackend};
use warpread::orc::{OrcFile, ReadOptions};

use crate::common::{self, corpus_dir, root};

fn read_ipc(path: &Path) -> (SchemaRef, Vec<RecordBatch>) {
    let f = std::fs::File::open(path).unwrap();
    let r = arrow::ipc::reader::FileReader::try_new(f, None).unwrap();
    let schema = r.schema();
    let batches = r.collect::<Result<Vec<_>, _>>().unwrap();
    (schema, batches)
}

pub fn read_orc(path: &Path, backend: &dyn Backend) -> warpread::Result<(SchemaRef, RecordBatch)> {
    let file = OrcFile::open(path)?;
    let options = ReadOptions::default().with_batch_size(1000);
    let batches = file.read(&options, backend)?;
    let schema = file.schema();
    let all = concat_batches(&schema, &batches).expect("batches share the schema");
    Ok((schema, all))
}

/// The first difference between two tables, if any.
fn compare(got: &RecordBatch, want_schema: &SchemaRef, want: &[RecordBatch]) -> Option<String> {
    let want = concat_batches(want_schema, want).unwrap();
    if got.num_columns() != want.num_columns() {
        return Some(format!(
            "{} columns, pyarrow {}",
            got.num_columns(),
            want.num_columns()
        ));
    }
    if got.num_rows() != want.num_rows() {
        return Some(format!(
            "{} rows, pyarrow {}",
            got.num_rows(),
            want.num_rows()
        ));
    }
    for (i, f) in want_schema.fields().iter().enumerate() {
        let gf = got.schema().field(i).clone();
        // Metadata too: pyarrow copies ORC type attributes into it (nested
        // fields' metadata is part of the data type already).
        if gf.name() != f.name() || gf.data_type() != f.data_type() || gf.metadata() != f.metadata()
        {
            return Some(format!(
                "field {i}: {} {:?} {:?}, pyarrow {} {:?} {:?}",
                gf.name(),
                gf.data_type(),
                gf.metadata(),
                f.name(),
                f.data_type(),
                f.metadata()
            ));
        }
        let (g, w) = (got.column(i), want.column(i));
        if g.to_data() != w.to_data() {
            let n = g.len().min(w.len());
            let first = (0..n).find(|&r| g.slice(r, 1).to_data() != w.slice(r, 1).to_data());
            return Some(format!(
                "column {} differs (first at row {first:?}): got {:?} want {:?}",
                f.name(),
                first.map(|r| g.slice(r, 1)),
                first.map(|r| w.slice(r, 1))
            ));
        }
    }
    None
}

pub fn fixtures() -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(root().join("testdata/orc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "orc"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "testdata/orc has no fixtures");
    v
}

#[test]
fn fixtures_match_pyarrow() {
    let mut failures = Vec::new();
    for orc in fixtures() {
        let (ws, wb) = read_ipc(&orc.with_extension("arrow"));
        match read_orc(&orc, &CpuBackend::new()) {
            Ok((_, got)) => {
                if let Some(d) = compare(&got, &ws, &wb) {
                    failures.push(format!("{}: {d}", orc.display()));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", orc.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixtures differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn cuda_matches_cpu_on_fixtures() {
    let Some(cuda) = common::cuda("cuda_matches_cpu_on_fixtures") else {
        return;
    };
    let before = cuda.profile().bytes_mirrored;
    for orc in fixtures() {
        let (_, cpu) = read_orc(&orc, &CpuBackend::new()).unwrap();
        let (_, gpu) = read_orc(&orc, cuda).unwrap();
        assert_eq!(cpu, gpu, "{}", orc.display());
    }
    // ZLIB streams inflate on the device and decode from there: the
    // comparison above covered the mirrored path.
    assert!(
        cuda.profile().bytes_mirrored > before,
        "no stage read decompressed streams from a device mirror"
    );
}

/// The corpus's ORC files (tagged `fmt:orc` in its `INDEX.tsv`), as paths
/// relative to `dir`, each with whether pyarrow read it when the index was
/// made (tagged `pa_ok`).
pub fn corpus_orc(dir: &Path) -> Vec<(String, bool)> {
    let index = std::fs::read_to_string(dir.join("INDEX.tsv")).unwrap();
    index
        .lines()
        .skip(1)
        .filter_map(|line| {
            let (path, tags) = line.split_once('\t')?;
            let tags: Vec<&str> = tags.split(',').collect();
            tags.contains(&"fmt:orc")
                .then(|| (path.to_string(), tags.contains(&"pa_ok")))
        })
        .collect()
}

fn pyarrow_available() -> bool {
    Command::new("python3")
        .args(["-c", "import pyarrow.orc"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn corpus_matches_pyarrow() {
    let Some(dir) = corpus_dir() else {
        println!("corpus_matches_pyarrow: skipped: no ../shared/corpora");
        return;
    };
    if !pyarrow_available() {
        println!("corpus_matches_pyarrow: skipped: python3 with pyarrow not available");
        return;
    }
    let cache = std::env::var_os("WARPREAD_EXPECTED_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/corpus-expected"));
    std::fs::create_dir_all(&cache).unwrap();
    let cuda = common::cuda("corpus_matches_pyarrow");
    let (mut matched, mut clean_errors, mut failures) = (0, 0, Vec::new());
    for (path, _) in corpus_orc(&dir) {
        let path = path.as_str();
        let orc = dir.join(path);
        let expected = cache.join(path.replace('/', "__") + ".arrow");
        // Exit status 3 is "pyarrow cannot read it"; anything else that is
        // not success (no numpy, an unwritable cache) is a broken harness,
        // which must not pass as a clean disagreement.
        let pyarrow_ok = expected.exists() || {
            let o = Command::new("python3")
                .arg(root().join("scripts/orc_expected.py"))
                .arg(&orc)
                .arg(&expected)
                .output()
                .expect("python3 runs");
            match o.status.code() {
                Some(0) => true,
                Some(3) => false,
                _ => panic!(
                    "orc_expected.py failed on {path}: {}",
                    String::from_utf8_lossy(&o.stderr)
                ),
            }
        };
        let ours = std::panic::catch_unwind(|| read_orc(&orc, &CpuBackend::new()));
        let ours = match ours {
            Ok(r) => r,
            Err(_) => {
                failures.push(format!("{path}: PANIC"));
                continue;
            }
        };
        match (pyarrow_ok, ours) {
            (true, Ok((_, got))) => {
                let (ws, wb) = read_ipc(&expected);
                match compare(&got, &ws, &wb) {
                    None => matched += 1,
                    Some(d) => failures.push(format!("{path}: {d}")),
                }
                if let Some(cuda) = cuda {
                    match read_orc(&orc, cuda) {
                        Ok((_, g)) if g == got => {}
                        Ok(_) => failures.push(format!("{path}: CUDA differs from CPU")),
                        Err(e) => failures.push(format!("{path}: CUDA error {e}")),
                    }
                }
            }
            (true, Err(e)) => failures.push(format!("{path}: pyarrow reads it, we fail: {e}")),
            (false, Ok(_)) => {
                println!("{path}: pyarrow fails, warpread reads it");
                clean_errors += 1;
            }
            (false, Err(e)) => {
                println!("{path}: both fail; ours: {e}");
                clean_errors += 1;
            }
        }
    }
    println!(
        "corpus: {matched} match pyarrow, {clean_errors} unreadable by pyarrow handled cleanly"
    );
    assert!(
        failures.is_empty(),
        "{} corpus files differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
