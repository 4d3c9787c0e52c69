//! The launch shape of the GSST kernels, which the compressor's defaults
//! must agree with: threads per block (= splits per block), resident blocks
//! per SM, and the per-thread input ring. The CUDA backend compiles its
//! kernels with one shape and compresses with the same.

/// Threads per block of the GSST kernels (one thread per split, one thread
/// block per data block), and so the compressor's default split count.
/// Two warps: measured fastest on the H100 with the wide splits decoder
/// (benchmarks/gsst.md, launch-shape sweep: 64/8/24 at 452 GB/s against 333 for
/// the thesis's 6 warps, 192/5/4), because small blocks with deep rings keep
/// more independent loads in flight per SM. Other shapes are chosen at run
/// time ([`GsstShape::with_parts`]).
pub const GSST_THREADS_PER_BLOCK: u32 = 64;
/// `__launch_bounds__` minimum blocks per SM: caps registers at 128 a thread
/// (8 × 64 threads), which the wide decoder needs no more of (86 on sm_90,
/// no spills; at 192/5 it spilled). Shared memory may hold fewer blocks than
/// this ([`crate::gsst::TargetDevice::blocks_per_sm_for`] counts both).
pub const GSST_MIN_BLOCKS_PER_SM: u32 = 8;
/// 16-byte granules of each GSST thread's shared-memory input ring (splits
/// decoder): 24 granules are three chunks of 8 in flight (`cp.async`), the
/// depth that measured fastest at 64 threads.
pub const GSST_RING_GRANULES: u32 = 24;
/// The coalesced decoder's ring: deeper than the splits decoder's (measured
/// faster on the H100), shortened only where a large thread block would not
/// fit the static shared-memory limit with it.
pub const GSST_WIDE_RING_GRANULES: u32 = 8;

/// Static shared memory one thread block may declare (sm_70 and later); the
/// GSST kernels use static shared memory only.
pub const STATIC_SHARED_LIMIT: u32 = 48 << 10;
/// Shared memory the driver reserves per resident thread block (sm_80 and
/// later), counted when working out how many blocks share an SM.
pub const SHARED_RESERVED_PER_BLOCK: u32 = 1 << 10;

/// The launch shape of the GSST kernels: threads per block (= the
/// compressor's default splits per block), the resident blocks per SM they
/// are compiled for, and the splits decoder's input ring. One value flows
/// into the NVRTC defines, the launch dimensions, the shared-memory budget
/// and the compressor's defaults ([`crate::gsst::GsstParams::for_device`]),
/// so that one binary can measure several shapes (a CUDA backend's options
/// carry one) without the kernels and the frames disagreeing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GsstShape {
    /// Threads per block, a multiple of 32 up to 1024.
    pub threads: u32,
    /// `__launch_bounds__` minimum blocks per SM (register budget).
    pub min_blocks: u32,
    /// Granules of the splits decoder's per-thread input ring.
    pub ring: u32,
}

impl GsstShape {
    /// The compiled-in shape.
    pub const DEFAULT: Self = Self {
        threads: GSST_THREADS_PER_BLOCK,
        min_blocks: GSST_MIN_BLOCKS_PER_SM,
        ring: GSST_RING_GRANULES,
    };

    /// A shape after checking it: whole warps, at most 1024 threads, no
    /// more resident threads than an SM holds (2048), a ring of 2..=64
    /// granules, and both decoders' static shared memory within 48 KiB.
    pub fn new(threads: u32, min_blocks: u32, ring: u32) -> std::result::Result<Self, String> {
        if threads == 0 || !threads.is_multiple_of(32) || threads > 1024 {
            return Err(format!(
                "GSST threads per block {threads}: must be a multiple of 32 in 32..=1024"
            ));
        }
        if min_blocks == 0 || u64::from(min_blocks) * u64::from(threads) > 2048 {
            return Err(format!(
                "GSST min blocks per SM {min_blocks}: must be at least 1 and \
                 {min_blocks} x {threads} threads at most 2048 (an SM's threads)"
            ));
        }
        if !(2..=64).contains(&ring) {
            return Err(format!(
                "GSST ring {ring}: must be 2..=64 granules (one in use, one in flight)"
            ));
        }
        let shape = Self {
            threads,
            min_blocks,
            ring,
        };
        let splits = shape.splits_shared_bytes();
        if u64::from(splits) > u64::from(STATIC_SHARED_LIMIT) {
            return Err(format!(
                "GSST shape {shape}: the splits decoder needs {splits} bytes of shared memory, \
                 over the {STATIC_SHARED_LIMIT}-byte static limit"
            ));
        }
        if shape.wide_ring() < 2 {
            return Err(format!(
                "GSST shape {shape}: {threads} threads leave the coalesced decoder no \
                 2-granule ring within the {STATIC_SHARED_LIMIT}-byte static shared-memory limit"
            ));
        }
        Ok(shape)
    }

    /// The default shape with the given parts replaced, then the whole
    /// checked ([`Self::new`]).
    pub fn with_parts(
        threads: Option<u32>,
        min_blocks: Option<u32>,
        ring: Option<u32>,
    ) -> std::result::Result<Self, String> {
        Self::new(
            threads.unwrap_or(Self::DEFAULT.threads),
            min_blocks.unwrap_or(Self::DEFAULT.min_blocks),
            ring.unwrap_or(Self::DEFAULT.ring),
        )
    }

    /// Static shared memory of the splits decoder, as ptxas reports it:
    /// the symbol table with the literal entries (512 words, 512 lengths,
    /// 512 literal masks), the block-wide scalars, and per thread a status
    /// (16 bytes), its ring and its window (8 bytes).
    pub const fn splits_shared_bytes(&self) -> u32 {
        512 * 8 + 512 + 512 * 8 + 64 + self.threads * (16 + self.ring * 16 + 8)
    }

    /// The coalesced decoder's ring: [`GSST_WIDE_RING_GRANULES`], or as many
    /// as fit the static limit beside its tables (0 or 1: the shape is
    /// invalid).
    pub const fn wide_ring(&self) -> u32 {
        // 512 words, 512 lengths, 512 literal masks, one 16-byte status per
        // thread and the scalars: what is left is ring.
        let fixed = 512 * 8 + 512 + 512 * 8 + 64 + self.threads * 16;
        if fixed >= STATIC_SHARED_LIMIT {
            return 0;
        }
        let fit = (STATIC_SHARED_LIMIT - fixed) / (self.threads * 16);
        if fit < GSST_WIDE_RING_GRANULES {
            fit
        } else {
            GSST_WIDE_RING_GRANULES
        }
    }

    /// Static shared memory of the coalesced decoder.
    pub const fn coalesced_shared_bytes(&self) -> u32 {
        512 * 8 + 512 + 512 * 8 + 64 + self.threads * 16 + self.threads * self.wide_ring() * 16
    }

    /// Shared memory one block of either GSST kernel holds (the larger).
    pub const fn shared_bytes(&self) -> u32 {
        let (a, b) = (self.splits_shared_bytes(), self.coalesced_shared_bytes());
        if a > b { a } else { b }
    }

    /// The `-D` options of the shape.
    pub fn defines(&self) -> [String; 4] {
        [
            format!("-DGSST_THREADS={}", self.threads),
            format!("-DGSST_RING_GRANULES={}", self.ring),
            format!("-DGSST_MIN_BLOCKS={}", self.min_blocks),
            format!("-DGSST_WIDE_RING_GRANULES={}", self.wide_ring()),
        ]
    }
}

impl std::fmt::Display for GsstShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} threads, {} blocks/SM, ring {} (coalesced {})",
            self.threads,
            self.min_blocks,
            self.ring,
            self.wide_ring()
        )
    }
}

// The compiled-in shape is valid.
const _: () = assert!(GSST_THREADS_PER_BLOCK.is_multiple_of(32) && GSST_THREADS_PER_BLOCK <= 1024);
const _: () = assert!(GsstShape::DEFAULT.splits_shared_bytes() <= STATIC_SHARED_LIMIT);
const _: () = assert!(GsstShape::DEFAULT.wide_ring() == GSST_WIDE_RING_GRANULES);
