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

/// An ORC file of no stripes whose footer is one LZO chunk holding `lzo`.
fn lzo_orc(lzo: &[u8]) -> Vec<u8> {
    use prost::Message;
    use warpread::orc::proto;
    let mut file = b"ORC".to_vec();
    let h = (lzo.len() as u32) << 1;
    file.extend_from_slice(&h.to_le_bytes()[..3]);
    file.extend_from_slice(lzo);
    let ps = proto::PostScript {
        footer_length: Some(3 + lzo.len() as u64),
        compression: Some(3), // LZO
        compression_block_size: Some(1 << 16),
        version: vec![0, 12],
        metadata_length: Some(0),
        magic: Some("ORC".into()),
        ..Default::default()
    }
    .encode_to_vec();
    file.extend_from_slice(&ps);
    file.push(ps.len() as u8);
    file
}

/// A damaged LZO stream (from a mutated LZO file) made the decompressor
/// panic while the tail was read. The footer here is LZO1X written by
/// hand: one literal run (first byte 17 + n) and the end marker.
#[test]
fn damaged_lzo_footer_is_an_error() {
    use prost::Message;
    use warpread::orc::proto;
    let footer = proto::Footer {
        header_length: Some(3),
        content_length: Some(0),
        types: vec![
            proto::Type {
                kind: Some(12), // STRUCT
                subtypes: vec![1],
                field_names: vec!["x".into()],
                ..Default::default()
            },
            proto::Type {
                kind: Some(3), // INT
                ..Default::default()
            },
        ],
        number_of_rows: Some(0),
        ..Default::default()
    }
    .encode_to_vec();
    assert!((4..=238).contains(&footer.len()));
    let mut lzo = vec![17 + footer.len() as u8];
    lzo.extend_from_slice(&footer);
    lzo.extend_from_slice(&[0x11, 0, 0]);

    let tmp = std::env::temp_dir().join(format!("warpread-orc-lzo-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let good = tmp.join("good.orc");
    std::fs::write(&good, lzo_orc(&lzo)).unwrap();
    assert_eq!(read(&good, &CpuBackend::new()), Ok(0));

    // After the literals, a match reaching before the start of the output
    // (an M2, an M3, the 2049-byte match of opcodes 0..15, an M4), or a
    // length run cut off by the end of the chunk.
    let bad_tails: [&[u8]; 5] = [
        &[0x40, 0xff],
        &[0x21, 0xff, 0xff],
        &[0x00, 0xff],
        &[0x19, 0x04, 0x00],
        &[0x20, 0x00, 0x00],
    ];
    for (i, tail) in bad_tails.into_iter().enumerate() {
        let mut bad = lzo[..1 + footer.len()].to_vec();
        bad.extend_from_slice(tail);
        let path = tmp.join(format!("bad-{i}.orc"));
        std::fs::write(&path, lzo_orc(&bad)).unwrap();
        let e = read(&path, &CpuBackend::new()).unwrap_err();
        assert!(
            e.contains(&*path.to_string_lossy()) && e.contains("footer"),
            "{tail:?}: {e}"
        );
    }
    std::fs::remove_dir_all(&tmp).ok();
}
