//! Launch constants shared by every kernel. The kernels receive them as `-D`
//! defines at compile time (and refuse to compile without them), so the Rust
//! launch geometry and the kernels' shared-memory layout cannot disagree.

use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::plan::StageOp;

/// Warps per thread block; each warp decodes one chunk at a time.
/// Four gives fine-grained blocks, so a few thousand chunks spread evenly
/// over the SMs.
pub const WARPS_PER_BLOCK: u32 = 4;
/// Threads per block.
pub const THREADS_PER_BLOCK: u32 = WARPS_PER_BLOCK * 32;
/// Bytes of each warp's shared-memory input ring (a power of two of 128-byte
/// lines; must exceed the longest look-ahead a codec asks for plus two lines).
pub const RING_BYTES: u32 = 512;

pub use warpread_codecs::gsst::shape::*;

/// The GSST shape of this process: [`GsstShape::from_env`], read once (the
/// kernels are compiled once per process with it, and frames compressed
/// with its defaults must match them). An invalid override is an error here
/// and wherever kernels are compiled.
pub fn gsst_shape() -> Result<GsstShape> {
    static SHAPE: OnceLock<std::result::Result<GsstShape, String>> = OnceLock::new();
    SHAPE
        .get_or_init(|| GsstShape::from_env(|n| std::env::var_os(n)))
        .clone()
        .map_err(Error::Unsupported)
}

/// [`gsst_shape`] for callers that cannot fail (compression defaults): an
/// invalid override falls back to the compiled-in shape with a warning;
/// the CLI and the CUDA backend reject it before anything is decoded.
pub fn gsst_shape_or_default() -> GsstShape {
    gsst_shape().unwrap_or_else(|e| {
        tracing::warn!("{e}; using the default GSST shape");
        GsstShape::DEFAULT
    })
}

/// The `-D` options that pass the constants to NVRTC; fails on an invalid
/// GSST shape override.
pub fn defines() -> Result<Vec<String>> {
    let mut d = vec![
        format!("-DCODAG_WARPS_PER_BLOCK={WARPS_PER_BLOCK}"),
        format!("-DCODAG_RING_BYTES={RING_BYTES}"),
    ];
    d.extend(gsst_shape()?.defines());
    Ok(d)
}

/// Grid and block size of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchShape {
    /// Thread blocks.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
}

/// The launch geometry of a stage: one warp per job (CODAG kernels), or one
/// thread block per job for GSST, whose splits are decoded by the threads
/// of a block sharing one symbol table.
pub fn shape_for(op: &StageOp, jobs: usize) -> Result<LaunchShape> {
    Ok(match op {
        StageOp::Gsst(_) => LaunchShape {
            blocks: (jobs as u64).clamp(1, i32::MAX as u64) as u32,
            threads: gsst_shape()?.threads,
        },
        _ => LaunchShape {
            blocks: blocks_for_jobs(jobs),
            threads: THREADS_PER_BLOCK,
        },
    })
}

/// Blocks needed for one warp per job.
pub fn blocks_for_jobs(jobs: usize) -> u32 {
    (jobs as u64)
        .div_ceil(u64::from(WARPS_PER_BLOCK))
        .clamp(1, i32::MAX as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_take_constants_from_defines() {
        let framework = include_str!("../../kernels/codag.cuh");
        let gsst = include_str!("../../kernels/gsst.cu");
        for name in [
            "CODAG_WARPS_PER_BLOCK",
            "CODAG_RING_BYTES",
            "GSST_THREADS",
            "GSST_RING_GRANULES",
            "GSST_MIN_BLOCKS",
            "GSST_WIDE_RING_GRANULES",
        ] {
            let guard = format!("#ifndef {name}\n#error");
            assert!(
                framework.contains(&guard) || gsst.contains(&guard),
                "the kernels must require {name} from the launcher"
            );
            assert!(
                defines()
                    .unwrap()
                    .iter()
                    .any(|d| d.starts_with(&format!("-D{name}=")))
            );
        }
        assert!(
            RING_BYTES.is_power_of_two() && RING_BYTES.is_multiple_of(128) && RING_BYTES >= 512
        );
        for src in super::super::kernels::SOURCES {
            assert!(
                !src.text.contains("__launch_bounds__(")
                    || src.text.contains("__launch_bounds__(WARPS_PER_BLOCK")
                    || src.text.contains("__launch_bounds__(GSST_THREADS"),
                "{} must size blocks by WARPS_PER_BLOCK or GSST_THREADS",
                src.file
            );
        }
    }

    #[test]
    fn gsst_blocks_are_one_per_job() {
        let s = shape_for(&StageOp::Gsst(crate::plan::GsstLayout::Splits), 1056).unwrap();
        assert_eq!((s.blocks, s.threads), (1056, gsst_shape().unwrap().threads));
        let c = shape_for(&StageOp::Inflate, 5).unwrap();
        assert_eq!((c.blocks, c.threads), (2, THREADS_PER_BLOCK));
    }

    #[test]
    fn block_counts() {
        assert_eq!(blocks_for_jobs(0), 1);
        assert_eq!(blocks_for_jobs(4), 1);
        assert_eq!(blocks_for_jobs(5), 2);
    }

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<std::ffi::OsString> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.into())
    }

    #[test]
    fn gsst_shape_defaults_without_overrides() {
        let s = GsstShape::from_env(env(&[])).unwrap();
        assert_eq!(s, GsstShape::DEFAULT);
        assert_eq!((s.threads, s.min_blocks, s.ring), (64, 8, 24));
        // ptxas reports 34880 and 17984 bytes for gsst.cu's two entries
        // (scripts/nvrtc_check.py), and 25664 / 36416 at 192/5/4
        assert_eq!(s.splits_shared_bytes(), 34_880);
        assert_eq!(s.coalesced_shared_bytes(), 17_984);
        let old = GsstShape::new(192, 5, 4).unwrap();
        assert_eq!(old.splits_shared_bytes(), 25_664);
        assert_eq!(old.coalesced_shared_bytes(), 36_416);
        assert_eq!(
            s.defines(),
            [
                "-DGSST_THREADS=64",
                "-DGSST_RING_GRANULES=24",
                "-DGSST_MIN_BLOCKS=8",
                "-DGSST_WIDE_RING_GRANULES=8"
            ]
        );
    }

    #[test]
    fn gsst_shape_overrides_parse() {
        let s = GsstShape::from_env(env(&[
            (ENV_GSST_THREADS, "384"),
            (ENV_GSST_MIN_BLOCKS, " 3 "),
            (ENV_GSST_RING, "4"),
        ]))
        .unwrap();
        assert_eq!((s.threads, s.min_blocks, s.ring), (384, 3, 4));
        // the coalesced ring shrinks to fit 48 KiB beside 384 statuses
        assert_eq!(s.wide_ring(), 5);
        assert!(s.coalesced_shared_bytes() <= STATIC_SHARED_LIMIT);
        assert!(
            s.defines()
                .contains(&"-DGSST_WIDE_RING_GRANULES=5".to_string())
        );
        // one variable alone keeps the other defaults
        let t = GsstShape::from_env(env(&[(ENV_GSST_RING, "8")])).unwrap();
        assert_eq!(
            (t.threads, t.min_blocks, t.ring, t.wide_ring()),
            (64, 8, 8, 8)
        );
    }

    #[test]
    fn gsst_shape_overrides_are_checked() {
        let bad = |vars: &[(&str, &str)]| GsstShape::from_env(env(vars)).unwrap_err();
        assert!(bad(&[(ENV_GSST_THREADS, "200")]).contains("multiple of 32"));
        assert!(bad(&[(ENV_GSST_THREADS, "0")]).contains("multiple of 32"));
        assert!(bad(&[(ENV_GSST_THREADS, "2048")]).contains("multiple of 32"));
        assert!(bad(&[(ENV_GSST_THREADS, "-32")]).contains("not a non-negative integer"));
        assert!(bad(&[(ENV_GSST_THREADS, "lots")]).contains(ENV_GSST_THREADS));
        assert!(bad(&[(ENV_GSST_MIN_BLOCKS, "0")]).contains("at least 1"));
        // 5 x 512 threads exceed an SM
        assert!(bad(&[(ENV_GSST_THREADS, "512")]).contains("2048"));
        assert!(bad(&[(ENV_GSST_RING, "1")]).contains("2..=64"));
        assert!(bad(&[(ENV_GSST_RING, "65")]).contains("2..=64"));
        // 512 x 8 granules x 16 bytes: 64 KiB of ring
        let e = bad(&[
            (ENV_GSST_THREADS, "512"),
            (ENV_GSST_MIN_BLOCKS, "4"),
            (ENV_GSST_RING, "8"),
        ]);
        assert!(
            e.contains("splits decoder") && e.contains("static limit"),
            "{e}"
        );
        // the default ring at 256 threads: 100 KiB
        assert!(bad(&[(ENV_GSST_THREADS, "256")]).contains("splits decoder"));
        // 1024 threads: even the shortest ring is over the limit
        let e = bad(&[
            (ENV_GSST_THREADS, "1024"),
            (ENV_GSST_MIN_BLOCKS, "2"),
            (ENV_GSST_RING, "2"),
        ]);
        assert!(e.contains("splits decoder"), "{e}");
        // the largest that fits either decoder
        assert!(GsstShape::new(736, 2, 2).is_err());
        let s = GsstShape::new(704, 2, 2).unwrap();
        assert_eq!(s.wide_ring(), 2);
        assert!(s.shared_bytes() <= STATIC_SHARED_LIMIT);
    }

    #[test]
    fn every_valid_shape_fits_the_static_limit() {
        for threads in (32..=1024).step_by(32) {
            for ring in 2..=64 {
                if let Ok(s) = GsstShape::new(threads, 1, ring) {
                    assert!(s.shared_bytes() <= STATIC_SHARED_LIMIT, "{s}");
                    assert!(s.wide_ring() >= 2 && s.wide_ring() <= GSST_WIDE_RING_GRANULES);
                }
            }
        }
    }
}
