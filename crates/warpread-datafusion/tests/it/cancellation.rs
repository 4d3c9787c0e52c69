//! A SQL query dropped mid-scan stops its reads (the backend counts the
//! stages that run after the drop), and on CUDA gives back the pinned
//! blocks and device mirrors it held; the session then runs the query in
//! full, as the CPU does. A scan whose read group is over the device's
//! memory limit reads it again row group by row group.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use arrow::array::{Int64Array, RecordBatch};
use datafusion::prelude::SessionContext;
use futures::StreamExt;
use warpread::exec::{Backend, CpuBackend};
use warpread_datafusion::{
    SessionContextExt, WarpReadOptions, WarpreadConfig, compare_results, run_sql, session,
    session_config,
};

use crate::common::{Rng, cuda_options, cuda_own};
use crate::stage_counting::{Counting, SmallDevice, settled, write_gzip_parquet};

/// Row groups in the test file.
const GROUPS: usize = 24;
/// Rows per row group: 1.1 MB of incompressible integers, so that a read
/// group of `warpread.group_mib = 1` holds one row group.
const ROWS: usize = 140_000;

const QUERY: &str = "SELECT k FROM t WHERE k % 3 <> 1";

/// A GZIP Parquet file of [`GROUPS`] row groups of random integers.
fn file() -> PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = std::env::temp_dir().join(format!(
            "warpread-sql-cancel-{}.parquet",
            std::process::id()
        ));
        let mut rng = Rng::seeded(34);
        let values = (0..GROUPS * ROWS).map(|_| rng.next() as i64);
        let batch = RecordBatch::try_from_iter([(
            "k",
            Arc::new(Int64Array::from_iter_values(values)) as _,
        )])
        .unwrap();
        write_gzip_parquet(&path, &batch, ROWS, false);
        path
    })
    .clone()
}

/// One scan partition reading a row group per read group, one ahead.
async fn sql_session(backend: Arc<dyn Backend>) -> SessionContext {
    session_with_groups(backend, "1").await
}

/// One scan partition reading `group_mib` MiB per read group, one ahead.
async fn session_with_groups(backend: Arc<dyn Backend>, group_mib: &str) -> SessionContext {
    let mut config = session_config();
    for (key, value) in [
        ("datafusion.execution.target_partitions", "1"),
        ("warpread.group_mib", group_mib),
        ("warpread.read_ahead", "1"),
    ] {
        config.options_mut().set(key, value).unwrap();
    }
    let ctx = session(WarpreadConfig::with_backend(backend), config);
    ctx.register_warpread_parquet("t", file().to_str().unwrap(), WarpReadOptions::default())
        .await
        .unwrap();
    ctx
}

/// Runs `QUERY` up to its first batch, then drops the stream.
async fn first_batch_then_drop(ctx: &SessionContext) -> RecordBatch {
    let mut stream = ctx
        .sql(QUERY)
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap();
    let first = stream.next().await.unwrap().unwrap();
    drop(stream);
    first
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_query_stops_reading() {
    let whole = Arc::new(Counting::default());
    let ctx = sql_session(whole.clone()).await;
    let rows: usize = run_sql(&ctx, QUERY).await.unwrap()[0]
        .batches
        .iter()
        .map(|b| b.num_rows())
        .sum();
    assert!(rows > GROUPS * ROWS / 2, "{rows} rows");
    let all = whole.stages();
    let per_group = all / GROUPS;
    assert!(per_group > 0, "{all} stages");
    let part = Arc::new(Counting::default());
    let ctx = sql_session(part.clone()).await;
    first_batch_then_drop(&ctx).await;
    let ran = tokio::task::spawn_blocking(move || settled(|| part.stages()))
        .await
        .unwrap();
    println!("sql cancellation: {ran} of {all} stages ran after the drop");
    // The group handed out, the one read ahead, and one whose read had
    // started: a few groups' stages, not 24.
    assert!(ran <= 4 * per_group, "{ran} of {all} stages ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_cuda_query_gives_back_its_memory() {
    let Some(cuda) = cuda_own(cuda_options(), "sql cancellation") else {
        return;
    };
    let cpu = sql_session(Arc::new(CpuBackend::new())).await;
    let want = run_sql(&cpu, QUERY).await.unwrap();
    let ctx = sql_session(cuda.clone()).await;
    for round in 0..3 {
        first_batch_then_drop(&ctx).await;
        let backend = cuda.clone();
        let held = tokio::task::spawn_blocking(move || {
            settled(|| {
                let (pinned, mirrored) = backend.held_memory();
                pinned + mirrored
            })
        })
        .await
        .unwrap();
        assert_eq!(held, 0, "round {round}: bytes held after the drop");
    }
    let got = run_sql(&ctx, QUERY).await.unwrap();
    compare_results(&want[0].batches, &got[0].batches, 0.0).unwrap();
    drop(got);
    assert_eq!(cuda.held_memory(), (0, 0), "held after a whole query");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_over_the_device_limit_reads_row_group_by_row_group() {
    let want = run_sql(&sql_session(Arc::new(CpuBackend::new())).await, QUERY)
        .await
        .unwrap();
    // The largest stage of one row group, then a group of them all.
    let probe = Arc::new(SmallDevice::new(u64::MAX));
    run_sql(&sql_session(probe.clone()).await, QUERY)
        .await
        .unwrap();
    let small = Arc::new(SmallDevice::new(probe.largest()));
    let ctx = session_with_groups(small.clone(), "64").await;
    let got = run_sql(&ctx, QUERY).await.unwrap();
    assert!(small.refused() > 0, "no stage was over the limit");
    // One partition reads in file order: the same rows in the same order,
    // whatever the batch boundaries (compared whole: a row-by-row text
    // comparison of 2 M rows takes seconds in a debug build).
    let whole = |r: &[warpread_datafusion::StatementResult]| {
        let b = &r[0].batches;
        arrow::compute::concat_batches(&b[0].schema(), b).unwrap()
    };
    assert_eq!(whole(&want), whole(&got));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_the_device_fails_names_the_file_or_falls_back_to_the_cpu() {
    let want = run_sql(&sql_session(Arc::new(CpuBackend::new())).await, QUERY)
        .await
        .unwrap();
    // A device that takes no stage at all: even one row group fails.
    let none = Arc::new(SmallDevice::new(0));
    let ctx = sql_session(none.clone()).await;
    let e = run_sql(&ctx, QUERY).await.unwrap_err().to_string();
    let name = file().file_name().unwrap().to_string_lossy().into_owned();
    assert!(e.contains(&name) && e.contains("device memory"), "{e}");
    // With `warpread.cpu_fallback` the same scan reads on the CPU.
    ctx.sql("SET warpread.cpu_fallback = true")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let refused = none.refused();
    let got = run_sql(&ctx, QUERY).await.unwrap();
    assert!(none.refused() > refused, "the device was not tried first");
    let whole = |r: &[warpread_datafusion::StatementResult]| {
        let b = &r[0].batches;
        arrow::compute::concat_batches(&b[0].schema(), b).unwrap()
    };
    assert_eq!(whole(&want), whole(&got));
}

/// A session whose memory pool holds at most `limit` bytes, reading the
/// whole file in one group.
async fn session_with_memory(limit: usize) -> SessionContext {
    let mut config = session_config();
    for (key, value) in [
        ("datafusion.execution.target_partitions", "1"),
        ("warpread.group_mib", "64"),
        ("warpread.read_ahead", "1"),
    ] {
        config.options_mut().set(key, value).unwrap();
    }
    let runtime = datafusion::execution::runtime_env::RuntimeEnvBuilder::new()
        .with_memory_limit(limit, 1.0)
        .build_arc()
        .unwrap();
    let state = warpread_datafusion::state_builder(
        WarpreadConfig::with_backend(Arc::new(CpuBackend::new())),
        config,
    )
    .with_runtime_env(runtime)
    .build();
    let ctx = SessionContext::new_with_state(state);
    warpread_datafusion::register_formats(&ctx);
    ctx.register_warpread_parquet("t", file().to_str().unwrap(), WarpReadOptions::default())
        .await
        .unwrap();
    ctx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scans_reserve_their_decoding_from_the_memory_pool() {
    let want = run_sql(&sql_session(Arc::new(CpuBackend::new())).await, QUERY)
        .await
        .unwrap();
    // The file decodes to 2 x 27 MB (pages, then values) in one group and
    // to 2 x 1.1 MB a row group: a pool of 8 MB takes it row group by row
    // group, and gives every byte back.
    let ctx = session_with_memory(8 << 20).await;
    let got = run_sql(&ctx, QUERY).await.unwrap();
    let whole = |r: &[warpread_datafusion::StatementResult]| {
        let b = &r[0].batches;
        arrow::compute::concat_batches(&b[0].schema(), b).unwrap()
    };
    assert_eq!(whole(&want), whole(&got));
    assert_eq!(ctx.runtime_env().memory_pool.reserved(), 0);
    // Not even a row group fits in 1 MB: the query fails with the pool's
    // error, naming the file.
    let ctx = session_with_memory(1 << 20).await;
    let e = run_sql(&ctx, QUERY).await.unwrap_err().to_string();
    let name = file().file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        e.contains("Resources exhausted") && e.contains(&name),
        "{e}"
    );
}
