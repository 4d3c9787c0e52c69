//! Registering warpread tables in a DataFusion `SessionContext`.

use std::sync::Arc;

use async_trait::async_trait;

use datafusion::datasource::listing::ListingOptions;
use datafusion::datasource::listing_table_factory::ListingTableFactory;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::config::SessionConfig;
use datafusion::prelude::SessionContext;

use super::aggregate::ScanAggregate;
use super::config::WarpreadConfig;
use super::file_format::{WarpFileFormat, WarpFormatFactory};
use super::format::{OrcFormat, ParquetFormat, WarpFormat};
use super::gsst_format::GsstFormat;
use super::join_keys::JoinKeySets;
use super::like::FastLike;
use super::options::WarpreadOptions;
use super::row_filter_scope::RowFiltersWithinLimits;
use super::start_early::StartScansEarly;
use crate::exec::Backend;

/// How to register a table of files read by warpread (ORC or Parquet).
#[derive(Clone, Default)]
pub struct WarpReadOptions {
    /// Only files with this extension (default: the format's, `.orc` or
    /// `.parquet`) are read when the path is a folder.
    pub file_extension: Option<String>,
    /// Decode on this backend instead of the session's.
    pub backend: Option<Arc<dyn Backend>>,
    /// The table's `warpread.*` settings (`key`, `value`), over the
    /// session's for its scans.
    pub settings: Vec<(String, String)>,
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

    /// Sets `warpread.*` setting `key` (with or without the prefix) for
    /// this table; checked when the table is registered.
    pub fn with_setting(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((key.into(), value.into()));
        self
    }
}

/// A session whose warpread scans use `config`, where
/// `CREATE EXTERNAL TABLE ... STORED AS ORC`, `STORED AS WARPREAD_PARQUET`
/// and `STORED AS GSST` read with warpread. `STORED AS PARQUET` stays
/// DataFusion's own Parquet reader. Partial aggregates over warpread scans
/// run on the backend where they can ([`ScanAggregate`]); hash joins share
/// one table for build sides estimated at up to [`COLLECT_LEFT_BYTES`]
/// (unless `session_config` sets either join limit to other than
/// DataFusion's default). The session's `warpread.*` settings are those of
/// `session_config` (see [`session_config`]), else the defaults; `SET
/// warpread.key = value` changes them, and [`set_options`] too.
pub fn session(config: WarpreadConfig, session_config: SessionConfig) -> SessionContext {
    let state = state_builder(config, session_config)
        .with_physical_optimizer_rule(Arc::new(ScanAggregate))
        .with_physical_optimizer_rule(Arc::new(StartScansEarly))
        .with_physical_optimizer_rule(Arc::new(RowFiltersWithinLimits))
        // After the rule above, which may take a scan's filters back out.
        .with_physical_optimizer_rule(Arc::new(JoinKeySets))
        .with_physical_optimizer_rule(Arc::new(FastLike))
        .build();
    let ctx = SessionContext::new_with_state(state);
    register_formats(&ctx);
    ctx
}

/// The state of a [`session`] before warpread's physical optimizer rules
/// are added: DataFusion's default features, `config` installed, the
/// `warpread.*` settings registered and warpread's join limits (see
/// [`session`]). For sessions that place the rules themselves (a
/// distributed engine's coordinator runs some of them and its workers the
/// others); add the formats with [`register_formats`] once built.
pub fn state_builder(
    config: WarpreadConfig,
    session_config: SessionConfig,
) -> datafusion::execution::SessionStateBuilder {
    let mut session_config = with_planner_defaults(session_config);
    if session_config
        .options()
        .extensions
        .get::<WarpreadOptions>()
        .is_none()
    {
        session_config = session_config.with_option_extension(WarpreadOptions::default());
    }
    datafusion::execution::SessionStateBuilder::new()
        .with_config(config.install(session_config))
        .with_default_features()
}

/// Makes `STORED AS ORC`, `STORED AS WARPREAD_PARQUET` and
/// `STORED AS GSST` read with warpread in `ctx`.
pub fn register_formats(ctx: &SessionContext) {
    ctx.register_orc_format();
    ctx.register_warp_format(Arc::new(ParquetFormat));
    ctx.register_warp_format(Arc::new(GsstFormat));
}

/// The warpread format named `name` ([`WarpFormat::name`]: `orc`,
/// `parquet`, `gsst`).
pub fn format_named(name: &str) -> Option<Arc<dyn WarpFormat>> {
    let formats: [Arc<dyn WarpFormat>; 3] = [
        Arc::new(OrcFormat),
        Arc::new(ParquetFormat),
        Arc::new(GsstFormat),
    ];
    formats.into_iter().find(|f| f.name() == name)
}

/// Build sides estimated at up to this many bytes are collected into one
/// hash table that every probe partition shares (DataFusion's default:
/// 1 MiB; the planner compares bytes where the statistics estimate them,
/// rows otherwise). A partitioned join hash-repartitions its probe side,
/// and a device scan hands on a probe side in few partitions that the
/// query's threads then copy into 16; one shared table spares that copy.
/// TPC-H SF 10 on the H100 host: 9.98 s against 11.42 s for the 22 queries
/// in one call (benchmarks/tpch.md).
pub const COLLECT_LEFT_BYTES: usize = 64 << 20;

/// The same limit in estimated rows, for inputs without a size estimate
/// (DataFusion's default: 128 K rows).
pub const COLLECT_LEFT_ROWS: usize = 4 << 20;

/// `config` with warpread's join limits, unless either limit differs from
/// DataFusion's default (the caller chose; a value set to exactly the
/// default cannot be told from one left alone: [`set_options`], applied to
/// the session after, sets it anyway).
fn with_planner_defaults(mut config: SessionConfig) -> SessionConfig {
    let optimizer = &mut config.options_mut().optimizer;
    let defaults = datafusion::config::OptimizerOptions::default();
    if optimizer.hash_join_single_partition_threshold
        == defaults.hash_join_single_partition_threshold
        && optimizer.hash_join_single_partition_threshold_rows
            == defaults.hash_join_single_partition_threshold_rows
    {
        optimizer.hash_join_single_partition_threshold = COLLECT_LEFT_BYTES;
        optimizer.hash_join_single_partition_threshold_rows = COLLECT_LEFT_ROWS;
    }
    config
}

/// A `SessionConfig` with the `warpread.*` settings registered (at their
/// defaults), so that `config.options_mut().set("warpread.key", "value")`
/// finds them before the session is built.
pub fn session_config() -> SessionConfig {
    SessionConfig::new().with_option_extension(WarpreadOptions::default())
}

/// Splits a `KEY=VALUE` setting (as `warpread sql --set` takes it).
pub fn parse_setting(text: &str) -> DfResult<(String, String)> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(DataFusionError::Configuration(format!(
            "setting {text:?}: expected KEY=VALUE"
        ))),
    }
}

/// Sets each `(key, value)` in `config`, in order: `warpread.*` keys and
/// DataFusion's own (`datafusion.*`) alike; the first that is unknown or
/// malformed is an error naming it.
pub fn apply_settings(config: &mut SessionConfig, settings: &[(String, String)]) -> DfResult<()> {
    if config
        .options()
        .extensions
        .get::<WarpreadOptions>()
        .is_none()
    {
        config
            .options_mut()
            .extensions
            .insert(WarpreadOptions::default());
    }
    for (key, value) in settings {
        config
            .options_mut()
            .set(key, value)
            .map_err(|e| e.context(format!("setting {key}={value}")))?;
    }
    Ok(())
}

/// [`apply_settings`] on the session of `ctx`, as `SET key = value` would.
pub fn set_options(ctx: &SessionContext, settings: &[(String, String)]) -> DfResult<()> {
    let state = ctx.state_ref();
    let mut state = state.write();
    apply_settings(state.config_mut(), settings)
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
    /// `warpread convert`): one file, a folder or a glob.
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
        let file_format = WarpFileFormat::new(format)
            .with_backend(options.backend)
            .with_table_options(options.settings.iter().map(|(k, v)| (k, v)))?;
        // Files and byte ranges are spread over the session's
        // `target_partitions` when the scan is planned.
        let options = ListingOptions::new(Arc::new(file_format)).with_file_extension(ext);
        self.register_listing_table(name, path, options, None, None)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_share_build_sides_unless_the_caller_chose_otherwise() {
        let planned = with_planner_defaults(SessionConfig::new());
        let o = &planned.options().optimizer;
        assert_eq!(
            o.hash_join_single_partition_threshold_rows,
            COLLECT_LEFT_ROWS
        );
        assert_eq!(o.hash_join_single_partition_threshold, COLLECT_LEFT_BYTES);
        // One limit chosen (forcing partitioned joins, say): both stay.
        let mut chosen = SessionConfig::new();
        chosen
            .options_mut()
            .optimizer
            .hash_join_single_partition_threshold_rows = 0;
        let planned = with_planner_defaults(chosen);
        let o = &planned.options().optimizer;
        let defaults = datafusion::config::OptimizerOptions::default();
        assert_eq!(o.hash_join_single_partition_threshold_rows, 0);
        assert_eq!(
            o.hash_join_single_partition_threshold,
            defaults.hash_join_single_partition_threshold
        );
    }

    #[test]
    fn settings_are_set_in_order_and_a_bad_one_is_named() {
        let mut config = SessionConfig::new();
        let settings = [
            "datafusion.optimizer.hash_join_single_partition_threshold = 4096",
            "warpread.join_key_sets=false",
        ]
        .map(|s| parse_setting(s).unwrap());
        apply_settings(&mut config, &settings).unwrap();
        let o = config.options();
        assert_eq!(o.optimizer.hash_join_single_partition_threshold, 4096);
        assert!(!WarpreadOptions::of(o).join_key_sets);
        for bad in ["no.such=1", "warpread.nope=1", "warpread.read_ahead=x"] {
            let setting = parse_setting(bad).unwrap();
            let e = apply_settings(&mut config, std::slice::from_ref(&setting)).unwrap_err();
            assert!(e.to_string().contains(&setting.0), "{e}");
        }
        assert!(parse_setting("garbage").is_err());
        assert!(parse_setting("=1").is_err());
    }
}
