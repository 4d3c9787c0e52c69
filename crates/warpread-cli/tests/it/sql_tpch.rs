//! SQL through DataFusion: the 22 TPC-H queries at scale 0.01 on warpread's
//! ORC provider and on warpread's Parquet provider (CPU backend) give the
//! same rows as DataFusion's built-in Parquet reader on the same generated
//! data (the Parquet provider on the very same GZIP files); pushdown,
//! pruning, file splitting and error paths.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use datafusion::prelude::{SessionConfig, SessionContext};
use warpread::exec::{BackendChoice, CpuBackend};
use warpread::orc::{CmpOp, Predicate, Scalar};
use warpread_cli::datagen::tpch::{self, GenCompression, GenFormat, GenOptions};
use warpread_datafusion::{
    OrcFormat, ParquetFormat, ParquetReader, ReadUnit, ScanRequest, SessionContextExt, TPCH,
    WarpFormat, WarpReadOptions, WarpreadConfig, compare_results, register_tpch,
    register_tpch_with, run_sql, session, sorted_rows,
};

const SCALE: f64 = 0.01;

/// TPC-H at scale 0.01 as ZLIB ORC and GZIP Parquet, both with groups of
/// 8192 rows (so scans have many stripes and row groups to prune and
/// split), generated once per run.
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
        let p = GenOptions {
            rows_per_group: 8192,
            ..GenOptions::new(GenFormat::Parquet, GenCompression::Gzip)
        };
        tpch::generate(SCALE, &p, &parquet, &[]).unwrap();
        (orc, parquet)
    })
}

fn cpu_config() -> WarpreadConfig {
    WarpreadConfig::with_backend(Arc::new(CpuBackend::new()))
}

fn cpu_session() -> SessionContext {
    session(cpu_config(), Default::default())
}

/// A session on `config` whose partial aggregates over warpread scans run
/// as aggregate programs (the CPU reference of the device's kernels).
fn program_session(config: WarpreadConfig) -> SessionContext {
    let mut options = warpread_datafusion::session_config();
    options
        .options_mut()
        .set("warpread.cpu_aggregates", "true")
        .unwrap();
    session(config, options)
}

/// warpread on ORC, warpread on Parquet (one backend and file cache for
/// both), DataFusion on the same Parquet.
async fn sessions() -> (SessionContext, SessionContext, SessionContext) {
    sessions_on(cpu_config(), program_session).await
}

/// warpread ORC and Parquet sessions made by `make` over one `shared`
/// backend, and DataFusion's reader on the CPU.
async fn sessions_on(
    shared: WarpreadConfig,
    make: fn(WarpreadConfig) -> SessionContext,
) -> (SessionContext, SessionContext, SessionContext) {
    let (orc, parquet) = data();
    let warp = make(shared.clone());
    register_tpch(&warp, orc, "orc").await.unwrap();
    let warp_pq = make(shared);
    register_tpch_with(&warp_pq, parquet, "parquet", ParquetReader::Warpread)
        .await
        .unwrap();
    let df = cpu_session();
    register_tpch_with(&df, parquet, "parquet", ParquetReader::Datafusion)
        .await
        .unwrap();
    (warp, warp_pq, df)
}

fn rt() -> tokio::runtime::Runtime {
    warpread_datafusion::runtime().unwrap()
}

fn plan_text(batches: &[arrow::array::RecordBatch]) -> String {
    sorted_rows(batches).concat().join("\n")
}

/// The text of `explain` (an `EXPLAIN [ANALYZE] ...` statement) on `ctx`.
async fn plan_of(ctx: &SessionContext, explain: &str) -> String {
    plan_text(&run_sql(ctx, explain).await.unwrap()[0].batches)
}

async fn tpch_22_match(warp: &SessionContext, df: &SessionContext) {
    let mut failures = Vec::new();
    for (i, sql) in TPCH.iter().enumerate() {
        let a = run_sql(warp, sql).await.unwrap();
        let b = run_sql(df, sql).await.unwrap();
        let (a, b) = (&a.last().unwrap().batches, &b.last().unwrap().batches);
        let rows: usize = a.iter().map(|x| x.num_rows()).sum();
        println!("Q{}: {rows} rows", i + 1);
        // Identical data: only float sums added in another order may differ.
        if let Err(e) = compare_results(a, b, 1e-12) {
            failures.push(format!("Q{}: {e}", i + 1));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn tpch_22_queries_match_datafusion_parquet() {
    rt().block_on(async {
        let (warp, _, df) = sessions().await;
        tpch_22_match(&warp, &df).await;
    });
}

/// Sixteen TPC-H queries at once, over ORC and Parquet sessions that share
/// one backend and one file cache, each give the answer DataFusion's reader
/// gives alone, and all finish (a deadlock fails the test after ten
/// minutes instead of hanging it).
#[test]
fn sixteen_concurrent_queries_on_one_backend_match_their_answers_alone() {
    sixteen_concurrent_queries(cpu_config(), program_session);
}

/// The same on one CUDA backend, its aggregates on the device.
#[test]
fn sixteen_concurrent_queries_on_one_cuda_backend_match_their_answers_alone() {
    let test = "sixteen concurrent queries on CUDA";
    let Some(cuda) = crate::common::cuda_own(crate::common::cuda_options(), test) else {
        return;
    };
    let config = WarpreadConfig::with_backend(cuda.clone());
    sixteen_concurrent_queries(config, |c| session(c, Default::default()));
    assert!(
        cuda.aggregate_batches().0 > 0,
        "no aggregate ran on the device"
    );
}

fn sixteen_concurrent_queries(shared: WarpreadConfig, make: fn(WarpreadConfig) -> SessionContext) {
    let rt = rt();
    let run = rt.block_on(async {
        let (warp, warp_pq, df) = sessions_on(shared, make).await;
        let mut want = Vec::new();
        for sql in TPCH {
            want.push(run_sql(&df, sql).await.unwrap().pop().unwrap().batches);
        }
        // Queries 1, 6, 11, ... (every fifth, wrapping): joins, aggregates
        // and sorts side by side, half on each format.
        let tasks: Vec<_> = (0..16)
            .map(|i| {
                let q = i * 5 % TPCH.len();
                let ctx = if i % 2 == 0 {
                    warp.clone()
                } else {
                    warp_pq.clone()
                };
                tokio::spawn(async move {
                    let got = run_sql(&ctx, TPCH[q])
                        .await
                        .map(|mut r| r.pop().unwrap().batches);
                    (q, got)
                })
            })
            .collect();
        let all = futures::future::join_all(tasks);
        let done = tokio::time::timeout(std::time::Duration::from_secs(600), all).await;
        (done, want)
    });
    // Not waiting on blocking reads that may hang: the assertion below
    // reports them.
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    let (done, want) = run;
    let done = done.expect("16 concurrent queries still running after 10 minutes");
    let mut failures = Vec::new();
    for r in done {
        let (q, got) = r.expect("query task panicked");
        let got = got.unwrap_or_else(|e| panic!("Q{}: {e}", q + 1));
        if let Err(e) = compare_results(&got, &want[q], 1e-12) {
            failures.push(format!("Q{}: {e}", q + 1));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn tpch_22_queries_on_warpread_parquet_match_datafusion_parquet() {
    rt().block_on(async {
        let (_, warp_pq, df) = sessions().await;
        // The scans really are warpread's.
        let explain = run_sql(&warp_pq, "EXPLAIN SELECT l_orderkey FROM lineitem")
            .await
            .unwrap();
        let text = plan_text(&explain[0].batches);
        assert!(
            text.contains("file_type=parquet, reader=warpread"),
            "{text}"
        );
        tpch_22_match(&warp_pq, &df).await;
    });
}

#[test]
fn scans_push_projection_filter_and_limit() {
    rt().block_on(async {
        let (warp, _, _) = sessions().await;
        let plan = run_sql(
            &warp,
            "EXPLAIN SELECT l_orderkey FROM lineitem WHERE l_orderkey < 100",
        )
        .await
        .unwrap();
        let text = warpread_datafusion::sorted_rows(&plan[0].batches)
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
        let rows = warpread_datafusion::sorted_rows(&r[0].batches);
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
        assert_eq!(warpread_datafusion::sorted_rows(&r[0].batches)[0][0], "25");
        let explain = run_sql(&ctx, "EXPLAIN SELECT n_name FROM nation")
            .await
            .unwrap();
        let text = warpread_datafusion::sorted_rows(&explain[0].batches)
            .concat()
            .join("\n");
        assert!(text.contains("reader=warpread, backend=cpu"), "{text}");
    });
}

/// `SELECT *` over a copy of `src/file` (the orders table) with bytes `garbage`
/// overwritten: the error names the damaged file and contains `unit`.
fn damaged_scan_names(
    src: &std::path::Path,
    file: &str,
    garbage: std::ops::Range<usize>,
    unit: &str,
) {
    let dir = std::env::temp_dir().join(format!(
        "warpread-sql-corrupt-{}-{file}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join(file);
    let mut bytes = std::fs::read(src.join(file)).unwrap();
    for b in &mut bytes[garbage] {
        *b = 0xA5;
    }
    std::fs::write(&bad, &bytes).unwrap();
    rt().block_on(async {
        let ctx = cpu_session();
        warpread_datafusion::register_path(&ctx, "orders", &bad.to_string_lossy())
            .await
            .unwrap();
        let err = run_sql(&ctx, "SELECT * FROM orders")
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(&bad.display().to_string()), "{err}");
        assert!(err.contains(unit), "{err}");
    });
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn reader_errors_name_file_and_stripe() {
    // Garbage over the middle of the first stripe's data.
    damaged_scan_names(&data().0, "orders.orc", 100..4000, "stripe");
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
        let text = warpread_datafusion::sorted_rows(&explain[0].batches)
            .concat()
            .join("\n");
        assert!(text.contains(&format!("backend={name}")), "{text}");
    });
}

/// The value of an `EXPLAIN ANALYZE` metric, summed over the plan's lines.
fn metric(text: &str, name: &str) -> u64 {
    text.match_indices(&format!("{name}="))
        .map(|(i, m)| {
            let digits: String = text[i + m.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            digits.parse::<u64>().unwrap_or(0)
        })
        .sum()
}

#[test]
fn parquet_scans_push_projection_filter_limit_and_prune() {
    rt().block_on(async {
        let (_, warp_pq, df) = sessions().await;
        let explain = run_sql(
            &warp_pq,
            "EXPLAIN SELECT l_orderkey FROM lineitem WHERE l_orderkey < 100",
        )
        .await
        .unwrap();
        let text = plan_text(&explain[0].batches);
        assert!(text.contains("reader=warpread"), "{text}");
        assert!(text.contains("pruning_predicate"), "{text}");
        // Only the projected column is read.
        assert!(text.contains("projection=[l_orderkey]"), "{text}");
        let sql = "SELECT count(l_quantity) AS n, max(l_orderkey) AS m, sum(l_quantity) AS q \
                   FROM lineitem WHERE l_orderkey < 100";
        let analyzed = run_sql(&warp_pq, &format!("EXPLAIN ANALYZE {sql}"))
            .await
            .unwrap();
        let text = plan_text(&analyzed[0].batches);
        let (read, pruned) = (
            metric(&text, "warpread_units_read"),
            metric(&text, "warpread_units_pruned"),
        );
        // lineitem's ~60k rows are 8 row groups; l_orderkey is sorted, so
        // statistics keep only the first.
        assert_eq!(read, 1, "{text}");
        assert!(pruned >= 6, "{text}");
        let a = run_sql(&warp_pq, sql).await.unwrap();
        let b = run_sql(&df, sql).await.unwrap();
        compare_results(&a[0].batches, &b[0].batches, 0.0).unwrap();
        let r = run_sql(&warp_pq, "SELECT * FROM lineitem LIMIT 7")
            .await
            .unwrap();
        assert_eq!(r[0].batches.iter().map(|b| b.num_rows()).sum::<usize>(), 7);
        assert_eq!(r[0].schema.fields().len(), 16);
        // A string and a date predicate prune too, and rows still match.
        for sql in [
            "SELECT count(o_orderkey) AS n FROM orders WHERE o_orderdate >= DATE '1998-07-01'",
            "SELECT count(c_custkey) AS n FROM customer WHERE c_mktsegment = 'BUILDING'",
            "SELECT count(o_orderkey) AS n FROM orders WHERE o_orderkey > 59000",
        ] {
            let a = run_sql(&warp_pq, sql).await.unwrap();
            let b = run_sql(&df, sql).await.unwrap();
            compare_results(&a[0].batches, &b[0].batches, 0.0)
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    });
}

#[test]
fn statistics_prune_row_groups() {
    let (_, parquet) = data();
    let file = ParquetFormat
        .open(&parquet.join("lineitem.parquet"))
        .unwrap();
    let all = ScanRequest {
        columns: vec!["l_orderkey".into()],
        batch_size: 8192,
        ..Default::default()
    };
    let units = file.plan(&all).unwrap();
    assert!(units.len() > 3, "{} row groups", units.len());
    assert_eq!(units.iter().map(|u| u.rows).sum::<u64>(), file.rows());
    let pred = |op, v| ScanRequest {
        predicates: vec![Predicate {
            column: "l_orderkey".into(),
            op,
            value: Scalar::Int(v),
        }],
        ..all.clone()
    };
    assert_eq!(file.plan(&pred(CmpOp::Lt, 100)).unwrap().len(), 1);
    assert!(
        file.plan(&pred(CmpOp::Gt, i64::MAX - 1))
            .unwrap()
            .is_empty()
    );
    assert_eq!(file.plan(&pred(CmpOp::Ge, 0)).unwrap(), units);
    // Reading the planned unit gives just its rows.
    let backend = CpuBackend::new();
    let few = file.plan(&pred(CmpOp::Lt, 100)).unwrap();
    let (batches, stats) = file.read(&few, &pred(CmpOp::Lt, 100), &backend).unwrap();
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows as u64, few[0].rows);
    assert!(stats.file_bytes > 0 && stats.stream_bytes > stats.file_bytes);
}

#[test]
fn byte_ranges_give_each_row_group_to_one_split() {
    let (_, parquet) = data();
    let path = parquet.join("lineitem.parquet");
    let file = ParquetFormat.open(&path).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    let all = ScanRequest {
        columns: vec!["l_orderkey".into(), "l_comment".into()],
        batch_size: 8192,
        ..Default::default()
    };
    let whole: Vec<ReadUnit> = file.plan(&all).unwrap();
    for splits in [2u64, 3, 5, 17] {
        let step = len.div_ceil(splits);
        let mut got = Vec::new();
        let mut rows = 0;
        for k in 0..splits {
            let req = ScanRequest {
                byte_range: Some(k * step..((k + 1) * step).min(len)),
                ..all.clone()
            };
            let units = file.plan(&req).unwrap();
            let (batches, _) = file.read(&units, &req, &CpuBackend::new()).unwrap();
            rows += batches.iter().map(|b| b.num_rows()).sum::<usize>();
            got.extend(units);
        }
        assert_eq!(got, whole, "{splits} splits");
        assert_eq!(rows as u64, file.rows(), "{splits} splits");
    }
}

/// Sessions of four partitions and no minimum split size, lineitem
/// registered on warpread's Parquet provider (`warp`) and on DataFusion's.
async fn lineitem_in_four_partitions(
    warp: WarpreadConfig,
    parquet: &std::path::Path,
) -> (SessionContext, SessionContext) {
    let mut config = SessionConfig::new().with_target_partitions(4);
    config.options_mut().optimizer.repartition_file_min_size = 1;
    let (warp, df) = (session(warp, config.clone()), session(cpu_config(), config));
    let path = parquet.join("lineitem.parquet");
    let path = path.to_string_lossy();
    warp.register_warpread_parquet("lineitem", &path, WarpReadOptions::default())
        .await
        .unwrap();
    df.register_parquet("lineitem", path.as_ref(), Default::default())
        .await
        .unwrap();
    (warp, df)
}

#[test]
fn split_parquet_files_scan_in_parallel_partitions() {
    let (_, parquet) = data();
    rt().block_on(async {
        // DataFusion cuts lineitem into byte ranges, each opened separately.
        let (warp, df) = lineitem_in_four_partitions(cpu_config(), parquet).await;
        let sql = "SELECT count(l_orderkey) AS n, sum(l_quantity) AS q, \
                   min(l_comment) AS c FROM lineitem";
        let explain = run_sql(&warp, &format!("EXPLAIN {sql}")).await.unwrap();
        let text = plan_text(&explain[0].batches);
        assert!(text.contains("4 groups"), "{text}");
        assert!(text.contains("lineitem.parquet:0.."), "{text}");
        let a = run_sql(&warp, sql).await.unwrap();
        let b = run_sql(&df, sql).await.unwrap();
        compare_results(&a[0].batches, &b[0].batches, 0.0).unwrap();
    });
}

/// The CPU backend asking for at most two scan partitions, as a device
/// backend does; with `aggregates`, also acting as a device that
/// aggregates: batches of at most 64 groups "on the device" (the CPU
/// reference), none otherwise, so partitions with more groups restart on
/// DataFusion's partial aggregate, as on the CUDA backend.
struct TwoScans {
    cpu: CpuBackend,
    aggregates: bool,
    /// Stages run and batches aggregated "on the device".
    stages: std::sync::atomic::AtomicUsize,
    aggregated: std::sync::atomic::AtomicUsize,
}

impl TwoScans {
    fn new(aggregates: bool) -> Self {
        Self {
            cpu: CpuBackend::new(),
            aggregates,
            stages: Default::default(),
            aggregated: Default::default(),
        }
    }

    fn counts(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.stages.load(Relaxed), self.aggregated.load(Relaxed))
    }
}

impl warpread::exec::Backend for TwoScans {
    fn name(&self) -> &'static str {
        self.cpu.name()
    }
    fn describe(&self) -> String {
        self.cpu.describe()
    }
    fn run_stage(
        &self,
        stage: &warpread::plan::Stage,
        input: &[u8],
    ) -> warpread::Result<warpread::exec::StageOutput> {
        self.stages
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.cpu.run_stage(stage, input)
    }
    fn reads_host_input(&self, op: &warpread::plan::StageOp) -> bool {
        self.cpu.reads_host_input(op)
    }
    fn scan_partitions(&self) -> Option<usize> {
        Some(2)
    }
    fn aggregates_on_device(&self) -> bool {
        self.aggregates
    }
    fn aggregate_on_device(
        &self,
        program: &warpread::query::AggProgram,
        batches: &[arrow::array::RecordBatch],
    ) -> warpread::Result<Option<warpread::query::Groups>> {
        if !self.aggregates {
            return Ok(None);
        }
        let mut g = warpread::query::Groups::new(program);
        for b in batches {
            let part = warpread::query::eval::aggregate(program, b)?;
            if part.len() > 64 {
                return Ok(None);
            }
            g.merge(&part);
        }
        self.aggregated
            .fetch_add(batches.len(), std::sync::atomic::Ordering::Relaxed);
        Ok(Some(g))
    }
}

#[test]
fn scan_partitions_spread_over_the_session_devices() {
    let (_, parquet) = data();
    rt().block_on(async {
        for aggregates in [false, true] {
            let devices = [
                Arc::new(TwoScans::new(aggregates)),
                Arc::new(TwoScans::new(aggregates)),
            ];
            let list: Vec<Arc<dyn warpread::exec::Backend>> =
                devices.iter().map(|d| d.clone() as _).collect();
            let config = WarpreadConfig::with_devices(list).unwrap();
            let (warp, df) = lineitem_in_four_partitions(config, parquet).await;
            let sql = "SELECT l_returnflag, l_linestatus, count(*) AS n, \
                       sum(l_quantity) AS q FROM lineitem \
                       GROUP BY l_returnflag, l_linestatus";
            // Two scan partitions per device, as one device would read.
            let explain = run_sql(&warp, &format!("EXPLAIN {sql}")).await.unwrap();
            let text = plan_text(&explain[0].batches);
            assert!(text.contains("backend=cpu x2"), "{text}");
            assert!(text.contains("4 groups"), "{text}");
            let want = run_sql(&df, sql).await.unwrap();
            let got = run_sql(&warp, sql).await.unwrap();
            compare_results(&got[0].batches, &want[0].batches, 0.0).unwrap();
            // Each device decoded (and, as a device that aggregates,
            // aggregated) its partitions.
            for (i, d) in devices.iter().enumerate() {
                let (stages, aggregated) = d.counts();
                assert!(stages > 0, "device {i} ran no stage");
                assert_eq!(aggregated > 0, aggregates, "device {i}: {aggregated}");
            }
            // `warpread.devices` picks one: only it decodes, same answer.
            let before = devices[0].counts().0;
            run_sql(&warp, "SET warpread.devices = '1'").await.unwrap();
            let got = run_sql(&warp, sql).await.unwrap();
            compare_results(&got[0].batches, &want[0].batches, 0.0).unwrap();
            assert_eq!(devices[0].counts().0, before, "device 0 decoded");
            let bad = run_sql(&warp, "SET warpread.devices = '2'").await;
            let err = match bad {
                Ok(_) => run_sql(&warp, sql).await.map(|_| ()).unwrap_err(),
                Err(e) => e,
            };
            assert!(err.to_string().contains("device 2"), "{err}");
        }
    });
}

#[test]
fn backends_asking_for_few_scan_partitions_get_them() {
    let (_, parquet) = data();
    rt().block_on(async {
        let two_scans = WarpreadConfig::with_backend(Arc::new(TwoScans::new(false)));
        let (warp, df) = lineitem_in_four_partitions(two_scans, parquet).await;
        let sql = "SELECT l_returnflag, count(*) AS n, sum(l_quantity) AS q \
                   FROM lineitem GROUP BY l_returnflag";
        let explain = run_sql(&warp, &format!("EXPLAIN {sql}")).await.unwrap();
        let text = plan_text(&explain[0].batches);
        assert!(text.contains("2 groups"), "{text}");
        assert!(text.contains("RoundRobinBatch(4)"), "{text}");
        let a = run_sql(&warp, sql).await.unwrap();
        let b = run_sql(&df, sql).await.unwrap();
        compare_results(&a[0].batches, &b[0].batches, 0.0).unwrap();
        // A table of six files: the listing's file groups are merged too.
        let dir = std::env::temp_dir().join(format!("warpread-six-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..6 {
            std::fs::copy(
                parquet.join("lineitem.parquet"),
                dir.join(format!("l{i}.parquet")),
            )
            .unwrap();
        }
        warp.register_warpread_parquet("six", &dir.to_string_lossy(), WarpReadOptions::default())
            .await
            .unwrap();
        let sql = "SELECT l_returnflag, count(*) AS n FROM six GROUP BY l_returnflag";
        let explain = run_sql(&warp, &format!("EXPLAIN {sql}")).await.unwrap();
        let text = plan_text(&explain[0].batches);
        assert!(text.contains("2 groups"), "{text}");
        let six = sorted_rows(&run_sql(&warp, sql).await.unwrap()[0].batches);
        let one = sorted_rows(
            &run_sql(&warp, &sql.replace("six", "lineitem"))
                .await
                .unwrap()[0]
                .batches,
        );
        assert_eq!(six.len(), one.len());
        for (a, b) in six.iter().zip(&one) {
            assert_eq!(a[0], b[0]);
            assert_eq!(
                a[1].parse::<u64>().unwrap(),
                6 * b[1].parse::<u64>().unwrap()
            );
        }
        std::fs::remove_dir_all(&dir).ok();
    });
}

/// On a backend asking for few scan partitions, a join's probe side starts
/// reading when the plan is executed, not once the build side is done:
/// every partition's first file is taken by a stream as already started.
#[test]
fn join_inputs_start_reading_when_executed() {
    let (_, parquet) = data();
    rt().block_on(async {
        let mut config = SessionConfig::new().with_target_partitions(4);
        config.options_mut().optimizer.repartition_file_min_size = 1;
        let warp = session(
            WarpreadConfig::with_backend(Arc::new(TwoScans::new(false))),
            config,
        );
        register_tpch_with(&warp, parquet, "parquet", ParquetReader::Warpread)
            .await
            .unwrap();
        let (_, _, df) = sessions().await;
        let sql = "SELECT o_orderpriority, count(*) AS n, sum(l_quantity) AS q \
                   FROM orders JOIN lineitem ON l_orderkey = o_orderkey \
                   WHERE l_shipmode = 'AIR' GROUP BY o_orderpriority";
        let started = |analyzed: &str| counters(analyzed, "warpread_files_started_early");
        let analyzed = plan_of(&warp, &format!("EXPLAIN ANALYZE {sql}")).await;
        // Both scans, two partitions each, one file range per partition.
        assert_eq!(started(&analyzed), vec![2, 2], "{analyzed}");
        let a = run_sql(&warp, sql).await.unwrap();
        let b = run_sql(&df, sql).await.unwrap();
        compare_results(&a[0].batches, &b[0].batches, 0.0).unwrap();
        // A table two scans read is read when polled, by both.
        let sql = "SELECT count(*) AS n FROM lineitem a JOIN lineitem b \
                   ON a.l_orderkey = b.l_orderkey AND a.l_linenumber = b.l_linenumber \
                   JOIN orders ON o_orderkey = a.l_orderkey";
        let analyzed = plan_of(&warp, &format!("EXPLAIN ANALYZE {sql}")).await;
        let mut got = started(&analyzed);
        got.sort();
        assert_eq!(got, vec![0, 0, 2], "{analyzed}");
        let a = run_sql(&warp, sql).await.unwrap();
        let b = run_sql(&df, sql).await.unwrap();
        compare_results(&a[0].batches, &b[0].batches, 0.0).unwrap();
    });
}

/// The counter `name` of each scan in an `EXPLAIN ANALYZE` text (small
/// values only: larger ones are shown rounded, as `58.8 K`).
fn counters(analyzed: &str, name: &str) -> Vec<u64> {
    analyzed
        .split(&format!("{name}="))
        .skip(1)
        .map(|s| {
            s.split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

type Plan = Arc<dyn datafusion::physical_plan::ExecutionPlan>;

/// The physical plan of `sql` on `ctx`, run, and its result (its metrics
/// then say what each operator did).
async fn executed(ctx: &SessionContext, sql: &str) -> (Plan, Vec<arrow::array::RecordBatch>) {
    let plan = ctx
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let batches = datafusion::physical_plan::collect(Arc::clone(&plan), ctx.task_ctx())
        .await
        .unwrap();
    (plan, batches)
}

/// The sum of metric `name` over the operators of `plan` that `pick` takes.
fn metric_where(plan: &Plan, name: &str, pick: &dyn Fn(&Plan) -> bool) -> usize {
    let own = if pick(plan) {
        plan.metrics()
            .and_then(|m| m.sum_by_name(name))
            .map_or(0, |v| v.as_usize())
    } else {
        0
    };
    own + plan
        .children()
        .into_iter()
        .map(|c| metric_where(c, name, pick))
        .sum::<usize>()
}

/// Metric `name` of the scans of `plan` whose files' paths contain `table`.
fn scan_metric(plan: &Plan, table: &str, name: &str) -> usize {
    metric_where(plan, name, &|p| {
        p.name() == "DataSourceExec"
            && datafusion::physical_plan::displayable(p.as_ref())
                .one_line()
                .to_string()
                .contains(table)
    })
}

/// The sum of metric `name` over every operator of `plan`.
fn metric_sum(plan: &Plan, name: &str) -> usize {
    metric_where(plan, name, &|_| true)
}

/// A hash join publishes its build keys; the probe side's scan drops the
/// rows without a partner as it hands its batches on, with the rows its
/// static filter fails, and the join's result is unchanged. With few build
/// keys the filter is an exact `IN` list, so exactly the rows the join
/// and the filter discard are dropped.
#[test]
fn join_probe_scans_drop_rows_without_a_partner() {
    let (_, parquet) = data();
    rt().block_on(async {
        let warp = cpu_session();
        register_tpch_with(&warp, parquet, "parquet", ParquetReader::Warpread)
            .await
            .unwrap();
        let (_, _, df) = sessions().await;
        let sql = "SELECT count(*) AS n, sum(l_quantity) AS q \
                   FROM part JOIN lineitem ON l_partkey = p_partkey \
                   WHERE p_size = 15 AND l_quantity < 25";
        let explained = plan_of(&warp, &format!("EXPLAIN {sql}")).await;
        assert!(explained.contains("dynamic_filter="), "{explained}");
        let (plan, a) = executed(&warp, sql).await;
        // The probe side's scan only: `part`'s scan drops the rows its
        // static filter fails too (a filter that keeps few rows runs on
        // its own).
        let dropped = scan_metric(&plan, "lineitem", "warpread_rows_dynamic_filtered") as u64;
        let b = run_sql(&df, sql).await.unwrap();
        compare_results(&a, &b[0].batches, 0.0).unwrap();
        let joined: u64 = sorted_rows(&a)[0][0].parse().unwrap();
        let total = run_sql(&warp, "SELECT count(*) FROM lineitem")
            .await
            .unwrap();
        let total: u64 = sorted_rows(&total[0].batches)[0][0].parse().unwrap();
        assert!(joined > 0 && joined < total, "{joined} of {total}");
        assert_eq!(dropped, total - joined, "{explained}");
    });
}

/// A join above `ORDER BY ... LIMIT n` joins the first `n` rows, not the
/// first `n` with a partner: the join's filter must not thin the rows the
/// limit counts (DataFusion pushes it through a `FilterExec` with a fetch).
#[test]
fn join_filters_stay_above_a_limit() {
    let (_, parquet) = data();
    let lineitem = parquet.join("lineitem.parquet");
    rt().block_on(async {
        // One partition, and orders as the build side as written: the
        // limited lineitem is the probe, under a `FilterExec` with a fetch.
        // Small batches: a TopK's cut-off reaches the scan after a few.
        let mut config = SessionConfig::new()
            .with_target_partitions(1)
            .with_batch_size(512);
        config.options_mut().optimizer.join_reordering = false;
        let warp = session(cpu_config(), config.clone());
        let df = session(cpu_config(), config);
        for (ctx, stored) in [(&warp, "WARPREAD_PARQUET"), (&df, "PARQUET")] {
            let options = if stored == "PARQUET" {
                ""
            } else {
                "OPTIONS ('backend' 'cpu')"
            };
            let sql = format!(
                "CREATE EXTERNAL TABLE li STORED AS {stored} WITH ORDER (l_orderkey ASC) \
                 LOCATION '{}' {options}",
                lineitem.display()
            );
            run_sql(ctx, &sql).await.unwrap();
        }
        register_tpch_with(&warp, parquet, "parquet", ParquetReader::Warpread)
            .await
            .unwrap();
        register_tpch_with(&df, parquet, "parquet", ParquetReader::Datafusion)
            .await
            .unwrap();
        let sql = "SELECT count(*) AS n, max(l.l_orderkey) AS k FROM orders JOIN \
                   (SELECT * FROM li WHERE l_quantity > 1 ORDER BY l_orderkey LIMIT 10000) l \
                   ON l.l_orderkey = o_orderkey WHERE o_orderkey > 8000";
        let a = run_sql(&warp, sql).await.unwrap();
        let b = run_sql(&df, sql).await.unwrap();
        let rows = sorted_rows(&b[0].batches);
        assert_ne!(rows[0][0], "0", "the limited rows have partners");
        compare_results(&a[0].batches, &b[0].batches, 0.0).unwrap();
        let explained = plan_of(&warp, &format!("EXPLAIN {sql}")).await;
        let scan = explained.lines().find(|l| l.contains("lineitem.parquet"));
        assert!(!scan.unwrap().contains("dynamic_filter="), "{explained}");
        // A limit above the join does not touch the join's filter.
        let sql = "SELECT l_orderkey, l_linenumber FROM orders JOIN lineitem \
                   ON l_orderkey = o_orderkey WHERE o_orderkey > 8000 \
                   ORDER BY l_orderkey, l_linenumber LIMIT 5";
        let a = run_sql(&warp, sql).await.unwrap();
        let b = run_sql(&df, sql).await.unwrap();
        compare_results(&a[0].batches, &b[0].batches, 0.0).unwrap();
        let explained = plan_of(&warp, &format!("EXPLAIN {sql}")).await;
        let scan = explained.lines().find(|l| l.contains("lineitem.parquet"));
        assert!(scan.unwrap().contains("dynamic_filter="), "{explained}");
        // A TopK's own cut-off thins the scan below it.
        let sql = "SELECT l_orderkey, l_linenumber, l_extendedprice FROM lineitem \
                   ORDER BY l_extendedprice DESC, l_orderkey, l_linenumber LIMIT 5";
        let b = run_sql(&df, sql).await.unwrap();
        let (plan, a) = executed(&warp, sql).await;
        compare_results(&a, &b[0].batches, 0.0).unwrap();
        assert!(metric_sum(&plan, "warpread_rows_dynamic_filtered") > 0);
    });
}

/// With every join partitioned (no build side collected once), the join's
/// filters are the per-partition `CASE` the scan evaluates routed; all 22
/// queries still match DataFusion's reader, and Q3's `lineitem` scan drops
/// rows through such a filter.
#[test]
fn tpch_22_queries_with_partitioned_join_filters_match() {
    let (orc, parquet) = data();
    rt().block_on(async {
        let mut config = SessionConfig::new().with_target_partitions(4);
        let o = &mut config.options_mut().optimizer;
        o.hash_join_single_partition_threshold = 0;
        o.hash_join_single_partition_threshold_rows = 0;
        let pq = session(cpu_config(), config.clone());
        register_tpch_with(&pq, parquet, "parquet", ParquetReader::Warpread)
            .await
            .unwrap();
        let orc_ctx = session(cpu_config(), config.clone());
        register_tpch(&orc_ctx, orc, "orc").await.unwrap();
        let df = session(cpu_config(), config);
        register_tpch_with(&df, parquet, "parquet", ParquetReader::Datafusion)
            .await
            .unwrap();
        tpch_22_match(&pq, &df).await;
        tpch_22_match(&orc_ctx, &df).await;
        let (plan, _) = executed(&pq, TPCH[2]).await;
        let shown = datafusion::physical_plan::displayable(plan.as_ref())
            .indent(true)
            .to_string();
        let scan = shown
            .lines()
            .find(|l| l.contains("lineitem") && l.contains("DataSourceExec"))
            .unwrap();
        assert!(scan.contains("hash_repartition"), "{shown}");
        assert!(
            metric_sum(&plan, "warpread_rows_dynamic_filtered") > 0,
            "{shown}"
        );
    });
}

/// A join's published bounds prune the probe side's row groups when its
/// file is opened after the build side is done: `lineitem` is written in
/// `l_orderkey` order, so orders with small keys leave most groups out.
#[test]
fn join_bounds_prune_the_probe_sides_row_groups() {
    let (orc, parquet) = data();
    rt().block_on(async {
        let (_, _, df) = sessions().await;
        // The limit keeps DataFusion from inferring `l_orderkey < ...`.
        let sql = "SELECT count(*) AS n, sum(l_quantity) AS q FROM \
                   (SELECT o_orderkey FROM orders ORDER BY o_orderkey LIMIT 500) o \
                   JOIN lineitem ON l_orderkey = o.o_orderkey";
        let b = run_sql(&df, sql).await.unwrap();
        for (dir, ext) in [(parquet, "parquet"), (orc, "orc")] {
            let warp = cpu_session();
            if ext == "parquet" {
                register_tpch_with(&warp, dir, ext, ParquetReader::Warpread)
                    .await
                    .unwrap();
            } else {
                register_tpch(&warp, dir, ext).await.unwrap();
            }
            let (plan, a) = executed(&warp, sql).await;
            compare_results(&a, &b[0].batches, 0.0).unwrap();
            let pruned = scan_metric(&plan, "lineitem", "warpread_units_pruned");
            let read = scan_metric(&plan, "lineitem", "warpread_units_read");
            assert!(pruned > read, "{ext}: {pruned} units pruned, {read} read");
        }
    });
}

#[test]
fn create_external_table_stored_as_warpread_parquet() {
    let (_, parquet) = data();
    let nation = parquet.join("nation.parquet");
    rt().block_on(async {
        let ctx = cpu_session();
        let sql = format!(
            "CREATE EXTERNAL TABLE nation STORED AS WARPREAD_PARQUET LOCATION '{}' \
             OPTIONS ('backend' 'cpu')",
            nation.display()
        );
        run_sql(&ctx, &sql).await.unwrap();
        let r = run_sql(&ctx, "SELECT count(n_name) FROM nation")
            .await
            .unwrap();
        assert_eq!(sorted_rows(&r[0].batches)[0][0], "25");
        let explain = run_sql(&ctx, "EXPLAIN SELECT n_name FROM nation")
            .await
            .unwrap();
        let text = plan_text(&explain[0].batches);
        assert!(text.contains("reader=warpread, backend=cpu"), "{text}");
        // STORED AS PARQUET is still DataFusion's reader.
        let sql = format!(
            "CREATE EXTERNAL TABLE nation_df STORED AS PARQUET LOCATION '{}'",
            nation.display()
        );
        run_sql(&ctx, &sql).await.unwrap();
        let explain = run_sql(&ctx, "EXPLAIN SELECT n_name FROM nation_df")
            .await
            .unwrap();
        let text = plan_text(&explain[0].batches);
        assert!(!text.contains("reader=warpread"), "{text}");
        assert!(text.contains("file_type=parquet"), "{text}");
        let a = run_sql(&ctx, "SELECT * FROM nation").await.unwrap();
        let b = run_sql(&ctx, "SELECT * FROM nation_df").await.unwrap();
        compare_results(&a[0].batches, &b[0].batches, 0.0).unwrap();
    });
}

#[test]
fn parquet_reader_errors_name_file_and_row_group() {
    // Garbage over the first row group's first pages.
    damaged_scan_names(&data().1, "orders.parquet", 4..4000, "row group");
}

/// The TPC-H Parquet tables converted to containers in `folder` (batches
/// of 4096 rows), table `i` with `options(i)`.
fn containers(
    folder: &str,
    options: impl Fn(usize) -> warpread::gsst::container::ContainerOptions,
) -> PathBuf {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use warpread::gsst::container::write_container;
    let (_, parquet) = data();
    let dir = parquet.parent().unwrap().join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    for (i, t) in tpch::TABLES.iter().enumerate() {
        let file = std::fs::File::open(parquet.join(format!("{t}.parquet"))).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .with_batch_size(4096)
            .build()
            .unwrap();
        let schema = arrow::array::RecordBatchReader::schema(&reader);
        let out = std::fs::File::create(dir.join(format!("{t}.arrow"))).unwrap();
        write_container(
            out,
            &schema,
            reader.map(|b| b.map_err(|e| warpread::Error::arrow("reading", e))),
            &options(i),
        )
        .unwrap();
    }
    dir
}

/// The TPC-H Parquet tables converted to GSST containers (string columns
/// GSST-compressed, batches of 4096 rows), once per run.
fn gsst_data() -> &'static PathBuf {
    static DATA: OnceLock<PathBuf> = OnceLock::new();
    DATA.get_or_init(|| {
        use warpread::gsst::GsstLayout;
        use warpread::gsst::container::ContainerOptions;
        containers("gsst", |i| {
            ContainerOptions::new([GsstLayout::Splits, GsstLayout::Coalesced][i % 2])
        })
    })
}

/// The TPC-H Parquet tables converted with Huffman columns: every eligible
/// column Huffman-coded, or each the smallest encoding (`auto`), table by
/// table.
fn huffman_data() -> &'static PathBuf {
    static DATA: OnceLock<PathBuf> = OnceLock::new();
    DATA.get_or_init(|| {
        use warpread::gsst::GsstLayout;
        use warpread::gsst::codec_choice::CodecPolicy;
        use warpread::gsst::container::ContainerOptions;
        containers("huffman", |i| {
            ContainerOptions::new(GsstLayout::Splits)
                .with_codec([CodecPolicy::Huffman, CodecPolicy::Auto][i % 2])
        })
    })
}

/// The 22 queries over the containers in `dir` match DataFusion's reader
/// on the Parquet twins, and so does `q` (over `li`) over `lineitem.arrow`
/// registered `STORED AS GSST` and split into byte ranges over several
/// partitions.
async fn containers_match_datafusion(dir: &std::path::Path, warp: &SessionContext, q: &str) {
    let (_, parquet) = data();
    let df = cpu_session();
    register_tpch_with(&df, parquet, "parquet", ParquetReader::Datafusion)
        .await
        .unwrap();
    tpch_22_match(warp, &df).await;
    let split = session(
        cpu_config(),
        SessionConfig::new()
            .with_target_partitions(4)
            .with_repartition_file_min_size(1),
    );
    let path = dir.join("lineitem.arrow");
    run_sql(
        &split,
        &format!(
            "CREATE EXTERNAL TABLE li STORED AS GSST LOCATION '{}'",
            path.display()
        ),
    )
    .await
    .unwrap();
    let a = run_sql(&split, q).await.unwrap();
    let b = run_sql(&df, &q.replace("FROM li", "FROM lineitem"))
        .await
        .unwrap();
    compare_results(&a[0].batches, &b[0].batches, 0.0).unwrap();
}

#[test]
fn tpch_22_queries_on_huffman_containers_match_datafusion_parquet() {
    rt().block_on(async {
        let dir = huffman_data();
        let warp = cpu_session();
        register_tpch(&warp, dir, "arrow").await.unwrap();
        // Decimals, dates, integers and strings of Huffman columns.
        let q = "SELECT count(*), sum(l_extendedprice), min(l_shipdate), max(l_orderkey), \
                 count(DISTINCT l_comment) FROM li WHERE l_discount > 0.05";
        containers_match_datafusion(dir, &warp, q).await;
    });
}

#[test]
fn tpch_22_queries_on_gsst_containers_match_datafusion_parquet() {
    rt().block_on(async {
        let dir = gsst_data();
        let warp = cpu_session();
        register_tpch(&warp, dir, "arrow").await.unwrap();
        let explain = run_sql(&warp, "EXPLAIN SELECT l_comment FROM lineitem")
            .await
            .unwrap();
        let text = plan_text(&explain[0].batches);
        assert!(text.contains("file_type=gsst"), "{text}");
        let q = "SELECT count(*), count(DISTINCT l_comment), max(l_shipinstruct) FROM li";
        containers_match_datafusion(dir, &warp, q).await;
    });
}

#[test]
fn scan_aggregates_take_q1_and_q6_and_leave_what_they_cannot_express() {
    rt().block_on(async {
        let (_, warp_pq, _) = sessions().await;
        let explain = |q: &'static str| {
            let s = &warp_pq;
            async move { plan_of(s, &format!("EXPLAIN {q}")).await }
        };
        for q in [TPCH[0], TPCH[5]] {
            let text = explain(q).await;
            assert!(text.contains("ScanAggregateExec"), "{text}");
            assert!(!text.contains("mode=Partial"), "{text}");
        }
        // A string predicate (LIKE) is not in the program's vocabulary.
        let text = explain(
            "SELECT l_returnflag, sum(l_quantity) FROM lineitem \
             WHERE l_shipmode LIKE 'MA%' GROUP BY l_returnflag",
        )
        .await;
        assert!(!text.contains("ScanAggregateExec"), "{text}");
        assert!(text.contains("mode=Partial"), "{text}");
        // Nor are float aggregates (their sums depend on the order).
        let text = explain("SELECT avg(CAST(l_quantity AS DOUBLE)) FROM lineitem").await;
        assert!(!text.contains("ScanAggregateExec"), "{text}");
        // A session without device aggregates on the CPU keeps DataFusion's.
        let plain = cpu_session();
        let (_, parquet) = data();
        register_tpch_with(&plain, parquet, "parquet", ParquetReader::Warpread)
            .await
            .unwrap();
        let text = plan_of(&plain, &format!("EXPLAIN {}", TPCH[0])).await;
        assert!(!text.contains("ScanAggregateExec"), "{text}");
    });
}

#[test]
fn device_aggregates_and_their_restarts_match_datafusion() {
    let (_, parquet) = data();
    rt().block_on(async {
        let config = WarpreadConfig::with_backend(Arc::new(TwoScans::new(true)));
        // Scans of two partitions (the backend's ask); aggregate scans are
        // spread over up to 8, here the session's 4 (files this small are
        // split once the minimum split size allows it).
        let mut options = SessionConfig::new().with_target_partitions(4);
        options.options_mut().optimizer.repartition_file_min_size = 1 << 16;
        let warp = session(config, options);
        register_tpch_with(&warp, parquet, "parquet", ParquetReader::Warpread)
            .await
            .unwrap();
        let (_, _, df) = sessions().await;
        // Q18 groups by order key, whose row groups span more values than
        // the device's table: the planner leaves it to DataFusion.
        let text = plan_of(&warp, &format!("EXPLAIN {}", TPCH[17])).await;
        assert!(!text.contains("ScanAggregateExec"), "{text}");
        // Line numbers span 1..=7 in every row group: the device takes it.
        let by_line = "SELECT l_linenumber, sum(l_extendedprice) AS p, avg(l_discount) AS d \
                       FROM lineitem GROUP BY l_linenumber";
        let text = plan_of(&warp, &format!("EXPLAIN {by_line}")).await;
        assert!(text.contains("ScanAggregateExec"), "{text}");
        let a = run_sql(&warp, by_line).await.unwrap();
        let b = run_sql(&df, by_line).await.unwrap();
        compare_results(&a[0].batches, &b[0].batches, 0.0).unwrap();
        // Grouped by comment (no statistics to tell): every partition is
        // refused and restarts, with DataFusion's results.
        let by_comment = "SELECT l_comment, sum(l_quantity) AS q, count(*) AS n \
                          FROM lineitem WHERE l_quantity > 10 GROUP BY l_comment";
        let text = plan_of(&warp, &format!("EXPLAIN ANALYZE {by_comment}")).await;
        assert!(text.contains("restarted_partitions=4"), "{text}");
        let a = run_sql(&warp, by_comment).await.unwrap();
        let b = run_sql(&df, by_comment).await.unwrap();
        compare_results(&a[0].batches, &b[0].batches, 0.0).unwrap();
        let text = plan_of(&warp, &format!("EXPLAIN ANALYZE {}", TPCH[0])).await;
        assert!(text.contains("ScanAggregateExec"), "{text}");
        assert!(text.contains("restarted_partitions=0"), "{text}");
        // Q14 joins lineitem: its plain scans keep the backend's two.
        let text = plan_of(&warp, &format!("EXPLAIN {}", TPCH[13])).await;
        assert!(text.contains("2 groups"), "{text}");
        tpch_22_match(&warp, &df).await;
    });
}

/// The hash joins of a plan in order: mode, type and keys (build side
/// first), which is what table statistics decide.
fn join_lines(plan: &str) -> Vec<String> {
    plan.lines()
        .filter(|l| l.contains("JoinExec"))
        .map(|l| {
            let l = l.trim().trim_start_matches('|').trim();
            l.split(", projection=").next().unwrap_or(l).to_string()
        })
        .collect()
}

#[test]
fn joins_are_planned_as_on_datafusion_parquet() {
    rt().block_on(async {
        let (_, parquet) = data();
        // Thresholds scaled down to this data, so that whether a join is
        // collected or partitioned, and which side builds, depends on the
        // statistics as it does at scale 10 with the defaults.
        let config = || {
            let mut c = SessionConfig::new().with_target_partitions(4);
            let o = &mut c.options_mut().optimizer;
            o.hash_join_single_partition_threshold = 16 * 1024;
            o.hash_join_single_partition_threshold_rows = 1024;
            c
        };
        let warp = session(cpu_config(), config());
        register_tpch_with(&warp, parquet, "parquet", ParquetReader::Warpread)
            .await
            .unwrap();
        let df = session(cpu_config(), config());
        register_tpch_with(&df, parquet, "parquet", ParquetReader::Datafusion)
            .await
            .unwrap();
        let mut differ = Vec::new();
        let mut partitioned = 0;
        for (i, sql) in TPCH.iter().enumerate() {
            let explain = format!("EXPLAIN {sql}");
            let a = join_lines(&plan_of(&warp, &explain).await);
            let b = join_lines(&plan_of(&df, &explain).await);
            partitioned += b.iter().filter(|l| l.contains("mode=Partitioned")).count();
            if a != b {
                differ.push(format!(
                    "Q{}:\n  warpread {a:#?}\n  datafusion {b:#?}",
                    i + 1
                ));
            }
        }
        // The thresholds above really leave DataFusion partitioned joins.
        assert!(partitioned > 5, "{partitioned} partitioned joins");
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    });
}

#[test]
fn orc_footer_statistics_agree_with_the_parquet_footer() {
    use datafusion::common::stats::Precision;
    let (orc, parquet) = data();
    let mut bounded = Vec::new();
    for table in ["lineitem", "orders", "customer", "part", "nation"] {
        let o = OrcFormat.open(&orc.join(format!("{table}.orc"))).unwrap();
        let p = ParquetFormat
            .open(&parquet.join(format!("{table}.parquet")))
            .unwrap();
        let (os, ps) = (
            o.statistics(&o.schema()).unwrap(),
            p.statistics(&p.schema()).unwrap(),
        );
        assert_eq!(os.num_rows, ps.num_rows, "{table}");
        for (i, f) in o.schema().fields().iter().enumerate() {
            let c = &os.column_statistics[i];
            let j = p.schema().index_of(f.name()).unwrap();
            let d = &ps.column_statistics[j];
            assert_eq!(c.null_count, d.null_count, "{table}.{}", f.name());
            let text = |v: &Precision<datafusion::scalar::ScalarValue>| {
                v.get_value().map(|s| s.to_string())
            };
            // Parquet writers truncate long string bounds (then inexact).
            let exact =
                d.min_value.is_exact() == Some(true) && d.max_value.is_exact() == Some(true);
            if let (Some(min), Some(max), true) = (text(&c.min_value), text(&c.max_value), exact) {
                assert_eq!(Some(min), text(&d.min_value), "{table}.{} min", f.name());
                assert_eq!(Some(max), text(&d.max_value), "{table}.{} max", f.name());
                bounded.push(format!("{table}.{}", f.name()));
            }
        }
    }
    // Integers, dates, decimals and strings all carry bounds.
    for c in [
        "lineitem.l_orderkey",
        "lineitem.l_shipdate",
        "lineitem.l_extendedprice",
        "lineitem.l_shipmode",
        "nation.n_name",
    ] {
        assert!(
            bounded.iter().any(|b| b == c),
            "{c} has no bounds: {bounded:?}"
        );
    }
}

/// Joins on integer keys test the probe side's keys against an exact set
/// of the build keys (`BuildKeysExec` collects them): the scan drops rows,
/// and the answers stay DataFusion's, with nulls on either side and for a
/// `NOT IN` whose subquery holds a null (a null-aware anti join, which
/// must see the probe side's null and so gets no key set).
#[test]
fn join_key_sets_keep_the_rows_the_join_keeps() {
    use arrow::array::{ArrayRef, Int64Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};
    let dir = std::env::temp_dir().join(format!("warpread-key-sets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, nullable: bool, values: Vec<Option<i64>>| {
        let schema = Arc::new(Schema::new(vec![Field::new(
            "k",
            DataType::Int64,
            nullable,
        )]));
        let column: ArrayRef = Arc::new(Int64Array::from(values));
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![column]).unwrap();
        let path = dir.join(format!("{name}.parquet"));
        let mut w = parquet::arrow::ArrowWriter::try_new(
            std::fs::File::create(&path).unwrap(),
            schema,
            None,
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        path
    };
    // `t`: 1..=20000, required; `s`: every third of 1..=9000, and nulls.
    let t = write("t", false, (1..=20_000).map(Some).collect());
    let s = write(
        "s",
        true,
        (1..=9_000)
            .map(|k| (k % 3 == 0).then_some(k))
            .chain([None, None])
            .collect(),
    );
    rt().block_on(async {
        let warp = cpu_session();
        let df = cpu_session();
        for (name, path) in [("t", &t), ("s", &s)] {
            let path = path.to_str().unwrap();
            warp.register_warpread_parquet(name, path, WarpReadOptions::default())
                .await
                .unwrap();
            df.register_parquet(name, path, Default::default())
                .await
                .unwrap();
        }
        let queries = [
            "SELECT count(*), sum(t.k) FROM s JOIN t ON s.k = t.k",
            "SELECT count(*) FROM t WHERE k IN (SELECT k FROM s)",
            "SELECT count(*) FROM t WHERE k NOT IN (SELECT k FROM s)",
            "SELECT count(*) FROM t WHERE k NOT IN (SELECT k FROM s WHERE k IS NOT NULL)",
            "SELECT count(*) FROM t WHERE NOT EXISTS (SELECT 1 FROM s WHERE s.k = t.k)",
        ];
        for sql in queries {
            let a = run_sql(&warp, sql).await.unwrap();
            let b = run_sql(&df, sql).await.unwrap();
            compare_results(&a[0].batches, &b[0].batches, 0.0)
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        // `NOT IN` with a null in the subquery: no row.
        let none = run_sql(&warp, queries[2]).await.unwrap();
        assert_eq!(sorted_rows(&none[0].batches)[0][0], "0");
        // The inner join's probe side (`t`) is cut to `s`'s keys.
        let (plan, _) = executed(&warp, queries[0]).await;
        let shown = datafusion::physical_plan::displayable(plan.as_ref())
            .indent(true)
            .to_string();
        assert!(shown.contains("BuildKeysExec"), "{shown}");
        assert!(
            metric_sum(&plan, "warpread_rows_dynamic_filtered") > 0,
            "{shown}"
        );
    });
    let _ = std::fs::remove_dir_all(&dir);
}
