//! Registering tables by path for the command line, the demo, the
//! benchmark and tests: `.orc` files are read by warpread; `.parquet` files
//! by warpread's Parquet reader, or on request by DataFusion's own (to
//! compare the two); `.arrow` GSST containers by warpread.

use std::fmt;
use std::path::Path;

use datafusion::prelude::{ParquetReadOptions, SessionContext};

use super::session_ext::{SessionContextExt, WarpReadOptions};
use crate::error::{Error, Result};

/// Which reader serves a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableReader {
    /// warpread's ORC reader on the session's backend.
    WarpreadOrc,
    /// warpread's Parquet reader on the session's backend.
    WarpreadParquet,
    /// DataFusion's built-in Parquet reader (CPU).
    DataFusionParquet,
    /// warpread's GSST container reader (strings decoded on the backend).
    WarpreadGsst,
}

impl fmt::Display for TableReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::WarpreadOrc => "ORC via warpread",
            Self::WarpreadParquet => "Parquet via warpread",
            Self::DataFusionParquet => "Parquet via DataFusion's built-in reader",
            Self::WarpreadGsst => "GSST container via warpread",
        })
    }
}

/// Which reader `.parquet` tables get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ParquetReader {
    /// warpread's Parquet reader on the session's backend.
    #[default]
    Warpread,
    /// DataFusion's built-in Parquet reader (CPU), for comparisons.
    Datafusion,
}

impl std::str::FromStr for ParquetReader {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "warpread" => Ok(Self::Warpread),
            "datafusion" => Ok(Self::Datafusion),
            other => Err(Error::Unsupported(format!(
                "Parquet reader `{other}` (expected warpread or datafusion)"
            ))),
        }
    }
}

impl ParquetReader {
    fn table_reader(self) -> TableReader {
        match self {
            Self::Warpread => TableReader::WarpreadParquet,
            Self::Datafusion => TableReader::DataFusionParquet,
        }
    }
}

fn reader_for_extension(name: &str, parquet: ParquetReader) -> Option<TableReader> {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".orc") {
        Some(TableReader::WarpreadOrc)
    } else if lower.ends_with(".parquet") {
        Some(parquet.table_reader())
    } else if lower.ends_with(".arrow") {
        Some(TableReader::WarpreadGsst)
    } else {
        None
    }
}

/// The reader for a file, a glob (by its extension) or a folder (by the
/// files in it: ORC wins when both kinds are present); `parquet` says
/// which reader Parquet files get.
pub fn reader_for(path: &str, parquet: ParquetReader) -> Result<TableReader> {
    if let Some(r) = reader_for_extension(path, parquet) {
        return Ok(r);
    }
    let p = Path::new(path);
    if p.is_dir() {
        let names: Vec<String> = std::fs::read_dir(p)
            .map_err(|e| Error::io(p, e))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        for want in [
            TableReader::WarpreadOrc,
            parquet.table_reader(),
            TableReader::WarpreadGsst,
        ] {
            if names
                .iter()
                .any(|n| reader_for_extension(n, parquet) == Some(want))
            {
                return Ok(want);
            }
        }
    }
    Err(Error::Unsupported(format!(
        "{path}: expected .orc, .parquet or .arrow (GSST container) files (a file, a folder of them, or a glob)"
    )))
}

/// Whether `path` is the URL of an object store other than the local file
/// system (`s3://bucket/x`), whose store the session must have registered.
fn is_store_url(path: &str) -> bool {
    path.split_once("://")
        .is_some_and(|(scheme, _)| !scheme.is_empty() && scheme != "file")
}

/// [`reader_for`] of a URL: by its extension, else by the objects under
/// it (listed through the store the session has registered for it).
async fn reader_for_url(
    ctx: &SessionContext,
    path: &str,
    parquet: ParquetReader,
) -> Result<TableReader> {
    use futures::TryStreamExt;
    if let Some(r) = reader_for_extension(path, parquet) {
        return Ok(r);
    }
    let what = || format!("listing {path}");
    let url = datafusion::datasource::listing::ListingTableUrl::parse(path)
        .map_err(|e| Error::datafusion(what(), e))?;
    let store = ctx
        .runtime_env()
        .object_store(url.object_store())
        .map_err(|e| Error::datafusion(what(), e))?;
    let names: Vec<String> = store
        .list(Some(url.prefix()))
        .map_ok(|m| m.location.to_string())
        .try_collect()
        .await
        .map_err(|e| Error::object_store(path, e))?;
    for want in [
        TableReader::WarpreadOrc,
        parquet.table_reader(),
        TableReader::WarpreadGsst,
    ] {
        if names
            .iter()
            .any(|n| reader_for_extension(n, parquet) == Some(want))
        {
            return Ok(want);
        }
    }
    Err(Error::Unsupported(format!(
        "{path}: no .orc, .parquet or .arrow (GSST container) objects under it"
    )))
}

/// Registers `path` as table `name` with the reader its files need
/// (Parquet: warpread's). A URL of an object store (`s3://...`) is read
/// through the store the session has registered for it
/// (`SessionContext::register_object_store`).
pub async fn register_path(ctx: &SessionContext, name: &str, path: &str) -> Result<TableReader> {
    register_path_with(ctx, name, path, ParquetReader::default()).await
}

/// [`register_path`], with `parquet` choosing the reader of Parquet files.
pub async fn register_path_with(
    ctx: &SessionContext,
    name: &str,
    path: &str,
    parquet: ParquetReader,
) -> Result<TableReader> {
    let reader = if is_store_url(path) {
        reader_for_url(ctx, path, parquet).await?
    } else {
        reader_for(path, parquet)?
    };
    let what = format!("registering table {name} at {path}");
    let done = match reader {
        TableReader::WarpreadOrc => {
            ctx.register_orc(name, path, WarpReadOptions::default())
                .await
        }
        TableReader::WarpreadParquet => {
            ctx.register_warpread_parquet(name, path, WarpReadOptions::default())
                .await
        }
        TableReader::DataFusionParquet => {
            ctx.register_parquet(name, path, ParquetReadOptions::default())
                .await
        }
        TableReader::WarpreadGsst => {
            ctx.register_gsst(name, path, WarpReadOptions::default())
                .await
        }
    };
    done.map_err(|e| Error::datafusion(what, e))?;
    Ok(reader)
}

/// The eight TPC-H tables, in the order the generators write them.
pub const TPCH_TABLES: [&str; 8] = [
    "lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region",
];

/// Registers the eight TPC-H tables found in `dir` as `TABLE.EXT`
/// (Parquet: warpread's reader).
pub async fn register_tpch(ctx: &SessionContext, dir: &Path, ext: &str) -> Result<TableReader> {
    register_tpch_with(ctx, dir, ext, ParquetReader::default()).await
}

/// [`register_tpch`], with `parquet` choosing the reader of Parquet files.
pub async fn register_tpch_with(
    ctx: &SessionContext,
    dir: &Path,
    ext: &str,
    parquet: ParquetReader,
) -> Result<TableReader> {
    let mut reader = None;
    for t in TPCH_TABLES {
        let path = dir.join(format!("{t}.{ext}"));
        if !path.is_file() {
            return Err(Error::Unsupported(format!(
                "{} is missing (generate with `warpread gen tpch`)",
                path.display()
            )));
        }
        reader = Some(register_path_with(ctx, t, &path.to_string_lossy(), parquet).await?);
    }
    Ok(reader.expect("eight tables"))
}
