//! The environment variables the `warpread` binary reads, all here: the
//! few a user sets once per machine or shell (log level, data cache,
//! kernel cache, trace file, real-data folder). Everything that tunes a
//! read or a backend is a command-line flag ([`super::OptionArgs`]),
//! passed to the libraries as typed options.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The log filter (`tracing_subscriber`'s syntax, e.g. `info` or
/// `warpread=debug`).
pub const LOG: &str = "WARPREAD_LOG";
/// Folder of generated data sets.
pub const CACHE: &str = "WARPREAD_CACHE";
/// Folder of compiled kernels.
pub const KERNEL_CACHE: &str = "WARPREAD_KERNEL_CACHE";
/// File the trace of a run is written to.
pub const TRACE: &str = "WARPREAD_TRACE";
/// Folder of the real-data benchmark files.
pub const REALDATA: &str = "WARPREAD_REALDATA";
/// mimalloc's own purge delay, which wins over the binary's.
pub const MIMALLOC_PURGE_DELAY: &str = "MIMALLOC_PURGE_DELAY";

/// A variable's value, unless it is unset or empty.
fn non_empty(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// The home folder's `.cache`, or `$XDG_CACHE_HOME` where it is `xdg`.
fn user_cache(xdg: bool) -> Option<PathBuf> {
    if xdg && let Some(dir) = non_empty("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir));
    }
    non_empty("HOME").map(|h| Path::new(&h).join(".cache"))
}

/// The log filter of [`LOG`], if set.
pub fn log_filter() -> Option<String> {
    std::env::var(LOG).ok()
}

/// The data cache root: `$WARPREAD_CACHE`, else `~/.cache/warpread`, else
/// `./.warpread-cache` when there is no home folder.
pub fn data_cache() -> PathBuf {
    if let Some(dir) = non_empty(CACHE) {
        return PathBuf::from(dir);
    }
    user_cache(false).map_or_else(|| PathBuf::from(".warpread-cache"), |c| c.join("warpread"))
}

/// Where compiled kernels are kept: `$WARPREAD_KERNEL_CACHE`, else
/// `$XDG_CACHE_HOME/warpread/kernels`, else `~/.cache/warpread/kernels`
/// (`None` without a home folder: kernels are then compiled every run).
pub fn kernel_cache() -> Option<PathBuf> {
    if let Some(dir) = non_empty(KERNEL_CACHE) {
        return Some(PathBuf::from(dir));
    }
    user_cache(true).map(|c| c.join("warpread").join("kernels"))
}

/// The trace file of [`TRACE`], if set.
pub fn trace_file() -> Option<PathBuf> {
    non_empty(TRACE).map(PathBuf::from)
}

/// The real-data folder of [`REALDATA`], if set.
pub fn realdata() -> Option<PathBuf> {
    non_empty(REALDATA).map(PathBuf::from)
}

/// Whether the user set mimalloc's purge delay themselves.
pub fn mimalloc_purge_delay_set() -> bool {
    std::env::var_os(MIMALLOC_PURGE_DELAY).is_some()
}
