//! SQL over compressed files: DataFusion `FileFormat`, `FileSource` and
//! `FileOpener` backed by warpread's readers, and a `SessionContext`
//! extension to register tables (shaped like `datafusion-orc`).
//!
//! ```no_run
//! use warpread_datafusion::{OrcReadOptions, SessionContextExt, WarpreadConfig, session};
//! use warpread::exec::BackendChoice;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let ctx = session(WarpreadConfig::new(BackendChoice::Auto)?, Default::default());
//! ctx.register_orc("lineitem", "tpch/lineitem.orc", OrcReadOptions::default()).await?;
//! ctx.sql("SELECT count(*) FROM lineitem WHERE l_quantity > 10").await?.show().await?;
//! # Ok(()) }
//! ```
//!
//! Parquet tables go the same way through warpread's Parquet reader
//! ([`SessionContextExt::register_warpread_parquet`], or
//! `STORED AS WARPREAD_PARQUET`; `STORED AS PARQUET` and
//! `SessionContext::register_parquet` stay DataFusion's reader), and GSST
//! containers through [`SessionContextExt::register_gsst`] or
//! `STORED AS GSST`, their string columns decoded on the backend.
//!
//! Projection: only the projected file columns are read. Filters: simple
//! `column op literal` conjuncts prune stripes and row groups by
//! statistics; DataFusion still applies every filter to the rows. Filters
//! that operators publish while the query runs (a hash join's build keys, a
//! `TopK`'s cut-off) also drop the rows that fail them as the scan hands
//! its batches on, and prune the files opened after they are published.
//! Limit: files are read a group of stripes or row groups at a time, so a
//! satisfied `LIMIT` stops reading.
//!
//! Settings: every switch and tuning value is a `warpread.*` key of the
//! [`WarpreadOptions`] config extension, set per session (`SET
//! warpread.join_key_sets = false`, [`set_options`]) or per table
//! (`CREATE EXTERNAL TABLE ... OPTIONS ('warpread.group_mib' '64')`,
//! [`WarpReadOptions::with_setting`]); nothing is read from the
//! environment, and sessions share only what the application gives them
//! (a backend in their [`WarpreadConfig`]).

#![warn(missing_docs)]

use warpread::{error, exec, gsst, orc, parquet, query, trace};

mod aggregate;
mod compare;
mod config;
mod dynamic_filter;
mod file_cache;
mod file_format;
mod filter_ids;
mod format;
mod gsst_format;
mod join_keys;
mod key_set;
mod like;
mod memory;
mod opener;
mod options;
mod predicate;
mod prefetch;
mod remote;
mod routed_filter;
mod row_filter_scope;
mod session_ext;
mod source;
mod start_early;
mod statements;
pub mod statistics;
mod tables;

pub use aggregate::{Fallback, ScanAggregate, ScanAggregateExec};
pub use compare::{compare_results, sorted_rows};
pub use config::{StatsSink, WarpreadConfig};
pub use file_cache::FileCache;
pub use file_format::{WarpFileFormat, WarpFormatFactory};
pub use format::{OrcFormat, ParquetFormat, ReadUnit, ScanRequest, WarpFile, WarpFormat};
pub use gsst_format::GsstFormat;
pub use join_keys::{BuildKeysExec, JoinKeySets};
pub use like::{FastLike, Pieces, PiecesLike};
pub use opener::{ScanMetrics, WarpOpener};
pub use options::{BackendSetting, Prefetch, WarpreadOptions, read_tuning};
pub use predicate::translate as translate_filter;
pub use row_filter_scope::RowFiltersWithinLimits;
pub use session_ext::{
    COLLECT_LEFT_BYTES, COLLECT_LEFT_ROWS, OrcReadOptions, SessionContextExt, WarpReadOptions,
    apply_settings, format_named, parse_setting, register_formats, session, session_config,
    set_options, state_builder,
};
pub use source::{ScanParts, WarpSource};
pub use start_early::StartScansEarly;
pub use statements::{StatementResult, TAXI, TPCH, run_sql, runtime};
pub use tables::{
    ParquetReader, TPCH_TABLES, TableReader, reader_for, register_path, register_path_with,
    register_tpch, register_tpch_with,
};
