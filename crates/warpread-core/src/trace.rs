//! Wall-clock spans of a read, for finding where its time goes when stage
//! sums cannot tell (work on several threads and CUDA lanes overlaps).
//!
//! Off unless the application calls [`enable`] (the `warpread` binary does
//! when `WARPREAD_TRACE` names a file): then every [`span`] records its
//! thread, start and duration, and [`chrome_json`] gives them in the Chrome
//! trace format (`chrome://tracing`, Perfetto; `scripts/trace_summary.py`
//! prints per-span totals and wall coverage). A disabled span costs one
//! relaxed load.
//!
//! The recorder is one per process, not per reader: spans are opened deep
//! inside decode loops and backends, and threading a recorder through
//! every call would cost every caller for a diagnostic. Only the
//! application switches it on, so a library embedding warpread never
//! records unless asked.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

static ENABLED: AtomicBool = AtomicBool::new(false);
static EPOCH: OnceLock<Instant> = OnceLock::new();
static EVENTS: Mutex<Vec<Event>> = Mutex::new(Vec::new());
static NEXT_TID: AtomicU32 = AtomicU32::new(1);

thread_local! {
    static TID: u32 = NEXT_TID.fetch_add(1, Ordering::Relaxed);
}

/// One finished span.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// What ran.
    pub name: Cow<'static, str>,
    /// A small number per thread, in order of first use.
    pub tid: u32,
    /// Start, microseconds since the first span of the process.
    pub start_us: f64,
    /// Duration in microseconds.
    pub dur_us: f64,
}

/// Whether spans are recorded ([`enable`] ran).
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Records spans from now on.
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// A span that ends when dropped.
#[must_use = "a span measures until it is dropped"]
pub struct Span(Option<(Cow<'static, str>, Instant)>);

/// Starts a span named `name`.
pub fn span(name: &'static str) -> Span {
    start(|| Cow::Borrowed(name))
}

/// Starts a span whose name is built only when tracing is on.
pub fn span_with(name: impl FnOnce() -> String) -> Span {
    start(|| Cow::Owned(name()))
}

fn start(name: impl FnOnce() -> Cow<'static, str>) -> Span {
    if !enabled() {
        return Span(None);
    }
    EPOCH.get_or_init(Instant::now);
    Span(Some((name(), Instant::now())))
}

impl Drop for Span {
    fn drop(&mut self) {
        let Some((name, start)) = self.0.take() else {
            return;
        };
        let epoch = *EPOCH.get().expect("set when the span started");
        let end = Instant::now();
        let event = Event {
            name,
            tid: TID.with(|t| *t),
            start_us: start.duration_since(epoch).as_secs_f64() * 1e6,
            dur_us: end.duration_since(start).as_secs_f64() * 1e6,
        };
        EVENTS.lock().unwrap_or_else(|p| p.into_inner()).push(event);
    }
}

/// Takes every span recorded so far.
pub fn take() -> Vec<Event> {
    std::mem::take(&mut *EVENTS.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The spans as a Chrome trace (JSON array of complete events).
pub fn chrome_json(events: &[Event]) -> String {
    let list: Vec<serde_json::Value> = events
        .iter()
        .map(|e| {
            serde_json::json!({
                "name": e.name,
                "ph": "X",
                "pid": 1,
                "tid": e.tid,
                "ts": e.start_us,
                "dur": e.dur_us,
            })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// Writes the spans recorded so far to `path` as a Chrome trace, taking
/// them.
pub fn write(path: &std::path::Path) -> std::io::Result<()> {
    std::fs::write(path, chrome_json(&take()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_record_name_thread_and_duration_once_enabled() {
        enable();
        {
            let _s = span("outer");
            let _t = span_with(|| format!("inner {}", 2));
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let events = take();
        let outer = events.iter().find(|e| e.name == "outer").expect("outer");
        let inner = events.iter().find(|e| e.name == "inner 2").expect("inner");
        assert_eq!(outer.tid, inner.tid);
        assert!(inner.dur_us >= 2000.0 && outer.dur_us >= inner.dur_us);
        assert!(outer.start_us <= inner.start_us);
        let json: serde_json::Value = serde_json::from_str(&chrome_json(&events)).unwrap();
        assert_eq!(json.as_array().map(Vec::len), Some(events.len()));
        assert_eq!(json[0]["ph"], "X");
    }
}
