//! SQL over the `page_index_*` fixtures through warpread's Parquet
//! provider: filters DataFusion hands to the scan prune pages (the scan's
//! `warpread_pages_skipped` metric), DataFusion filters the rows again, and
//! the answer equals the same query with the filter written so that it
//! cannot be pushed down (`id + 0 >= ...`: no pruning at all) and the
//! answer of DataFusion's own Parquet reader.

use std::sync::Arc;

use datafusion::prelude::{ParquetReadOptions, SessionContext};
use warpread::exec::CpuBackend;
use warpread_datafusion::{
    SessionContextExt, WarpReadOptions, WarpreadConfig, compare_results, run_sql, session,
    sorted_rows,
};

use crate::common::{PAGE_INDEX_FIXTURES as FIXTURES, parquet_fixture as fixture};

/// Queries with their filters pushed down (first) and not (second).
const QUERIES: [(&str, &str); 6] = [
    (
        "SELECT id, k32, day, name, color, score, sparse, rnd, tags, pt FROM t \
         WHERE id >= 1234 AND id < 1300",
        "SELECT id, k32, day, name, color, score, sparse, rnd, tags, pt FROM t \
         WHERE id + 0 >= 1234 AND id + 0 < 1300",
    ),
    (
        "SELECT count(*) AS n, sum(rnd) AS s FROM t WHERE name >= 'n005500'",
        "SELECT count(*) AS n, sum(rnd) AS s FROM t WHERE concat(name, '') >= 'n005500'",
    ),
    (
        "SELECT id, tags FROM t WHERE day <= DATE '2020-01-09'",
        "SELECT id, tags FROM t WHERE day + INTERVAL '0 days' <= DATE '2020-01-09'",
    ),
    (
        "SELECT count(*) AS n FROM t WHERE sparse > 100 AND sparse < 200",
        "SELECT count(*) AS n FROM t WHERE sparse + 0 > 100 AND sparse + 0 < 200",
    ),
    (
        "SELECT id, pt FROM t WHERE score < 100.5",
        "SELECT id, pt FROM t WHERE score + 0 < 100.5",
    ),
    (
        "SELECT name, color FROM t WHERE k32 = 1000",
        "SELECT name, color FROM t WHERE k32 + 0 = 1000",
    ),
];

fn metric(text: &str, name: &str) -> u64 {
    text.match_indices(&format!("{name}="))
        .map(|(i, m)| {
            text[i + m.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect::<String>()
                .parse::<u64>()
                .unwrap_or(0)
        })
        .sum()
}

#[test]
fn sql_with_page_pruning_matches_sql_without() {
    warpread_datafusion::runtime().unwrap().block_on(async {
        for name in FIXTURES {
            let path = fixture(name);
            let path = path.to_str().unwrap();
            let warp = session(
                WarpreadConfig::with_backend(Arc::new(CpuBackend::new())),
                Default::default(),
            );
            warp.register_warpread_parquet("t", path, WarpReadOptions::default())
                .await
                .unwrap();
            let df = SessionContext::new();
            df.register_parquet("t", path, ParquetReadOptions::default())
                .await
                .unwrap();
            for (pushed, not_pushed) in QUERIES {
                let a = run_sql(&warp, pushed).await.unwrap();
                let b = run_sql(&warp, not_pushed).await.unwrap();
                let c = run_sql(&df, pushed).await.unwrap();
                assert!(!sorted_rows(&a[0].batches).is_empty());
                compare_results(&a[0].batches, &b[0].batches, 0.0)
                    .unwrap_or_else(|e| panic!("{name} {pushed}: against no pruning: {e}"));
                compare_results(&a[0].batches, &c[0].batches, 0.0)
                    .unwrap_or_else(|e| panic!("{name} {pushed}: against DataFusion: {e}"));
                let text = |r: &[warpread_datafusion::StatementResult]| {
                    sorted_rows(&r[0].batches).concat().join("\n")
                };
                let with = run_sql(&warp, &format!("EXPLAIN ANALYZE {pushed}"))
                    .await
                    .unwrap();
                let without = run_sql(&warp, &format!("EXPLAIN ANALYZE {not_pushed}"))
                    .await
                    .unwrap();
                let (with, without) = (text(&with), text(&without));
                assert!(
                    metric(&with, "warpread_pages_skipped") > 0,
                    "{name} {pushed}: no page skipped\n{with}"
                );
                assert_eq!(metric(&without, "warpread_pages_skipped"), 0, "{without}");
                assert!(
                    metric(&with, "warpread_pages_read") < metric(&without, "warpread_pages_read"),
                    "{name} {pushed}\n{with}\n{without}"
                );
            }
        }
    });
}
