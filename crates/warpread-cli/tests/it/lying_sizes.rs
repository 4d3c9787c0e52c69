//! Files that lie about their sizes, read by `warpread cat` under an
//! address-space limit: the read ends in an error that names the file and
//! the field, never an abort, an OOM kill or a hang. (A claim the format
//! could hold but the host cannot is refused by the read's host memory
//! budget: `crates/warpread/tests/it/host_memory.rs`.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch, StringArray};
use prost::Message;
use warpread::orc::proto;
use warpread::orc::writer::{OrcCompression, OrcWriteOptions, OrcWriter};

/// Virtual memory the reading process may map, in KiB (ulimit -v): far
/// below what the lies claim, well above what an honest read of these
/// files needs.
const ADDRESS_SPACE_KIB: u64 = 3 << 20;

/// An ORC file of 40 rows (an integer and a string column, one stripe,
/// no compression) whose footer says its stripe and file hold `rows`.
fn lying_orc(dir: &Path, rows: u64) -> PathBuf {
    let honest = dir.join("honest.orc");
    let batch = RecordBatch::try_from_iter([
        ("k", Arc::new(Int64Array::from_iter_values(0..40)) as _),
        (
            "s",
            Arc::new(StringArray::from_iter_values(
                (0..40).map(|i| format!("v{i}")),
            )) as _,
        ),
    ])
    .unwrap();
    let options = OrcWriteOptions {
        compression: OrcCompression::None,
        ..Default::default()
    };
    let mut w = OrcWriter::try_new(&honest, batch.schema(), options).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    let bytes = std::fs::read(&honest).unwrap();
    let n = bytes.len();
    let ps_len = usize::from(bytes[n - 1]);
    let ps_start = n - 1 - ps_len;
    let mut ps = proto::PostScript::decode(&bytes[ps_start..n - 1]).unwrap();
    let footer_start = ps_start - ps.footer_length.unwrap() as usize;
    let mut footer = proto::Footer::decode(&bytes[footer_start..ps_start]).unwrap();
    footer.number_of_rows = Some(rows);
    footer.stripes[0].number_of_rows = Some(rows);
    let footer = footer.encode_to_vec();
    ps.footer_length = Some(footer.len() as u64);
    let ps = ps.encode_to_vec();
    let mut out = bytes[..footer_start].to_vec();
    out.extend_from_slice(&footer);
    out.extend_from_slice(&ps);
    out.push(u8::try_from(ps.len()).unwrap());
    let path = dir.join(format!("claims-{rows}-rows.orc"));
    std::fs::write(&path, out).unwrap();
    path
}

/// `warpread --backend cpu [flags] cat FILE` under the address-space
/// limit, its output thrown away.
fn cat_limited(file: &Path, flags: &[&str]) -> Output {
    let bin =
        std::env::var_os("WARPREAD_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_warpread").into());
    Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -v {ADDRESS_SPACE_KIB} && exec \"$@\" > /dev/null"
        ))
        .arg("warpread")
        .arg(bin)
        .args(["--backend", "cpu"])
        .args(flags)
        .arg("cat")
        .arg(file)
        .output()
        .unwrap()
}

#[test]
fn a_stripe_claiming_a_billion_rows_in_40_is_a_clean_error() {
    let dir = std::env::temp_dir().join(format!("warpread-lying-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for rows in [1_000_000_000u64, 1 << 40, u64::MAX >> 2] {
        let file = lying_orc(&dir, rows);
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        for flags in [&[][..], &["--host-memory-mib", "256"][..]] {
            let out = cat_limited(&file, flags);
            let err = String::from_utf8_lossy(&out.stderr);
            // 1 is warpread's exit status for an error it reports; an
            // abort is 134, a panic 101, a signal none.
            assert_eq!(out.status.code(), Some(1), "{rows} rows {flags:?}: {err}");
            assert!(err.contains(&name), "{rows} rows {flags:?}: {err}");
            assert!(!err.contains("panicked"), "{rows} rows {flags:?}: {err}");
            println!("{rows} rows {flags:?}: {}", err.trim());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
