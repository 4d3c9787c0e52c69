//! Launch constants shared by every kernel. The kernels receive them as `-D`
//! defines at compile time (and refuse to compile without them), so the Rust
//! launch geometry and the kernels' shared-memory layout cannot disagree.

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

/// Threads per block of the GSST kernels (one thread per split, one thread
/// block per data block): 6 warps, the thesis's best (section 5.4.4); the
/// compressor's default split count.
pub const GSST_THREADS_PER_BLOCK: u32 = 192;
/// GSST thread blocks the kernels are compiled to fit on one SM
/// (`__launch_bounds__`): 5 × 192 threads leave 64 registers a thread on a
/// 64K-register SM (30 warps per SM, near the thesis's best of about 24);
/// the thesis's 8 blocks per SM would spill registers on sm_90.
pub const GSST_MIN_BLOCKS_PER_SM: u32 = 5;
/// 16-byte granules of each GSST thread's shared-memory input ring: one
/// being decoded, the rest in flight (`cp.async`).
pub const GSST_RING_GRANULES: u32 = 4;

/// Static shared memory of one GSST thread block: the symbol table (256
/// words and 256 lengths), the input rings and a few block-wide scalars.
pub const fn gsst_shared_bytes() -> u32 {
    256 * 8 + 256 + GSST_THREADS_PER_BLOCK * GSST_RING_GRANULES * 16 + 64
}

// Whole warps, at most 1024 threads, within the 48 KiB of static shared memory.
const _: () = assert!(GSST_THREADS_PER_BLOCK.is_multiple_of(32) && GSST_THREADS_PER_BLOCK <= 1024);
const _: () = assert!(gsst_shared_bytes() < 48 << 10);

/// The `-D` options that pass the constants to NVRTC.
pub fn defines() -> Vec<String> {
    vec![
        format!("-DCODAG_WARPS_PER_BLOCK={WARPS_PER_BLOCK}"),
        format!("-DCODAG_RING_BYTES={RING_BYTES}"),
        format!("-DGSST_THREADS={GSST_THREADS_PER_BLOCK}"),
        format!("-DGSST_RING_GRANULES={GSST_RING_GRANULES}"),
        format!("-DGSST_MIN_BLOCKS={GSST_MIN_BLOCKS_PER_SM}"),
    ]
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
pub fn shape_for(op: &StageOp, jobs: usize) -> LaunchShape {
    match op {
        StageOp::Gsst(_) => LaunchShape {
            blocks: (jobs as u64).clamp(1, i32::MAX as u64) as u32,
            threads: GSST_THREADS_PER_BLOCK,
        },
        _ => LaunchShape {
            blocks: blocks_for_jobs(jobs),
            threads: THREADS_PER_BLOCK,
        },
    }
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
        ] {
            let guard = format!("#ifndef {name}\n#error");
            assert!(
                framework.contains(&guard) || gsst.contains(&guard),
                "the kernels must require {name} from the launcher"
            );
            assert!(
                defines()
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
        let s = shape_for(&StageOp::Gsst(crate::plan::GsstLayout::Splits), 1056);
        assert_eq!((s.blocks, s.threads), (1056, GSST_THREADS_PER_BLOCK));
        let c = shape_for(&StageOp::Inflate, 5);
        assert_eq!((c.blocks, c.threads), (2, THREADS_PER_BLOCK));
    }

    #[test]
    fn block_counts() {
        assert_eq!(blocks_for_jobs(0), 1);
        assert_eq!(blocks_for_jobs(4), 1);
        assert_eq!(blocks_for_jobs(5), 2);
    }
}
