//! Registering warpread tables in a DataFusion `SessionContext`.

use std::sync::Arc;

use async_trait::async_trait;

use super::aggregate::ScanAggregate;
use datafusion::datasource::listing::ListingOptions;
use datafusion::datasource::listing_table_factory::ListingTableFactory;
use datafusion::error::Result as DfResult;
use datafusion::execution::config::SessionConfig;
use datafusion::prelude::SessionContext;

use super::config::WarpreadConfig;
use super::file_format::{WarpFileFormat, WarpFormatFactory};
use super::format::{OrcFormat, ParquetFormat, WarpFormat};
use super::gsst_format::GsstFormat;
use crate::exec::Backend;

/// How to register a table of files read by warpread (ORC or Parquet).
#[derive(Clone, Default)]
pub struct WarpReadOptions {
    /// Only files with this extension (default: the format's, `.orc` or
    /// `.parquet`) are read when the path is a folder.
    pub file_extension: Option<String>,
    /// Decode on this backend instead of the session's.
    pub backend: Option<Arc<dyn Backend>>,
}

/// The options of [`SessionContextExt::register_orc`].
pub type OrcReadOptions = WarpReadOptions;

impl WarpReadOptions {
    /// Sets the file extension.
    pub fn with_file_extension(mut self, ext: impl Into<String>) -> Self {
        self.file_extension = Some(ext.into());
        self
    }

    /// Decodes on `backend` instead of the session's.
    pub fn with_backend(mut self, backend: Arc<dyn Backend>) -> Self {
        self.backend = Some(backend);
        self
    }
}

/// A session whose warpread scans use `config`, where
/// `CREATE EXTERNAL TABLE ... STORED AS ORC`, `STORED AS WARPREAD_PARQUET`
/// and `STORED AS GSST` read with warpread. `STORED AS PARQUET` stays
/// DataFusion's own Parquet reader. Partial aggregates over warpread scans
/// run on the backend where they can ([`ScanAggregate`]).
pub fn session(config: WarpreadConfig, session_config: SessionConfig) -> SessionContext {
    let rule = ScanAggregate::new(config.cpu_aggregates);
    let state = datafusion::execution::SessionStateBuilder::new()
        .with_config(config.install(session_config))
        .with_default_features()
        .with_physical_optimizer_rule(Arc::new(rule))
        .with_physical_optimizer_rule(Arc::new(super::prefetch::StartScansEarly))
        .with_physical_optimizer_rule(Arc::new(super::row_filter_scope::RowFiltersWithinLimits))
        .build();
    let ctx = SessionContext::new_with_state(state);
    ctx.register_orc_format();
    ctx.register_warp_format(Arc::new(ParquetFormat));
    ctx.register_warp_format(Arc::new(GsstFormat));
    ctx
}

/// warpread's additions to `SessionContext`.
#[async_trait]
pub trait SessionContextExt {
    /// Makes `STORED AS ORC` read with warpread.
    fn register_orc_format(&self);

    /// Makes `STORED AS <format.stored_as()>` read with warpread's `format`
    /// (`WARPREAD_PARQUET` for [`ParquetFormat`]).
    fn register_warp_format(&self, format: Arc<dyn WarpFormat>);

    /// Registers a table of ORC files: one file, a folder of them, or a
    /// glob. Files are spread over the session's partitions.
    async fn register_orc(&self, name: &str, path: &str, options: OrcReadOptions) -> DfResult<()>;

    /// Registers a table of Parquet files read by warpread's Parquet reader:
    /// one file, a folder of them, or a glob. (Not `register_parquet`:
    /// `SessionContext`'s own method of that name, DataFusion's reader,
    /// would shadow it.)
    async fn register_warpread_parquet(
        &self,
        name: &str,
        path: &str,
        options: WarpReadOptions,
    ) -> DfResult<()>;

    /// Registers a table of GSST containers (`.arrow` files written by
    /// `warpread convert --strings gsst`): one file, a folder or a glob.
    async fn register_gsst(&self, name: &str, path: &str, options: WarpReadOptions)
    -> DfResult<()>;

    /// Registers a table of any warpread format (the same as
    /// [`register_orc`](Self::register_orc) for other formats).
    async fn register_warp(
        &self,
        name: &str,
        path: &str,
        format: Arc<dyn WarpFormat>,
        options: WarpReadOptions,
    ) -> DfResult<()>;
}

#[async_trait]
impl SessionContextExt for SessionContext {
    fn register_orc_format(&self) {
        self.register_warp_format(Arc::new(OrcFormat));
    }

    fn register_warp_format(&self, format: Arc<dyn WarpFormat>) {
        let stored_as = format.stored_as();
        let factory = Arc::new(WarpFormatFactory::new(format));
        let state = self.state_ref();
        let mut state = state.write();
        // Overwriting cannot fail; the result only reports conflicts. The
        // factory is keyed by its STORED AS name (lower case), so
        // `ParquetFormat` does not replace DataFusion's `parquet` factory.
        let _ = state.register_file_format(factory, true);
        // `CREATE EXTERNAL TABLE` finds its table factory by the STORED AS
        // name (upper case); the listing factory then asks for the file
        // format of that name.
        state.table_factories_mut().insert(
            stored_as.to_uppercase(),
            Arc::new(ListingTableFactory::new()),
        );
    }

    async fn register_orc(&self, name: &str, path: &str, options: OrcReadOptions) -> DfResult<()> {
        self.register_warp(name, path, Arc::new(OrcFormat), options)
            .await
    }

    async fn register_warpread_parquet(
        &self,
        name: &str,
        path: &str,
        options: WarpReadOptions,
    ) -> DfResult<()> {
        self.register_warp(name, path, Arc::new(ParquetFormat), options)
            .await
    }

    async fn register_gsst(
        &self,
        name: &str,
        path: &str,
        options: WarpReadOptions,
    ) -> DfResult<()> {
        self.register_warp(name, path, Arc::new(GsstFormat), options)
            .await
    }

    async fn register_warp(
        &self,
        name: &str,
        path: &str,
        format: Arc<dyn WarpFormat>,
        options: WarpReadOptions,
    ) -> DfResult<()> {
        let ext = options
            .file_extension
            .unwrap_or_else(|| format.extension().to_string());
        let file_format = WarpFileFormat::new(format).with_backend(options.backend);
        // Files and byte ranges are spread over the session's
        // `target_partitions` when the scan is planned.
        let options = ListingOptions::new(Arc::new(file_format)).with_file_extension(ext);
        self.register_listing_table(name, path, options, None, None)
            .await
    }
}
