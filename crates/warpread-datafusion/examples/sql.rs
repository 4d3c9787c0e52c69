//! SQL over ORC and Parquet files with warpread decoding: a session with
//! warpread's table formats and rules, a table registered from a file, a
//! `warpread.*` setting changed for the session, and a query.
//!
//! `cargo run -p warpread-datafusion --example sql [FILE.orc|FILE.parquet]`.

use std::sync::Arc;

use warpread::exec::{self, BackendChoice};
use warpread_datafusion::{WarpreadConfig, register_path, run_sql, session, session_config};

/// Registers `path` as table `t` and counts its rows by SQL.
pub async fn run(path: &str) -> warpread::Result<String> {
    // One backend per device, shared by the session's scans.
    let backend = exec::select(BackendChoice::Auto)?;
    let ctx = session(
        WarpreadConfig::with_backend(Arc::from(backend)),
        session_config(),
    );
    register_path(&ctx, "t", path).await?;
    run_sql(&ctx, "SET warpread.join_key_sets = false").await?;
    let out = run_sql(&ctx, "SELECT count(*) AS n FROM t").await?;
    let text = arrow::util::pretty::pretty_format_batches(&out[0].batches)
        .map_err(|e| warpread::Error::arrow("printing", e))?
        .to_string();
    println!("{text}");
    Ok(text)
}

#[allow(dead_code)]
fn main() -> warpread::Result<()> {
    let default = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/orc/many_stripes_v12_none.orc"
    );
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| default.to_string());
    let rt = warpread_datafusion::runtime()?;
    rt.block_on(run(&path)).map(|_| ())
}
