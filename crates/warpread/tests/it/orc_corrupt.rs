//! Damaged ORC files: truncated and bit-flipped copies of the fixtures must
//! give an error or some table, never a panic or a hang, on every backend.

use warpread::exec::{Backend, CpuBackend};
use warpread::orc::{OrcFile, ReadOptions};

use crate::common::{self, Rng};

fn read(path: &std::path::Path, backend: &dyn Backend) -> Result<usize, String> {
    let file = OrcFile::open(path).map_err(|e| e.to_string())?;
    let batches = file
        .read(&ReadOptions::default(), backend)
        .map_err(|e| e.to_string())?;
    Ok(batches.iter().map(|b| b.num_rows()).sum())
}

fn damaged_copies(rng: &mut Rng, bytes: &[u8], n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut b = bytes.to_vec();
            match i % 3 {
                0 => b.truncate(rng.below(b.len() as u64) as usize),
                1 => {
                    for _ in 0..1 + rng.below(4) {
                        let k = rng.below(b.len() as u64) as usize;
                        b[k] ^= 1 << rng.below(8);
                    }
                }
                _ => {
                    // Garbage over a span: hits stream data more often than
                    // metadata, which is where decoders must be robust.
                    let start = rng.below(b.len() as u64) as usize;
                    let len = (1 + rng.below(64) as usize).min(b.len() - start);
                    for x in &mut b[start..start + len] {
                        *x = rng.next() as u8;
                    }
                }
            }
            b
        })
        .collect()
}

#[test]
fn damaged_fixtures_never_panic() {
    let mut rng = Rng::fresh("damaged_fixtures_never_panic");
    let dir = crate::common::root().join("testdata/orc");
    let tmp = std::env::temp_dir().join(format!("warpread-orc-corrupt-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let cuda = common::cuda("damaged_fixtures_never_panic");
    let mut fixtures: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "orc"))
        .collect();
    fixtures.sort();
    let (mut errors, mut reads) = (0, 0);
    for orc in fixtures {
        let bytes = std::fs::read(&orc).unwrap();
        if bytes.is_empty() {
            continue;
        }
        for (i, damaged) in damaged_copies(&mut rng, &bytes, 12).into_iter().enumerate() {
            let path = tmp.join(format!(
                "{}-{i}.orc",
                orc.file_stem().unwrap().to_string_lossy()
            ));
            std::fs::write(&path, &damaged).unwrap();
            let cpu = std::panic::catch_unwind(|| read(&path, &CpuBackend::new()));
            let cpu = cpu.unwrap_or_else(|_| panic!("panic reading {}", path.display()));
            match &cpu {
                Ok(_) => reads += 1,
                Err(e) => {
                    errors += 1;
                    assert!(
                        e.contains(&*path.to_string_lossy()) || e.contains("unsupported"),
                        "error without the file name: {e}"
                    );
                }
            }
            if let Some(cuda) = cuda {
                let gpu = read(&path, cuda);
                // Same verdict; values may only differ where both fail.
                assert_eq!(
                    cpu.is_ok(),
                    gpu.is_ok(),
                    "{}: cpu {cpu:?} gpu {gpu:?}",
                    path.display()
                );
            }
            std::fs::remove_file(&path).ok();
        }
    }
    println!("damaged copies: {errors} errors, {reads} read");
    assert!(
        errors > 0,
        "no damaged copy was rejected: the test is not testing"
    );
    std::fs::remove_dir_all(&tmp).ok();
}
