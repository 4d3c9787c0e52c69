//! Running SQL on workers: `warpread worker`, and the `--workers N` /
//! `--cluster URL,...` flags of `sql` and `bench sql`.

use std::io::Write;
use std::process::Command;

use datafusion::error::DataFusionError;
use warpread_datafusion::WarpreadConfig;
use warpread_distributed::{LocalCluster, StaticWorkers, WORKER_LISTENING};

use super::Settings;
use crate::error::{Error, Result};
use crate::exec::{BackendChoice, Devices};

/// Where a query's stages run: by default in this process.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ClusterArgs {
    /// Start N worker processes on the loopback and run each query's
    /// stages on them (this process plans and runs the last stage). With
    /// CUDA, worker i decodes on device i of `--devices` (wrapping).
    #[arg(long, value_name = "N", conflicts_with = "cluster")]
    pub workers: Option<usize>,
    /// Run each query's stages on these running workers (`warpread
    /// worker`), by address (host:port or http://host:port,
    /// comma-separated).
    #[arg(long, value_name = "URL", value_delimiter = ',')]
    pub cluster: Vec<String>,
}

/// The workers a session uses, and the processes started for them.
pub struct Workers {
    /// The workers' addresses.
    pub workers: StaticWorkers,
    /// Worker processes this command started (stopped when dropped).
    _local: Option<LocalCluster>,
}

fn cluster_error(context: &str, e: warpread_distributed::Error) -> Error {
    Error::datafusion(context, DataFusionError::External(Box::new(e)))
}

impl ClusterArgs {
    /// The workers asked for: none (run here), workers started now, or
    /// running ones.
    pub fn workers(&self, settings: &Settings) -> Result<Option<Workers>> {
        if !self.cluster.is_empty() {
            let workers = StaticWorkers::parse(&self.cluster)
                .map_err(|e| cluster_error("reading --cluster", e))?;
            return Ok(Some(Workers {
                workers,
                _local: None,
            }));
        }
        let Some(n) = self.workers else {
            return Ok(None);
        };
        if n == 0 {
            return Err(Error::Unsupported("--workers must be at least 1".into()));
        }
        let exe = std::env::current_exe().map_err(|e| Error::io("<current executable>", e))?;
        let devices = worker_devices(settings)?;
        let local = LocalCluster::start(n, |i| {
            let mut cmd = Command::new(&exe);
            cmd.arg("--backend").arg(settings.backend.to_string());
            if let Some(list) = &devices {
                cmd.arg("--devices").arg(list[i % list.len()].to_string());
                // Workers on one host share its cores and memory as the
                // backends of one process do.
                let shared = crate::exec::devices::shared_by(&settings.cuda, n);
                if let Some(t) = shared.host_threads {
                    cmd.arg("--host-threads").arg(t.to_string());
                }
                if let Some(bytes) = shared.pinned_pool_bytes {
                    cmd.arg("--pinned-pool-mib").arg((bytes >> 20).to_string());
                }
            }
            cmd.args(["worker", "--listen", "127.0.0.1:0"]);
            cmd
        })
        .map_err(|e| cluster_error("starting workers", e))?;
        for (i, url) in local.urls().iter().enumerate() {
            eprintln!("worker {i}: {url}");
        }
        Ok(Some(Workers {
            workers: local.workers(),
            _local: Some(local),
        }))
    }
}

/// The device each started worker takes in turn: `None` for the CPU.
fn worker_devices(settings: &Settings) -> Result<Option<Vec<usize>>> {
    if settings.backend == BackendChoice::Cpu {
        return Ok(None);
    }
    Ok(match &settings.devices {
        Devices::List(list) if !list.is_empty() => Some(list.clone()),
        _ => {
            let n = crate::gpu::device_count().unwrap_or(0);
            (n > 0).then(|| (0..n).collect())
        }
    })
}

/// `warpread worker`: serves stages on `listen` until killed, decoding on
/// the command line's backend and devices; prints [`WORKER_LISTENING`]
/// and its URL first.
pub fn run_worker(listen: &str, settings: &Settings) -> Result<()> {
    let config = WarpreadConfig::with_devices(settings.select_devices()?)?;
    for b in &config.devices {
        eprintln!("worker backend: {}", b.describe());
    }
    warpread_datafusion::runtime()?.block_on(async {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| Error::io(format!("<listen {listen}>"), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::io(format!("<listen {listen}>"), e))?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{WORKER_LISTENING}http://{addr}")
            .and_then(|_| out.flush())
            .map_err(|e| Error::io("<stdout>", e))?;
        drop(out);
        warpread_distributed::serve(listener, config)
            .await
            .map_err(|e| cluster_error("serving", e))
    })
}
