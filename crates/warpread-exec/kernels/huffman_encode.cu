// Huffman encoding (docs/huffman-format.md) on the GPU: the symbol counts,
// then, once the host has built the code from them, each block's size and
// each block's bytes. The frame is byte for byte the CPU encoder's
// (codecs/huffman/encode.rs): same code from the same counts, same block
// layout, same gap arrays.
//
// - huffman_histogram8 / huffman_histogram16: exact or sampled counts
//   (histogram.rs `counts` without its floor of one, which the host adds).
//   8-bit: a shared 256-bin histogram per warp. 16-bit: 65,536 16-bit
//   counters in 128 KiB of dynamic shared memory, packed two to a word;
//   a block flushes them to the global counts after every chunk of fewer
//   than 65,536 symbols, so no counter overflows into its neighbour.
// - huffman_block_sizes: one thread block per data block; each thread sums
//   the code lengths of a contiguous run of symbols (with ways: the symbols
//   of a contiguous share of the ways, which code back to back); the
//   block's payload bits give its size, Huffman or raw, as encode_block
//   decides.
// - huffman_encode_blocks: the same sums, scanned into each thread's first
//   bit; each thread writes its codewords (words wholly its own with plain
//   stores, shared edge words with atomicOr into zeroed memory) and the
//   gaps of the subsequence boundaries its codewords reach, or the bits of
//   each of its ways into the way directory.
//
// Every store is checked against the frame's length; a violation (a plan
// that disagrees with the sizes) sets the status word and writes nothing.
#include "codag.cuh"

#ifndef HUFF_ENC_THREADS
#error "HUFF_ENC_THREADS must be defined by the launcher"
#endif

namespace huffenc {

using codag::u16;
using codag::u32;
using codag::u64;
using codag::u8;

constexpr u32 THREADS = HUFF_ENC_THREADS;
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps, at most 1024 threads");
constexpr u32 BLOCK_FIXED = 8;  // format.rs BLOCK_FIXED_BYTES
constexpr u32 KIND_HUFFMAN = 0;
constexpr u32 KIND_RAW = 1;
// Symbols a 16-bit histogram block counts between flushes: below 2^16.
constexpr u32 CHUNK16 = 65535;

// Whether byte `p` is in the sample (sample_windows); step 0: all bytes.
__device__ __forceinline__ bool sampled(u64 p, u64 first, u64 step, u64 window) {
    return step == 0 || (p >= first && (p - first) % step < window);
}

__device__ __forceinline__ u64 align4(u64 x) { return (x + 3) & ~3ull; }

// A block's layout, as encode_block decides it: Huffman when every symbol
// has a code and the coded form is smaller than the raw one.
struct Layout {
    bool raw;
    u32 gaps;   // gap entries
    u64 bytes;  // the block's bytes in the frame
};

__device__ __forceinline__ Layout layout(u64 bits, u64 len, bool coded, u32 sub_log2, u32 ways_log2) {
    Layout l;
    l.gaps = sub_log2 == 0 ? 0u : (u32)((bits + (1ull << sub_log2) - 1) >> sub_log2);
    const u64 directory = align4(2 * ((1ull << ways_log2) - 1));
    const u64 huff = BLOCK_FIXED + align4(l.gaps) + directory + 4 * ((bits + 31) / 32);
    const u64 raw = BLOCK_FIXED + align4(len);
    l.raw = !coded || bits > 0xffffffffull || huff >= raw;
    l.bytes = l.raw ? raw : huff;
    return l;
}

// The symbol at `i` of a block starting at `p`.
__device__ __forceinline__ u32 symbol(const u8* p, u64 i, u32 sb) {
    return sb == 1 ? (u32)p[i] : (u32)p[2 * i] | (u32)p[2 * i + 1] << 8;
}

// Block-wide sums of `v` and AND of `ok` (every thread calls); returns this
// thread's exclusive prefix.
struct Scan {
    u64 prefix, total;
    bool all;
};

__device__ Scan block_scan(u64 v, bool ok, u64* warp_sums) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    u64 x = v;
    for (u32 d = 1; d < 32; d <<= 1) {
        const u64 y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31) warp_sums[warp] = x;
    const bool all = __syncthreads_and(ok);
    if (threadIdx.x == 0) {
        u64 acc = 0;
        for (u32 i = 0; i < THREADS / 32; ++i) {
            const u64 t = warp_sums[i];
            warp_sums[i] = acc;
            acc += t;
        }
        warp_sums[THREADS / 32] = acc;
    }
    __syncthreads();
    Scan s;
    s.prefix = warp_sums[warp] + x - v;
    s.total = warp_sums[THREADS / 32];
    s.all = all;
    __syncthreads();  // warp_sums may be reused
    return s;
}

// This thread's run of a block's `nsym` symbols.
__device__ __forceinline__ void run_of(u64 nsym, u64& a, u64& b) {
    const u64 per = (nsym + THREADS - 1) / THREADS;
    a = per * threadIdx.x < nsym ? per * threadIdx.x : nsym;
    b = a + per < nsym ? a + per : nsym;
}

// This thread's ways of a block in 2^ways_log2 ways: [v0, v1), a
// contiguous share.
__device__ __forceinline__ void ways_of(u32 ways, u32& v0, u32& v1) {
    const u32 per = (ways + THREADS - 1) / THREADS;
    v0 = per * threadIdx.x < ways ? per * threadIdx.x : ways;
    v1 = v0 + per < ways ? v0 + per : ways;
}

// The symbols of way v of `nsym` in `ways` ways (way_symbols).
__device__ __forceinline__ void way_range(u64 nsym, u32 ways, u32 v, u64& a, u64& b) {
    const u64 q = (nsym + ways - 1) / ways;
    a = (u64)v * q < nsym ? (u64)v * q : nsym;
    b = a + q < nsym ? a + q : nsym;
}

// This thread's run of a block's `nsym` symbols: an equal share, or with
// ways the symbols of its ways (they lie back to back in the payload, so
// a run of ways codes exactly like a run of symbols).
__device__ __forceinline__ void run_of(u64 nsym, u32 ways_log2, u64& a, u64& b) {
    if (ways_log2 == 0) return run_of(nsym, a, b);
    u32 v0, v1;
    ways_of(1u << ways_log2, v0, v1);
    u64 first_end, last_start;
    way_range(nsym, 1u << ways_log2, v0, a, first_end);
    way_range(nsym, 1u << ways_log2, v1 == 0 ? 0 : v1 - 1, last_start, b);
    if (v0 == v1) b = a;
}

// Sum of code lengths over symbols [a, b); `coded` false when one has none.
__device__ __forceinline__ u64 bits_of(const u8* p, u64 a, u64 b, u32 sb, const u32* table, bool& coded) {
    u64 bits = 0;
    coded = true;
    for (u64 i = a; i < b; ++i) {
        const u32 len = __ldg(table + symbol(p, i, sb)) & 31u;
        coded &= len != 0;
        bits += len;
    }
    return bits;
}

}  // namespace huffenc

using namespace huffenc;

extern "C" __global__ void __launch_bounds__(HUFF_ENC_THREADS)
    huffman_histogram8(const u8* data, u64 n, u64 first, u64 step, u64 window, unsigned long long* counts) {
    __shared__ u32 h[THREADS / 32][256];
    const u32 warp = threadIdx.x >> 5;
    for (u32 i = threadIdx.x; i < (THREADS / 32) * 256; i += THREADS) (&h[0][0])[i] = 0;
    __syncthreads();
    // Four bytes a thread at a time: the data starts 4-aligned (a device
    // allocation).
    const u64 words = n / 4;
    const u32* w = reinterpret_cast<const u32*>(data);
    for (u64 i = (u64)blockIdx.x * THREADS + threadIdx.x; i < words; i += (u64)gridDim.x * THREADS) {
        const u32 v = __ldg(w + i);
        for (u32 k = 0; k < 4; ++k)
            if (sampled(4 * i + k, first, step, window)) atomicAdd(&h[warp][(v >> (8 * k)) & 0xff], 1u);
    }
    if (blockIdx.x == 0)
        for (u64 p = 4 * words + threadIdx.x; p < n; p += THREADS)
            if (sampled(p, first, step, window)) atomicAdd(&h[warp][data[p]], 1u);
    __syncthreads();
    for (u32 b = threadIdx.x; b < 256; b += THREADS) {
        u64 sum = 0;
        for (u32 k = 0; k < THREADS / 32; ++k) sum += h[k][b];
        if (sum) atomicAdd(counts + b, (unsigned long long)sum);
    }
}

extern "C" __global__ void __launch_bounds__(HUFF_ENC_THREADS)
    huffman_histogram16(const u8* data, u64 n, u64 first, u64 step, u64 window, unsigned long long* counts) {
    // 65,536 counters of 16 bits, two to a word (dynamic: 128 KiB).
    extern __shared__ u32 h16[];
    const u64 nsym = n / 2;  // an odd last byte is not a symbol
    const u16* w = reinterpret_cast<const u16*>(data);
    for (u64 c0 = (u64)blockIdx.x * CHUNK16; c0 < nsym; c0 += (u64)gridDim.x * CHUNK16) {
        for (u32 i = threadIdx.x; i < 32768; i += THREADS) h16[i] = 0;
        __syncthreads();
        const u64 c1 = c0 + CHUNK16 < nsym ? c0 + CHUNK16 : nsym;
        for (u64 i = c0 + threadIdx.x; i < c1; i += THREADS) {
            const u32 sym = __ldg(w + i);  // bytes 2i, 2i+1, little-endian
            if (sampled(2 * i, first, step, window)) atomicAdd(&h16[sym >> 1], 1u << (16 * (sym & 1)));
        }
        __syncthreads();
        for (u32 i = threadIdx.x; i < 32768; i += THREADS) {
            const u32 v = h16[i];
            if (v & 0xffff) atomicAdd(counts + 2 * i, (unsigned long long)(v & 0xffff));
            if (v >> 16) atomicAdd(counts + 2 * i + 1, (unsigned long long)(v >> 16));
        }
        __syncthreads();
    }
}

// Each block's bytes in the frame; `status` gets 1 if a block's size does
// not fit 32 bits (no valid frame then).
extern "C" __global__ void __launch_bounds__(HUFF_ENC_THREADS)
    huffman_block_sizes(const u8* data, u64 n, u32 block_bytes, u32 sb, u32 sub_log2, u32 ways_log2,
                        const u32* table, u32 nblocks, u32* sizes, u32* status) {
    __shared__ u64 warp_sums[THREADS / 32 + 1];
    for (u32 blk = blockIdx.x; blk < nblocks; blk += gridDim.x) {
        const u64 at = (u64)blk * block_bytes;
        const u64 len = n - at < block_bytes ? n - at : block_bytes;
        const u64 nsym = len / sb;
        u64 a, b;
        run_of(nsym, ways_log2, a, b);
        bool coded;
        const u64 bits = bits_of(data + at, a, b, sb, table, coded);
        const Scan s = block_scan(bits, coded, warp_sums);
        if (threadIdx.x == 0) {
            const Layout l = layout(s.total, len, s.all, sub_log2, ways_log2);
            if (l.bytes > 0xffffffffull) {
                atomicOr(status, 1u);
                sizes[blk] = 0;
            } else {
                sizes[blk] = (u32)l.bytes;
            }
        }
    }
}

// Each block's bytes at `offsets[blk]` of `out` (`out_len` bytes; the
// frame's head is already there).
extern "C" __global__ void __launch_bounds__(HUFF_ENC_THREADS)
    huffman_encode_blocks(const u8* data, u64 n, u32 block_bytes, u32 sb, u32 sub_log2, u32 ways_log2,
                          const u32* table, u32 nblocks, const u64* offsets, u8* out, u64 out_len, u32* status) {
    __shared__ u64 warp_sums[THREADS / 32 + 1];
    for (u32 blk = blockIdx.x; blk < nblocks; blk += gridDim.x) {
        const u64 at = (u64)blk * block_bytes;
        const u64 len = n - at < block_bytes ? n - at : block_bytes;
        const u8* src = data + at;
        const u64 nsym = len / sb;
        u64 a, b;
        run_of(nsym, ways_log2, a, b);
        bool coded;
        const u64 bits = bits_of(src, a, b, sb, table, coded);
        const Scan s = block_scan(bits, coded, warp_sums);
        const Layout l = layout(s.total, len, s.all, sub_log2, ways_log2);
        const u64 off = offsets[blk];
        // Uniform over the block: every thread sees the same offsets.
        if ((off & 3) || off > out_len || l.bytes > out_len - off) {
            if (threadIdx.x == 0) atomicOr(status, 1u);
            continue;
        }
        u8* o = out + off;
        u32* o4 = reinterpret_cast<u32*>(o);
        const bool tail = sb == 2 && (len & 1);
        if (l.raw) {
            if (threadIdx.x == 0) {
                o4[0] = KIND_RAW;
                o4[1] = (u32)len;
            }
            for (u64 i = threadIdx.x; i < align4(len); i += THREADS) o[BLOCK_FIXED + i] = i < len ? src[i] : 0;
            continue;
        }
        const u64 P = s.total;
        const u64 gaps_at = BLOCK_FIXED;
        const u32 V = 1u << ways_log2;
        const u64 payload_at = gaps_at + align4(l.gaps) + align4(2 * (V - 1));
        const u64 nwords = (P + 31) / 32;
        u32* payload = reinterpret_cast<u32*>(o + payload_at);
        if (threadIdx.x == 0) {
            o4[0] = KIND_HUFFMAN | (u32)tail << 8 | (tail ? (u32)src[len - 1] << 16 : 0u);
            o4[1] = (u32)P;
        }
        if (ways_log2 != 0) {
            // The directory: each of this thread's ways' bits but the
            // last way's (each fits 16 bits: HuffmanParams::check).
            u16* dir = reinterpret_cast<u16*>(o + BLOCK_FIXED);
            u32 v0, v1;
            ways_of(V, v0, v1);
            for (u32 v = v0; v < v1 && v + 1 < V; ++v) {
                u64 wa, wb;
                way_range(nsym, V, v, wa, wb);
                bool c;
                dir[v] = (u16)bits_of(src, wa, wb, sb, table, c);
            }
            // V - 1 entries, an odd count: one u16 of padding to 4 bytes.
            if (threadIdx.x == 0) dir[V - 1] = 0;
        }
        // Zeroes first: the gap array's padding, and the payload words the
        // atomicOr below completes.
        for (u64 i = l.gaps + threadIdx.x; i < align4(l.gaps); i += THREADS) o[gaps_at + i] = 0;
        for (u64 i = threadIdx.x; i < nwords; i += THREADS) payload[i] = 0;
        __syncthreads();
        const u64 S = sub_log2 ? 1ull << sub_log2 : 0;
        u8* gaps = o + gaps_at;
        // Boundaries from the first after this run's first codeword (the
        // one at bit 0 is thread 0's: its first codeword starts there).
        u64 pos = s.prefix;
        u64 j = S == 0 ? 0 : (threadIdx.x == 0 ? 0 : pos / S + 1);
        if (S != 0 && threadIdx.x == 0 && a < b && l.gaps > 0) {
            gaps[0] = 0;
            j = 1;
        }
        u64 acc = 0;
        u32 used = (u32)(pos & 31);  // bits of the current word before this run
        u64 wi = pos >> 5;
        const u64 first_word = wi;
        for (u64 i = a; i < b; ++i) {
            const u32 e = __ldg(table + symbol(src, i, sb));
            const u32 len_i = e & 31u, code = e >> 5;
            acc = acc << len_i | code;
            used += len_i;
            pos += len_i;
            // Every boundary this codeword reaches or passes: the next
            // codeword (or the payload's end) is its first start.
            while (S != 0 && j < l.gaps && j * S <= pos) {
                gaps[j] = (u8)(pos - j * S);
                ++j;
            }
            if (used >= 32) {
                used -= 32;
                const u32 word = (u32)(acc >> used);
                if (wi == first_word && (s.prefix & 31)) {
                    atomicOr(payload + wi, word);
                } else {
                    payload[wi] = word;
                }
                ++wi;
            }
        }
        if (used > 0 && a < b) {
            // The run's last bits share their word with the next run.
            atomicOr(payload + wi, (u32)(acc << (32 - used)));
        }
        __syncthreads();  // the block's stores before the next block reuses warp_sums
    }
}
