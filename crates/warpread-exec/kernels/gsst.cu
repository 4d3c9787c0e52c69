// GSST decoding (docs/gsst-format.md): one thread block per data block, one
// thread per split (more splits than threads are taken in turns).
//
// Variant F: one decoder (namespace `gsst_wide`) for both layouts; the
// layouts differ only in how the codes reach shared memory.
//
// - Coalesced layout: as before, each thread streams its split's granules
//   through its own cp.async ring (a warp's 32 loads are 512 adjacent bytes).
// - Splits layout: a warp stages its 32 splits' codes cooperatively, one
//   CHUNK-byte piece of each split per round (CHUNK = 16 * CH, aligned to
//   the global address; CH = 8 for rings of 8 or 16 granules: whole
//   128-byte lines). Each cp.async instruction of the warp covers 32 / CH
//   splits' chunks (4 whole lines at CH = 8) instead of 32 scattered
//   granules, so each input line is requested once, whole, by one
//   instruction. DEPTH = ring / CH chunks a split: DEPTH - 1 in flight while
//   one is decoded.
//   Why (not profiled, the suspect): with per-thread 16-byte loads, 126K
//   scattered streams (660 blocks x 192 splits) each keep a partly read line
//   in L2 and fetch their input 16 bytes at a time. The wide decoder with
//   its deeper per-thread ring fell from 425 GB/s on the coalesced layout
//   (warp loads of 512 adjacent bytes) to 124 GB/s on the splits layout
//   (benchmarks/gsst.md) with the same output path, and on data
//   that fits in L2 the same code runs at more than twice the per-SM rate.
//   All splits of a block hold (nearly) the same number of codes, so the
//   lanes of a warp consume their chunks in lockstep: round r is chunk r of
//   every split, each decoded by its own lane.
// - Per 16-byte granule, both layouts run the same decode: eight codes a
//   step, escapes without branches, 16-byte output windows (described with
//   the decoder below).
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
#ifndef GSST_WIDE_RING_GRANULES
#error "GSST_WIDE_RING_GRANULES must be defined by the launcher"
#endif

// What both decoders share: types, format constants, the layouts, cp.async
// and store helpers, and thread 0's checks of a block's fixed header.
namespace gsst_common {

using codag::ChunkJob;
using codag::ChunkStatus;
using codag::u16;
using codag::u32;
using codag::u64;
using codag::u8;

constexpr int THREADS = GSST_THREADS;
constexpr u32 ALIGN = 16;
constexpr u32 FIXED = 16;
constexpr u32 MAX_SPLITS = 1024;
constexpr u32 ESCAPE = 255;
constexpr u32 NONE = 0xffffffffu;
// `lbits` of a code that names no symbol; valid entries are 8..64.
constexpr u32 NOSYM = 0x80;
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps, at most 1024 threads");

enum Layout : u32 { SPLITS = 0, COALESCED = 1 };

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
// x >> n with PTX's clamping (n >= 64 gives 0): two funnel shifts.
__device__ __forceinline__ u64 shr64(u64 x, u32 n) {
    u64 r;
    asm("shr.b64 %0, %1, %2;" : "=l"(r) : "l"(x), "r"(n));
    return r;
}
// A 16-byte global store of (lo, hi) at `p` (16-aligned) when `pred` is
// nonzero, as one predicated instruction (no branch for the lanes to
// diverge on).
__device__ __forceinline__ void st_global_16(u32 pred, void* p, u64 lo, u64 hi) {
    asm volatile(
        "{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %0, 0;\n\t"
        "@q st.global.v2.u64 [%1], {%2, %3};\n\t}\n" ::"r"(pred),
        "l"(p), "l"(lo), "l"(hi)
        : "memory");
}
// The bytes of the 16-byte window at `win` (w0: bytes 0..7, w1: 8..15)
// that lie in [lo, hi), one by one: only a split's first and last windows,
// so out of line, keeping registers for the loop.
__device__ __noinline__ void store_edge(u8* win, u64 w0, u64 w1, u8* lo, u8* hi) {
    for (int i = 0; i < 16; ++i) {
        u8* p = win + i;
        const u64 w = i < 8 ? w0 : w1;
        if (p >= lo && p < hi) *p = (u8)(w >> (8 * (i & 7)));
    }
}
// Shared-memory loads at 32-bit shared-window addresses (the compiler's
// 64-bit generic forms cost a window-base computation per access on sm_90).
__device__ __forceinline__ u32 smem_addr(const void* p) {
    return (u32)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ u32 ld32(const u8* p) { return *reinterpret_cast<const u32*>(p); }
// Thread 0's checks of the fixed header, in the order of
// gsst::format::check_block.
template <class Shared>
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

}  // namespace gsst_common

// The decoder (`gsst_wide`). The coalesced layout's input loads: the
// cp.async input loads carry the .L2::128B prefetch hint, so each thread's
// (splits layout) or warp's (coalesced) next granules come from DRAM as
// whole 128-byte lines in one access. TPC-H at 660 blocks moves 1.35 GB
// at ~0.4 TB/s while the same kernels reach higher per-SM code rates on
// data that fits in L2 (English), so the DRAM access pattern, not the
// instruction count, is the suspect there.
//
// Otherwise: the output path of the former splits decoder (A) plus escapes
// decoded without branches, eight codes a step:
//
// - Output as in A: a 64-bit accumulator, the lower half of a 16-byte window
//   kept in `prev`, each full window written with one aligned predicated
//   16-byte store (half the store requests of B's 8-byte stores); the
//   split's first window, shared with its neighbour, is only completed on
//   the slow path, the last one written byte by byte after the loop.
// - Escapes on the fast path as in B, without a branch: table index of a
//   code = its byte + 256 * (it is an escape's literal); entries 256 + b
//   are the literal b (8 bits), the escape code is a symbol of 0 bits.
//   The literal flags of EIGHT codes (two 32-bit words) come from one
//   lookup in a 512-entry table keyed by (escape pending, which of the 8
//   bytes are 255); the escape pending after them is computed from the
//   flag of the last code, without another lookup.
// - A step is two words: the 16 table loads of 8 codes are issued together
//   (twice the shared-memory loads in flight of A or B), then one OR and
//   one sum check the 8 codes against NOSYM and the room left, then 8
//   branch-free puts. A full granule is two steps; anything else (a step
//   that does not fit, a code out of the table, the split's first window,
//   partial granules) goes code by code through one exact slow routine.
// - The table loads are not `volatile`, so the compiler may schedule them
//   ahead of the previous step's stores.
// - Deeper cp.async ring for the coalesced layout (8 granules: 7 in
//   flight, 112 codes ahead; the launcher shortens it only for thread
//   blocks too large for 8 within the 48 KB static limit, crates/warpread-exec/src/gpu/launch.rs,
//   GsstShape::wide_ring). The splits layout's staging ring has the
//   launcher's GSST_RING_GRANULES granules a thread (see decode_turn).

namespace gsst_wide {

using namespace gsst_common;

constexpr int RING = GSST_WIDE_RING_GRANULES;
static_assert(RING >= 2, "the ring needs a granule in use and one in flight");

struct Shared {
    u32 status_code;   // fixed-header verdict of thread 0
    u32 status_detail;
    u32 splits, symbols, codes_at, codes_len, size;
    u32 header_fail;   // lowest failing offset of the parallel header checks
    u32 longest;       // most codes in one split (coalesced region check)
    u32 fail_split;    // lowest failing split
    // The job's input block and output, re-read by each split so that they
    // hold no registers across the decoding loop.
    const u8* blk;
    u8* out;
};

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
#if __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    // .L2::128B: L2 fetches the whole 128-byte line, which holds this
    // thread's next granules too (splits layout) or its warp's (coalesced):
    // one DRAM access per line instead of one per 32-byte sector request.
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
#else
    *reinterpret_cast<uint4*>(smem) = __ldg(reinterpret_cast<const uint4*>(gmem));
#endif
}







// The symbol table and the input rings, at file scope so that every access
// is a plain shared-memory load with a constant base. Entries 0..255 are
// codes; entry 256 + b is the literal byte b (what follows an escape).
__shared__ u64 s_words[512];       // symbol, zero past its length; 256 + b: b
__shared__ u8 s_lbits[512];        // 8 * its length: 0 for the escape, NOSYM for codes
                                   // naming no symbol; 256 + b: 8
// Literal flags of 8 codes by (escape pending before them) | (which of
// their bytes are 255) << 1: byte i is 1 when code i is a literal, else 0.
__shared__ u64 s_lit[512];
// Each thread's failing status, kept here rather than in registers live
// across the decoding loop.
__shared__ ChunkStatus s_status[THREADS];
__shared__ uint4 s_ring[RING * THREADS];  // slot-major: a warp's lanes touch adjacent granules

// Splits layout: each thread's share of the warp's staging ring is
// GSST_RING_GRANULES granules (what the launcher budgets), cut into DEPTH
// chunks of CH granules: CH the largest of 8, 4, 2, 1 dividing the ring
// (ring 8: whole lines, one at a time; 16: two; 4: half lines; 12: three
// half lines; 6: three quarter lines). One chunk (DEPTH = 1) is enough to
// keep the memory busy: a round of CH * 16 codes a lane takes far longer
// than a DRAM access (at 400 GB/s a warp decodes a round of 128 codes a
// lane in ~200K cycles with 30 warps an SM), and the other warps of the SM
// run while one waits; deeper rings only cost shared memory.
constexpr int chunk_granules(int ring) {
    return ring % 8 == 0 ? 8 : ring % 4 == 0 ? 4 : ring % 2 == 0 ? 2 : 1;
}
constexpr int LINE_RING = GSST_RING_GRANULES;
constexpr int CH = chunk_granules(LINE_RING);
constexpr int DEPTH = LINE_RING / CH;
constexpr u32 CHUNK = CH * ALIGN;
static_assert(DEPTH >= 1 && DEPTH * CH == LINE_RING, "whole chunks");
constexpr u32 FULL = 0xffffffffu;
// [slot][granule][thread]: granule q of the chunk of the split of thread t
// in slot k is s_lines[(k * CH + q) * THREADS + t], so a warp reading its
// granule q touches 512 adjacent bytes.
__shared__ uint4 s_lines[LINE_RING * THREADS];
// This turn's split of each thread, for the lanes that load its chunks
// (see decode_turn): x = f0 + (blk mod CHUNK), a multiple of CHUNK, plus the
// chunk-sequence offset of its first granule (< CHUNK); y = the offset of
// its end (y = 0: no codes).
__shared__ uint2 s_win[THREADS];

// PTX prmt.b32 in its default mode: a selector nibble's bit 3 replicates the
// selected byte's sign bit (the __byte_perm intrinsic drops that bit).
__device__ __forceinline__ u32 prmt(u32 x, u32 y, u32 sel) {
    u32 r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(sel));
    return r;
}

__device__ __forceinline__ u32 lds_u8(u32 a) {
    u32 r;
    asm("ld.shared.u8 %0, [%1];" : "=r"(r) : "r"(a));
    return r;
}
__device__ __forceinline__ u64 lds_u64(u32 a) {
    u64 r;
    asm("ld.shared.u64 %0, [%1];" : "=l"(r) : "r"(a));
    return r;
}

// Bytes of w equal to 255 gathered into bits 0..3 (exact: no carry between
// bytes).
__device__ __forceinline__ u32 ff_bits(u32 w) {
    const u32 ff = ((w & 0x7f7f7f7fu) + 0x01010101u) & w & 0x80808080u;
    return ((ff >> 7) * 0x204081u) >> 21 & 0xf;
}

// Decoding state of one split.
//
// Output: the 16-byte window at `win` (aligned to global addresses) is being
// filled; `acc` holds its lower half (`hbm` = 0) or its upper half (`hbm` =
// 64, the lower half complete in `prev`), `nb` bits of it produced. Bytes
// before the split's start are zero placeholders that are never stored.
// A window is stored when its upper half fills. `room` is what the split may
// still produce, so produced = need - room. An escape's position is not
// kept: it is always the code just before its literal (a split is whole
// tokens), recomputed from the layout when a status needs it.
struct split_state {
    u8* dst;      // first output byte of the split
    u8* win;
    u64 acc, prev;
    u32 nb, hbm;
    u32 need, room;
    u32 flags;    // bit 0: the next code is an escape's literal byte;
                  // NOSYM: the split's first window (which starts before
                  // `dst`) is not stored yet, which keeps steps off the fast path

    __device__ __forceinline__ void init(u8* d, u32 n) {
        dst = d;
        need = n;
        room = n;
        const u32 off = (u32)((size_t)d & (ALIGN - 1));
        win = d - off;
        hbm = off & 8 ? 64 : 0;
        nb = 8 * (off & 7);
        acc = 0;
        prev = 0;
        flags = off != 0 ? NOSYM : 0;
    }

    // Appends a symbol of `lb` bits (0..64, bytes past it zero); the caller
    // has checked room. Branch-free but for the split's first window, which
    // only the slow path (`EDGE`) can complete.
    template <bool EDGE>
    __device__ __forceinline__ void put(u64 sym, u32 lb) {
        const u64 a = acc | (sym << nb);
        const u64 over = shr64(sym, 64 - nb);
        const u32 t = nb + lb;
        const u32 full = t & 64;     // the half at hand is complete
        const u32 adv = full & hbm;  // ... and it is the window's upper half
        u32 store = adv;
        if (EDGE && (flags & NOSYM) && adv) {
            store_edge(win, prev, a, dst, dst + need);
            flags &= ~NOSYM;
            store = 0;
        }
        st_global_16(store, win, prev, a);
        win += adv >> 2;
        prev = full ? a : prev;
        acc = full ? over : a;
        hbm ^= full;
        nb = t & 63;
    }

    // Writes what is left after the last code: the bytes of the current
    // window that were produced and lie inside the split.
    __device__ __forceinline__ void flush() {
        const u64 w0 = hbm ? prev : acc;
        const u64 w1 = hbm ? acc : 0;
        u8* end = dst + (need - room);
        if (win < end) store_edge(win, w0, w1, dst, end);
    }

    // Eight codes (two 32-bit words, wx first), escapes and literals
    // included, when every code names a symbol (or is an escape or its
    // literal), the split's first window is written and all eight fit;
    // false leaves the state untouched.
    __device__ __forceinline__ bool step8(u32 wx, u32 wy) {
        const u32 key = (flags & 1) | ff_bits(wx) << 1 | ff_bits(wy) << 5;
        const u64 lit = lds_u64(smem_addr(s_lit) + 8 * key);
        const u32 la = (u32)lit, lh = (u32)(lit >> 32);
        // Table index of code i: its byte, plus 256 when it is a literal
        // (bytes 2 and 3 replicate the literal flag's sign: zero).
        const u32 i0 = prmt(wx, la, 0xcc40), i1 = prmt(wx, la, 0xdd51);
        const u32 i2 = prmt(wx, la, 0xee62), i3 = prmt(wx, la, 0xff73);
        const u32 i4 = prmt(wy, lh, 0xcc40), i5 = prmt(wy, lh, 0xdd51);
        const u32 i6 = prmt(wy, lh, 0xee62), i7 = prmt(wy, lh, 0xff73);
        const u32 lb = smem_addr(s_lbits), wb = smem_addr(s_words);
        const u32 l0 = lds_u8(lb + i0), l1 = lds_u8(lb + i1), l2 = lds_u8(lb + i2), l3 = lds_u8(lb + i3);
        const u32 l4 = lds_u8(lb + i4), l5 = lds_u8(lb + i5), l6 = lds_u8(lb + i6), l7 = lds_u8(lb + i7);
        const u64 s0 = lds_u64(wb + 8 * i0), s1 = lds_u64(wb + 8 * i1);
        const u64 s2 = lds_u64(wb + 8 * i2), s3 = lds_u64(wb + 8 * i3);
        const u64 s4 = lds_u64(wb + 8 * i4), s5 = lds_u64(wb + 8 * i5);
        const u64 s6 = lds_u64(wb + 8 * i6), s7 = lds_u64(wb + 8 * i7);
        const u32 bytes = (l0 + l1 + l2 + l3 + l4 + l5 + l6 + l7) >> 3;
        if (((l0 | l1 | l2 | l3 | l4 | l5 | l6 | l7 | flags) & NOSYM) != 0 || bytes > room) return false;
        room -= bytes;
        // An escape is pending after the step when its last byte is 255 and
        // not itself a literal (flag bytes are 0 or 1).
        flags = (key >> 8) & ~(lh >> 24) & 1;  // NOSYM is clear here
        put<false>(s0, l0);
        put<false>(s1, l1);
        put<false>(s2, l2);
        put<false>(s3, l3);
        put<false>(s4, l4);
        put<false>(s5, l5);
        put<false>(s6, l6);
        put<false>(s7, l7);
        return true;
    }
};

// One code at block offset `pos`, with every check of the CPU reference;
// false (and `st` set) once the split has failed. `prev_pos` gives the
// block offset of the code before it (an escape's, for a literal's status).
template <class PrevPos>
__device__ __forceinline__ bool code_slow(split_state& S, u32 c, u32 pos, PrevPos prev_pos,
                                          u32 symbols, u32 out_start, ChunkStatus& st) {
    const u32 produced = S.need - S.room;
    if (S.flags & 1) {
        if (S.room == 0) {
            st = ChunkStatus{codag::OUTPUT_OVERFLOW, prev_pos(), (u64)out_start + produced};
            return false;
        }
        S.flags &= ~1u;
        S.room -= 1;
        S.put<true>(c, 8);
        return true;
    }
    if (c == ESCAPE) {
        S.flags |= 1;
        return true;
    }
    if (c >= symbols) {
        st = ChunkStatus{codag::INPUT_CORRUPT, pos, (u64)out_start + produced};
        return false;
    }
    const u32 lb = lds_u8(smem_addr(s_lbits) + c);
    if ((lb >> 3) > S.room) {
        st = ChunkStatus{codag::OUTPUT_OVERFLOW, pos, (u64)out_start + produced};
        return false;
    }
    S.room -= lb >> 3;
    S.put<true>(lds_u64(smem_addr(s_words) + 8 * c), lb);
    return true;
}

// Decodes split `s` of a checked block; returns false with `st` set on failure.
template <Layout L>
__device__ bool decode_split(const u8* blk, u8* block_out, u32 s, Shared& sh, ChunkStatus& st) {
    const u32* entries = reinterpret_cast<const u32*>(blk + FIXED);
    const u32 c0 = s == 0 ? 0 : entries[2 * (s - 1)];
    const u32 o0 = s == 0 ? 0 : entries[2 * (s - 1) + 1];
    const u32 c1 = entries[2 * s];
    const u32 o1 = entries[2 * s + 1];
    const u32 count = c1 - c0;
    const u32 splits = sh.splits;
    const u32 codes_at = sh.codes_at;
    const u8* codes = blk + codes_at;

    split_state S;
    S.init(block_out + o0, o1 - o0);
    bool failed = false;

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
    // Block offset of the code with split index `i` (< count).
    auto code_pos = [&](u32 i) -> u32 {
        return L == SPLITS ? codes_at + c0 + i
                           : codes_at + (u32)(((u64)(i / ALIGN) * splits + s) * ALIGN) + i % ALIGN;
    };
    uint4* ring = s_ring + threadIdx.x;

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
        // A whole granule goes eight codes at a time while it can; the rest
        // of it (and partial granules) code by code.
        if (lo == 0 && hi == ALIGN) {
            if (S.step8(v.x, v.y)) {
                lo = 8;
                if (S.step8(v.z, v.w)) continue;
            }
        }
        const u32 pos = codes_at + (u32)(granule_index(k) * ALIGN);
        // split index of byte 0 of this granule
        const u32 base = L == SPLITS ? (first + k) * ALIGN - c0 : k * ALIGN;
        for (u32 i = lo; i < hi; ++i) {
            const u32 w = i < 8 ? (i < 4 ? v.x : v.y) : (i < 12 ? v.z : v.w);
            const u32 idx = base + i;
            auto prev_pos = [&]() -> u32 { return code_pos(idx - 1); };
            // the symbol count from shared memory: one register less in the loop
            if (!code_slow(S, (w >> (8 * (i & 3))) & 0xff, pos + i, prev_pos,
                           *(volatile u32*)&sh.symbols, o0, st)) {
                failed = true;
                break;
            }
        }
        if (failed) break;
    }
    cp_async_wait<0>();
    if (!failed) {
        if (S.flags & 1) {
            st = ChunkStatus{codag::INPUT_TRUNCATED, code_pos(count - 1), (u64)o0 + (S.need - S.room)};
            failed = true;
        } else if (S.room != 0) {
            u64 end_pos;
            if (L == SPLITS) {
                end_pos = (u64)codes_at + c1;
            } else {
                end_pos = (u64)codes_at + ((u64)(count / ALIGN) * splits + s) * ALIGN + count % ALIGN;
            }
            st = ChunkStatus{codag::OUTPUT_SHORT, clamp32(end_pos), (u64)o0 + (S.need - S.room)};
            failed = true;
        }
    }
    // The output of a failed block is unspecified: only a good split's last
    // window is worth writing.
    if (!failed) S.flush();
    return !failed;
}



// cp.async of 16 bytes to a shared-window address (one address computation
// for a whole round of loads), with the .L2::128B hint as above.
__device__ __forceinline__ void cp_async16_at(u32 s, const void* gmem) {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
#else
    *reinterpret_cast<uint4*>(__cvta_shared_to_generic(s)) = __ldg(reinterpret_cast<const uint4*>(gmem));
#endif
}
// The largest x of the warp's lanes (all 32 active).
__device__ __forceinline__ u32 warp_max(u32 x) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    return __reduce_max_sync(FULL, x);
#else
    for (int d = 16; d > 0; d /= 2) x = max(x, __shfl_xor_sync(FULL, x, d));
    return x;
#endif
}
__device__ __forceinline__ uint2 lds_u32x2(u32 a) {
    uint2 r;
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(r.x), "=r"(r.y) : "r"(a));
    return r;
}

// One turn of the splits layout: this thread's split `s` (when `active`)
// decoded from chunks its warp stages cooperatively. Every lane of the warp
// calls this with the same block (warp-uniform control flow around the
// collectives). Returns false with `st` set when the split failed; a split
// found past an already failed one (lower numbered) stops early and reports
// nothing (returns true, output unspecified: the block has failed).
//
// Round r: chunk r of each of the 32 splits. Lane l of load instruction i
// (i < CH) fetches granule l % CH of the chunk of split l / CH + (32 / CH) i
// of the warp: CH adjacent lanes, one chunk, so an instruction covers
// 32 / CH chunks (whole lines at CH = 8). Only granules
// holding codes of that split are read: nothing outside the block (its
// codes region is inside it and 16-aligned), nothing of another split's.
//
// Offsets are 32-bit and relative to the split's chunk 0, which starts at
// block offset f0 (the chunk-aligned address at or below its first
// granule; f0 may lie before the block, so it is only ever used modulo
// 2^32 in sums that land inside it): byte k of the chunk sequence is block
// offset f0 + k, the split's codes are k in [kstart, kend), its granules
// k in [kstart & ~15, kend).
__device__ bool decode_turn(const u8* blk, u8* block_out, u32 s, bool active, Shared& sh,
                            ChunkStatus& st) {
    const u32 tid = threadIdx.x, lane = tid & 31, wbase = tid & ~31u;
    u32 f0 = 0, kstart = 0, kend = 0, need = 0;
    u8* dst = block_out;
    if (active) {
        const u32* entries = reinterpret_cast<const u32*>(blk + FIXED);
        const u32 c0 = s == 0 ? 0 : entries[2 * (s - 1)];
        const u32 o0 = s == 0 ? 0 : entries[2 * (s - 1) + 1];
        const u32 c1 = entries[2 * s];
        // codes_at is 16-aligned and the region check made c1 <= K, so the
        // split's granules end at or before C.
        const u32 lo = sh.codes_at + (c0 & ~(ALIGN - 1));
        const u32 a = (u32)(((size_t)blk + lo) & (CHUNK - 1));
        f0 = lo - a;
        kstart = a + (c0 & (ALIGN - 1));
        // Every two codes produce a byte at least (symbols are 1..8 bytes,
        // an escape's literal 1) and a split produces at most U <= 2^30
        // bytes, so a split of more than 2^31 + 2 codes fails before its
        // end: decoding no further than 2^31 + 16 keeps kend from wrapping
        // (a hostile block near 4 GiB) without changing any status.
        kend = kstart + min(c1 - c0, (1u << 31) + 16);
        need = entries[2 * s + 1] - o0;
        dst = block_out + o0;
    }
    const u32 nch = kend > kstart ? (kend - 1) / CHUNK + 1 : 0;
    // the block's start modulo CHUNK: f0 + bl is a multiple of CHUNK
    const u32 bl = (u32)((size_t)blk & (CHUNK - 1));
    // The previous turn's lanes are done with s_win and every ring slot.
    __syncwarp();
    s_win[tid] = make_uint2((f0 + bl) | (kstart & ~(ALIGN - 1)), nch ? kend : 0);
    const u32 rounds = warp_max(nch);
    __syncwarp();

    // This lane loads granule q of split j0 + (32 / CH) i of its warp in
    // load instruction i (CH divides 32).
    const u32 q = lane % CH, j0 = wbase + lane / CH;
    auto prefetch = [&](u32 r) {
        const u32 k = r * CHUNK + q * ALIGN;
        const u32 dst = smem_addr(&s_lines[((r % DEPTH) * CH + q) * THREADS + j0]);
        const u32 win = smem_addr(&s_win[j0]);
#pragma unroll
        for (int i = 0; i < CH; ++i) {
            const uint2 w = lds_u32x2(win + 8 * (32 / CH) * i);
            if (k >= (w.x & (CHUNK - 1)) && k < w.y) {
                cp_async16_at(dst + 16 * (32 / CH) * i, blk + (u32)((w.x & ~(CHUNK - 1)) - bl + k));
            }
        }
    };

    split_state S;
    S.init(dst, need);
    bool failed = false, live = active;
#pragma unroll
    for (int p = 0; p < DEPTH - 1; ++p) {
        if ((u32)p < rounds) prefetch(p);
        cp_async_commit();
    }
    for (u32 r = 0; r < rounds; ++r) {
        // Every lane is done with slot (r - 1) % DEPTH, which this refills.
        __syncwarp();
        if (r + DEPTH - 1 < rounds) prefetch(r + DEPTH - 1);
        cp_async_commit();
        cp_async_wait<DEPTH - 1>();
        // Every lane's copies of round r have landed.
        __syncwarp();
        // A lower split failed: this one's result is not needed.
        if (live && s > *(volatile u32*)&sh.fail_split) live = false;
        if (live && r < nch) {
            const u32 slot = r % DEPTH;
#pragma unroll 1
            for (u32 q = 0; q < CH; ++q) {
                const u32 k = r * CHUNK + q * ALIGN;
                if (k + ALIGN <= kstart || k >= kend) continue;
                const uint4 v = s_lines[(slot * CH + q) * THREADS + tid];
                u32 l = kstart > k ? kstart - k : 0;
                const u32 h = kend - k < ALIGN ? kend - k : ALIGN;
                if (l == 0 && h == ALIGN) {
                    if (S.step8(v.x, v.y)) {
                        l = 8;
                        if (S.step8(v.z, v.w)) continue;
                    }
                }
                const u32 pos = f0 + k;  // block offset of the granule's byte 0
                const u32 out_start = (u32)(S.dst - *(u8* const volatile*)&sh.out);
                for (u32 i = l; i < h; ++i) {
                    const u32 w = i < 8 ? (i < 4 ? v.x : v.y) : (i < 12 ? v.z : v.w);
                    // an escape's position, for a literal's status: the code before
                    auto prev_pos = [&]() -> u32 { return pos + i - 1; };
                    if (!code_slow(S, (w >> (8 * (i & 3))) & 0xff, pos + i, prev_pos,
                                   *(volatile u32*)&sh.symbols, out_start, st)) {
                        failed = true;
                        break;
                    }
                }
                if (failed) break;
            }
            if (failed) live = false;
        }
        // The whole warp is finished (or failed): leave the rounds early.
        if (__all_sync(FULL, !live || r + 1 >= nch)) break;
    }
    cp_async_wait<0>();
    if (!active) return true;
    if (!failed && live) {
        const u64 produced = (u64)(S.dst - *(u8* const volatile*)&sh.out) + (S.need - S.room);
        if (S.flags & 1) {
            st = ChunkStatus{codag::INPUT_TRUNCATED, f0 + kend - 1, produced};
            failed = true;
        } else if (S.room != 0) {
            st = ChunkStatus{codag::OUTPUT_SHORT, f0 + kend, produced};
            failed = true;
        } else {
            S.flush();
        }
    }
    return !failed;
}

template <Layout L>
__device__ void decode_blocks(const u8* input, const ChunkJob* jobs, u32 njobs, u8* output,
                              ChunkStatus* status) {
    __shared__ Shared sh;
    const u32 tid = threadIdx.x;
    for (u32 j = blockIdx.x; j < njobs; j += gridDim.x) {
        const ChunkJob job = jobs[j];
        const u8* blk = input + job.in_off;
        if (tid == 0) {
            check_fixed(blk, job, (u32)L, sh);
            sh.blk = blk;
            sh.out = output + job.out_off;
        }
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
        for (u32 c = tid; c < 512; c += THREADS) {
            u64 word = c & 0xff;  // 256 + b: the literal b
            u32 lb = 8;
            if (c < 256) {
                word = 0;
                lb = c == ESCAPE ? 0 : NOSYM;
                if (c < symbols) {
                    const u32 len = blk[lengths_at + c];
                    if (len < 1 || len > 8) {
                        atomicMin(&sh.header_fail, lengths_at + c);
                    } else {
                        const u64 raw = *reinterpret_cast<const u64*>(blk + symbols_at + 8 * c);
                        word = len == 8 ? raw : raw & ((1ull << (8 * len)) - 1);
                        lb = 8 * len;
                    }
                }
            }
            s_words[c] = word;
            s_lbits[c] = (u8)lb;
            // key c: bit 0 an escape pending, bits 1..8 the bytes equal to 255
            u32 e = c & 1;
            u64 lit = 0;
            for (int i = 0; i < 8; ++i) {
                lit |= (u64)e << (8 * i);
                e = (c >> (i + 1)) & 1 & (e ^ 1);
            }
            s_lit[c] = lit;
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
        u32 my_fail = NONE;
        if constexpr (L == SPLITS) {
            // Turns of THREADS splits; a warp stops when all its splits of
            // the turn lie past a failed one (later turns only go higher).
            for (u32 base = 0; base < splits; base += THREADS) {
                const u32 s = base + tid;
                const bool active = s < splits && s <= *(volatile u32*)&sh.fail_split;
                if (!__any_sync(FULL, active)) break;
                const u8* const b = *(const u8* const volatile*)&sh.blk;
                u8* const o = *(u8* const volatile*)&sh.out;
                if (!decode_turn(b, o, s, active, sh, s_status[tid])) {
                    my_fail = s;
                    atomicMin(&sh.fail_split, s);
                }
            }
        } else {
            for (u32 s = tid; s < splits; s += THREADS) {
                if (s > *(volatile u32*)&sh.fail_split) break;
                const u8* const b = *(const u8* const volatile*)&sh.blk;
                u8* const o = *(u8* const volatile*)&sh.out;
                if (!decode_split<L>(b, o, s, sh, s_status[tid])) {
                    my_fail = s;
                    atomicMin(&sh.fail_split, s);
                    break;
                }
            }
        }
        __syncthreads();
        if (sh.fail_split == NONE) {
            if (tid == 0) status[j] = ChunkStatus{codag::OK, 0, (u64)sh.size};
        } else if (my_fail == sh.fail_split) {
            status[j] = s_status[tid];
        }
        __syncthreads();
    }
}

}  // namespace gsst_wide

extern "C" __global__ void __launch_bounds__(GSST_THREADS, GSST_MIN_BLOCKS)
    gsst_splits(const codag::u8* input, const codag::ChunkJob* jobs, codag::u32 njobs,
                codag::u8* output, codag::ChunkStatus* status) {
    gsst_wide::decode_blocks<gsst_wide::SPLITS>(input, jobs, njobs, output, status);
}

extern "C" __global__ void __launch_bounds__(GSST_THREADS, GSST_MIN_BLOCKS)
    gsst_coalesced(const codag::u8* input, const codag::ChunkJob* jobs, codag::u32 njobs,
                   codag::u8* output, codag::ChunkStatus* status) {
    gsst_wide::decode_blocks<gsst_wide::COALESCED>(input, jobs, njobs, output, status);
}
