//! The `warpread` binary.

use clap::Parser;
use tracing_subscriber::EnvFilter;

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("WARPREAD_LOG").unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = warpread::cli::Cli::parse();
    let result = warpread::cli::run(cli);
    if let Err(e) = warpread::trace::write_if_requested() {
        eprintln!("warning: {}: {e}", warpread::trace::ENV);
    }
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
