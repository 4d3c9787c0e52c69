//! Queries on two workers served in this process over the loopback give
//! the rows a single-process session gives; a scan's settings reach the
//! workers with it.

use datafusion::prelude::SessionContext;
use tokio::net::TcpListener;
use warpread_datafusion::{compare_results, run_sql, session, session_config, set_options};
use warpread_distributed::{StaticWorkers, coordinator_session, serve};

use crate::{QUERIES, cpu_config, plan_of, register_fixtures};

/// Two workers on loopback ports, served by tasks of this runtime.
async fn two_workers() -> StaticWorkers {
    let mut urls = Vec::new();
    for _ in 0..2 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        urls.push(format!("http://{}", listener.local_addr().unwrap()));
        tokio::spawn(serve(listener, cpu_config()));
    }
    StaticWorkers::parse(&urls).unwrap()
}

/// A coordinator that spreads every scan over the workers (a byte per
/// partition: the fixture is far smaller than the engine's 16 MiB).
async fn coordinator(workers: StaticWorkers) -> SessionContext {
    let ctx = coordinator_session(cpu_config(), session_config(), workers);
    set_options(
        &ctx,
        &[(
            "distributed.file_scan_config_bytes_per_partition".into(),
            "1".into(),
        )],
    )
    .unwrap();
    register_fixtures(&ctx).await;
    ctx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn queries_on_two_workers_match_one_process() {
    let ctx = coordinator(two_workers().await).await;
    let single = session(cpu_config(), Default::default());
    register_fixtures(&single).await;
    let (_, shown) = plan_of(&ctx, QUERIES[1]).await;
    assert!(
        shown.contains("DistributedExec") && shown.contains("reader=warpread"),
        "not spread over the workers:\n{shown}"
    );
    for sql in QUERIES {
        let want = run_sql(&single, sql).await.unwrap();
        let got = run_sql(&ctx, sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        compare_results(&want[0].batches, &got[0].batches, 1e-12)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_tables_options_plan_and_run_on_the_workers() {
    // That the settings reach the worker's copy of the scan is the codec
    // test's; here a table with options of its own runs distributed.
    let ctx = coordinator(two_workers().await).await;
    set_options(&ctx, &[("warpread.backend".into(), "cpu".into())]).unwrap();
    let table = "CREATE EXTERNAL TABLE c STORED AS WARPREAD_PARQUET LOCATION '{}' \
                 OPTIONS ('warpread.group_mib' '1')";
    let path = crate::fixture("parquet/page_index_gzip_v1.parquet");
    run_sql(&ctx, &table.replace("{}", path.to_str().unwrap()))
        .await
        .unwrap();
    let (_, shown) = plan_of(&ctx, "SELECT count(*) FROM c WHERE k32 > 3").await;
    assert!(shown.contains("group_mib=1"), "{shown}");
    run_sql(&ctx, "SELECT count(*) FROM c WHERE k32 > 3")
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_that_is_gone_is_an_error_not_a_hang() {
    // A port nothing listens on: bound, then closed.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let workers = StaticWorkers::parse(&[url.clone(), url]).unwrap();
    let ctx = coordinator(workers).await;
    let run = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        run_sql(&ctx, QUERIES[1]),
    )
    .await
    .expect("a query on missing workers hung");
    assert!(run.is_err(), "a query on missing workers succeeded");
}
