//! `warpread sql`: SQL over ORC and Parquet files read by warpread (Parquet
//! optionally by DataFusion's built-in reader), one query from the command
//! line or an interactive shell on stdin.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;
use std::time::Instant;

use arrow::array::RecordBatch;
use clap::ValueEnum;
use datafusion::prelude::SessionContext;

use super::Settings;
use super::cluster::Workers;
use crate::error::{Error, Result};
use crate::exec::CpuBackend;
use warpread_datafusion::{
    ParquetReader, StatementResult, WarpreadConfig, parse_setting, register_path_with, run_sql,
    runtime, session, session_config, set_options,
};
use warpread_distributed::coordinator_session;

/// How results are printed.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OutputFormat {
    /// A boxed table.
    Table,
    /// CSV with a header line.
    Csv,
    /// JSON, one object per line.
    Json,
}

/// What `sql` was asked to do.
#[derive(Debug)]
pub struct SqlArgs {
    /// `NAME=PATH_OR_GLOB` tables.
    pub tables: Vec<String>,
    /// Reader of Parquet tables.
    pub parquet_reader: ParquetReader,
    /// Output format.
    pub format: OutputFormat,
    /// `KEY=VALUE` session settings (`warpread.*` or `datafusion.*`), set
    /// in order before any table is registered.
    pub settings: Vec<String>,
    /// Where the queries' stages run.
    pub cluster: super::cluster::ClusterArgs,
    /// The query; `None` starts the shell.
    pub query: Option<String>,
}

/// The `KEY=VALUE` settings of `--set`, split; the first without an `=` is
/// an error naming it.
pub(crate) fn settings(list: &[String]) -> Result<Vec<(String, String)>> {
    list.iter()
        .map(|s| parse_setting(s).map_err(|e| Error::datafusion("reading --set", e)))
        .collect()
}

/// A session on `choice` with `settings` (`KEY=VALUE`, as `SET` takes
/// them) and `tables` registered; prints what reads each.
pub(crate) async fn session_with_tables(
    cli: &Settings,
    settings_list: &[String],
    tables: &[String],
    parquet: ParquetReader,
    workers: Option<&Workers>,
) -> Result<SessionContext> {
    let settings = settings(settings_list)?;
    // information_schema backs SHOW TABLES and the shell's `\d`.
    // With `--parquet-reader datafusion` too: ORC and GSST tables are still
    // warpread's, and both readers plan joins with warpread's limits.
    let options = session_config().with_information_schema(true);
    let ctx = match workers {
        // The workers decode; what runs here (the last stage, a query too
        // small to spread) runs on the CPU rather than holding devices the
        // workers use.
        Some(w) => coordinator_session(
            WarpreadConfig::with_backend(Arc::new(CpuBackend::new())),
            options,
            w.workers.clone(),
        ),
        None => {
            // The command line's backend, with its CUDA options (kernel
            // cache included: without it every run compiles every kernel
            // again).
            let config = WarpreadConfig::with_devices(cli.select_devices()?)?;
            for (i, b) in config.devices.iter().enumerate() {
                eprintln!(
                    "backend{}: {}",
                    device_label(i, config.devices.len()),
                    b.describe()
                );
            }
            session(config, options)
        }
    };
    // Set on the session built, so that a join limit given here wins over
    // the one `session` picks.
    set_options(&ctx, &settings).map_err(|e| Error::datafusion("applying --set", e))?;
    for t in tables {
        let (name, path) = t.split_once('=').ok_or_else(|| {
            Error::Unsupported(format!("--table {t:?} (expected NAME=PATH_OR_GLOB)"))
        })?;
        // A table in an object store: its store, configured from the
        // environment, registered for the bucket (or host).
        if let super::input::Input::Object(o) = super::input::Input::parse(path.trim())? {
            ctx.register_object_store(&o.root, o.store);
        }
        let reader = register_path_with(&ctx, name.trim(), path.trim(), parquet).await?;
        eprintln!("table {}: {path} ({reader})", name.trim());
    }
    Ok(ctx)
}

/// Prints batches in `format`.
pub(crate) fn print_batches(
    out: &mut dyn Write,
    result: &StatementResult,
    format: OutputFormat,
) -> Result<()> {
    let err = |e| Error::arrow("printing results", e);
    let batches: &[RecordBatch] = &result.batches;
    match format {
        OutputFormat::Table => {
            let text = arrow::util::pretty::pretty_format_batches(batches).map_err(err)?;
            writeln!(out, "{text}").map_err(|e| Error::io("<stdout>", e))?;
        }
        OutputFormat::Csv => {
            let mut w = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(out);
            if batches.is_empty() {
                w.write(&RecordBatch::new_empty(result.schema.clone()))
                    .map_err(err)?;
            }
            for b in batches {
                w.write(b).map_err(err)?;
            }
        }
        OutputFormat::Json => {
            let mut w = arrow::json::LineDelimitedWriter::new(out);
            for b in batches {
                w.write(b).map_err(err)?;
            }
            w.finish().map_err(err)?;
        }
    }
    Ok(())
}

async fn execute(ctx: &SessionContext, sql: &str, format: OutputFormat) -> Result<()> {
    let start = Instant::now();
    let results = run_sql(ctx, sql).await?;
    let elapsed = start.elapsed().as_secs_f64();
    let mut out = std::io::stdout().lock();
    for r in &results {
        print_batches(&mut out, r, format)?;
    }
    let rows: usize = results
        .last()
        .map_or(0, |r| r.batches.iter().map(|b| b.num_rows()).sum());
    eprintln!("{rows} row(s) in {elapsed:.3} s");
    Ok(())
}

/// Runs `sql`.
pub fn run(args: SqlArgs, cli: &Settings) -> Result<()> {
    let workers = args.cluster.workers(cli)?;
    runtime()?.block_on(async {
        let ctx = session_with_tables(
            cli,
            &args.settings,
            &args.tables,
            args.parquet_reader,
            workers.as_ref(),
        )
        .await?;
        match &args.query {
            Some(q) => execute(&ctx, q, args.format).await,
            None => shell(&ctx, args.format).await,
        }
    })
}

/// Splits input lines into statements ending with `;` (outside quotes).
#[derive(Debug, Default)]
pub(crate) struct StatementBuffer {
    text: String,
}

impl StatementBuffer {
    /// Adds a line; returns the complete statements it finished.
    pub(crate) fn push_line(&mut self, line: &str) -> Vec<String> {
        let mut done = Vec::new();
        let mut quote: Option<char> = None;
        // Re-scan the whole buffer: statements are short, and quotes may
        // span lines.
        self.text.push_str(line);
        self.text.push('\n');
        let mut start = 0;
        for (i, c) in self.text.char_indices() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, ';') => {
                    let st = self.text[start..i].trim();
                    if !st.is_empty() {
                        done.push(st.to_string());
                    }
                    start = i + 1;
                }
                _ => {}
            }
        }
        self.text = self.text[start..].to_string();
        if self.text.trim().is_empty() {
            self.text.clear();
        }
        done
    }

    /// Whether a statement is in progress.
    pub(crate) fn is_empty(&self) -> bool {
        self.text.trim().is_empty()
    }
}

async fn shell(ctx: &SessionContext, format: OutputFormat) -> Result<()> {
    let interactive = std::io::stdin().is_terminal();
    if interactive {
        eprintln!(
            "warpread SQL shell: end statements with `;`, \\q quits, \\d lists tables, \\memory shows what the backends hold"
        );
    }
    let mut buf = StatementBuffer::default();
    let mut lines = std::io::stdin().lock().lines();
    loop {
        if interactive {
            eprint!(
                "{}",
                if buf.is_empty() {
                    "warpread> "
                } else {
                    "      -> "
                }
            );
            let _ = std::io::stderr().flush();
        }
        let Some(line) = lines.next() else { break };
        let line = line.map_err(|e| Error::io("<stdin>", e))?;
        match line.trim() {
            "\\q" | "quit" | "exit" if buf.is_empty() => break,
            "\\d" if buf.is_empty() => {
                if let Err(e) = execute(ctx, "SHOW TABLES", format).await {
                    eprintln!("error: {e}");
                }
                continue;
            }
            "\\memory" if buf.is_empty() => {
                for line in memory_lines(ctx) {
                    eprintln!("{line}");
                }
                continue;
            }
            _ => {}
        }
        for st in buf.push_line(&line) {
            // A failed statement is reported and the shell goes on.
            if let Err(e) = execute(ctx, &st, format).await {
                eprintln!("error: {e}");
            }
        }
    }
    if !buf.is_empty() {
        eprintln!("warning: input ended inside a statement (missing `;`)");
    }
    Ok(())
}

/// What the session's backends hold, a line each, for the shell's
/// `\\memory` (the soak samples it between passes): a CUDA backend's pinned
/// pool and the part lent out, its device memory live (and how much of it
/// idle lanes keep) and mapped by the device's pool; the process's
/// resident memory.
fn memory_lines(ctx: &SessionContext) -> Vec<String> {
    const MIB: f64 = (1u64 << 20) as f64;
    let mib = |b: u64| format!("{:.0} MiB", b as f64 / MIB);
    let mut lines = Vec::new();
    let devices =
        WarpreadConfig::of(ctx.state().config()).map_or_else(Vec::new, |c| c.devices.clone());
    for (i, b) in devices.iter().enumerate() {
        let label = device_label(i, devices.len());
        let Some(cuda) = b.as_cuda() else {
            lines.push(format!(
                "memory{label}: {} (no device memory)",
                b.describe()
            ));
            continue;
        };
        let (lent, mirrored) = cuda.held_memory();
        let device = |r: Result<u64>| r.map_or_else(|e| format!("unknown ({e})"), mib);
        lines.push(format!(
            "memory{label}: pinned pool {} (lent {}); device live {} (idle lanes {}, mirrors {}), pool mapped {}",
            mib(cuda.pinned_pool_bytes() as u64),
            mib(lent as u64),
            device(cuda.device_memory_in_use()),
            mib(cuda.lane_device_bytes() as u64),
            mib(mirrored as u64),
            device(cuda.device_memory_reserved()),
        ));
    }
    let resident = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let kib = s.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
            kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok()
        });
    lines.push(match resident {
        Some(kib) => format!("memory: process resident {}", mib(kib << 10)),
        None => "memory: process resident unknown (no /proc/self/status)".into(),
    });
    lines
}

/// ` 1` for the second of several devices, nothing for one.
fn device_label(i: usize, of: usize) -> String {
    if of > 1 {
        format!(" {i}")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_on_semicolons_outside_quotes() {
        let mut b = StatementBuffer::default();
        assert!(b.push_line("select 1").is_empty());
        assert_eq!(
            b.push_line("; select ';' as x;"),
            vec!["select 1", "select ';' as x"]
        );
        assert!(b.is_empty());
        assert!(b.push_line("select 'a").is_empty());
        assert_eq!(b.push_line("b;c';"), vec!["select 'a\nb;c'"]);
    }
}
