//! Launch constants shared by every kernel. The kernels receive them as `-D`
//! defines at compile time (and refuse to compile without them), so the Rust
//! launch geometry and the kernels' shared-memory layout cannot disagree.

/// Warps per thread block; each warp decodes one chunk at a time.
/// Four gives fine-grained blocks, so a few thousand chunks spread evenly
/// over the SMs.
pub const WARPS_PER_BLOCK: u32 = 4;
/// Threads per block.
pub const THREADS_PER_BLOCK: u32 = WARPS_PER_BLOCK * 32;
/// Bytes of each warp's shared-memory input ring (a power of two of 128-byte
/// lines; must exceed the longest look-ahead a codec asks for plus two lines).
pub const RING_BYTES: u32 = 512;

/// The `-D` options that pass the constants to NVRTC.
pub fn defines() -> Vec<String> {
    vec![
        format!("-DCODAG_WARPS_PER_BLOCK={WARPS_PER_BLOCK}"),
        format!("-DCODAG_RING_BYTES={RING_BYTES}"),
    ]
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
        for name in ["CODAG_WARPS_PER_BLOCK", "CODAG_RING_BYTES"] {
            assert!(
                framework.contains(&format!("#ifndef {name}\n#error")),
                "codag.cuh must require {name} from the launcher"
            );
            assert!(
                defines()
                    .iter()
                    .any(|d| d.starts_with(&format!("-D{name}=")))
            );
        }
        assert!(RING_BYTES.is_power_of_two() && RING_BYTES % 128 == 0 && RING_BYTES >= 512);
        for src in super::super::kernels::SOURCES {
            assert!(
                !src.text.contains("__launch_bounds__(")
                    || src.text.contains("__launch_bounds__(WARPS_PER_BLOCK"),
                "{} must size blocks by WARPS_PER_BLOCK",
                src.file
            );
        }
    }

    #[test]
    fn block_counts() {
        assert_eq!(blocks_for_jobs(0), 1);
        assert_eq!(blocks_for_jobs(4), 1);
        assert_eq!(blocks_for_jobs(5), 2);
    }
}
