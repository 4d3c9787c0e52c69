//! Compression parameters and their defaults derived from the device that
//! will decode, following the thesis's chapter 5: one thread block per data
//! block, as many data blocks as the device keeps resident at once (up to 8
//! per SM in the thesis, as many as the kernels' registers and shared
//! memory allow here), one
//! thread per split.

use super::format::{MAX_BLOCK_BYTES, MAX_SPLITS};
use super::shape::{self as launch, GsstShape};
use crate::plan::GsstLayout;

/// What the defaults are derived from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetDevice {
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Shared memory per SM in bytes.
    pub shared_mem_per_sm: u32,
    /// Resident threads per SM.
    pub max_threads_per_sm: u32,
}

impl TargetDevice {
    /// NVIDIA H100 80GB (SXM/HBM3): the default when compressing on a
    /// machine without a GPU.
    pub const H100: Self = Self {
        sm_count: 132,
        shared_mem_per_sm: 228 << 10,
        max_threads_per_sm: 2048,
    };

    /// Thread blocks of the GSST kernel for `layout` with launch shape
    /// `shape` one SM holds at once: as many as the kernels' register
    /// budget allows (the shape's minimum blocks per SM; below the thesis's
    /// 8), fewer if shared memory or threads run out first. Each layout has
    /// its own kernel, so only that kernel's shared memory counts.
    pub fn blocks_per_sm_for(&self, shape: &GsstShape, layout: GsstLayout) -> u32 {
        let smem = match layout {
            GsstLayout::Splits => shape.splits_shared_bytes(),
            GsstLayout::Coalesced => shape.coalesced_shared_bytes(),
        };
        let per_block = smem + launch::SHARED_RESERVED_PER_BLOCK;
        let by_smem = self.shared_mem_per_sm / per_block;
        let by_threads = self.max_threads_per_sm / shape.threads;
        shape.min_blocks.min(by_smem).min(by_threads).max(1)
    }
}
/// Smallest default block: below this the per-block header (symbol table
/// and split table, up to about 10 KiB) costs more than a percent of ratio.
pub const MIN_BLOCK_BYTES: usize = 256 << 10;
/// Smallest default split: shorter splits spend more time at their
/// unaligned ends than in aligned 16-byte transfers.
pub const MIN_SPLIT_BYTES: usize = 1024;

/// How to compress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GsstParams {
    /// Code layout of the blocks.
    pub layout: GsstLayout,
    /// Uncompressed bytes per block (the last block may be shorter).
    pub block_bytes: usize,
    /// Splits per block (fewer in blocks too short for them).
    pub splits: usize,
}

impl GsstParams {
    /// Defaults for `input_len` bytes decoded on `target` by kernels of
    /// the compiled-in launch shape ([`GsstShape::DEFAULT`]): one wave of
    /// resident thread blocks, each with one data block of equal size
    /// (thesis eq. 4.2 and 5.7), and one split per kernel thread (eq. 5.2).
    pub fn for_device(target: &TargetDevice, input_len: usize, layout: GsstLayout) -> Self {
        Self::for_shape(target, &GsstShape::DEFAULT, input_len, layout)
    }

    /// [`Self::for_device`] for a given launch shape.
    pub fn for_shape(
        target: &TargetDevice,
        shape: &GsstShape,
        input_len: usize,
        layout: GsstLayout,
    ) -> Self {
        let blocks = (target.sm_count * target.blocks_per_sm_for(shape, layout)).max(1) as usize;
        let block_bytes = input_len
            .div_ceil(blocks)
            .clamp(MIN_BLOCK_BYTES, MAX_BLOCK_BYTES);
        Self {
            layout,
            block_bytes,
            splits: shape.threads as usize,
        }
    }

    /// Splits of a block of `len` bytes: the configured count, fewer for
    /// short blocks, always 1..=[`MAX_SPLITS`].
    pub fn splits_for(&self, len: usize) -> usize {
        self.splits
            .min(len.div_ceil(MIN_SPLIT_BYTES))
            .clamp(1, MAX_SPLITS)
    }

    /// The block size, clamped to what the format allows.
    pub fn effective_block_bytes(&self) -> usize {
        self.block_bytes.clamp(1, MAX_BLOCK_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h100_defaults_fill_one_wave() {
        let t = TargetDevice::H100;
        let shape = launch::GsstShape::DEFAULT;
        // 228 KiB hold six splits blocks of 34880 + 1024 bytes; the
        // coalesced kernel's 17984 bytes leave the register bound (8)
        assert_eq!(t.blocks_per_sm_for(&shape, GsstLayout::Splits), 6);
        assert_eq!(
            t.blocks_per_sm_for(&shape, GsstLayout::Coalesced),
            launch::GSST_MIN_BLOCKS_PER_SM
        );
        let p = GsstParams::for_shape(&t, &shape, 1 << 30, GsstLayout::Splits);
        assert_eq!(p.splits, 64);
        let blocks = (1usize << 30).div_ceil(p.block_bytes);
        let wave = 132 * 6;
        assert!(blocks <= wave && blocks > wave - 132, "{blocks}");
        let small = GsstParams::for_shape(&t, &shape, 1000, GsstLayout::Splits);
        assert_eq!(small.block_bytes, MIN_BLOCK_BYTES);
        assert_eq!(small.splits_for(1000), 1);
        assert_eq!(small.splits_for(1 << 20), 64);
    }

    #[test]
    fn small_shared_memory_means_fewer_blocks() {
        let shape = launch::GsstShape::DEFAULT;
        let t = TargetDevice {
            sm_count: 10,
            shared_mem_per_sm: 2
                * (shape.splits_shared_bytes() + launch::SHARED_RESERVED_PER_BLOCK),
            max_threads_per_sm: 2048,
        };
        assert_eq!(t.blocks_per_sm_for(&shape, GsstLayout::Splits), 2);
        // the coalesced kernel's shallower ring lets three share it:
        // 71808 / (17984 + 1024) bytes
        assert_eq!(t.blocks_per_sm_for(&shape, GsstLayout::Coalesced), 3);
    }

    #[test]
    fn defaults_follow_the_launch_shape() {
        let t = TargetDevice::H100;
        // 384 threads, 3 blocks an SM (4 would fit threads and shared memory)
        let s = launch::GsstShape::new(384, 3, 4).unwrap();
        assert_eq!(t.blocks_per_sm_for(&s, GsstLayout::Splits), 3);
        let p = GsstParams::for_shape(&t, &s, 1 << 30, GsstLayout::Splits);
        assert_eq!(p.splits, 384);
        assert_eq!((1usize << 30).div_ceil(p.block_bytes), 132 * 3);
        // asking for more blocks than an SM's threads or shared memory hold
        // 228 KiB / (31296 + 1024) bytes
        let s = launch::GsstShape::new(256, 8, 4).unwrap();
        assert_eq!(t.blocks_per_sm_for(&s, GsstLayout::Splits), 7);
        // 228 KiB / (45632 + 1024) bytes
        assert_eq!(t.blocks_per_sm_for(&s, GsstLayout::Coalesced), 5);
        // 2048 threads an SM: 32 warps of 1 block each, capped at 8
        let s = launch::GsstShape::new(32, 8, 2).unwrap();
        assert_eq!(t.blocks_per_sm_for(&s, GsstLayout::Splits), 8);
        // threads bound it: 4 × 512 = 2048 (8768 + 512 × 56 bytes each)
        let s = launch::GsstShape::new(512, 4, 2).unwrap();
        assert_eq!(t.blocks_per_sm_for(&s, GsstLayout::Splits), 4);
        assert!(launch::GsstShape::new(512, 4, 4).is_err());
        assert!(launch::GsstShape::new(1024, 2, 2).is_err());
    }
}
