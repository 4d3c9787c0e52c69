//! `warpread demo`: the embedded default. TPC-H at scale 0.1 is generated
//! as ZLIB ORC into the cache on first run, then TPC-H Q1 runs through the
//! warpread table provider; the output names the backend and where the
//! time went.

use std::time::Instant;

use crate::datagen::cache::{cache_root, ensure_tpch, tpch_dir_name};
use crate::datagen::tpch::{GenCompression, GenFormat, GenOptions};
use crate::error::Result;
use warpread_datafusion::{TPCH, WarpreadConfig, register_tpch, run_sql, runtime, session};

use super::sql::{OutputFormat, print_batches};

/// Scale factor of the demo data.
pub const DEMO_SCALE: f64 = 0.1;

/// Runs the demo.
pub fn run(settings: &super::Settings) -> Result<()> {
    let options = GenOptions::new(GenFormat::Orc, GenCompression::Zlib);
    let dir = cache_root().join(tpch_dir_name(DEMO_SCALE, &options));
    let t = Instant::now();
    if ensure_tpch(DEMO_SCALE, &options, &dir)? {
        eprintln!("generated in {:.1} s", t.elapsed().as_secs_f64());
    }
    let config = WarpreadConfig::with_backend(settings.select()?.into());
    let backend = config.backend.clone();
    let stats = config.stats.clone();
    runtime()?.block_on(async move {
        let ctx = session(config, Default::default());
        register_tpch(&ctx, &dir, "orc").await?;
        println!("TPC-H Q1 at scale {DEMO_SCALE} on {}", dir.display());
        println!("reader: warpread ORC (ZLIB, RLE v1) through DataFusion");
        println!("backend: {}", backend.describe());
        stats.take();
        let t = Instant::now();
        let results = run_sql(&ctx, TPCH[0]).await?;
        let total = t.elapsed().as_secs_f64();
        let s = stats.take();
        for r in &results {
            print_batches(&mut std::io::stdout().lock(), r, OutputFormat::Table)?;
        }
        let transfer = if backend.name() == "cuda" {
            "included in decompress and decode (not timed apart yet)"
        } else {
            "none (CPU backend)"
        };
        println!("stages (summed over files read in parallel, so they may exceed the total):");
        println!(
            "  I/O         {:>8.3} s  ({:.1} MiB read)",
            s.io_s,
            s.file_bytes as f64 / (1 << 20) as f64
        );
        println!("  transfer    {transfer}");
        println!(
            "  decompress  {:>8.3} s  ({:.1} MiB out)",
            s.decompress_s,
            s.stream_bytes as f64 / (1 << 20) as f64
        );
        println!("  decode      {:>8.3} s", s.decode_s);
        println!("  assemble    {:>8.3} s  (Arrow arrays)", s.assemble_s);
        println!("  query       {total:>8.3} s  (wall clock, scan included)");
        Ok(())
    })
}
