//! Damaged Parquet files: truncated, bit-flipped and garbage-spanned copies
//! of the fixtures must give an error or some table, never a panic or a
//! hang, on every backend (`exec::select`).

use std::panic::{AssertUnwindSafe, catch_unwind};

use warpread::exec::{self, Backend, BackendChoice, CpuBackend};
use warpread::orc::ReadOptions;
use warpread::parquet::ParquetFile;

use crate::common::{self, Rng};

fn read(path: &std::path::Path, backend: &dyn Backend) -> Result<usize, String> {
    let file = ParquetFile::open(path).map_err(|e| e.to_string())?;
    let mut options = vec![ReadOptions::default()];
    // With a predicate the page index (where there is one) is loaded and
    // pages are skipped: damage there must be as harmless.
    if file.schema().field_with_name("id").is_ok() {
        options.push(ReadOptions::default().with_predicate("id < 700".parse().unwrap()));
    }
    let mut rows = 0;
    for o in options {
        let batches = file.read(&o, backend).map_err(|e| e.to_string())?;
        rows += batches.iter().map(|b| b.num_rows()).sum::<usize>();
    }
    Ok(rows)
}

fn damage(rng: &mut Rng, bytes: &[u8], i: usize) -> Vec<u8> {
    let mut b = bytes.to_vec();
    match i % 4 {
        0 => b.truncate(rng.below(b.len() as u64) as usize),
        1 => {
            for _ in 0..1 + rng.below(4) {
                let k = rng.below(b.len() as u64) as usize;
                b[k] ^= 1 << rng.below(8);
            }
        }
        2 => {
            // Page data rather than the footer: the first 90% of the file.
            let start = rng.below(b.len() as u64 * 9 / 10) as usize;
            let len = (1 + rng.below(64) as usize).min(b.len() - start);
            for x in &mut b[start..start + len] {
                *x = rng.next() as u8;
            }
        }
        _ => {
            // One byte anywhere set to an extreme value.
            let k = rng.below(b.len() as u64) as usize;
            b[k] = if rng.below(2) == 0 { 0xff } else { 0 };
        }
    }
    b
}

#[test]
fn damaged_parquet_fixtures_never_panic() {
    let mut rng = Rng::fresh("damaged_parquet_fixtures_never_panic");
    let tmp = std::env::temp_dir().join(format!("warpread-pq-corrupt-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(CpuBackend::new())];
    if common::cuda("damaged_parquet_fixtures_never_panic").is_some() {
        backends.push(exec::select(BackendChoice::Cuda).unwrap());
    }
    let (mut errors, mut reads) = (0, 0);
    for path in crate::parquet_differential::fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        for i in 0..16 {
            let damaged = damage(&mut rng, &bytes, i);
            let p = tmp.join(format!(
                "{}-{i}.parquet",
                path.file_stem().unwrap().to_string_lossy()
            ));
            std::fs::write(&p, &damaged).unwrap();
            let mut verdicts = Vec::new();
            for b in &backends {
                let r = catch_unwind(AssertUnwindSafe(|| read(&p, b.as_ref())))
                    .unwrap_or_else(|_| panic!("panic reading {} on {}", p.display(), b.name()));
                if let Err(e) = &r {
                    assert!(
                        e.contains(&*p.to_string_lossy()) || e.contains("unsupported"),
                        "error without the file name: {e}"
                    );
                }
                verdicts.push(r.is_ok());
                match r {
                    Ok(_) => reads += 1,
                    Err(_) => errors += 1,
                }
            }
            assert!(
                verdicts.windows(2).all(|w| w[0] == w[1]),
                "{}: backends disagree",
                p.display()
            );
            std::fs::remove_file(&p).ok();
        }
    }
    println!("damaged parquet copies: {errors} errors, {reads} read");
    assert!(
        errors > 0,
        "no damaged copy was rejected: the test is not testing"
    );
    std::fs::remove_dir_all(&tmp).ok();
}

/// A footer whose unknown field is a list of 2^31 - 1 bools (a fuzzed
/// `parquet_file` timeout on the GPU host): the parquet crate's skip reads
/// no byte per bool and looped seconds on it (far longer in a debug
/// build); the reader now refuses the footer before the crate sees it.
#[test]
fn a_footer_list_of_billions_of_bools_is_refused_at_once() {
    let footer = [0x09, 0xc8, 0x01, 0xf1, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00];
    let mut file = b"PAR1".to_vec();
    file.extend_from_slice(&footer);
    file.extend_from_slice(&(footer.len() as u32).to_le_bytes());
    file.extend_from_slice(b"PAR1");
    let t = std::time::Instant::now();
    let e = ParquetFile::from_bytes("bools.parquet", bytes::Bytes::from(file))
        .unwrap_err()
        .to_string();
    assert!(e.contains("footer") && e.contains("elements"), "{e}");
    assert!(
        t.elapsed() < std::time::Duration::from_secs(1),
        "{:?}",
        t.elapsed()
    );
}
