//! Opened files kept between scans: a query plans with each table's
//! footers (schema, statistics) and every scan partition opens its file
//! again, so without this the same footer is parsed once per query and
//! once per partition (TPC-H lineitem at scale 10 has hundreds of row
//! groups). DataFusion's own Parquet reader keeps parsed footers the same
//! way. An entry is found by format, path, size, modification time and,
//! on Unix, the file's device, inode and status-change time, so a file
//! replaced or rewritten in place is opened afresh even when its size and
//! modification time were kept (tools copying with `-p` keep them; the
//! status-change time cannot be set back).
//!
//! A session keeps one [`FileCache`] (in its
//! [`WarpreadConfig`](crate::WarpreadConfig)), so sessions never see each
//! other's entries. DataFusion's `CacheManager` file-metadata cache would
//! be the natural home, but it is keyed by path alone, budgets entries by
//! bytes where these are bounded by open descriptors (each entry holds its
//! file open), and its entries are validated by size and modification time
//! only.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use datafusion::object_store::ObjectMeta;

use super::format::{WarpFile, WarpFormat};
use crate::error::Result;

/// Files kept at most; past it the cache starts over (a session scanning
/// more files than this rereads their footers, as without a cache).
const CAPACITY: usize = 512;

/// Files one cache keeps at most: [`CAPACITY`], or a quarter of the
/// process's limit on open files where that is lower. Every file kept holds
/// its descriptor open, and macOS's default limit is 256: a query over a
/// few hundred files would otherwise fail to open the next one.
fn capacity() -> usize {
    capacity_for(open_file_limit())
}

fn capacity_for(open_file_limit: Option<u64>) -> usize {
    open_file_limit.map_or(CAPACITY, |n| {
        usize::try_from(n / 4).map_or(CAPACITY, |quarter| CAPACITY.min(quarter.max(1)))
    })
}

#[cfg(unix)]
fn open_file_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    // `rlim_t` is 32 bits wide on some targets.
    #[allow(clippy::unnecessary_cast)]
    let current = limit.rlim_cur as u64;
    (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(current)
}

#[cfg(not(unix))]
fn open_file_limit() -> Option<u64> {
    None
}

type Key = (&'static str, PathBuf, u64, i64, Identity);

/// The file's device, inode and status-change time in nanoseconds (zero
/// where the platform has none).
type Identity = (u64, u64, i128);

#[cfg(unix)]
fn identity(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    let changed = i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec());
    Some((m.dev(), m.ino(), changed))
}

#[cfg(not(unix))]
fn identity(_path: &Path) -> Option<Identity> {
    Some((0, 0, 0))
}

/// Opened files of one session (see the module docs).
pub struct FileCache {
    files: Mutex<HashMap<Key, Arc<dyn WarpFile>>>,
    capacity: usize,
}

impl Default for FileCache {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for FileCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileCache")
            .field("files", &self.lock().len())
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl FileCache {
    /// An empty cache holding up to a quarter of the process's open-file
    /// limit (at most 512 files).
    pub fn new() -> Self {
        Self {
            files: Mutex::default(),
            capacity: capacity(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Arc<dyn WarpFile>>> {
        self.files.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `format.open(path)`, or the file opened before with the same size
    /// and modification time as `meta` (and the same identity, see the
    /// module docs). Failures are not kept: a damaged file fails each time.
    pub fn open(
        &self,
        format: &dyn WarpFormat,
        path: &Path,
        meta: &ObjectMeta,
    ) -> Result<Arc<dyn WarpFile>> {
        let Some(id) = identity(path) else {
            return format.open(path);
        };
        let modified = meta.last_modified.timestamp_nanos_opt().unwrap_or(i64::MIN);
        let key = (format.name(), path.to_path_buf(), meta.size, modified, id);
        if let Some(f) = self.lock().get(&key).cloned() {
            return Ok(f);
        }
        // Parsed outside the lock: partitions of one scan open side by side.
        let opened = format.open(path)?;
        let mut files = self.lock();
        if files.len() >= self.capacity {
            files.clear();
        }
        files.insert(key, Arc::clone(&opened));
        Ok(opened)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParquetFormat;

    fn meta(path: &Path) -> ObjectMeta {
        let m = std::fs::metadata(path).unwrap();
        ObjectMeta {
            location: Default::default(),
            last_modified: m.modified().unwrap().into(),
            size: m.len(),
            e_tag: None,
            version: None,
        }
    }

    #[test]
    fn a_file_rewritten_in_place_with_its_size_and_time_is_opened_again() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/parquet/enc_delta_v2.parquet");
        let dir = std::env::temp_dir().join(format!("warpread-file-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.parquet");
        std::fs::copy(&src, &path).unwrap();
        let before = meta(&path);
        let cache = FileCache::new();
        let open =
            |format: &ParquetFormat, path: &Path, meta: &ObjectMeta| cache.open(format, path, meta);
        let a = open(&ParquetFormat, &path, &before).unwrap();
        let b = open(&ParquetFormat, &path, &before).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "the second open is the cached file");
        // Same bytes written in place, modification time set back: only
        // the status-change time tells.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let bytes = std::fs::read(&path).unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::io::Write::write_all(&mut &f, &bytes).unwrap();
        f.set_modified(before.last_modified.into()).unwrap();
        drop(f);
        let after = meta(&path);
        assert_eq!(
            (after.size, after.last_modified),
            (before.size, before.last_modified)
        );
        let c = open(&ParquetFormat, &path, &after).unwrap();
        assert!(
            !Arc::ptr_eq(&a, &c),
            "a rewritten file must be opened again"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_cache_keeps_a_quarter_of_the_open_file_limit_at_most() {
        assert_eq!(capacity_for(None), CAPACITY);
        assert_eq!(capacity_for(Some(256)), 64, "macOS's default");
        assert_eq!(capacity_for(Some(1 << 20)), CAPACITY);
        assert_eq!(capacity_for(Some(2)), 1);
        assert!(capacity() >= 1);
    }
}
