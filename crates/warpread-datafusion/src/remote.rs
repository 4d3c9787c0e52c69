//! Files in object stores other than the local file system: their footers
//! are fetched and parsed once and kept in the session's DataFusion
//! `CacheManager` file-metadata cache (keyed by object path, valid while
//! the object's size and modification time are unchanged, so a rewritten
//! object is read afresh); their read groups' byte ranges are fetched just
//! before each group decodes ([`warpread::read::stream`]).
//!
//! Local files keep the session's [`FileCache`](crate::FileCache), which
//! also tells files apart by inode (see its module docs).

use datafusion::common::HashMap;
use std::any::Any;
use std::sync::Arc;

use datafusion::execution::cache::cache_manager::{
    CachedFileMetadataEntry, FileMetadata, FileMetadataCache,
};
use datafusion::object_store::local::LocalFileSystem;
use datafusion::object_store::{ObjectMeta, ObjectStore};

use super::format::{WarpFile, WarpFormat};
use crate::error::Result;

/// Bytes of a footer's parsed structures counted against the cache's
/// budget beyond the bytes fetched for it: parsed footers are a few times
/// their encoded size.
const PARSED_OVERHEAD: usize = 4;

/// Whether `store` is the local file system at its root, whose paths the
/// readers open directly (positional reads, the file cache); any other
/// store, a `LocalFileSystem` with a prefix included, is read through
/// `object_store`.
pub(crate) fn is_local(store: &dyn ObjectStore) -> bool {
    store.to_string() == LocalFileSystem::new().to_string()
}

/// A parsed file in DataFusion's file-metadata cache.
struct CachedFile {
    /// The store the object came from (a path alone does not tell buckets
    /// apart) and the format that parsed it.
    store: String,
    format: &'static str,
    file: Arc<dyn WarpFile>,
    bytes: usize,
}

impl FileMetadata for CachedFile {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn memory_size(&self) -> usize {
        self.bytes
    }

    fn extra_info(&self) -> HashMap<String, String> {
        HashMap::from_iter([
            ("warpread_format".to_string(), self.format.to_string()),
            ("store".to_string(), self.store.clone()),
        ])
    }
}

/// Opens `meta.location` of `store` (named `store_url`) as `format`: from
/// `cache` when it holds the object unchanged, else by fetching and
/// parsing its footer (and putting it there).
pub(crate) async fn open(
    format: &dyn WarpFormat,
    store: &Arc<dyn ObjectStore>,
    store_url: &str,
    meta: &ObjectMeta,
    cache: Option<&Arc<FileMetadataCache>>,
) -> Result<Arc<dyn WarpFile>> {
    if let Some(entry) = cache.and_then(|c| c.get(&meta.location))
        && entry.is_valid_for(meta)
        && let Some(f) = entry.file_metadata.as_any().downcast_ref::<CachedFile>()
        && f.format == format.name()
        && f.store == store_url
    {
        return Ok(Arc::clone(&f.file));
    }
    let file = warpread::read::stream::open_fetched(
        store,
        &meta.location,
        meta.size,
        format.source_format(),
        64 << 10,
        |src| format.open_source(src),
    )
    .await?;
    if let Some(cache) = cache {
        let bytes = usize::try_from(file.source().fetched_bytes())
            .unwrap_or(usize::MAX)
            .saturating_mul(PARSED_OVERHEAD);
        let cached = CachedFile {
            store: store_url.to_string(),
            format: format.name(),
            file: Arc::clone(&file),
            bytes,
        };
        cache.put(
            &meta.location,
            CachedFileMetadataEntry::new(meta.clone(), Arc::new(cached)),
        );
    }
    Ok(file)
}
