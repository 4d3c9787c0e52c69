//! Generated data sets kept between runs under `$WARPREAD_CACHE` (else
//! `~/.cache/warpread`), so the demo and the benchmarks generate only once.

use std::path::{Path, PathBuf};

use super::tpch::{self, GenOptions, TABLES};
use crate::error::Result;

/// The cache root: `$WARPREAD_CACHE`, else `~/.cache/warpread`, else
/// `./.warpread-cache` when there is no home folder
/// ([`crate::cli::env::data_cache`]).
pub fn cache_root() -> PathBuf {
    crate::cli::env::data_cache()
}

/// The folder name of a TPC-H data set: `tpch-sf0.1` for the demo's
/// default (ORC, ZLIB), else with format and compression appended.
pub fn tpch_dir_name(sf: f64, options: &GenOptions) -> String {
    let base = format!("tpch-sf{sf}");
    let default = GenOptions::new(tpch::GenFormat::Orc, tpch::GenCompression::Zlib);
    if options.format == default.format && options.compression == default.compression {
        base
    } else {
        format!(
            "{base}-{}-{:?}",
            options.format.extension(),
            options.compression
        )
        .to_ascii_lowercase()
    }
}

/// TPC-H at `sf` as `options` say, in `dir`: generated (with a progress
/// bar) unless every table file is already there. Returns whether it
/// generated.
pub fn ensure_tpch(sf: f64, options: &GenOptions, dir: &Path) -> Result<bool> {
    let ext = options.format.extension();
    let missing: Vec<String> = TABLES
        .iter()
        .filter(|t| !dir.join(format!("{t}.{ext}")).is_file())
        .map(|t| t.to_string())
        .collect();
    if missing.is_empty() {
        return Ok(false);
    }
    eprintln!(
        "generating TPC-H scale {sf} ({ext}, {:?}) into {}",
        options.compression,
        dir.display()
    );
    tpch::generate(sf, options, dir, &missing)?;
    Ok(true)
}
