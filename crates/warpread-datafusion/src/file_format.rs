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

use super::config::{StatsSink, WarpreadConfig};
use super::format::{WarpFile, WarpFormat};
use super::source::WarpSource;
use crate::error::Error;
use crate::exec::Backend;

/// A warpread format as a DataFusion `FileFormat`.
#[derive(Clone)]
pub struct WarpFileFormat {
    format: Arc<dyn WarpFormat>,
    backend: Option<Arc<dyn Backend>>,
    stats: Option<Arc<StatsSink>>,
}

impl fmt::Debug for WarpFileFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WarpFileFormat")
            .field("format", &self.format.name())
            .field("backend", &self.backend.as_ref().map(|b| b.name()))
            .finish()
    }
}

impl WarpFileFormat {
    /// `format`, decoded on the session's backend (or `backend` when given).
    pub fn new(format: Arc<dyn WarpFormat>) -> Self {
        Self {
            format,
            backend: None,
            stats: None,
        }
    }

    /// Decodes on `backend` whatever the session says.
    pub fn with_backend(mut self, backend: Option<Arc<dyn Backend>>) -> Self {
        self.backend = backend;
        self
    }

    /// Takes backend and timing sink from a session's [`WarpreadConfig`]
    /// where this format has none of its own.
    fn for_session(&self, state: &dyn Session) -> Self {
        let mut f = self.clone();
        if let Some(cfg) = WarpreadConfig::of(state.config()) {
            f.backend = f.backend.or_else(|| Some(Arc::clone(&cfg.backend)));
            f.stats = f.stats.or_else(|| Some(Arc::clone(&cfg.stats)));
        }
        f
    }

    /// The warpread format.
    pub fn format(&self) -> &Arc<dyn WarpFormat> {
        &self.format
    }

    async fn open(&self, object: &ObjectMeta) -> DfResult<Arc<dyn WarpFile>> {
        let path: PathBuf = LocalFileSystem::new().path_to_filesystem(&object.location)?;
        let format = Arc::clone(&self.format);
        let meta = object.clone();
        tokio::task::spawn_blocking(move || super::file_cache::open(format.as_ref(), &path, &meta))
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
        _state: &dyn Session,
        _store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> DfResult<SchemaRef> {
        let mut schemas = Vec::with_capacity(objects.len());
        for o in objects {
            schemas.push(self.open(o).await?.schema().as_ref().clone());
        }
        Ok(Arc::new(Schema::try_merge(schemas)?))
    }

    async fn infer_stats(
        &self,
        _state: &dyn Session,
        _store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> DfResult<Statistics> {
        // Row counts, bounds and sizes steer join order and join modes.
        let mut stats = self.open(object).await?.statistics(&table_schema)?;
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
        let me = self.for_session(state);
        let source = me.file_source(conf.file_source().table_schema().clone());
        // Keep filters or projections already pushed into the source.
        let source = match conf.file_source().downcast_ref::<WarpSource>() {
            Some(s) if !s.has_backend() => Arc::new(
                s.clone()
                    .with_backend(me.backend.clone())
                    .with_stats(me.stats.clone()),
            ) as Arc<dyn FileSource>,
            Some(_) => Arc::clone(conf.file_source()),
            None => source,
        };
        let conf = FileScanConfigBuilder::from(conf)
            .with_source(source)
            .build();
        Ok(DataSourceExec::from_data_source(conf))
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        Arc::new(
            WarpSource::new(Arc::clone(&self.format), table_schema)
                .with_backend(self.backend.clone())
                .with_stats(self.stats.clone()),
        )
    }
}

/// Creates [`WarpFileFormat`]s for `CREATE EXTERNAL TABLE ... STORED AS`.
/// Options: `backend` (`cpu`, `cuda`, `auto`) overrides the session's.
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
        let mut format = WarpFileFormat::new(Arc::clone(&self.format));
        for (k, v) in options {
            // DataFusion may prefix table options with `format.`.
            match k.trim_start_matches("format.") {
                "backend" => {
                    let choice = v.parse().map_err(DataFusionError::from)?;
                    let backend = crate::exec::select(choice).map_err(DataFusionError::from)?;
                    format = format.with_backend(Some(Arc::from(backend)));
                }
                other => {
                    return Err(Error::Unsupported(format!(
                        "{} table option {other:?} (known: backend)",
                        self.format.name()
                    ))
                    .into());
                }
            }
        }
        Ok(Arc::new(format.for_session(state)))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(WarpFileFormat::new(Arc::clone(&self.format)))
    }
}
