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

/// Threads of a Huffman thread block (`kernels/huffman.cu`, one block a
/// job): each decodes one range of the block's bits.
/// 128 measured 5-15% faster than 64 on the H200 (benchmarks/huffman.md).
pub const HUFFMAN_THREADS: u32 = 128;

/// Threads of a Huffman encoding block (`kernels/huffman_encode.cu`: one
/// data block a thread block, each thread a run of its symbols).
pub const HUFFMAN_ENCODE_THREADS: u32 = 256;

/// Warps per thread block of the span decoder (`kernels/inflate_span.cu`,
/// a warp per span; each warp keeps a 16 KiB window in shared memory).
pub const SPAN_WARPS: u32 = 2;
/// Threads of a block of the span block finder (one block per span) and of
/// the marker resolution kernels.
pub const SPAN_THREADS: u32 = 256;
/// Threads of the one block that resolves a chain's tails in order.
pub const SPAN_TAIL_THREADS: u32 = 1024;

pub use warpread_codecs::gsst::shape::*;

/// The `-D` options that pass the constants to NVRTC, with the GSST
/// kernels' `shape`.
pub fn defines(shape: &GsstShape) -> Vec<String> {
    let mut d = vec![
        format!("-DCODAG_WARPS_PER_BLOCK={WARPS_PER_BLOCK}"),
        format!("-DCODAG_RING_BYTES={RING_BYTES}"),
        format!("-DHUFF_THREADS={HUFFMAN_THREADS}"),
        format!("-DHUFF_ENC_THREADS={HUFFMAN_ENCODE_THREADS}"),
        format!("-DSPAN_WARPS={SPAN_WARPS}"),
        format!("-DSPAN_THREADS={SPAN_THREADS}"),
        format!("-DSPAN_TAIL_THREADS={SPAN_TAIL_THREADS}"),
    ];
    d.extend(shape.defines());
    d
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
/// thread block per job for GSST (`gsst` threads each), whose splits are
/// decoded by the threads of a block sharing one symbol table.
pub fn shape_for(op: &StageOp, jobs: usize, gsst: &GsstShape) -> LaunchShape {
    match op {
        StageOp::Gsst(_) => LaunchShape {
            blocks: (jobs as u64).clamp(1, i32::MAX as u64) as u32,
            threads: gsst.threads,
        },
        StageOp::Huffman(_) => LaunchShape {
            blocks: (jobs as u64).clamp(1, i32::MAX as u64) as u32,
            threads: HUFFMAN_THREADS,
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
        let huffman = include_str!("../../kernels/huffman.cu");
        let huffman_encode = include_str!("../../kernels/huffman_encode.cu");
        let spans = include_str!("../../kernels/inflate_span.cu");
        for name in [
            "HUFF_THREADS",
            "HUFF_ENC_THREADS",
            "SPAN_WARPS",
            "SPAN_THREADS",
            "SPAN_TAIL_THREADS",
            "CODAG_WARPS_PER_BLOCK",
            "CODAG_RING_BYTES",
            "GSST_THREADS",
            "GSST_RING_GRANULES",
            "GSST_MIN_BLOCKS",
            "GSST_WIDE_RING_GRANULES",
        ] {
            let guard = format!("#ifndef {name}\n#error");
            assert!(
                [framework, gsst, huffman, huffman_encode, spans]
                    .iter()
                    .any(|k| k.contains(&guard)),
                "the kernels must require {name} from the launcher"
            );
            assert!(
                defines(&GsstShape::DEFAULT)
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
                    || src.text.contains("__launch_bounds__(GSST_THREADS")
                    || src.text.contains("__launch_bounds__(HUFF_THREADS")
                    || src.text.contains("__launch_bounds__(HUFF_ENC_THREADS")
                    || src.text.contains("__launch_bounds__(SPAN_"),
                "{} must size blocks by WARPS_PER_BLOCK, GSST_THREADS, HUFF_THREADS, HUFF_ENC_THREADS or SPAN_*",
                src.file
            );
        }
    }

    #[test]
    fn huffman_blocks_are_one_per_job() {
        let s = shape_for(
            &StageOp::Huffman(crate::plan::HuffmanDecoder::Gap),
            7,
            &GsstShape::DEFAULT,
        );
        assert_eq!((s.blocks, s.threads), (7, HUFFMAN_THREADS));
        assert!(HUFFMAN_THREADS.is_multiple_of(32) && HUFFMAN_THREADS <= 1024);
    }

    #[test]
    fn gsst_blocks_are_one_per_job() {
        let wide = GsstShape::new(128, 4, 8).unwrap();
        for shape in [GsstShape::DEFAULT, wide] {
            let s = shape_for(
                &StageOp::Gsst(crate::plan::GsstLayout::Splits),
                1056,
                &shape,
            );
            assert_eq!((s.blocks, s.threads), (1056, shape.threads));
        }
        let c = shape_for(&StageOp::Inflate, 5, &wide);
        assert_eq!((c.blocks, c.threads), (2, THREADS_PER_BLOCK));
    }

    #[test]
    fn block_counts() {
        assert_eq!(blocks_for_jobs(0), 1);
        assert_eq!(blocks_for_jobs(4), 1);
        assert_eq!(blocks_for_jobs(5), 2);
    }

    #[test]
    fn gsst_shape_defaults_without_overrides() {
        let s = GsstShape::with_parts(None, None, None).unwrap();
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
        let s = GsstShape::with_parts(Some(384), Some(3), Some(4)).unwrap();
        assert_eq!((s.threads, s.min_blocks, s.ring), (384, 3, 4));
        // the coalesced ring shrinks to fit 48 KiB beside 384 statuses
        assert_eq!(s.wide_ring(), 5);
        assert!(s.coalesced_shared_bytes() <= STATIC_SHARED_LIMIT);
        assert!(
            s.defines()
                .contains(&"-DGSST_WIDE_RING_GRANULES=5".to_string())
        );
        // one part alone keeps the other defaults
        let t = GsstShape::with_parts(None, None, Some(8)).unwrap();
        assert_eq!(
            (t.threads, t.min_blocks, t.ring, t.wide_ring()),
            (64, 8, 8, 8)
        );
    }

    #[test]
    fn gsst_shape_overrides_are_checked() {
        let bad = |t, m, r| GsstShape::with_parts(t, m, r).unwrap_err();
        assert!(bad(Some(200), None, None).contains("multiple of 32"));
        assert!(bad(Some(0), None, None).contains("multiple of 32"));
        assert!(bad(Some(2048), None, None).contains("multiple of 32"));
        assert!(bad(None, Some(0), None).contains("at least 1"));
        // 8 x 512 threads exceed an SM
        assert!(bad(Some(512), None, None).contains("2048"));
        assert!(bad(None, None, Some(1)).contains("2..=64"));
        assert!(bad(None, None, Some(65)).contains("2..=64"));
        // 512 x 8 granules x 16 bytes: 64 KiB of ring
        let e = bad(Some(512), Some(4), Some(8));
        assert!(
            e.contains("splits decoder") && e.contains("static limit"),
            "{e}"
        );
        // the default ring at 256 threads: 100 KiB
        assert!(bad(Some(256), None, None).contains("splits decoder"));
        // 1024 threads: even the shortest ring is over the limit
        let e = bad(Some(1024), Some(2), Some(2));
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
