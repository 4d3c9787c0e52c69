//! `WarpFileFormat` (DataFusion's `FileFormat`) and `WarpFormatFactory`
//! (its `FileFormatFactory`, what `CREATE EXTERNAL TABLE ... STORED AS ORC`
//! or `STORED AS WARPREAD_PARQUET` looks up by name) for any [`WarpFormat`].

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{GetExt, Statistics};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::datasource::physical_plan::{FileScanConfig, FileScanConfigBuilder, FileSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::object_store::local::LocalFileSystem;
use datafusion::object_store::{ObjectMeta, ObjectStore};
use datafusion::physical_plan::ExecutionPlan;

use super::config::{WarpreadConfig, session_backends};
use super::file_cache::FileCache;
use super::format::{WarpFile, WarpFormat};
use super::options::WarpreadOptions;
use super::source::WarpSource;
use crate::error::Error;
use crate::exec::Backend;

/// A warpread format as a DataFusion `FileFormat`: one table's reads,
/// with the table's own `warpread.*` settings, which override the
/// session's for its scans.
#[derive(Clone)]
pub struct WarpFileFormat {
    format: Arc<dyn WarpFormat>,
    backend: Option<Arc<dyn Backend>>,
    /// The table's `warpread.*` settings (keys without the prefix), applied
    /// over the session's each time a scan is planned, so a `SET` reaches
    /// the keys the table leaves alone.
    table_options: Vec<(String, String)>,
    /// Opened files, for a session without a [`WarpreadConfig`] (one with
    /// one shares its own).
    files: Arc<FileCache>,
}

impl fmt::Debug for WarpFileFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WarpFileFormat")
            .field("format", &self.format.name())
            .field("backend", &self.backend.as_ref().map(|b| b.name()))
            .field("table_options", &self.table_options)
            .finish()
    }
}

impl WarpFileFormat {
    /// `format`, decoded on the session's backend (or `backend` when given).
    pub fn new(format: Arc<dyn WarpFormat>) -> Self {
        Self {
            format,
            backend: None,
            table_options: Vec::new(),
            files: Arc::default(),
        }
    }

    /// Decodes on `backend` whatever the session says.
    pub fn with_backend(mut self, backend: Option<Arc<dyn Backend>>) -> Self {
        self.backend = backend;
        self
    }

    /// The table's `warpread.*` settings (`key`, `value`; the key with or
    /// without its `warpread.` prefix), which override the session's for
    /// this table's scans; an unknown key or a malformed value is an error
    /// naming it.
    pub fn with_table_options<K: AsRef<str>, V: AsRef<str>>(
        mut self,
        options: impl IntoIterator<Item = (K, V)>,
    ) -> DfResult<Self> {
        for (k, v) in options {
            let key = k.as_ref().trim();
            let key = key.strip_prefix("warpread.").unwrap_or(key).to_string();
            self.table_options.push((key, v.as_ref().to_string()));
        }
        // Checked now, so that the table is refused rather than its queries.
        WarpreadOptions::default().with_table_options(self.table_pairs())?;
        Ok(self)
    }

    fn table_pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.table_options
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The settings of this table's scans in `state`: the session's, with
    /// the table's over them.
    pub fn scan_options(&self, state: &dyn Session) -> DfResult<WarpreadOptions> {
        WarpreadOptions::of(state.config_options()).with_table_options(self.table_pairs())
    }

    /// The backends this table's scans decode on under `options`, one per
    /// device, partitions taking them in turn: the table's own, else as
    /// `warpread.backend` says (see [`BackendSetting`](super::options::BackendSetting)), on the session's
    /// devices that `warpread.devices` picks.
    fn backends_for(
        &self,
        session: Option<&WarpreadConfig>,
        options: &WarpreadOptions,
    ) -> DfResult<Vec<Arc<dyn Backend>>> {
        if let Some(b) = &self.backend {
            return Ok(vec![Arc::clone(b)]);
        }
        session_backends(session, options)
    }

    /// The opened files this table's reads go through in `state`.
    fn files_for(&self, state: &dyn Session) -> Arc<FileCache> {
        WarpreadConfig::of(state.config())
            .map_or_else(|| Arc::clone(&self.files), |c| Arc::clone(&c.files))
    }

    /// The warpread format.
    pub fn format(&self) -> &Arc<dyn WarpFormat> {
        &self.format
    }

    async fn open(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        object: &ObjectMeta,
    ) -> DfResult<Arc<dyn WarpFile>> {
        if !super::remote::is_local(store.as_ref()) {
            let cache = state.runtime_env().cache_manager.get_file_metadata_cache();
            return Ok(super::remote::open(
                self.format.as_ref(),
                store,
                &store.to_string(),
                object,
                Some(&cache),
            )
            .await?);
        }
        let path: PathBuf = LocalFileSystem::new().path_to_filesystem(&object.location)?;
        let format = Arc::clone(&self.format);
        let meta = object.clone();
        let files = self.files_for(state);
        tokio::task::spawn_blocking(move || files.open(format.as_ref(), &path, &meta))
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))?
            .map_err(DataFusionError::from)
    }
}

#[async_trait]
impl FileFormat for WarpFileFormat {
    fn get_ext(&self) -> String {
        self.format.extension().trim_start_matches('.').to_string()
    }

    fn get_ext_with_compression(&self, c: &FileCompressionType) -> DfResult<String> {
        if c.is_compressed() {
            // Compression lives inside the format's own chunks.
            return Err(Error::Unsupported(format!(
                "{} files inside an outer compression ({c:?})",
                self.format.name()
            ))
            .into());
        }
        Ok(self.get_ext())
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        None
    }

    async fn infer_schema(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> DfResult<SchemaRef> {
        let mut schemas = Vec::with_capacity(objects.len());
        for o in objects {
            schemas.push(self.open(state, store, o).await?.schema().as_ref().clone());
        }
        Ok(Arc::new(Schema::try_merge(schemas)?))
    }

    async fn infer_stats(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> DfResult<Statistics> {
        // Row counts, bounds and sizes steer join order and join modes.
        let mut stats = self
            .open(state, store, object)
            .await?
            .statistics(&table_schema)?;
        // Formats without per-column sizes still size joins by the file.
        if stats.total_byte_size == Precision::Absent
            && stats
                .column_statistics
                .iter()
                .all(|c| c.byte_size == Precision::Absent)
        {
            stats.total_byte_size = Precision::Inexact(object.size as usize);
        }
        Ok(stats)
    }

    async fn create_physical_plan(
        &self,
        state: &dyn Session,
        conf: FileScanConfig,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let session = WarpreadConfig::of(state.config());
        let options = self.scan_options(state)?;
        let devices = self.backends_for(session.as_deref(), &options)?;
        // Keep filters or projections already pushed into the source.
        let source = match conf.file_source().downcast_ref::<WarpSource>() {
            Some(s) => s.clone(),
            None => WarpSource::new(
                Arc::clone(&self.format),
                conf.file_source().table_schema().clone(),
            ),
        };
        let source = source
            .with_devices(devices)
            .with_stats(session.as_ref().map(|s| Arc::clone(&s.stats)))
            .with_files(self.files_for(state))
            .with_metadata_cache(Some(
                state.runtime_env().cache_manager.get_file_metadata_cache(),
            ))
            .with_memory_pool(Some(Arc::clone(&state.runtime_env().memory_pool)))
            .with_options(options);
        let source: Arc<dyn FileSource> = Arc::new(source);
        let conf = FileScanConfigBuilder::from(conf)
            .with_source(source)
            .build();
        Ok(DataSourceExec::from_data_source(conf))
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        // The session's backend, settings and state are added by
        // `create_physical_plan`.
        Arc::new(
            WarpSource::new(Arc::clone(&self.format), table_schema)
                .with_backend(self.backend.clone())
                .with_files(Arc::clone(&self.files)),
        )
    }
}

/// Creates [`WarpFileFormat`]s for `CREATE EXTERNAL TABLE ... STORED AS`.
/// Its `OPTIONS` are `warpread.*` settings for the table, over the
/// session's (`'backend'` alone stands for `'warpread.backend'`).
#[derive(Clone)]
pub struct WarpFormatFactory {
    format: Arc<dyn WarpFormat>,
}

impl fmt::Debug for WarpFormatFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WarpFormatFactory")
            .field("format", &self.format.name())
            .finish()
    }
}

impl WarpFormatFactory {
    /// A factory for `format`.
    pub fn new(format: Arc<dyn WarpFormat>) -> Self {
        Self { format }
    }
}

impl GetExt for WarpFormatFactory {
    /// The STORED AS name: DataFusion keys file format factories by this
    /// (lower case), and by it `CREATE EXTERNAL TABLE` finds them.
    fn get_ext(&self) -> String {
        self.format.stored_as().to_ascii_lowercase()
    }
}

impl FileFormatFactory for WarpFormatFactory {
    fn create(
        &self,
        state: &dyn Session,
        options: &HashMap<String, String>,
    ) -> DfResult<Arc<dyn FileFormat>> {
        let mut settings = Vec::with_capacity(options.len());
        for (k, v) in options {
            // DataFusion prefixes an option without a namespace with
            // `format.`.
            let key = match k.as_str() {
                "format.backend" => "warpread.backend",
                other if other.starts_with("warpread.") => other,
                other => {
                    return Err(DataFusionError::Configuration(format!(
                        "{} table option {other:?}: only warpread.* options are known",
                        self.format.name()
                    )));
                }
            };
            settings.push((key, v.as_str()));
        }
        // Sorted: a map's order differs from run to run, and the first bad
        // key is the one reported.
        settings.sort_unstable();
        let format = WarpFileFormat::new(Arc::clone(&self.format)).with_table_options(settings)?;
        // Refuse a table this session could not scan (`warpread.backend`).
        format.backends_for(
            WarpreadConfig::of(state.config()).as_deref(),
            &format.scan_options(state)?,
        )?;
        Ok(Arc::new(format))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(WarpFileFormat::new(Arc::clone(&self.format)))
    }
}
