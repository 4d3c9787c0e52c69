// GSST decoding (docs/gsst-format.md): one thread block per data block, one
// thread per split (more splits than threads are taken in turns).
//
// A block's header is checked by the whole thread block (fixed fields by
// thread 0, split entries and symbol lengths in parallel, the first failure
// by byte offset wins, as in the CPU reference), and its symbol table is
// copied into shared memory, where every thread of the block looks codes up.
//
// Each thread streams its split's codes through a ring of 16-byte granules
// in shared memory filled by cp.async (memcpy_async without a register
// round trip), several granules ahead. In the coalesced layout the threads
// of a warp fetch adjacent granules, so one warp request is 512 contiguous
// bytes. Decoded symbols are gathered in registers into 16-byte windows
// aligned to global addresses and stored with one 16-byte store each; only
// the split's first and last windows, which it shares with its neighbours,
// are written byte by byte, and only inside the split's own output range.
//
// Statuses: every split is decoded independently; the lowest-numbered
// failing split's status is the block's, which is the failure the
// sequential CPU decoder meets first.
#include "codag.cuh"

#ifndef GSST_THREADS
#error "GSST_THREADS must be defined by the launcher"
#endif
#ifndef GSST_RING_GRANULES
#error "GSST_RING_GRANULES must be defined by the launcher"
#endif
#ifndef GSST_MIN_BLOCKS
#error "GSST_MIN_BLOCKS must be defined by the launcher"
#endif

namespace gsst {

using codag::ChunkJob;
using codag::ChunkStatus;
using codag::u16;
using codag::u32;
using codag::u64;
using codag::u8;

constexpr int THREADS = GSST_THREADS;
constexpr int RING = GSST_RING_GRANULES;
constexpr u32 ALIGN = 16;
constexpr u32 FIXED = 16;
constexpr u32 MAX_SPLITS = 1024;
constexpr u32 ESCAPE = 255;
constexpr u32 NONE = 0xffffffffu;
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps, at most 1024 threads");
static_assert(RING >= 2, "the ring needs a granule in use and one in flight");

enum Layout : u32 { SPLITS = 0, COALESCED = 1 };

struct Shared {
    u64 words[256];
    uint4 ring[RING * THREADS];  // slot-major: a warp's lanes touch adjacent granules
    u8 lengths[256];
    u32 status_code;   // fixed-header verdict of thread 0
    u32 status_detail;
    u32 splits, symbols, codes_at, codes_len, size;
    u32 header_fail;   // lowest failing offset of the parallel header checks
    u32 longest;       // most codes in one split (coalesced region check)
    u32 fail_split;    // lowest failing split
};

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
#if __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
#else
    *reinterpret_cast<uint4*>(smem) = __ldg(reinterpret_cast<const uint4*>(gmem));
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

__device__ __forceinline__ u32 clamp32(u64 x) { return x > 0xffffffffull ? 0xffffffffu : (u32)x; }

// The bytes of a window that lie in [lo, hi), one by one: only a split's
// first and last windows, so out of line, keeping registers for the loop.
__device__ __noinline__ void store_edge(u8* win, u64 w0, u64 w1, u8* lo, u8* hi) {
    for (int i = 0; i < 16; ++i) {
        u8* p = win + i;
        const u64 w = i < 8 ? w0 : w1;
        if (p >= lo && p < hi) *p = (u8)(w >> (8 * (i & 7)));
    }
}

// Output of one split: a 16-byte window aligned to global addresses, built
// in registers (`w0`, `w1`, `fill` bytes used) and stored whole when full.
// Window bytes before the split's start are zero placeholders that are
// never stored.
struct split_output {
    u8* dst;       // first output byte of the split
    u32 need;      // bytes the split must produce
    u32 produced;
    u8* win;       // global address of the current window (16-aligned)
    u64 w0, w1;
    u32 fill;

    __device__ __forceinline__ void init(u8* d, u32 n) {
        dst = d;
        need = n;
        produced = 0;
        fill = (u32)((size_t)d & (ALIGN - 1));
        win = d - fill;
        w0 = 0;
        w1 = 0;
    }

    // Stores window bytes that lie inside [dst, dst + need): the whole
    // window at once when it does, else byte by byte.
    __device__ __forceinline__ void store() {
        if (win >= dst && win + ALIGN <= dst + need) {
            *reinterpret_cast<ulonglong2*>(win) = make_ulonglong2(w0, w1);
        } else {
            store_edge(win, w0, w1, dst, dst + need);
        }
    }

    // Appends `len` (1..8) bytes of `sym`; the caller has checked room.
    // Branch-free but for the store of a full window (every 16 bytes), so
    // the lanes of a warp stay converged.
    __device__ __forceinline__ void put(u64 sym, u32 len) {
        const u32 sh = (8 * fill) & 63;
        const u64 a = sym << sh;               // the part in the word `fill` points into
        const u64 b = (sym >> 1) >> (63 - sh); // the part spilling into the next word
        const bool upper = fill >= 8;
        w0 |= upper ? 0 : a;
        w1 |= upper ? a : b;
        const u64 w2 = upper ? b : 0;
        fill += len;
        produced += len;
        if (fill >= ALIGN) {
            store();
            win += ALIGN;
            w0 = w2;
            w1 = 0;
            fill -= ALIGN;
        }
    }

    // Writes what is left in the window.
    __device__ __forceinline__ void flush() {
        if (fill > 0) store();
    }
};

struct split_state {
    split_output out;
    u32 escaped;   // an escape's byte is still to come
    u32 esc_pos;   // block offset of that escape
    u32 out_start; // split's output offset in the block
    ChunkStatus st;
    bool failed;

    __device__ __forceinline__ void fail(u32 code, u32 pos) {
        st.code = code;
        st.detail = pos;
        st.produced = (u64)out_start + out.produced;
        failed = true;
    }

    // One code at block offset `pos`; false once the split has failed.
    __device__ __forceinline__ bool code(u32 c, u32 pos, const Shared& sh, u32 symbols) {
        if (escaped) {
            escaped = 0;
            if (out.produced + 1 > out.need) {
                fail(codag::OUTPUT_OVERFLOW, esc_pos);
                return false;
            }
            out.put(c, 1);
            return true;
        }
        if (c == ESCAPE) {
            escaped = 1;
            esc_pos = pos;
            return true;
        }
        if (c >= symbols) {
            fail(codag::INPUT_CORRUPT, pos);
            return false;
        }
        const u32 len = sh.lengths[c];
        if (out.produced + len > out.need) {
            fail(codag::OUTPUT_OVERFLOW, pos);
            return false;
        }
        out.put(sh.words[c], len);
        return true;
    }

    // Four codes of a word when none escapes or is out of the table and
    // all fit; false sends the word to the byte-by-byte path.
    __device__ __forceinline__ bool word_fast(u32 w, const Shared& sh, u32 sym_rep) {
        if (escaped || __vcmpgeu4(w, sym_rep) != 0) return false;
        const u32 c0 = w & 0xff, c1 = (w >> 8) & 0xff, c2 = (w >> 16) & 0xff, c3 = w >> 24;
        const u32 l0 = sh.lengths[c0], l1 = sh.lengths[c1], l2 = sh.lengths[c2], l3 = sh.lengths[c3];
        if (out.produced + l0 + l1 + l2 + l3 > out.need) return false;
        const u64 s0 = sh.words[c0], s1 = sh.words[c1], s2 = sh.words[c2], s3 = sh.words[c3];
        out.put(s0, l0);
        out.put(s1, l1);
        out.put(s2, l2);
        out.put(s3, l3);
        return true;
    }

    // Bytes lo..hi of a granule whose byte 0 is at block offset `pos`.
    __device__ __forceinline__ bool granule(uint4 v, u32 lo, u32 hi, u32 pos, const Shared& sh,
                                            u32 symbols, u32 sym_rep) {
        if (lo == 0 && hi == ALIGN) {
            const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                if (word_fast(w[k], sh, sym_rep)) continue;
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    if (!code((w[k] >> (8 * b)) & 0xff, pos + 4 * k + b, sh, symbols)) return false;
                }
            }
            return true;
        }
        for (u32 i = lo; i < hi; ++i) {
            const u32 word = i < 4 ? v.x : i < 8 ? v.y : i < 12 ? v.z : v.w;
            if (!code((word >> (8 * (i & 3))) & 0xff, pos + i, sh, symbols)) return false;
        }
        return true;
    }
};

// Decodes split `s` of a checked block; returns false with `st` set on failure.
template <Layout L>
__device__ bool decode_split(const u8* blk, u8* block_out, u32 s, Shared& sh, ChunkStatus& st) {
    const u32* entries = reinterpret_cast<const u32*>(blk + FIXED);
    const u32 c0 = s == 0 ? 0 : entries[2 * (s - 1)];
    const u32 o0 = s == 0 ? 0 : entries[2 * (s - 1) + 1];
    const u32 c1 = entries[2 * s];
    const u32 o1 = entries[2 * s + 1];
    const u32 count = c1 - c0;
    const u32 symbols = sh.symbols;
    const u32 splits = sh.splits;
    const u32 codes_at = sh.codes_at;
    const u32 sym_rep = symbols * 0x01010101u;  // symbols <= 255: one byte per lane
    const u8* codes = blk + codes_at;

    split_state S;
    S.out.init(block_out + o0, o1 - o0);
    S.escaped = 0;
    S.esc_pos = 0;
    S.out_start = o0;
    S.failed = false;

    // Granule k: its global address, the valid byte range and the block
    // offset of its byte 0.
    u32 first = 0, ngran = 0;
    if (L == SPLITS) {
        first = c0 / ALIGN;
        ngran = count == 0 ? 0 : (c1 + ALIGN - 1) / ALIGN - first;
    } else {
        ngran = (count + ALIGN - 1) / ALIGN;
    }
    auto granule_index = [&](u32 k) -> u64 {
        return L == SPLITS ? (u64)(first + k) : (u64)k * splits + s;
    };
    uint4* ring = sh.ring + threadIdx.x;

#pragma unroll
    for (int j = 0; j < RING - 1; ++j) {
        if ((u32)j < ngran) cp_async16(ring + j * THREADS, codes + granule_index(j) * ALIGN);
        cp_async_commit();
    }
    for (u32 k = 0; k < ngran; ++k) {
        const u32 j = k + RING - 1;
        if (j < ngran) cp_async16(ring + (j % RING) * THREADS, codes + granule_index(j) * ALIGN);
        cp_async_commit();
        cp_async_wait<RING - 1>();
        const uint4 v = ring[(k % RING) * THREADS];
        u32 lo, hi;
        if (L == SPLITS) {
            const u32 g = (first + k) * ALIGN;
            lo = c0 > g ? c0 - g : 0;
            hi = c1 - g < ALIGN ? c1 - g : ALIGN;
        } else {
            lo = 0;
            hi = count - k * ALIGN < ALIGN ? count - k * ALIGN : ALIGN;
        }
        const u32 pos = codes_at + (u32)(granule_index(k) * ALIGN);
        if (!S.granule(v, lo, hi, pos, sh, symbols, sym_rep)) break;
    }
    cp_async_wait<0>();
    if (!S.failed) {
        if (S.escaped) {
            S.fail(codag::INPUT_TRUNCATED, S.esc_pos);
        } else if (S.out.produced < S.out.need) {
            u64 end_pos;
            if (L == SPLITS) {
                end_pos = (u64)codes_at + c1;
            } else {
                end_pos = (u64)codes_at + ((u64)(count / ALIGN) * splits + s) * ALIGN + count % ALIGN;
            }
            S.fail(codag::OUTPUT_SHORT, clamp32(end_pos));
        }
    }
    S.out.flush();
    st = S.st;
    return !S.failed;
}

__device__ __forceinline__ u32 ld32(const u8* p) { return *reinterpret_cast<const u32*>(p); }

// Thread 0's checks of the fixed header, in the order of
// gsst::format::check_block.
__device__ void check_fixed(const u8* blk, const ChunkJob& job, u32 layout, Shared& sh) {
    u32 code = codag::OK, detail = 0;
    if (job.in_off % ALIGN != 0) {
        code = codag::INPUT_CORRUPT;
    } else if (job.in_len < FIXED) {
        code = codag::INPUT_TRUNCATED;
    } else if (ld32(blk) != job.in_len) {
        code = codag::INPUT_CORRUPT;
    } else if (ld32(blk + 4) != job.out_count) {
        code = codag::INPUT_CORRUPT;
        detail = 4;
    } else {
        const u32 w8 = ld32(blk + 8);
        const u32 splits = w8 & 0xffff, symbols = (w8 >> 16) & 0xff, lay = w8 >> 24;
        const u32 codes_len = ld32(blk + 12);
        const u64 codes_at = ((u64)FIXED + 8ull * splits + 9ull * symbols + ALIGN - 1) / ALIGN * ALIGN;
        if (splits == 0 || splits > MAX_SPLITS) {
            code = codag::INPUT_CORRUPT;
            detail = 8;
        } else if (lay != layout) {
            code = codag::INPUT_CORRUPT;
            detail = 11;
        } else if (codes_at + codes_len > job.in_len) {
            code = codag::INPUT_TRUNCATED;
            detail = 12;
        } else if ((codes_at + codes_len + ALIGN - 1) / ALIGN * ALIGN != job.in_len) {
            code = codag::INPUT_CORRUPT;
            detail = 12;
        } else {
            sh.splits = splits;
            sh.symbols = symbols;
            sh.codes_at = (u32)codes_at;
            sh.codes_len = codes_len;
            sh.size = ld32(blk + 4);
        }
    }
    sh.status_code = code;
    sh.status_detail = detail;
    sh.header_fail = NONE;
    sh.longest = 0;
    sh.fail_split = NONE;
}

template <Layout L>
__device__ void decode_blocks(const u8* input, const ChunkJob* jobs, u32 njobs, u8* output,
                              ChunkStatus* status) {
    __shared__ Shared sh;
    const u32 tid = threadIdx.x;
    for (u32 j = blockIdx.x; j < njobs; j += gridDim.x) {
        const ChunkJob job = jobs[j];
        const u8* blk = input + job.in_off;
        if (tid == 0) check_fixed(blk, job, (u32)L, sh);
        __syncthreads();
        if (sh.status_code != codag::OK) {
            if (tid == 0) status[j] = ChunkStatus{sh.status_code, sh.status_detail, 0};
            __syncthreads();
            continue;
        }
        const u32 splits = sh.splits, symbols = sh.symbols;
        const u32* entries = reinterpret_cast<const u32*>(blk + FIXED);
        for (u32 s = tid; s < splits; s += THREADS) {
            const u32 cp = s == 0 ? 0 : entries[2 * (s - 1)];
            const u32 op = s == 0 ? 0 : entries[2 * (s - 1) + 1];
            const u32 ce = entries[2 * s], oe = entries[2 * s + 1];
            if (ce < cp || oe < op) atomicMin(&sh.header_fail, FIXED + 8 * s);
            atomicMax(&sh.longest, ce - cp);
        }
        const u32 symbols_at = FIXED + 8 * splits;
        const u32 lengths_at = symbols_at + 8 * symbols;
        for (u32 c = tid; c < symbols; c += THREADS) {
            const u32 len = blk[lengths_at + c];
            if (len < 1 || len > 8) {
                atomicMin(&sh.header_fail, lengths_at + c);
            } else {
                const u64 raw = *reinterpret_cast<const u64*>(blk + symbols_at + 8 * c);
                sh.words[c] = len == 8 ? raw : raw & ((1ull << (8 * len)) - 1);
                sh.lengths[c] = (u8)len;
            }
        }
        __syncthreads();
        if (tid == 0) {
            const u32 ce = entries[2 * (splits - 1)], oe = entries[2 * (splits - 1) + 1];
            // 64-bit: a hostile split count near 2^32 must not wrap into a
            // region size that matches.
            const u64 region = L == SPLITS ? (u64)ce
                                           : ((u64)sh.longest + ALIGN - 1) / ALIGN * splits * ALIGN;
            if (oe != sh.size || region != sh.codes_len) {
                sh.header_fail = min(sh.header_fail, FIXED + 8 * (splits - 1));
            }
        }
        __syncthreads();
        if (sh.header_fail != NONE) {
            if (tid == 0) status[j] = ChunkStatus{codag::INPUT_CORRUPT, sh.header_fail, 0};
            __syncthreads();
            continue;
        }
        u8* block_out = output + job.out_off;
        u32 my_fail = NONE;
        ChunkStatus my_status;
        for (u32 s = tid; s < splits; s += THREADS) {
            if (s > *(volatile u32*)&sh.fail_split) break;
            ChunkStatus st;
            if (!decode_split<L>(blk, block_out, s, sh, st)) {
                my_fail = s;
                my_status = st;
                atomicMin(&sh.fail_split, s);
                break;
            }
        }
        __syncthreads();
        if (sh.fail_split == NONE) {
            if (tid == 0) status[j] = ChunkStatus{codag::OK, 0, (u64)sh.size};
        } else if (my_fail == sh.fail_split) {
            status[j] = my_status;
        }
        __syncthreads();
    }
}

}  // namespace gsst

extern "C" __global__ void __launch_bounds__(GSST_THREADS, GSST_MIN_BLOCKS)
    gsst_splits(const codag::u8* input, const codag::ChunkJob* jobs, codag::u32 njobs,
                codag::u8* output, codag::ChunkStatus* status) {
    gsst::decode_blocks<gsst::SPLITS>(input, jobs, njobs, output, status);
}

extern "C" __global__ void __launch_bounds__(GSST_THREADS, GSST_MIN_BLOCKS)
    gsst_coalesced(const codag::u8* input, const codag::ChunkJob* jobs, codag::u32 njobs,
                   codag::u8* output, codag::ChunkStatus* status) {
    gsst::decode_blocks<gsst::COALESCED>(input, jobs, njobs, output, status);
}
