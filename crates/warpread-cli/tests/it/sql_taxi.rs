//! The NYC taxi example queries (`queries/taxi/`) on the real-data sample:
//! its columns written as ZLIB ORC (with nulls, through PRESENT streams) and
//! read by warpread, and the original Parquet file read by warpread's
//! Parquet provider, give the rows DataFusion's Parquet reader gives on the
//! original file. Skipped when the sample is absent.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use warpread::exec::CpuBackend;
use warpread_cli::datagen::orc::{OrcCompression, OrcWriteOptions, OrcWriter};
use warpread_datafusion::{
    SessionContextExt, TAXI, WarpReadOptions, WarpreadConfig, compare_results, run_sql, session,
};

const COLUMNS: [&str; 7] = [
    "passenger_count",
    "trip_distance",
    "pickup_location_id",
    "payment_type",
    "fare_amount",
    "tip_amount",
    "total_amount",
];

fn sample() -> Option<PathBuf> {
    let p = warpread_cli::bench::suite::default_realdata_dir()?
        .join("nyc_yellow_taxi_2018_2020_sample_360k.parquet");
    p.is_file().then_some(p)
}

#[test]
fn taxi_queries_match_datafusion_parquet() {
    let Some(parquet) = sample() else {
        println!("taxi_queries_match_datafusion_parquet: skipped: no taxi sample");
        return;
    };
    let dir = std::env::temp_dir().join(format!("warpread-sql-taxi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let orc = dir.join("taxi.orc");
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(&parquet).unwrap()).unwrap();
    let mask = ProjectionMask::columns(builder.parquet_schema(), COLUMNS);
    let reader = builder.with_projection(mask).build().unwrap();
    let mut writer = None;
    for batch in reader {
        let batch = batch.unwrap();
        let w = writer.get_or_insert_with(|| {
            OrcWriter::try_new(
                &orc,
                batch.schema(),
                OrcWriteOptions {
                    compression: OrcCompression::Zlib,
                    stripe_rows: 50_000,
                    ..Default::default()
                },
            )
            .unwrap()
        });
        w.write(&batch).unwrap();
    }
    assert_eq!(writer.unwrap().finish().unwrap(), 360_000);
    warpread_datafusion::runtime().unwrap().block_on(async {
        let cpu = || WarpreadConfig::with_backend(Arc::new(CpuBackend::new()));
        let warp = session(cpu(), Default::default());
        warp.register_orc("taxi", &orc.to_string_lossy(), Default::default())
            .await
            .unwrap();
        let df = session(cpu(), Default::default());
        df.register_parquet(
            "taxi",
            parquet.to_string_lossy().as_ref(),
            Default::default(),
        )
        .await
        .unwrap();
        for (name, sql) in TAXI {
            let a = run_sql(&warp, sql).await.unwrap();
            let b = run_sql(&df, sql).await.unwrap();
            let (a, b) = (&a[0].batches, &b[0].batches);
            assert!(!a.is_empty(), "{name}: no rows");
            // Float sums of parallel partitions add in different orders.
            compare_results(a, b, 1e-9).unwrap_or_else(|e| panic!("{name}: {e}"));
            println!("{name}: same rows");
        }
    });
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn taxi_queries_on_warpread_parquet_match_datafusion_parquet() {
    let Some(parquet) = sample() else {
        println!(
            "taxi_queries_on_warpread_parquet_match_datafusion_parquet: skipped: no taxi sample"
        );
        return;
    };
    let path = parquet.to_string_lossy();
    warpread_datafusion::runtime().unwrap().block_on(async {
        let cpu = || WarpreadConfig::with_backend(Arc::new(CpuBackend::new()));
        let warp = session(cpu(), Default::default());
        warp.register_warpread_parquet("taxi", &path, WarpReadOptions::default())
            .await
            .unwrap();
        let df = session(cpu(), Default::default());
        df.register_parquet("taxi", path.as_ref(), Default::default())
            .await
            .unwrap();
        let explain = run_sql(&warp, "EXPLAIN SELECT fare_amount FROM taxi")
            .await
            .unwrap();
        let text = warpread_datafusion::sorted_rows(&explain[0].batches)
            .concat()
            .join("\n");
        assert!(text.contains("reader=warpread"), "{text}");
        let every_column = "SELECT * FROM taxi WHERE pickup_location_id = 132";
        for (name, sql) in TAXI.into_iter().chain([("every_column", every_column)]) {
            let a = run_sql(&warp, sql).await.unwrap();
            let b = run_sql(&df, sql).await.unwrap();
            let (a, b) = (&a[0].batches, &b[0].batches);
            assert!(!a.is_empty(), "{name}: no rows");
            // Float sums of parallel partitions add in different orders.
            compare_results(a, b, 1e-9).unwrap_or_else(|e| panic!("{name}: {e}"));
            println!("{name}: same rows");
        }
    });
}
