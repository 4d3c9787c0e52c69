//! The `warpread.*` settings: sessions of one process keep their own (their
//! plans differ, their answers equal DataFusion's own reader's), `SET`
//! changes a session's, a table's `OPTIONS` override the session's for that
//! table, and an unknown or malformed key is an error naming it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use warpread::exec::CpuBackend;
use warpread_datafusion::{
    PiecesLike, SessionContextExt, WarpReadOptions, WarpreadConfig, compare_results, run_sql,
    session, session_config, set_options, sorted_rows,
};

/// A join whose probe side (`fact`) gets the build side's dynamic filter.
const JOIN: &str = "SELECT d.name, count(*) AS n, sum(f.v) AS s FROM fact f \
                    JOIN dim d ON f.k = d.k WHERE d.name LIKE 'n1%' \
                    GROUP BY d.name";

/// A filter of literal pieces, which `warpread.fast_like` evaluates.
const LIKE: &str = "SELECT count(*) AS n, sum(v) AS s FROM fact WHERE t LIKE '%b%d%'";

/// `fact` (20 000 rows, keys 0..1000) and `dim` (1000 rows) as Parquet in
/// a folder of this test's own.
fn data(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpread-settings-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = 20_000i64;
    let words = ["abcd", "bd", "xbyd", "none", "dddb"];
    let fact = RecordBatch::try_from_iter([
        (
            "k",
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i * 7 % 1000))) as ArrayRef,
        ),
        (
            "v",
            Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef,
        ),
        (
            "t",
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|i| words[i as usize % words.len()]),
            )) as ArrayRef,
        ),
    ])
    .unwrap();
    let dim = RecordBatch::try_from_iter([
        (
            "k",
            Arc::new(Int64Array::from_iter_values(0..1000)) as ArrayRef,
        ),
        (
            "name",
            Arc::new(StringArray::from_iter_values(
                (0..1000).map(|i| format!("n{i}")),
            )) as ArrayRef,
        ),
    ])
    .unwrap();
    for (name, batch, rows_per_group) in [("fact", fact, 4096), ("dim", dim, 1000)] {
        let file = std::fs::File::create(dir.join(format!("{name}.parquet"))).unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(rows_per_group))
            .build();
        let mut w =
            parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }
    dir
}

fn path(dir: &Path, table: &str) -> String {
    dir.join(format!("{table}.parquet"))
        .to_string_lossy()
        .into_owned()
}

/// A CPU session with `settings` (`key=value`), its tables read by warpread.
async fn warp(dir: &Path, settings: &[(&str, &str)]) -> SessionContext {
    // information_schema backs `SHOW`.
    let mut config = session_config().with_information_schema(true);
    for (k, v) in settings {
        config.options_mut().set(k, v).unwrap();
    }
    let ctx = session(
        WarpreadConfig::with_backend(Arc::new(CpuBackend::new())),
        config,
    );
    for t in ["fact", "dim"] {
        ctx.register_warpread_parquet(t, &path(dir, t), WarpReadOptions::default())
            .await
            .unwrap();
    }
    ctx
}

/// DataFusion's own reader over the same files.
async fn datafusion(dir: &Path) -> SessionContext {
    let ctx = SessionContext::new();
    for t in ["fact", "dim"] {
        ctx.register_parquet(t, &path(dir, t), ParquetReadOptions::default())
            .await
            .unwrap();
    }
    ctx
}

async fn plan(ctx: &SessionContext, sql: &str) -> Arc<dyn ExecutionPlan> {
    ctx.sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap()
}

/// Whether a node of `plan` satisfies `f`.
fn any_node(plan: &Arc<dyn ExecutionPlan>, f: impl Fn(&dyn ExecutionPlan) -> bool) -> bool {
    let mut found = false;
    plan.apply(|n| {
        found |= f(n.as_ref());
        Ok(if found {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    })
    .unwrap();
    found
}

fn records_join_keys(plan: &Arc<dyn ExecutionPlan>) -> bool {
    any_node(plan, |n| n.name() == "BuildKeysExec")
}

fn fast_like(plan: &Arc<dyn ExecutionPlan>) -> bool {
    any_node(plan, |n| {
        n.downcast_ref::<FilterExec>().is_some_and(|f| {
            let mut found = false;
            let _ = f.predicate().apply(|e| {
                found |= e.as_ref().downcast_ref::<PiecesLike>().is_some();
                Ok(TreeNodeRecursion::Continue)
            });
            found
        })
    })
}

/// The plan's text, as `EXPLAIN` shows it.
async fn explain(ctx: &SessionContext, sql: &str) -> String {
    let r = run_sql(ctx, &format!("EXPLAIN {sql}")).await.unwrap();
    sorted_rows(&r[0].batches)
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n")
}

async fn same_answer(warp: &SessionContext, df: &SessionContext, sql: &str) {
    let got = run_sql(warp, sql).await.unwrap();
    let want = run_sql(df, sql).await.unwrap();
    assert!(
        !want[0].batches.iter().all(|b| b.num_rows() == 0),
        "{sql}: no rows to compare"
    );
    compare_results(&got[0].batches, &want[0].batches, 1e-9).unwrap();
}

#[test]
fn two_sessions_keep_their_own_settings() {
    warpread_datafusion::runtime().unwrap().block_on(async {
        let dir = data("two");
        let on = warp(&dir, &[]).await;
        let off = warp(
            &dir,
            &[
                ("warpread.join_key_sets", "false"),
                ("warpread.dynamic_filters", "false"),
                ("warpread.fast_like", "false"),
            ],
        )
        .await;
        let df = datafusion(&dir).await;
        // Planned in turn, each session keeps its own.
        for _ in 0..2 {
            assert!(records_join_keys(&plan(&on, JOIN).await));
            assert!(!records_join_keys(&plan(&off, JOIN).await));
            assert!(fast_like(&plan(&on, LIKE).await));
            assert!(!fast_like(&plan(&off, LIKE).await));
        }
        let shown = explain(&off, JOIN).await;
        assert!(
            shown
                .contains("warpread=[dynamic_filters=false, join_key_sets=false, fast_like=false]"),
            "{shown}"
        );
        assert!(!explain(&on, JOIN).await.contains("warpread=["));
        for ctx in [&on, &off] {
            for sql in [JOIN, LIKE] {
                same_answer(ctx, &df, sql).await;
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    });
}

#[test]
fn set_changes_a_session_and_only_that_one() {
    warpread_datafusion::runtime().unwrap().block_on(async {
        let dir = data("set");
        let a = warp(&dir, &[]).await;
        let b = warp(&dir, &[]).await;
        let df = datafusion(&dir).await;
        run_sql(&a, "SET warpread.join_key_sets = false")
            .await
            .unwrap();
        assert!(!records_join_keys(&plan(&a, JOIN).await));
        assert!(records_join_keys(&plan(&b, JOIN).await), "b keeps its own");
        same_answer(&a, &df, JOIN).await;
        // The Rust API reaches the same settings.
        set_options(&a, &[("warpread.join_key_sets".into(), "true".into())]).unwrap();
        assert!(records_join_keys(&plan(&a, JOIN).await));
        // `SHOW` lists them with DataFusion's own.
        let shown = run_sql(&a, "SHOW warpread.read_ahead").await.unwrap();
        let rows = sorted_rows(&shown[0].batches);
        assert_eq!(rows[0][1], "2", "{rows:?}");
        std::fs::remove_dir_all(&dir).ok();
    });
}

#[test]
fn a_tables_options_override_the_session() {
    warpread_datafusion::runtime().unwrap().block_on(async {
        let dir = data("table");
        let ctx = warp(&dir, &[("warpread.join_key_sets", "false")]).await;
        let df = datafusion(&dir).await;
        run_sql(
            &ctx,
            &format!(
                "CREATE EXTERNAL TABLE fact_keys STORED AS WARPREAD_PARQUET LOCATION '{}' \
                 OPTIONS ('warpread.join_key_sets' 'true', 'warpread.group_mib' '1')",
                path(&dir, "fact")
            ),
        )
        .await
        .unwrap();
        let on_table = JOIN.replace("FROM fact f", "FROM fact_keys f");
        let p = plan(&ctx, &on_table).await;
        assert!(records_join_keys(&p), "the table's setting wins");
        assert!(!records_join_keys(&plan(&ctx, JOIN).await));
        let shown = explain(&ctx, &on_table).await;
        assert!(shown.contains("group_mib=1"), "{shown}");
        // A key the table leaves alone follows the session, SET included.
        run_sql(&ctx, "SET warpread.read_ahead = 3").await.unwrap();
        let shown = explain(&ctx, &on_table).await;
        assert!(shown.contains("read_ahead=3, group_mib=1"), "{shown}");
        // The same through the Rust API.
        ctx.register_warpread_parquet(
            "fact_rust",
            &path(&dir, "fact"),
            WarpReadOptions::default().with_setting("join_key_sets", "true"),
        )
        .await
        .unwrap();
        let on_rust = JOIN.replace("FROM fact f", "FROM fact_rust f");
        assert!(records_join_keys(&plan(&ctx, &on_rust).await));
        let got = run_sql(&ctx, &on_table).await.unwrap();
        let want = run_sql(&df, JOIN).await.unwrap();
        compare_results(&got[0].batches, &want[0].batches, 1e-9).unwrap();
        std::fs::remove_dir_all(&dir).ok();
    });
}

#[test]
fn unknown_or_malformed_keys_are_errors_naming_them() {
    warpread_datafusion::runtime().unwrap().block_on(async {
        let dir = data("bad");
        let ctx = warp(&dir, &[]).await;
        let error = |r: datafusion::error::Result<_>| match r {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        };
        for (stmt, named) in [
            ("SET warpread.no_such_key = 1", "warpread.no_such_key"),
            ("SET warpread.read_ahead = many", "warpread.read_ahead"),
            ("SET warpread.join_key_sets = 2", "warpread.join_key_sets"),
            ("SET warpread.backend = gpu", "warpread.backend"),
        ] {
            let e = error(ctx.sql(stmt).await.map(|_| ()));
            assert!(e.contains(named), "{stmt}: {e}");
        }
        let orc = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/orc/ints_v12_none.orc")
            .to_string_lossy()
            .into_owned();
        for (options, named) in [
            ("'warpread.no_such_key' '1'", "warpread.no_such_key"),
            ("'warpread.group_mib' 'lots'", "warpread.group_mib"),
            ("'warpread.fast_like' 'false'", "warpread.fast_like"),
            ("'compression' 'zstd'", "format.compression"),
        ] {
            let sql = format!(
                "CREATE EXTERNAL TABLE t STORED AS ORC LOCATION '{orc}' OPTIONS ({options})"
            );
            let e = error(ctx.sql(&sql).await.map(|_| ()));
            assert!(e.contains(named), "{options}: {e}");
        }
        // Accepted with known keys; `backend` alone is `warpread.backend`.
        ctx.sql(&format!(
            "CREATE EXTERNAL TABLE t STORED AS ORC LOCATION '{orc}' \
             OPTIONS ('backend' 'cpu', 'warpread.read_ahead' '1')"
        ))
        .await
        .unwrap();
        let r = run_sql(&ctx, "SELECT count(*) FROM t").await.unwrap();
        assert!(!r[0].batches.is_empty());
        // A CUDA scan needs a session given a CUDA backend (this one has
        // the CPU's); `t` keeps its own `cpu`.
        run_sql(&ctx, "SET warpread.backend = cuda").await.unwrap();
        let e = match ctx.sql("SELECT count(*) FROM fact").await {
            Ok(df) => error(df.collect().await.map(|_| ())),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("warpread.backend"), "{e}");
        run_sql(&ctx, "SELECT count(*) FROM t").await.unwrap();
        std::fs::remove_dir_all(&dir).ok();
    });
}

/// `warpread.scan_partitions` bounds the partitions a scan reads with (on
/// the CPU backend, which has no preference of its own), session-wide or
/// for one table; the Parquet switches reach the reads, same answers.
#[test]
fn scan_partitions_and_parquet_switches_are_settings() {
    use datafusion::datasource::source::DataSourceExec;
    use datafusion::physical_plan::ExecutionPlanProperties;
    fn scan_partitions(plan: &Arc<dyn ExecutionPlan>) -> usize {
        if plan.as_ref().downcast_ref::<DataSourceExec>().is_some() {
            return plan.output_partitioning().partition_count();
        }
        plan.children()
            .iter()
            .map(|c| scan_partitions(c))
            .max()
            .unwrap_or(0)
    }
    let rt = warpread_datafusion::runtime().unwrap();
    rt.block_on(async {
        let dir = data("partitions");
        let split = [
            ("datafusion.execution.target_partitions", "4"),
            ("datafusion.optimizer.repartition_file_min_size", "1"),
        ];
        let sql = "SELECT sum(v) AS s FROM fact WHERE k < 500";
        let free = warp(&dir, &split).await;
        assert_eq!(scan_partitions(&plan(&free, sql).await), 4);
        let one = warp(
            &dir,
            &[split[0], split[1], ("warpread.scan_partitions", "1")],
        )
        .await;
        assert_eq!(scan_partitions(&plan(&one, sql).await), 1);
        let switches = warp(
            &dir,
            &[
                ("warpread.device_crc", "false"),
                ("warpread.pages_on_device", "false"),
                ("warpread.device_byte_dicts", "true"),
                ("warpread.widen_decimals", "false"),
            ],
        )
        .await;
        let df = datafusion(&dir).await;
        same_answer(&switches, &df, sql).await;
        same_answer(&one, &df, sql).await;
    });
}
