//! The `warpread` binary.

use clap::Parser;
use tracing_subscriber::EnvFilter;

/// mimalloc, keeping freed pages for a while: a read's host buffers
/// (decimal widening, string gathers, offsets) then reuse memory already
/// mapped instead of faulting in fresh pages, which took a quarter of the
/// host's time in a CPU read of TPC-H lineitem on the dev box.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` (mimalloc.h, v2 and v3).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Freed memory goes back to the OS after this many milliseconds
/// (mimalloc's default, 10, purges between one read and the next). v3
/// purges everything freed once the first pending purge expires, so a
/// delay shorter than a benchmark or a query session still returns a
/// read's buffers mid-way: with 5 s, nine CPU reads of the taxi table on
/// the dev box faulted 16K pages back in (5.97 s of system time against
/// 2.16 s with 100 s; median 0.681 against 0.647 s per read).
const PURGE_DELAY_MS: std::os::raw::c_long = 60_000;

fn main() {
    // mimalloc's own variable wins (for A/B runs: `-1` never purges; on the
    // H100 it changed nothing measurable).
    use warpread_cli::cli::env;
    if !env::mimalloc_purge_delay_set() {
        // SAFETY: options are set before any other thread exists.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            env::log_filter()
                .and_then(|f| EnvFilter::try_new(f).ok())
                .unwrap_or_else(|| EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let trace = env::trace_file();
    if trace.is_some() {
        warpread::trace::enable();
    }
    let cli = warpread_cli::cli::Cli::parse();
    let result = warpread_cli::cli::run(cli);
    if let Some(path) = &trace
        && let Err(e) = warpread::trace::write(path)
    {
        eprintln!("warning: {} ({}): {e}", env::TRACE, path.display());
    }
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
