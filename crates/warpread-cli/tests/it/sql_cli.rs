//! `warpread gen tpch --format orc` and `warpread sql` end to end.

use std::process::Command;

fn warpread() -> Command {
    let bin =
        std::env::var_os("WARPREAD_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_warpread").into());
    Command::new(bin)
}

#[test]
fn gen_orc_then_query_it_with_sql_and_the_shell() {
    let dir = std::env::temp_dir().join(format!("warpread-sql-cli-{}", std::process::id()));
    let out = warpread()
        .args(["gen", "tpch", "--scale", "0.001", "--format", "orc"])
        .args(["--compression", "zlib", "--tables", "nation,region"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nation = format!("nation={}", dir.join("nation.orc").display());
    let out = warpread()
        .args([
            "--backend",
            "cpu",
            "sql",
            "--format",
            "csv",
            "--table",
            &nation,
        ])
        .arg("SELECT count(*) AS n FROM nation WHERE n_regionkey = 1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "n\n5\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ORC via warpread"), "{stderr}");

    let mut child = warpread()
        .args([
            "--backend",
            "cpu",
            "sql",
            "--format",
            "csv",
            "--table",
            &nation,
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"SELECT max(n_nationkey) AS m\n  FROM nation;\nSELECT nope;\n\\memory\nSELECT 1 AS one;\n",
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "m\n24\none\n1\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error:"));
    // `\memory`: the backend (the CPU holds no device memory) and the
    // process's resident memory, on stderr, between the statements.
    assert!(stderr.contains("memory: cpu"), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("memory: process resident") && l.ends_with(" MiB")),
        "{stderr}"
    );

    // Parquet: warpread's reader by default, DataFusion's on request.
    let pq_dir = dir.join("parquet");
    let out = warpread()
        .args(["gen", "tpch", "--scale", "0.001", "--format", "parquet"])
        .args(["--compression", "gzip", "--tables", "nation"])
        .arg(&pq_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nation_pq = format!("nation={}", pq_dir.join("nation.parquet").display());
    for (reader, says) in [
        (None, "Parquet via warpread"),
        (
            Some("datafusion"),
            "Parquet via DataFusion's built-in reader",
        ),
    ] {
        let mut cmd = warpread();
        cmd.args(["--backend", "cpu", "sql", "--format", "csv"])
            .args(["--table", &nation_pq]);
        if let Some(r) = reader {
            cmd.args(["--parquet-reader", r]);
        }
        let out = cmd
            .arg("SELECT count(n_name) AS n FROM nation WHERE n_regionkey = 1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "n\n5\n");
        assert!(stderr.contains(says), "{stderr}");
    }

    let out = warpread()
        .args(["gen", "tpch", "--scale", "0.001", "--format", "orc"])
        .args(["--compression", "gzip"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("use --compression zlib"));
    std::fs::remove_dir_all(&dir).ok();
}
