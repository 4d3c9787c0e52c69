//! SQL through DataFusion: the 22 TPC-H queries at scale 0.01 on warpread's
//! ORC provider (CPU backend) give the same rows as DataFusion's built-in
//! Parquet reader on the same generated data; pushdown and error paths.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use datafusion::prelude::SessionContext;
use warpread::datafusion::{
    OrcFormat, ScanRequest, TPCH, WarpFormat, WarpreadConfig, compare_results, register_tpch,
    run_sql, session,
};
use warpread::datagen::tpch::{self, GenCompression, GenFormat, GenOptions};
use warpread::exec::{BackendChoice, CpuBackend};
use warpread::orc::{CmpOp, Predicate, Scalar};

const SCALE: f64 = 0.01;

/// TPC-H at scale 0.01 as ZLIB ORC (small stripes, so scans have many
/// units to prune and split) and Snappy Parquet, generated once per run.
fn data() -> &'static (PathBuf, PathBuf) {
    static DATA: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DATA.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("warpread-sql-tpch-{}", std::process::id()));
        let orc = root.join("orc");
        let parquet = root.join("parquet");
        let o = GenOptions {
            rows_per_group: 8192,
            ..GenOptions::new(GenFormat::Orc, GenCompression::Zlib)
        };
        tpch::generate(SCALE, &o, &orc, &[]).unwrap();
        let p = GenOptions::new(GenFormat::Parquet, GenCompression::Snappy);
        tpch::generate(SCALE, &p, &parquet, &[]).unwrap();
        (orc, parquet)
    })
}

fn cpu_session() -> SessionContext {
    session(
        WarpreadConfig::with_backend(Arc::new(CpuBackend::new())),
        Default::default(),
    )
}

async fn sessions() -> (SessionContext, SessionContext) {
    let (orc, parquet) = data();
    let warp = cpu_session();
    register_tpch(&warp, orc, "orc").await.unwrap();
    let df = cpu_session();
    register_tpch(&df, parquet, "parquet").await.unwrap();
    (warp, df)
}

fn rt() -> tokio::runtime::Runtime {
    warpread::datafusion::runtime().unwrap()
}

#[test]
fn tpch_22_queries_match_datafusion_parquet() {
    rt().block_on(async {
        let (warp, df) = sessions().await;
        let mut failures = Vec::new();
        for (i, sql) in TPCH.iter().enumerate() {
            let a = run_sql(&warp, sql).await.unwrap();
            let b = run_sql(&df, sql).await.unwrap();
            let (a, b) = (&a.last().unwrap().batches, &b.last().unwrap().batches);
            let rows: usize = a.iter().map(|x| x.num_rows()).sum();
            println!("Q{}: {rows} rows", i + 1);
            // Identical data: only float sums added in another order may differ.
            if let Err(e) = compare_results(a, b, 1e-12) {
                failures.push(format!("Q{}: {e}", i + 1));
            }
        }
        assert!(failures.is_empty(), "{failures:#?}");
    });
}

#[test]
fn scans_push_projection_filter_and_limit() {
    rt().block_on(async {
        let (warp, _) = sessions().await;
        let plan = run_sql(
            &warp,
            "EXPLAIN SELECT l_orderkey FROM lineitem WHERE l_orderkey < 100",
        )
        .await
        .unwrap();
        let text = warpread::datafusion::sorted_rows(&plan[0].batches)
            .concat()
            .join("\n");
        assert!(text.contains("reader=warpread"), "{text}");
        assert!(text.contains("pruning_predicate"), "{text}");
        let r = run_sql(
            &warp,
            "SELECT count(*) AS n, max(l_orderkey) AS m FROM lineitem WHERE l_orderkey < 100",
        )
        .await
        .unwrap();
        let rows = warpread::datafusion::sorted_rows(&r[0].batches);
        let n: u64 = rows[0][0].parse().unwrap();
        assert!(n > 0 && rows[0][1].parse::<i64>().unwrap() < 100);
        let r = run_sql(&warp, "SELECT * FROM lineitem LIMIT 7")
            .await
            .unwrap();
        assert_eq!(r[0].batches.iter().map(|b| b.num_rows()).sum::<usize>(), 7);
        assert_eq!(r[0].schema.fields().len(), 16);
    });
}

#[test]
fn statistics_prune_stripes() {
    let (orc, _) = data();
    let file = OrcFormat.open(&orc.join("lineitem.orc")).unwrap();
    let all = ScanRequest {
        columns: vec!["l_orderkey".into()],
        batch_size: 8192,
        ..Default::default()
    };
    let units = file.plan(&all).unwrap();
    assert!(units.len() > 3, "{} stripes", units.len());
    let few = ScanRequest {
        predicates: vec![Predicate {
            column: "l_orderkey".into(),
            op: CmpOp::Lt,
            value: Scalar::Int(100),
        }],
        ..all.clone()
    };
    assert_eq!(file.plan(&few).unwrap().len(), 1);
}

#[test]
fn create_external_table_stored_as_orc() {
    let (orc, _) = data();
    rt().block_on(async {
        let ctx = cpu_session();
        let sql = format!(
            "CREATE EXTERNAL TABLE nation STORED AS ORC LOCATION '{}'",
            orc.join("nation.orc").display()
        );
        run_sql(&ctx, &sql).await.unwrap();
        let r = run_sql(&ctx, "SELECT count(*) FROM nation").await.unwrap();
        assert_eq!(warpread::datafusion::sorted_rows(&r[0].batches)[0][0], "25");
        let explain = run_sql(&ctx, "EXPLAIN SELECT n_name FROM nation")
            .await
            .unwrap();
        let text = warpread::datafusion::sorted_rows(&explain[0].batches)
            .concat()
            .join("\n");
        assert!(text.contains("reader=warpread, backend=cpu"), "{text}");
    });
}

#[test]
fn reader_errors_name_file_and_stripe() {
    let (orc, _) = data();
    let dir = std::env::temp_dir().join(format!("warpread-sql-corrupt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("orders.orc");
    let mut bytes = std::fs::read(orc.join("orders.orc")).unwrap();
    // Garbage over the middle of the first stripe's data.
    for b in &mut bytes[100..4000] {
        *b = 0xA5;
    }
    std::fs::write(&bad, &bytes).unwrap();
    rt().block_on(async {
        let ctx = cpu_session();
        warpread::datafusion::register_path(&ctx, "orders", &bad.to_string_lossy())
            .await
            .unwrap();
        let err = run_sql(&ctx, "SELECT * FROM orders")
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(&bad.display().to_string()), "{err}");
        assert!(err.contains("stripe"), "{err}");
    });
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn backend_choice_reaches_the_scan() {
    // `auto` on a machine without CUDA is the CPU; either way the plan says.
    let config = WarpreadConfig::new(BackendChoice::Auto).unwrap();
    let name = config.backend.name();
    let (orc, _) = data();
    rt().block_on(async {
        let ctx = session(config, Default::default());
        register_tpch(&ctx, orc, "orc").await.unwrap();
        let explain = run_sql(&ctx, "EXPLAIN SELECT r_name FROM region")
            .await
            .unwrap();
        let text = warpread::datafusion::sorted_rows(&explain[0].batches)
            .concat()
            .join("\n");
        assert!(text.contains(&format!("backend={name}")), "{text}");
    });
}
