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
