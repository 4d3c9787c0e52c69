//! TPC-H on a cluster: two `warpread worker` processes on the loopback
//! (CPU backend) run the stages of all 22 queries at scale 0.1 over GZIP
//! Parquet and ZLIB ORC, and every answer equals the single-process run's.
//! `warpread sql --workers 2` starts and stops its own workers.

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, OnceLock};

use datafusion::prelude::SessionContext;
use warpread::exec::CpuBackend;
use warpread_cli::datagen::tpch::{self, GenCompression, GenFormat, GenOptions};
use warpread_datafusion::{
    ParquetReader, TPCH, WarpreadConfig, compare_results, register_tpch_with, run_sql, session,
    session_config, set_options,
};
use warpread_distributed::{LocalCluster, coordinator_session};

const SCALE: f64 = 0.1;

/// TPC-H at scale 0.1, GZIP Parquet and ZLIB ORC, generated once per run.
fn data() -> &'static (PathBuf, PathBuf) {
    static DATA: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DATA.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("warpread-cluster-{}", std::process::id()));
        let parquet = root.join("parquet");
        let orc = root.join("orc");
        let p = GenOptions::new(GenFormat::Parquet, GenCompression::Gzip);
        tpch::generate(SCALE, &p, &parquet, &[]).unwrap();
        let o = GenOptions::new(GenFormat::Orc, GenCompression::Zlib);
        tpch::generate(SCALE, &o, &orc, &[]).unwrap();
        (parquet, orc)
    })
}

fn cpu_config() -> WarpreadConfig {
    WarpreadConfig::with_backend(Arc::new(CpuBackend::new()))
}

fn workers(n: usize) -> LocalCluster {
    LocalCluster::start(n, |_| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_warpread"));
        cmd.args(["--backend", "cpu", "worker"]);
        cmd
    })
    .unwrap()
}

/// Every scan spread over the workers: TPC-H tables at this scale are
/// smaller than the engine's 16 MiB per partition.
const SPREAD: (&str, &str) = ("distributed.file_scan_config_bytes_per_partition", "65536");

async fn tpch_on_cluster(cluster: &LocalCluster, dir: &std::path::Path, ext: &str) {
    let single = session(cpu_config(), session_config());
    register_tpch_with(&single, dir, ext, ParquetReader::Warpread)
        .await
        .unwrap();
    let ctx: SessionContext =
        coordinator_session(cpu_config(), session_config(), cluster.workers());
    set_options(&ctx, &[(SPREAD.0.into(), SPREAD.1.into())]).unwrap();
    register_tpch_with(&ctx, dir, ext, ParquetReader::Warpread)
        .await
        .unwrap();
    let plan = ctx
        .sql(TPCH[0])
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let plan = datafusion::physical_plan::displayable(plan.as_ref())
        .indent(true)
        .to_string();
    assert!(
        plan.contains("DistributedExec") && plan.contains("reader=warpread"),
        "Q1 was not spread over the workers:\n{plan}"
    );
    let mut failures = Vec::new();
    for (i, sql) in TPCH.iter().enumerate() {
        let want = run_sql(&single, sql).await.unwrap();
        match run_sql(&ctx, sql).await {
            Ok(got) => {
                let (a, b) = (&want.last().unwrap().batches, &got.last().unwrap().batches);
                if let Err(e) = compare_results(a, b, 1e-12) {
                    failures.push(format!("{ext} Q{}: {e}", i + 1));
                }
            }
            Err(e) => failures.push(format!("{ext} Q{}: {e}", i + 1)),
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn tpch_22_on_two_worker_processes_match_one_process() {
    let (parquet, orc) = data();
    let cluster = workers(2);
    warpread_datafusion::runtime().unwrap().block_on(async {
        tpch_on_cluster(&cluster, parquet, "parquet").await;
        tpch_on_cluster(&cluster, orc, "orc").await;
    });
}

#[test]
fn sql_starts_and_stops_its_own_workers() {
    let (parquet, _) = data();
    let table = format!("lineitem={}", parquet.join("lineitem.parquet").display());
    let out = Command::new(env!("CARGO_BIN_EXE_warpread"))
        .args([
            "--backend",
            "cpu",
            "sql",
            "--workers",
            "2",
            "--format",
            "csv",
        ])
        .args(["--table", &table, "--set"])
        .arg(format!("{}={}", SPREAD.0, SPREAD.1))
        .arg("SELECT l_returnflag, count(*) AS n FROM lineitem GROUP BY l_returnflag ORDER BY 1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("worker 1: http://127.0.0.1:"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "l_returnflag,n", "{stdout}");
    assert_eq!(lines.len(), 4, "{stdout}");
    let total: u64 = lines[1..]
        .iter()
        .map(|l| l.split(',').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    // Scale 0.1 lineitem.
    assert_eq!(total, 600_572, "{stdout}");
}

#[test]
fn a_worker_command_that_does_not_listen_is_a_clear_error() {
    let e = LocalCluster::start(1, |_| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_warpread"));
        cmd.args(["--backend", "cpu", "info"]);
        cmd
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("warpread worker listening on"), "{e}");
}
