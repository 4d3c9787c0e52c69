//! `warpread convert --codec auto|gsst|huffman|none` then `cat` gives the
//! source back; every column's choice and ratio is printed; `--strings`
//! still works, deprecated; SQL reads a converted container, through the
//! CLI and `STORED AS GSST`; a damaged Huffman column fails `cat` cleanly.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::gsst_container::{cat_fails, concat, read_ipc};
use crate::common::root;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpread-huffman-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn warpread() -> Command {
    let bin =
        std::env::var_os("WARPREAD_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_warpread").into());
    Command::new(bin)
}

/// Runs a command that must succeed: (stdout, stderr).
fn run_ok(cmd: &mut Command) -> (Vec<u8>, String) {
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    (out.stdout, err)
}

/// A CSV of integers, floats, dates, timestamps and strings, with empty
/// (null) fields.
fn csv_source() -> PathBuf {
    let csv = tmp("source.csv");
    let mut text = String::from("id,qty,price,day,at,flag,comment\n");
    for i in 0..5000 {
        if i % 13 == 0 {
            text.push_str(&format!("{i},,,,,,\n"));
        } else {
            text.push_str(&format!(
                "{i},{},{}.{:02},2024-0{}-1{},2024-01-01T00:00:{:02},{},\"{} ünïcode, requests {}\"\n",
                i % 50,
                i % 997,
                i % 100,
                1 + i % 9,
                i % 10,
                i % 60,
                ["A", "N", "R"][i % 3],
                ["quickly", "slyly final", "carefully bold"][i % 3],
                i % 17
            ));
        }
    }
    std::fs::write(&csv, text).unwrap();
    csv
}

/// `warpread --backend cpu convert --codec CODEC --batch-size ROWS SRC OUT`;
/// its stderr (the per-column report).
fn convert(src: &Path, out: &Path, codec: &str, rows: usize) -> String {
    run_ok(
        warpread()
            .args([
                "--backend",
                "cpu",
                "convert",
                "--codec",
                codec,
                "--batch-size",
            ])
            .arg(rows.to_string())
            .arg(src)
            .arg(out),
    )
    .1
}

#[test]
fn cli_convert_codec_then_cat_gives_the_source() {
    let sources = [
        csv_source(),
        root().join("testdata/parquet/types_zstd_v1.parquet"),
        root().join("testdata/orc/strings_v11_dict_zlib.orc"),
    ];
    for (i, src) in sources.iter().enumerate() {
        let convert = |codec: &str, out: &Path| convert(src, out, codec, 1500);
        let plain = tmp(&format!("cli-{i}.plain.arrow"));
        convert("none", &plain);
        let (ps, pb) = read_ipc(&plain);
        for codec in ["auto", "huffman", "gsst"] {
            let out = tmp(&format!("cli-{i}.{codec}.arrow"));
            let report = convert(codec, &out);
            let what = format!("{} --codec {codec}", src.display());
            // One line per column: its name, what it became and its ratio.
            for f in ps.fields() {
                assert!(
                    report
                        .lines()
                        .any(|l| l.trim_start().starts_with(f.name().as_str())
                            && l.contains("ratio")),
                    "{what}: no line for {}:\n{report}",
                    f.name()
                );
            }
            let (ss, _) = read_ipc(&out);
            let huffman = ss
                .fields()
                .iter()
                .filter(|f| {
                    f.metadata().get("ARROW:extension:name").map(String::as_str)
                        == Some("warpread.huffman")
                })
                .count();
            match codec {
                "huffman" => assert!(huffman > 0, "{what}"),
                "gsst" => assert_eq!(huffman, 0, "{what}"),
                _ => {}
            }
            let back = tmp(&format!("cli-{i}.{codec}.back.arrow"));
            run_ok(
                warpread()
                    .args(["--backend", "cpu", "cat", "-o"])
                    .arg(&back)
                    .arg(&out),
            );
            let (bs, bb) = read_ipc(&back);
            assert_eq!(bs, ps, "{what}");
            assert_eq!(concat(&bs, &bb), concat(&ps, &pb), "{what}");
            // Projection: the columns asked for, decoded.
            let first = ps.field(0).name().clone();
            let last = ps.field(ps.fields().len() - 1).name().clone();
            let projected = tmp(&format!("cli-{i}.{codec}.proj.arrow"));
            run_ok(
                warpread()
                    .args(["--backend", "cpu", "cat", "--columns"])
                    .arg(format!("{last},{first}"))
                    .arg("-o")
                    .arg(&projected)
                    .arg(&out),
            );
            let (js, jb) = read_ipc(&projected);
            let want = concat(&ps, &pb);
            let got = concat(&js, &jb);
            assert_eq!(got.num_columns(), 2, "{what}: projection");
            for (g, k) in got.columns().iter().zip([ps.fields().len() - 1, 0]) {
                assert_eq!(g.as_ref(), want.column(k).as_ref(), "{what}: projection");
            }
        }
    }
}

#[test]
fn strings_is_a_deprecated_alias_of_codec() {
    let src = csv_source();
    let out = tmp("alias.arrow");
    let (_, err) = run_ok(
        warpread()
            .args(["--backend", "cpu", "convert", "--strings", "plain"])
            .arg(&src)
            .arg(&out),
    );
    assert!(
        err.contains("deprecated") && err.contains("--codec none"),
        "{err}"
    );
    let (schema, _) = read_ipc(&out);
    assert!(schema.fields().iter().all(|f| f.metadata().is_empty()));
    let both = warpread()
        .args(["convert", "--strings", "gsst", "--codec", "auto"])
        .arg(&src)
        .arg(&out)
        .output()
        .unwrap();
    assert!(!both.status.success());
    assert!(String::from_utf8_lossy(&both.stderr).contains("cannot be used with"));
}

#[test]
fn sql_reads_a_converted_container() {
    let src = csv_source();
    let out = tmp("sql.huffman.arrow");
    convert(&src, &out, "huffman", 700);
    let query = "SELECT flag, count(*) AS n, sum(qty) AS q, max(comment) AS c, min(day) AS d \
                 FROM t WHERE price > 10 GROUP BY flag ORDER BY flag";
    let sql = |table: &Path| {
        let (stdout, _) = run_ok(
            warpread()
                .args(["--backend", "cpu", "sql", "--format", "csv", "--table"])
                .arg(format!("t={}", table.display()))
                .arg(query),
        );
        String::from_utf8(stdout).unwrap()
    };
    let plain = tmp("sql.plain.arrow");
    convert(&src, &plain, "none", 1 << 20);
    let got = sql(&out);
    assert_eq!(got, sql(&plain));
    assert_eq!(got.lines().count(), 4, "{got}");
}

#[test]
fn cat_of_a_damaged_huffman_column_fails_cleanly() {
    let src = csv_source();
    let out = tmp("damaged.arrow");
    convert(&src, &out, "huffman", 2000);
    let mut b = std::fs::read(&out).unwrap();
    // The first column container's frame magic (the first column, `id`).
    let at = b.windows(4).position(|w| w == b"WRHF").unwrap();
    b[at] ^= 0xff;
    std::fs::write(&out, &b).unwrap();
    let err = cat_fails(&out);
    assert!(
        err.contains("damaged.arrow")
            && err.contains("stripe 0")
            && err.contains("column id")
            && err.contains("Huffman")
            && !err.contains("panicked"),
        "{err}"
    );
}
