//! Opened files kept between scans: a query plans with each table's
//! footers (schema, statistics) and every scan partition opens its file
//! again, so without this the same footer is parsed once per query and
//! once per partition (TPC-H lineitem at scale 10 has hundreds of row
//! groups). DataFusion's own Parquet reader keeps parsed footers the same
//! way. An entry is found by format, path, size and modification time, so
//! a rewritten file is opened afresh.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use datafusion::object_store::ObjectMeta;

use super::format::{WarpFile, WarpFormat};
use crate::error::Result;

/// Files kept at most; past it the cache starts over (a session scanning
/// more files than this rereads their footers, as without a cache).
const CAPACITY: usize = 512;

type Key = (&'static str, PathBuf, u64, i64);

fn cache() -> &'static Mutex<HashMap<Key, Arc<dyn WarpFile>>> {
    static CACHE: std::sync::OnceLock<Mutex<HashMap<Key, Arc<dyn WarpFile>>>> =
        std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// `format.open(path)`, or the file opened before with the same size and
/// modification time as `meta`. Failures are not kept: a damaged file
/// fails each time.
pub fn open(format: &dyn WarpFormat, path: &Path, meta: &ObjectMeta) -> Result<Arc<dyn WarpFile>> {
    let modified = meta.last_modified.timestamp_nanos_opt().unwrap_or(i64::MIN);
    let key = (format.name(), path.to_path_buf(), meta.size, modified);
    let hit = cache().lock().ok().and_then(|c| c.get(&key).cloned());
    if let Some(f) = hit {
        return Ok(f);
    }
    // Parsed outside the lock: partitions of one scan open side by side.
    let opened = format.open(path)?;
    if let Ok(mut c) = cache().lock() {
        if c.len() >= CAPACITY {
            c.clear();
        }
        c.insert(key, Arc::clone(&opened));
    }
    Ok(opened)
}
