//! Tables in object stores other than the local file system: every ORC
//! and Parquet fixture put in an in-memory store (and read through a
//! `LocalFileSystem` rooted at the fixtures, which also goes through
//! `object_store`) gives, through SQL, the rows the local read gives.

use std::sync::Arc;

use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::object_store::local::LocalFileSystem;
use datafusion::object_store::memory::InMemory;
use datafusion::object_store::path::Path as ObjectPath;
use datafusion::object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use datafusion::prelude::SessionContext;
use warpread::exec::CpuBackend;
use warpread_datafusion::{WarpreadConfig, compare_results, register_path, run_sql, session};

use crate::common::root;

fn cpu_session() -> SessionContext {
    session(
        WarpreadConfig::with_backend(Arc::new(CpuBackend::new())),
        Default::default(),
    )
}

async fn rows(ctx: &SessionContext, path: &str) -> Vec<arrow::array::RecordBatch> {
    register_path(ctx, "t", path).await.unwrap();
    let out = run_sql(ctx, "SELECT * FROM t").await.unwrap();
    ctx.deregister_table("t").unwrap();
    out.last().unwrap().batches.clone()
}

#[test]
fn fixtures_in_object_stores_read_as_the_local_files() {
    let rt = warpread_datafusion::runtime().unwrap();
    rt.block_on(async {
        let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let testdata = root().join("testdata");
        let prefixed: Arc<dyn ObjectStore> =
            Arc::new(LocalFileSystem::new_with_prefix(&testdata).unwrap());
        let local = cpu_session();
        let remote = cpu_session();
        remote.register_object_store(
            ObjectStoreUrl::parse("memory://").unwrap().as_ref(),
            memory.clone(),
        );
        remote.register_object_store(
            ObjectStoreUrl::parse("fixtures://data").unwrap().as_ref(),
            prefixed,
        );
        let mut read = 0;
        for dir in ["orc", "parquet"] {
            let mut files: Vec<_> = std::fs::read_dir(testdata.join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == dir))
                .collect();
            files.sort();
            for file in files {
                let name = file.file_name().unwrap().to_string_lossy().into_owned();
                // Files the local read refuses (unsupported features) are
                // others' tests.
                let want = async {
                    register_path(&local, "t", file.to_str().unwrap()).await?;
                    let out = run_sql(&local, "SELECT * FROM t").await;
                    local.deregister_table("t").unwrap();
                    out
                }
                .await;
                let Ok(want) = want else {
                    continue;
                };
                let want = want.last().unwrap().batches.clone();
                let key = format!("data/{dir}/{name}");
                memory
                    .put(
                        &ObjectPath::from(key.as_str()),
                        PutPayload::from(std::fs::read(&file).unwrap()),
                    )
                    .await
                    .unwrap();
                let got = rows(&remote, &format!("memory:///{key}")).await;
                compare_results(&got, &want, 0.0)
                    .unwrap_or_else(|e| panic!("{name} (memory): {e}"));
                let got = rows(&remote, &format!("fixtures://data/{dir}/{name}")).await;
                compare_results(&got, &want, 0.0)
                    .unwrap_or_else(|e| panic!("{name} (prefixed local): {e}"));
                read += 1;
            }
        }
        assert!(read >= 20, "{read} fixtures read");
    });
}

#[test]
fn a_damaged_object_is_an_error_naming_it() {
    let rt = warpread_datafusion::runtime().unwrap();
    rt.block_on(async {
        let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let ctx = cpu_session();
        ctx.register_object_store(
            ObjectStoreUrl::parse("memory://").unwrap().as_ref(),
            memory.clone(),
        );
        let bytes = std::fs::read(root().join("testdata/parquet/types_gzip_v1.parquet")).unwrap();
        // The footer intact, the pages cut: opening works, reading fails.
        let mut cut = bytes.clone();
        let keep = 200;
        for b in &mut cut[keep..bytes.len() - 2000] {
            *b = 0xAB;
        }
        memory
            .put(&ObjectPath::from("bad/x.parquet"), PutPayload::from(cut))
            .await
            .unwrap();
        let r = async {
            register_path(&ctx, "t", "memory:///bad/x.parquet").await?;
            run_sql(&ctx, "SELECT * FROM t").await
        }
        .await;
        let Err(e) = r else {
            panic!("a damaged file fails");
        };
        let e = e.to_string();
        assert!(e.contains("bad/x.parquet"), "{e}");
    });
}

/// One object split into byte ranges read by four partitions at once: the
/// partitions share the cached file (and its fetched ranges), each giving
/// its groups' bytes back; run twice, the second time from the cache.
#[test]
fn partitions_share_one_cached_object() {
    use arrow::array::{Int64Array, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;

    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
    ]));
    let mut buf = Vec::new();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(5_000))
        .set_compression(parquet::basic::Compression::GZIP(Default::default()))
        .build();
    let mut w = ArrowWriter::try_new(&mut buf, schema.clone(), Some(props)).unwrap();
    for part in 0..20i64 {
        let k = Int64Array::from_iter_values((0..5_000).map(|i| part * 5_000 + i));
        let s = StringArray::from_iter(
            (0..5_000).map(|i| (i % 7 != 0).then(|| format!("v{}", i % 97))),
        );
        w.write(&RecordBatch::try_new(schema.clone(), vec![Arc::new(k), Arc::new(s)]).unwrap())
            .unwrap();
    }
    w.close().unwrap();
    let rt = warpread_datafusion::runtime().unwrap();
    rt.block_on(async {
        let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        memory
            .put(&ObjectPath::from("p/t.parquet"), PutPayload::from(buf))
            .await
            .unwrap();
        let config = warpread_datafusion::session_config()
            .with_target_partitions(4)
            .set_usize("datafusion.optimizer.repartition_file_min_size", 1);
        let ctx = session(WarpreadConfig::with_backend(Arc::new(CpuBackend::new())), config);
        ctx.register_object_store(ObjectStoreUrl::parse("memory://").unwrap().as_ref(), memory);
        register_path(&ctx, "t", "memory:///p/t.parquet").await.unwrap();
        let sql = "SELECT count(*) AS n, sum(k) AS sk, count(s) AS ns, max(s) AS ms FROM t WHERE k % 3 = 0";
        for _ in 0..2 {
            let out = run_sql(&ctx, sql).await.unwrap();
            let rows = warpread_datafusion::sorted_rows(&out.last().unwrap().batches).concat().join(",");
            // Rows 0..100000 with k % 3 == 0: 33334 of them, sum 3·(0+…+33333).
            let n = 33_334i64;
            let sum = 3 * (n - 1) * n / 2;
            assert!(rows.contains(&n.to_string()) && rows.contains(&sum.to_string()), "{rows}");
        }
        let plan = run_sql(&ctx, &format!("EXPLAIN {sql}")).await.unwrap();
        let text = warpread_datafusion::sorted_rows(&plan[0].batches).concat().join("\n");
        assert!(text.matches("p/t.parquet:").count() >= 2, "the file is split: {text}");
    });
}
