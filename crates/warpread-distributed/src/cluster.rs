//! Worker processes on the loopback, for `warpread sql --workers N` and
//! tests: each is a program that serves a worker on a port of its own
//! choosing and prints [`WORKER_LISTENING`] and its URL on its first line.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use url::Url;

use crate::coordinator::StaticWorkers;
use crate::error::{Error, Result};

/// What a worker prints before its URL once it listens.
pub const WORKER_LISTENING: &str = "warpread worker listening on ";

/// How long a worker may take to say where it listens (a CUDA worker
/// creates its context first).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Worker processes started here; dropping the cluster kills them.
#[derive(Debug)]
pub struct LocalCluster {
    children: Vec<Child>,
    workers: StaticWorkers,
}

impl LocalCluster {
    /// Starts `n` workers: `command(i)` is worker `i`'s command line (its
    /// standard output is read for the URL; standard error is inherited).
    /// Fails if one cannot start or stops before listening; those already
    /// started are stopped.
    pub fn start(n: usize, mut command: impl FnMut(usize) -> Command) -> Result<Self> {
        let mut cluster = Self {
            children: Vec::with_capacity(n),
            workers: StaticWorkers::new(Vec::new()),
        };
        let mut urls = Vec::with_capacity(n);
        for index in 0..n {
            let mut cmd = command(index);
            let program = PathBuf::from(cmd.get_program());
            let mut child = cmd
                .stdout(Stdio::piped())
                .stdin(Stdio::null())
                .spawn()
                .map_err(|source| Error::Spawn {
                    index,
                    program: program.clone(),
                    source,
                })?;
            let stdout = child.stdout.take();
            cluster.children.push(child);
            urls.push(listening_url(
                index,
                &program,
                stdout,
                &mut cluster.children[index],
            )?);
        }
        cluster.workers = StaticWorkers::new(urls);
        Ok(cluster)
    }

    /// The workers, for [`coordinator_session`](crate::coordinator_session).
    pub fn workers(&self) -> StaticWorkers {
        self.workers.clone()
    }

    /// The workers' URLs.
    pub fn urls(&self) -> &[Url] {
        self.workers.urls()
    }
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        for child in &mut self.children {
            // Already gone is fine: the worker stopped on its own.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Reads worker `index`'s first line for its URL; its later output is
/// drained in the background so the worker never blocks on a full pipe.
fn listening_url(
    index: usize,
    program: &Path,
    stdout: Option<std::process::ChildStdout>,
    child: &mut Child,
) -> Result<Url> {
    let fail = |why: String| Error::Start {
        index,
        program: program.to_path_buf(),
        why,
    };
    let stdout = stdout.ok_or_else(|| fail("no standard output".into()))?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let read = reader.read_line(&mut line).map(|_| line);
        let _ = tx.send(read);
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    let line = match rx.recv_timeout(START_TIMEOUT) {
        Ok(Ok(line)) => line,
        Ok(Err(e)) => return Err(fail(format!("reading its output: {e}"))),
        Err(_) => {
            let _ = child.kill();
            return Err(fail(format!(
                "said nothing within {} s",
                START_TIMEOUT.as_secs()
            )));
        }
    };
    let Some(text) = line.trim().strip_prefix(WORKER_LISTENING) else {
        let status = child
            .try_wait()
            .ok()
            .flatten()
            .map_or_else(|| "running".to_string(), |s| s.to_string());
        return Err(fail(format!(
            "expected {WORKER_LISTENING:?} and a URL, got {:?} ({status})",
            line.trim()
        )));
    };
    Url::parse(text).map_err(|source| Error::Url {
        text: text.to_string(),
        source,
    })
}
