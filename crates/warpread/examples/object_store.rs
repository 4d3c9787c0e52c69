//! Reads a Parquet object from an object store with the async builder:
//! here an in-memory store (any `object_store::ObjectStore` works: S3,
//! GCS, Azure, HTTP), the footer fetched first, then each read group's
//! column chunks while the group before it decodes.
//!
//! `cargo run -p warpread --example object_store [FILE.parquet]`.

use std::sync::Arc;

use futures::TryStreamExt;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use warpread::parquet::ParquetStreamBuilder;

/// Puts `path`'s bytes in a store and streams them back; returns the rows.
pub async fn run(path: &str) -> warpread::Result<usize> {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let location = Path::from("tables/t.parquet");
    let bytes = std::fs::read(path).map_err(|e| warpread::Error::io(path, e))?;
    store
        .put(&location, PutPayload::from(bytes))
        .await
        .map_err(|e| warpread::Error::object_store(location.as_ref(), e))?;
    let stream = ParquetStreamBuilder::new(store, location)
        .await?
        .with_batch_size(4096)
        .build()
        .await?;
    println!("schema: {}", stream.schema());
    let batches: Vec<_> = stream.try_collect().await?;
    let rows = batches.iter().map(|b| b.num_rows()).sum();
    println!("{rows} rows in {} batches", batches.len());
    Ok(rows)
}

#[allow(dead_code)]
fn main() -> warpread::Result<()> {
    let default = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/parquet/types_zstd_v1.parquet"
    );
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| default.to_string());
    let rt = tokio::runtime::Runtime::new().map_err(|e| warpread::Error::io("tokio runtime", e))?;
    rt.block_on(run(&path)).map(|_| ())
}
