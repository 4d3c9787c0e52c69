//! Compression parameters and their defaults derived from the device that
//! will decode, following the thesis's chapter 5: one thread block per data
//! block, as many data blocks as the device keeps resident at once (up to 8
//! per SM in the thesis, as many as the kernels' registers allow here), one
//! thread per split.

use super::format::{MAX_BLOCK_BYTES, MAX_SPLITS};
use crate::gpu::{DeviceInfo, launch};
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

    /// The facts of an opened device.
    pub fn from_info(info: &DeviceInfo) -> Self {
        Self {
            sm_count: info.sm_count.max(1),
            shared_mem_per_sm: info.shared_mem_per_sm.max(1),
            max_threads_per_sm: info.max_threads_per_sm.max(1),
        }
    }

    /// Thread blocks of the GSST kernels one SM holds at once: as many as
    /// the kernels' register budget allows
    /// ([`launch::GSST_MIN_BLOCKS_PER_SM`], below the thesis's 8), fewer if
    /// shared memory or threads run out first.
    pub fn blocks_per_sm(&self) -> u32 {
        let by_smem = self.shared_mem_per_sm / launch::gsst_shared_bytes();
        let by_threads = self.max_threads_per_sm / launch::GSST_THREADS_PER_BLOCK;
        launch::GSST_MIN_BLOCKS_PER_SM
            .min(by_smem)
            .min(by_threads)
            .max(1)
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
    /// Defaults for `input_len` bytes decoded on `target`: one wave of
    /// resident thread blocks, each with one data block of equal size
    /// (thesis eq. 4.2 and 5.7), and one split per kernel thread (eq. 5.2).
    pub fn for_device(target: &TargetDevice, input_len: usize, layout: GsstLayout) -> Self {
        let blocks = (target.sm_count * target.blocks_per_sm()).max(1) as usize;
        let block_bytes = input_len
            .div_ceil(blocks)
            .clamp(MIN_BLOCK_BYTES, MAX_BLOCK_BYTES);
        Self {
            layout,
            block_bytes,
            splits: launch::GSST_THREADS_PER_BLOCK as usize,
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
        assert_eq!(t.blocks_per_sm(), launch::GSST_MIN_BLOCKS_PER_SM);
        let p = GsstParams::for_device(&t, 1 << 30, GsstLayout::Splits);
        assert_eq!(p.splits, 192);
        let blocks = (1usize << 30).div_ceil(p.block_bytes);
        let wave = (132 * launch::GSST_MIN_BLOCKS_PER_SM) as usize;
        assert!(blocks <= wave && blocks > wave - 132, "{blocks}");
        let small = GsstParams::for_device(&t, 1000, GsstLayout::Splits);
        assert_eq!(small.block_bytes, MIN_BLOCK_BYTES);
        assert_eq!(small.splits_for(1000), 1);
        assert_eq!(small.splits_for(1 << 20), 192);
    }

    #[test]
    fn small_shared_memory_means_fewer_blocks() {
        let t = TargetDevice {
            sm_count: 10,
            shared_mem_per_sm: 2 * launch::gsst_shared_bytes(),
            max_threads_per_sm: 2048,
        };
        assert_eq!(t.blocks_per_sm(), 2);
    }
}
