//! The `warpread` binary end to end on the CPU backend.

use std::process::Command;

/// The binary cargo built, or `$WARPREAD_BIN` when the tests run from a
/// bundle on another machine (scripts/gpu-bundle.sh).
pub(crate) fn warpread() -> Command {
    let bin =
        std::env::var_os("WARPREAD_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_warpread").into());
    Command::new(bin)
}

/// Runs `cmd` (a `--json` report), asserting it succeeds (its stderr
/// otherwise, after `what`), and returns the parsed report.
pub(crate) fn json_report(cmd: &mut Command, what: &str) -> serde_json::Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs `warpread --backend cpu bench codecs ARGS --size-mib 1 --runs 1
/// --warmup 0 --json` and returns the parsed report.
fn bench_json(args: &[&str]) -> serde_json::Value {
    json_report(
        warpread()
            .args(["--backend", "cpu", "bench", "codecs"])
            .args(args)
            .args(["--size-mib", "1", "--runs", "1", "--warmup", "0", "--json"]),
        &args.join(" "),
    )
}

#[test]
fn bench_codecs_on_generated_tpch_verifies_and_reports() {
    let v = bench_json(&["--codec", "orc-rle-v1", "--suite", "tpch"]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 7);
    for r in rows {
        assert_eq!(r["verified"], true);
        assert_eq!(r["uncompressed_bytes"].as_u64().unwrap() % (1 << 20), 0);
        assert!(r["gbps"].as_f64().unwrap() > 0.0);
    }
    assert!(v["backend"].as_str().unwrap().starts_with("cpu"));
}

#[test]
fn unknown_codec_and_backend_fail_cleanly() {
    let out = warpread()
        .args(["bench", "codecs", "--codec", "lzw"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("codec `lzw`"));
    let out = warpread()
        .args(["--backend", "gpu", "info"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn info_reports_the_backend() {
    let out = warpread().args(["info"]).output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("backend (auto):"), "{s}");
}

#[test]
fn bench_deflate_on_the_cpu_verifies() {
    let v = bench_json(&[
        "--codec",
        "deflate",
        "--suite",
        "tpch",
        "--columns",
        "L_ORDERKEY,L_RETURNFLAG",
    ]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter()
            .all(|r| r["verified"] == true && r["ratio"].as_f64().unwrap() > 1.0)
    );
}

#[test]
fn inspect_and_cat_read_parquet() {
    let path = crate::common::root().join("testdata/parquet/nested_gzip_v2.parquet");
    let out = warpread().arg("inspect").arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("format: Parquet") && text.contains("row groups:"),
        "{text}"
    );
    let out = warpread()
        .args([
            "--backend",
            "cpu",
            "cat",
            "--format",
            "csv",
            "--columns",
            "id",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 1201);
    assert_eq!(text.lines().nth(1), Some("0"));
}

/// A write that fails fails `cat` with the output's name, in every format,
/// the last one included (JSON lines leaves it to a final flush: before
/// that flush was checked, `--format json` into a full device exited 0).
#[test]
#[cfg(target_os = "linux")]
fn cat_into_a_full_device_fails_naming_it() {
    let path = crate::common::root().join("testdata/parquet/nested_gzip_v2.parquet");
    for format in ["arrow", "csv", "json"] {
        let out = warpread()
            .args([
                "--backend",
                "cpu",
                "cat",
                "--columns",
                "id",
                "--format",
                format,
            ])
            .args(["-o", "/dev/full"])
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "{format}: cat succeeded into /dev/full"
        );
        assert!(err.contains("/dev/full"), "{format}: {err}");
    }
}

/// `cat --format arrow` of a file whose dictionaries change between row
/// groups: an IPC file holds one dictionary per field, so the columns are
/// written as their values, equal to the parquet crate's read of them.
#[test]
fn cat_to_arrow_expands_dictionaries_that_change_between_groups() {
    use arrow::array::RecordBatch;
    use arrow::compute::{cast, concat_batches};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    let path = crate::common::root().join("testdata/parquet/page_index_gzip_v1.parquet");
    let out_path =
        std::env::temp_dir().join(format!("warpread-cat-dict-{}.arrow", std::process::id()));
    let out = warpread()
        .args(["--backend", "cpu", "cat", "--format", "arrow", "--output"])
        .arg(&out_path)
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reader =
        arrow::ipc::reader::FileReader::try_new(std::fs::File::open(&out_path).unwrap(), None)
            .unwrap();
    let schema = reader.schema();
    let got: Vec<RecordBatch> = reader.collect::<Result<_, _>>().unwrap();
    std::fs::remove_file(&out_path).unwrap();
    let got = concat_batches(&schema, &got).unwrap();

    let want = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&path).unwrap())
        .unwrap()
        .build()
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let want = concat_batches(&want[0].schema(), &want).unwrap();
    assert_eq!(got.num_rows(), want.num_rows());
    assert_eq!(got.num_columns(), want.num_columns());
    for (i, field) in schema.fields().iter().enumerate() {
        assert!(
            !matches!(
                field.data_type(),
                arrow::datatypes::DataType::Dictionary(..)
            ),
            "{} is still a dictionary",
            field.name()
        );
        let want = cast(want.column(i), field.data_type()).unwrap();
        assert_eq!(
            got.column(i).as_ref(),
            want.as_ref(),
            "column {}",
            field.name()
        );
    }
}

/// `cat --format arrow` of every fixture and, when present, every ORC and
/// Parquet file of the third-party corpus that the reader reads: the IPC
/// file holds the whole-file read's rows (dictionary columns of files with
/// several row groups or stripes as their values).
#[test]
fn cat_to_arrow_writes_every_readable_file() {
    use arrow::array::RecordBatch;
    use arrow::compute::{cast, concat_batches};
    use warpread::exec::CpuBackend;
    use warpread::read::ReadOptions;

    let root = crate::common::root();
    let mut files: Vec<std::path::PathBuf> = ["orc", "parquet"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join("testdata").join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "orc" || e == "parquet"))
        .collect();
    match crate::common::corpus_dir() {
        Some(corpus) => {
            let index = std::fs::read_to_string(corpus.join("INDEX.tsv")).unwrap();
            files.extend(
                index
                    .lines()
                    .skip(1)
                    .filter_map(|l| l.split('\t').next())
                    .filter(|p| p.ends_with(".orc") || p.ends_with(".parquet"))
                    .map(|p| corpus.join(p)),
            );
        }
        None => println!("corpus: skipped: no third-party corpus"),
    }
    files.sort();
    let out_path =
        std::env::temp_dir().join(format!("warpread-cat-all-{}.arrow", std::process::id()));
    let mut written = 0;
    for path in &files {
        let cpu = CpuBackend::new();
        let whole = if path.extension().is_some_and(|e| e == "orc") {
            warpread::orc::OrcFile::open(path)
                .and_then(|f| Ok((f.schema(), f.read(&ReadOptions::default(), &cpu)?)))
        } else {
            warpread::parquet::ParquetFile::open(path)
                .and_then(|f| Ok((f.schema(), f.read(&ReadOptions::default(), &cpu)?)))
        };
        let Ok((schema, whole)) = whole else {
            continue; // unsupported or damaged: others' tests
        };
        let out = warpread()
            .args(["--backend", "cpu", "cat", "--format", "arrow", "--output"])
            .arg(&out_path)
            .arg(path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let reader =
            arrow::ipc::reader::FileReader::try_new(std::fs::File::open(&out_path).unwrap(), None)
                .unwrap();
        let got_schema = reader.schema();
        let got: Vec<RecordBatch> = reader.collect::<Result<_, _>>().unwrap();
        let got = concat_batches(&got_schema, &got).unwrap();
        let want = concat_batches(&schema, &whole).unwrap();
        assert_eq!(got.num_rows(), want.num_rows(), "{}", path.display());
        for (i, field) in got_schema.fields().iter().enumerate() {
            let want = cast(want.column(i), field.data_type()).unwrap();
            assert_eq!(
                got.column(i).as_ref(),
                want.as_ref(),
                "{}: column {}",
                path.display(),
                field.name()
            );
        }
        written += 1;
    }
    let _ = std::fs::remove_file(&out_path);
    println!("{written} of {} files written", files.len());
    assert!(written >= 40, "{written}");
}

/// `bench read-devices` on the CPU backend, files cut into more parts than
/// they have row groups (4) or stripes (3, 24), so some parts are empty:
/// the parts' rows, checked by the command against the whole-file read,
/// add up.
#[test]
fn the_scan_in_parts_reads_every_row_once() {
    for (file, rows, parts) in [
        ("testdata/parquet/page_index_gzip_v1.parquet", 6000, "9"),
        ("testdata/orc/rowgroups_v12_zlib.orc", 6000, "5"),
        ("testdata/orc/many_stripes_v12_none.orc", 4800, "30"),
    ] {
        let path = crate::common::root().join(file);
        let report = json_report(
            warpread()
                .args(["--backend", "cpu", "bench", "read-devices"])
                .arg(&path)
                .args(["--parts", parts, "--runs", "1", "--warmup", "0", "--json"]),
            file,
        );
        let row = &report[0];
        assert_eq!(row["rows"], rows, "{file}");
        assert_eq!(row["parts"].as_array().unwrap().len().to_string(), parts);
        assert_eq!(row["alone_gbps"].as_array().unwrap().len(), 1);
        assert!(row["together_gbps"].as_f64().unwrap() > 0.0);
    }
}
