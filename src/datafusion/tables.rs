//! Registering tables by path for the command line, the demo, the
//! benchmark and tests: `.orc` files are read by warpread, `.parquet` files
//! by DataFusion's own Parquet reader (warpread's Parquet reader is not
//! plugged in yet).

use std::fmt;
use std::path::Path;

use datafusion::prelude::{ParquetReadOptions, SessionContext};

use super::session_ext::{OrcReadOptions, SessionContextExt};
use crate::error::{Error, Result};

/// Which reader serves a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableReader {
    /// warpread's ORC reader on the session's backend.
    WarpreadOrc,
    /// DataFusion's built-in Parquet reader (CPU).
    DataFusionParquet,
}

impl fmt::Display for TableReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::WarpreadOrc => "ORC via warpread",
            Self::DataFusionParquet => "Parquet via DataFusion's built-in reader",
        })
    }
}

fn reader_for_extension(name: &str) -> Option<TableReader> {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".orc") {
        Some(TableReader::WarpreadOrc)
    } else if lower.ends_with(".parquet") {
        Some(TableReader::DataFusionParquet)
    } else {
        None
    }
}

/// The reader for a file, a glob (by its extension) or a folder (by the
/// files in it: ORC wins when both kinds are present).
pub fn reader_for(path: &str) -> Result<TableReader> {
    if let Some(r) = reader_for_extension(path) {
        return Ok(r);
    }
    let p = Path::new(path);
    if p.is_dir() {
        let names: Vec<String> = std::fs::read_dir(p)
            .map_err(|e| Error::io(p, e))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        for want in [TableReader::WarpreadOrc, TableReader::DataFusionParquet] {
            if names.iter().any(|n| reader_for_extension(n) == Some(want)) {
                return Ok(want);
            }
        }
    }
    Err(Error::Unsupported(format!(
        "{path}: expected .orc or .parquet files (a file, a folder of them, or a glob)"
    )))
}

/// Registers `path` as table `name` with the reader its files need.
pub async fn register_path(ctx: &SessionContext, name: &str, path: &str) -> Result<TableReader> {
    let reader = reader_for(path)?;
    let what = format!("registering table {name} at {path}");
    let done = match reader {
        TableReader::WarpreadOrc => {
            ctx.register_orc(name, path, OrcReadOptions::default())
                .await
        }
        TableReader::DataFusionParquet => {
            ctx.register_parquet(name, path, ParquetReadOptions::default())
                .await
        }
    };
    done.map_err(|e| Error::datafusion(what, e))?;
    Ok(reader)
}

/// Registers the eight TPC-H tables found in `dir` as `TABLE.EXT`.
pub async fn register_tpch(ctx: &SessionContext, dir: &Path, ext: &str) -> Result<TableReader> {
    let mut reader = None;
    for t in crate::datagen::tpch::TABLES {
        let path = dir.join(format!("{t}.{ext}"));
        if !path.is_file() {
            return Err(Error::Unsupported(format!(
                "{} is missing (generate with `warpread gen tpch`)",
                path.display()
            )));
        }
        reader = Some(register_path(ctx, t, &path.to_string_lossy()).await?);
    }
    Ok(reader.expect("eight tables"))
}
