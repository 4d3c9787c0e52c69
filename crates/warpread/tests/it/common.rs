//! Shared helpers: a seeded generator and access to the CUDA backend.

use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;

use warpread::exec::{CudaBackend, CudaOptions};
use warpread::plan::Stage;

/// splitmix64: small, fast, and good enough to generate test streams.
pub struct Rng(u64);

impl Rng {
    /// A generator from `$WARPREAD_SEED`, else from the clock. The seed goes
    /// straight to stderr, not through `println!`: the harness captures
    /// that, and a test whose input makes the process abort (an allocation
    /// failure is not a panic) would take the captured seed with it.
    pub fn fresh(test: &str) -> Self {
        let seed = std::env::var("WARPREAD_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            });
        let _ = writeln!(
            std::io::stderr().lock(),
            "{test}: WARPREAD_SEED={seed} (replay: WARPREAD_SEED={seed} cargo test --test it {test})"
        );
        Self(seed)
    }

    /// A generator from a fixed seed.
    pub fn seeded(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The CUDA backend when a device is usable; prints the skip reason once
/// per test otherwise. Every job on the device: these tests are the
/// kernels' tests, and the small stages of fixtures would otherwise mostly
/// run on the host.
pub fn cuda(test: &str) -> Option<&'static CudaBackend> {
    static BACKEND: OnceLock<Result<CudaBackend, String>> = OnceLock::new();
    opened(&BACKEND, false, test)
}

/// The CUDA backend as users get it, with inflate stages sharing jobs with
/// the host's cores (`exec::host_share`); prints the skip reason otherwise.
pub fn cuda_host_share(test: &str) -> Option<&'static CudaBackend> {
    static BACKEND: OnceLock<Result<CudaBackend, String>> = OnceLock::new();
    opened(&BACKEND, true, test)
}

/// The options tests open CUDA backends with: compiled kernels kept where
/// the harness asks (the GPU host's test runs set it), as the CLI keeps
/// them; kernel variants under test from the folder it names.
pub fn cuda_options() -> CudaOptions {
    CudaOptions::default()
        .with_kernel_cache(std::env::var_os("WARPREAD_KERNEL_CACHE"))
        .with_kernel_dir(std::env::var_os("WARPREAD_KERNEL_DIR"))
}

/// A CUDA backend of the test's own (other tests' reads would hold memory
/// of a shared one); prints the skip reason otherwise.
pub fn cuda_own(options: CudaOptions, test: &str) -> Option<std::sync::Arc<CudaBackend>> {
    match CudaBackend::with_options(0, options) {
        Ok(b) => Some(std::sync::Arc::new(b)),
        Err(e) => {
            println!("{test}: skipped: no CUDA device ({e})");
            None
        }
    }
}

/// Runs the test `path` (`module::name`) in a process of its own, unless
/// this is that process: true there (the caller goes on with the test),
/// false here once the child passed (it panics with the child's log when
/// the child failed). For tests that must not share the device with the
/// rest: a measurement of the device's one memory pool, or a fault that
/// poisons every context of the process.
pub fn in_own_process(path: &str) -> bool {
    const ALONE: &str = "WARPREAD_TEST_ALONE";
    if std::env::var_os(ALONE).is_some() {
        return true;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([path, "--exact", "--nocapture", "--test-threads=1"])
        .env(ALONE, "1")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout);
    print!("{log}");
    assert!(
        out.status.success() && log.contains("1 passed"),
        "{log}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

/// A shared CUDA backend for APIs that take an `Arc` (the reader
/// builders); prints the skip reason otherwise.
pub fn cuda_shared(test: &str) -> Option<std::sync::Arc<dyn warpread::exec::Backend>> {
    static BACKEND: OnceLock<Result<std::sync::Arc<CudaBackend>, String>> = OnceLock::new();
    let options = cuda_options();
    let opened = BACKEND.get_or_init(|| {
        CudaBackend::with_options(0, options)
            .map(std::sync::Arc::new)
            .map_err(|e| e.to_string())
    });
    match opened {
        Ok(b) => Some(b.clone() as _),
        Err(why) => {
            println!("{test}: skipped: no CUDA device ({why})");
            None
        }
    }
}

fn opened(
    cell: &'static OnceLock<Result<CudaBackend, String>>,
    host_share: bool,
    test: &str,
) -> Option<&'static CudaBackend> {
    let options = cuda_options().with_host_share(host_share);
    let open = || CudaBackend::with_options(0, options);
    match cell.get_or_init(|| open().map_err(|e| e.to_string())) {
        Ok(b) => Some(b),
        Err(why) => {
            println!("{test}: skipped: no CUDA device ({why})");
            None
        }
    }
}

/// Damages a stage's input or plan one of five ways: bit flips, truncated
/// chunks, scattered garbage bytes, too-small expected counts, or all garbage.
pub fn mutate(rng: &mut Rng, bytes: &mut [u8], stage: &mut Stage) {
    match rng.below(5) {
        0 => {
            for _ in 0..1 + rng.below(8) {
                if !bytes.is_empty() {
                    let i = rng.below(bytes.len() as u64) as usize;
                    bytes[i] ^= 1 << rng.below(8);
                }
            }
        }
        1 => {
            // truncate some chunks' inputs
            for job in &mut stage.jobs {
                if rng.below(3) == 0 && job.input.end > job.input.start {
                    job.input.end -= 1 + rng.below(job.input.end - job.input.start);
                }
            }
        }
        2 => {
            for b in bytes.iter_mut() {
                if rng.below(50) == 0 {
                    *b = rng.next() as u8;
                }
            }
        }
        3 => {
            // wrong expected counts: shrink some (overflow) jobs
            for job in &mut stage.jobs {
                if rng.below(3) == 0 && job.values > 0 {
                    job.values -= 1 + rng.below(job.values);
                }
            }
        }
        _ => {
            // pure garbage
            for b in bytes.iter_mut() {
                *b = rng.next() as u8;
            }
        }
    }
}

/// The repository root: `$WARPREAD_ROOT` when the test binary runs away
/// from its build tree (the GPU host), else two levels above the crate's
/// directory (`crates/<name>`).
pub fn root() -> PathBuf {
    std::env::var_os("WARPREAD_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")))
}

/// The third-party corpus: `$WARPREAD_CORPUS`, else `../shared/corpora`
/// beside the repository or beside a folder of git worktrees, if it has
/// its index.
pub fn corpus_dir() -> Option<PathBuf> {
    let dirs = match std::env::var_os("WARPREAD_CORPUS") {
        Some(d) => vec![PathBuf::from(d)],
        None => vec![
            root().join("../shared/corpora"),
            root().join("../../shared/corpora"),
        ],
    };
    dirs.into_iter().find(|d| d.join("INDEX.tsv").exists())
}

/// The page-index fixtures (`scripts/gen_parquet_fixtures.py`).
pub const PAGE_INDEX_FIXTURES: [&str; 2] =
    ["page_index_gzip_v1.parquet", "page_index_snappy_v2.parquet"];

/// A Parquet fixture of `testdata/parquet`.
pub fn parquet_fixture(name: &str) -> PathBuf {
    root().join("testdata/parquet").join(name)
}

/// A two-thread tokio runtime for the async builders' tests.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}
