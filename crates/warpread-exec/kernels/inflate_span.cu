// Speculative parallel inflate of long deflate streams (rapidgzip's method
// on the device): the kernels behind `cuda/span_inflate.rs`, which runs the
// rounds and keeps the books (`warpread_codecs::deflate::speculative`).
//
//  1. inflate_find_block_starts: one block per span; its threads test
//     consecutive bit offsets for a dynamic or stored block header zlib
//     would accept, 256 at a time, and the span keeps the first.
//  2. inflate_decode_spans: one warp per span task, from its start to the
//     first block boundary at or past its stop (or its stop key), into its
//     slot of 16-bit symbols: bytes, or markers (256 + i) for byte i of the
//     32 KiB before the span, whose value is not known yet. All lanes run
//     the Huffman decoder on the same bits (no broadcasts); a short copy
//     whose source precedes its batch is written by the lane holding it,
//     any other by the whole warp at once (lane j writes byte j: its source
//     n - D + (j mod D) lies before the copy whatever the distance).
//  3. inflate_resolve_tails: one block walks a chained stream's spans in
//     order and resolves the last 32 KiB of each (their markers name bytes
//     of earlier tails, already resolved); inflate_resolve_markers then
//     writes every byte, a marker one hop away from its byte.
//
// The rules are those of the CPU reference `span::decode_span` (which is
// zlib's acceptance): symbols, slots, ends and keys are identical. Every
// input read is masked to the stream's bytes (zeros past its end, as on the
// CPU) and every slot write is checked against the slot's capacity.
#include "codag.cuh"
#include "deflate.cuh"

#ifndef SPAN_WARPS
#error "SPAN_WARPS must be defined by the launcher"
#endif
#ifndef SPAN_THREADS
#error "SPAN_THREADS must be defined by the launcher"
#endif
#ifndef SPAN_TAIL_THREADS
#error "SPAN_TAIL_THREADS must be defined by the launcher"
#endif

using namespace codag;
using namespace deflate;

namespace span {

constexpr u32 WINDOW = 32768;
constexpr u32 MARKER = 256;
constexpr u64 NO_STOP = ~0ull;
constexpr u32 LIT_BITS = 10;
constexpr u32 DIST_BITS = 8;
// Each warp of the span decoder (SPAN_WARPS a block) keeps its last WIN
// symbols in shared memory, where most copies read their source.
constexpr u32 WIN = 8192;
constexpr u32 WIN_MASK = WIN - 1;
// Copies reaching back at most this far read the window: no write of their
// batch (literals first, then copies in order) lands on a slot they read.
// A batch of symbols ends once its output passes BATCH_OUT (so it writes
// at most BATCH_OUT + 258 symbols).
constexpr u32 BATCH_OUT = 1024;
constexpr u32 WIN_REACH = WIN - BATCH_OUT - 258 - 258 - 32;

enum End : u32 { STOPPED = 0, FINAL = 1, CORRUPT = 2, TRUNCATED = 3, TOO_LARGE = 4 };

// Mirrors `cuda::span_inflate::DeviceJob` (16 bytes).
struct Job {
    u64 in_off;
    u64 in_len;
};

// Mirrors `cuda::span_inflate::DeviceTask` (48 bytes).
struct Task {
    u64 start_bit;
    u64 stop_bit;
    u64 stop_key;
    u64 slot_at;   // first symbol of the task's slot in the scratch
    u64 slot_len;  // symbols the slot holds
    u32 job;
    u32 first;
};

// Mirrors `warpread_codecs::deflate::span::SpanResult` (32 bytes).
struct Result {
    u64 end_bit;
    u64 end_key;
    u64 produced;
    u32 end;
    u32 capped;
};

__constant__ u8 CL_ORDER[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

// ---------------------------------------------------------------------------
// Bits of one stream, least significant first, zeros outside its bytes.

struct BitIn {
    const u8* lo;  // the stream's first byte
    u64 len;       // its bytes
    u64 pos;       // bits consumed
    u64 cw;        // address of the cached aligned word pair (~0: none)
    u64 cv;        // the pair
};

__device__ __forceinline__ BitIn bit_in(const u8* lo, u64 len, u64 pos) {
    BitIn b;
    b.lo = lo;
    b.len = len;
    b.pos = pos;
    b.cw = ~0ull;
    b.cv = 0;
    return b;
}

// The aligned word at address `a`, its bytes outside the stream read as 0.
__device__ __forceinline__ u32 word_at(const BitIn& b, u64 a) {
    const u64 L = (u64)b.lo, H = L + b.len;
    if (a >= L && a + 4 <= H) return *(const u32*)a;
    u32 v = 0;
#pragma unroll
    for (u32 i = 0; i < 4; i++) {
        const u64 x = a + i;
        if (x >= L && x < H) v |= (u32)(*(const u8*)x) << (8 * i);
    }
    return v;
}

__device__ __forceinline__ u32 peek32(BitIn& b) {
    const u64 byte = (u64)b.lo + (b.pos >> 3);
    const u64 a = byte & ~3ull;
    if (a != b.cw) {
        if (b.cw != ~0ull && a == b.cw + 4)
            b.cv = (b.cv >> 32) | ((u64)word_at(b, a + 4) << 32);
        else
            b.cv = (u64)word_at(b, a) | ((u64)word_at(b, a + 4) << 32);
        b.cw = a;
    }
    return (u32)(b.cv >> ((byte & 3) * 8 + (b.pos & 7)));
}

__device__ __forceinline__ u32 take(BitIn& b, u32 n) {
    const u32 v = n == 0 ? 0 : peek32(b) & (0xffffffffu >> (32 - n));
    b.pos += n;
    return v;
}

__device__ __forceinline__ bool past_end(const BitIn& b) { return b.pos > 8 * b.len; }

__device__ __forceinline__ u8 byte_at(const BitIn& b, u64 i) { return i < b.len ? b.lo[i] : 0; }

// A faster reader for the symbol loop: the next bits in a 64-bit buffer,
// topped up a whole aligned word at a time (same zeros outside the stream).
struct Fast {
    u64 buf;   // the next `cnt` bits from `pos`
    u32 cnt;
    u32 nx;    // the word at `next`, loaded one refill ahead (its latency
               // hidden behind the symbols decoded meanwhile)
    u64 next;  // address of the next aligned word to add
    u64 pos;
};

__device__ __forceinline__ Fast fast_at(const BitIn& b) {
    const u64 byte = (u64)b.lo + (b.pos >> 3);
    const u64 a = byte & ~3ull;
    const u32 skip = (u32)((byte - a) * 8 + (b.pos & 7));
    Fast f;
    f.buf = ((u64)word_at(b, a) | ((u64)word_at(b, a + 4) << 32)) >> skip;
    f.cnt = 64 - skip;
    f.next = a + 8;
    f.nx = word_at(b, a + 8);
    f.pos = b.pos;
    return f;
}

__device__ __forceinline__ u32 fpeek(const BitIn& b, Fast& f) {
    if (f.cnt < 32) {
        f.buf |= (u64)f.nx << f.cnt;
        f.next += 4;
        f.cnt += 32;
        f.nx = word_at(b, f.next);
    }
    return (u32)f.buf;
}

__device__ __forceinline__ void fconsume(Fast& f, u32 n) {
    f.buf >>= n;
    f.cnt -= n;
    f.pos += n;
}

// `span::block_key`: a stored block's key is the byte of its LEN and its
// final bit (odd), any other block's its bit offset times 4.
__device__ __forceinline__ u64 block_key(BitIn& b, u64 bit) {
    const u64 save = b.pos;
    b.pos = bit;
    const u32 head = peek32(b);
    b.pos = save;
    if (((head >> 1) & 3) == 0) return (((bit + 3 + 7) / 8) << 3) | ((u64)(head & 1) << 1) | 1;
    return bit << 2;
}

// ---------------------------------------------------------------------------
// Codes (zlib's `inflate_table` rules: over-subscribed codes are errors,
// incomplete ones too unless a single code of length 1; the code-length
// code must be complete; an empty distance code is allowed).

enum Kind : u32 { CODES = 0, LENS = 1, DISTS = 2 };

__device__ bool lengths_form_code(const u8* lens, u32 n, u32 kind) {
    u32 count[16];
#pragma unroll
    for (u32 i = 0; i < 16; i++) count[i] = 0;
    for (u32 i = 0; i < n; i++) count[lens[i]]++;
    u32 max = 15;
    while (max > 0 && count[max] == 0) max--;
    if (max == 0) return kind != CODES;
    int left = 1;
    for (u32 l = 1; l <= 15; l++) {
        left = (left << 1) - (int)count[l];
        if (left < 0) return false;
    }
    return !(left > 0 && (kind == CODES || max != 1));
}

// Canonical decoding bit by bit from `count` and `sorted`: the symbol, its
// length in bits 16-20, or ~0 for a pattern that is no code.
__device__ __forceinline__ u32 decode_walk(u32 bits, const u16* count, const u16* sorted) {
    int code = 0, first = 0, index = 0;
    for (u32 len = 1; len <= 15; len++) {
        code |= (bits >> (len - 1)) & 1;
        const int c = count[len];
        if (code - c < first) return (u32)sorted[index + code - first] | (len << 16);
        index += c;
        first = (first + c) << 1;
        code <<= 1;
    }
    return ~0u;
}

// Counts and sorted symbols (canonical order) of a code whose lengths
// `lengths_form_code` accepted.
__device__ void build_code(const u8* lens, u32 n, u16* count, u16* sorted) {
    u16 offs[17];
    for (u32 i = 0; i < 16; i++) count[i] = 0;
    for (u32 i = 0; i < n; i++) count[lens[i]]++;
    count[0] = 0;
    offs[1] = 0;
    for (u32 l = 1; l < 16; l++) offs[l + 1] = offs[l] + count[l];
    for (u32 s = 0; s < n; s++) {
        const u32 l = lens[s];
        if (l != 0) sorted[offs[l]++] = (u16)s;
    }
}

// HLIT, HDIST, HCLEN, the code-length code and the lengths it codes
// (`header::read_lengths`): false if zlib would reject them.
__device__ bool read_lengths(BitIn& b, u8* lens, u32& nlen, u32& ndist) {
    nlen = take(b, 5) + 257;
    ndist = take(b, 5) + 1;
    const u32 ncode = take(b, 4) + 4;
    if (nlen > 286 || ndist > 30) return false;
    u8 cl[19];
    for (u32 i = 0; i < 19; i++) cl[i] = 0;
    for (u32 i = 0; i < ncode; i++) cl[CL_ORDER[i]] = (u8)take(b, 3);
    if (!lengths_form_code(cl, 19, CODES)) return false;
    u16 cl_count[16], cl_sorted[19];
    build_code(cl, 19, cl_count, cl_sorted);
    const u32 total = nlen + ndist;
    u32 have = 0;
    // Kraft sums of both codes so far (units of 2^-15): an over-subscribed
    // code is rejected at once (most offsets the finder tests end here).
    u32 used_lit = 0, used_dist = 0;
    while (have < total) {
        if (past_end(b)) return false;
        const u32 e = decode_walk(peek32(b), cl_count, cl_sorted);
        if (e == ~0u) return false;
        b.pos += e >> 16;
        const u32 sym = e & 0xffff;
        u32 value, repeat;
        if (sym < 16) {
            value = sym;
            repeat = 1;
        } else if (sym == 16) {
            if (have == 0) return false;
            value = lens[have - 1];
            repeat = 3 + take(b, 2);
        } else if (sym == 17) {
            value = 0;
            repeat = 3 + take(b, 3);
        } else {
            value = 0;
            repeat = 11 + take(b, 7);
        }
        if (have + repeat > total) return false;
        for (u32 i = 0; i < repeat; i++) lens[have + i] = (u8)value;
        if (value != 0) {
            const u32 lit = have < nlen ? min(repeat, nlen - have) : 0;
            used_lit += lit << (15 - value);
            used_dist += (repeat - lit) << (15 - value);
            if (used_lit > 32768 || used_dist > 32768) return false;
        }
        have += repeat;
    }
    return !past_end(b) && lens[256] != 0;
}

// `block_start::is_dynamic_start`, after the 13-bit prefilter.
__device__ bool is_dynamic_start(const u8* lo, u64 len, u64 bit) {
    BitIn b = bit_in(lo, len, bit + 3);
    u8 lens[320];
    u32 nlen, ndist;
    if (!read_lengths(b, lens, nlen, ndist)) return false;
    return lengths_form_code(lens, nlen, LENS) && lengths_form_code(lens + nlen, ndist, DISTS);
}

// `block_start::is_stored_start`, after the header and padding checks.
__device__ bool is_stored_start(const u8* lo, u64 len, u64 bit) {
    const BitIn b = bit_in(lo, len, bit);
    const u64 at = (bit + 3 + 7) / 8;
    const u32 l = byte_at(b, at) | (u32)byte_at(b, at + 1) << 8;
    const u32 nl = byte_at(b, at + 2) | (u32)byte_at(b, at + 3) << 8;
    return l == (~nl & 0xffff) && at + 4 + l <= len;
}

// The code-length code of a dynamic header whose first 17 bits are the
// low bits of `h` and whose code lengths start at the low bits of `cl` is
// complete (zlib rejects any other), from registers alone.
__device__ __forceinline__ bool code_length_code_complete(u64 h, u64 cl) {
    const u32 ncode = ((h >> 13) & 15) + 4;
    u32 sum = 0;
#pragma unroll
    for (u32 i = 0; i < 19; i++) {
        const u32 l = (u32)(cl >> (3 * i)) & 7;
        if (i < ncode && l != 0) sum += 128u >> l;
    }
    return sum == 128;
}

// The 13 header bits at the low end of `h` may start a dynamic block.
__device__ __forceinline__ bool dynamic_prefilter(u64 h) {
    return ((h >> 1) & 3) == 2 && ((h >> 3) & 31) <= 29 && ((h >> 8) & 31) <= 29;
}

// The low bits of `h` (at bit offset `bit`) may start a stored block:
// BTYPE 0 and zeros up to the byte boundary.
__device__ __forceinline__ bool stored_prefilter(u64 h, u64 bit) {
    const u32 pad = (8 - ((bit + 3) & 7)) & 7;
    return ((h >> 1) & 3) == 0 && ((h >> 3) & ((1u << pad) - 1)) == 0;
}

// ---------------------------------------------------------------------------
// Decoding a span.

// Table entries: deflate.cuh's format. Here a K_BAD entry for symbol
// 286/287 or distance 30/31 consumes its code's bits, and one where no
// code matches consumes 0.
//
// Entry of symbol `sym` with a code of `len` bits; KIND 0: literal/length,
// 1: distance.
template <int KIND>
__device__ __forceinline__ u32 make_entry(u32 sym, u32 len) {
    if (KIND == 0) {
        return lit_len_entry(sym, len, K_BAD | len);
    } else {
        return dist_entry(sym, len, K_BAD | len);
    }
}

// Canonical decoding of a code longer than the table's `tbits` bits from
// the next bits `lo` (at least 15 valid): `first` is the canonical code of
// the first code of tbits + 1 bits, `index` its place in `sorted`. The
// entry of its symbol, or K_BAD (0 bits) where no code matches
// (`decode_walk`'s ~0: no code of at most tbits bits matches here either).
template <int KIND>
__device__ __forceinline__ u32 decode_long(u32 lo, const u16* count, const u16* sorted, u32 first, u32 index,
                                           u32 tbits) {
    const u32 rev = __brev(lo);
    for (u32 l = tbits + 1; l <= 15; l++) {
        const u32 code = rev >> (32 - l);
        const u32 cnt = count[l];
        if (code - first < cnt) return make_entry<KIND>(sorted[index + code - first], l);
        index += cnt;
        first = (first + cnt) << 1;
    }
    return K_BAD;
}

struct Tables {
    u32 lit[1 << LIT_BITS];
    u32 dist[1 << DIST_BITS];
    u16 lit_count[16];
    u16 dist_count[16];
    u16 lit_sorted[288];
    u16 dist_sorted[32];
    u16 lit_first, lit_index;  // decode_long's start (first code and index of LIT_BITS + 1 bits)
    u16 dist_first, dist_index;
    u8 lens[320];
};

// The lookup table of `tbits` bits of a code whose counts and sorted
// symbols `build_code` made, by the whole warp: every entry K_SLOW, then
// each code of at most tbits bits fills its 2^(tbits - len) entries (the
// (symbol, replica) pairs of one length spread over the lanes); and
// decode_long's start. The caller orders it before the lookups.
template <int KIND>
__device__ __forceinline__ void fill_table(const u16* count, const u16* sorted, u32* table, u32 tbits, u16& first,
                                           u16& index) {
    const u32 lane = threadIdx.x & 31;
    for (u32 i = lane; i < (1u << tbits); i += 32) table[i] = K_SLOW;
    __syncwarp();
    u32 code = 0, pos = 0;
    for (u32 l = 1; l <= tbits; l++) {
        const u32 cnt = count[l];
        const u32 rbits = tbits - l;
        for (u32 i = lane; i < (cnt << rbits); i += 32) {
            const u32 k = i >> rbits;
            const u32 rev = __brev(code + k) >> (32 - l);
            table[rev | ((i & ((1u << rbits) - 1)) << l)] = make_entry<KIND>(sorted[pos + k], l);
        }
        code = (code + cnt) << 1;
        pos += cnt;
    }
    if (lane == 0) {
        first = (u16)code;
        index = (u16)pos;
    }
}

// Lane 0 reads a block's header and builds its codes; the warp then
// shares the outcome (0 ok, else an End) and fills the lookup tables.
__device__ __noinline__ u32 start_block(BitIn& b, u32 type, Tables& t) {
    const u32 lane = threadIdx.x & 31;
    u32 status = 0;
    u64 pos = b.pos;
    // The previous block's lookups are done before lane 0 rewrites the tables.
    __syncwarp();
    if (lane == 0) {
        u32 nlen = 288, ndist = 32;
        if (type == 1) {
            for (u32 i = 0; i < 288; i++) t.lens[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
            for (u32 i = 0; i < 32; i++) t.lens[288 + i] = 5;
        } else if (!read_lengths(b, t.lens, nlen, ndist) || !lengths_form_code(t.lens, nlen, LENS) ||
                   !lengths_form_code(t.lens + nlen, ndist, DISTS)) {
            status = past_end(b) ? TRUNCATED : CORRUPT;
        }
        if (status == 0) {
            build_code(t.lens, nlen, t.lit_count, t.lit_sorted);
            build_code(t.lens + nlen, ndist, t.dist_count, t.dist_sorted);
        }
        pos = b.pos;
    }
    __syncwarp();
    status = __shfl_sync(FULL_MASK, status, 0);
    if (status == 0) {
        fill_table<0>(t.lit_count, t.lit_sorted, t.lit, LIT_BITS, t.lit_first, t.lit_index);
        fill_table<1>(t.dist_count, t.dist_sorted, t.dist, DIST_BITS, t.dist_first, t.dist_index);
        __syncwarp();
    }
    const u32 plo = __shfl_sync(FULL_MASK, (u32)pos, 0);
    const u32 phi = __shfl_sync(FULL_MASK, (u32)(pos >> 32), 0);
    b.pos = ((u64)phi << 32) | plo;
    return status;
}

enum Stop : u32 { BLOCK_DONE = 0, S_CORRUPT = 1, S_TRUNCATED = 2, S_FULL = 3 };

__device__ __forceinline__ u32 stored_block(BitIn& b, u16* out, u16* win, u64 cap, u64& n) {
    const u32 lane = threadIdx.x & 31;
    b.pos = (b.pos + 7) & ~7ull;
    const u32 len = take(b, 16);
    const u32 nlen = take(b, 16);
    if (past_end(b)) return S_TRUNCATED;
    if (len != (~nlen & 0xffff)) return S_CORRUPT;
    const u64 at = b.pos / 8;
    if (at + len > b.len) return S_TRUNCATED;
    if (n + len > cap) return S_FULL;
    for (u32 j = lane; j < len; j += 32) {
        const u16 v = b.lo[at + j];
        out[n + j] = v;
        win[(n + j) & WIN_MASK] = v;
    }
    n += len;
    b.pos += 8ull * len;
    return BLOCK_DONE;
}

// Copies of at most PAR_MAX symbols whose source lies wholly before their
// batch are written by the lane holding them, all at once.
constexpr u32 PAR_MAX = 32;
constexpr u32 PAR_CHUNK = 16;  // symbols a lane loads before it stores them

// The symbol a copy reads at `src` (< 0: a marker for the window before the
// span): from the window when NEAR (distance <= WIN_REACH), else from the
// slot.
template <bool NEAR>
__device__ __forceinline__ u16 copy_src(const u16* out, const u16* win, i64 src) {
    return src < 0 ? (u16)(MARKER + WINDOW + src) : NEAR ? win[src & WIN_MASK] : out[src];
}

// Symbols j = j0, j0 + stride, .. < L of a copy from s0 + (j mod D) to d0 +
// j, one at a time, r = j0 mod D and step = stride mod D (< D): the copies
// reaching before the span (markers; only in its first WINDOW symbols).
__device__ __forceinline__ void copy_slow(u16* out, u16* win, i64 s0, u64 d0, u32 j0, u32 stride, u32 L,
                                          u32 r, u32 step, u32 D, bool near) {
    for (u32 j = j0; j < L; j += stride) {
        const u16 v = near ? copy_src<true>(out, win, s0 + r) : copy_src<false>(out, win, s0 + r);
        out[d0 + j] = v;
        win[(d0 + j) & WIN_MASK] = v;
        r += step;
        if (r >= D) r -= D;
    }
}

// One lane's copy of L <= PAR_MAX symbols from `s` (>= 0, all before the
// batch, D >= L: no symbol of the copy is its own source) to `d0`:
// PAR_CHUNK loads in flight, then their stores.
// (Window slots from 32-bit positions: (x + j) mod WIN of the low word.)
template <bool NEAR>
__device__ __forceinline__ void copy_lane(u16* out, u16* win, u64 s, u64 d0, u32 L) {
    const u16* sp = out + s;
    u16* dp = out + d0;
    const u32 ws = (u32)s, wd = (u32)d0;
    for (u32 j0 = 0; j0 < L; j0 += PAR_CHUNK) {
        u32 v[PAR_CHUNK];
#pragma unroll
        for (u32 i = 0; i < PAR_CHUNK; i++) {
            v[i] = 0;
            if (j0 + i < L) v[i] = NEAR ? win[(ws + j0 + i) & WIN_MASK] : sp[j0 + i];
        }
#pragma unroll
        for (u32 i = 0; i < PAR_CHUNK; i++)
            if (j0 + i < L) {
                dp[j0 + i] = (u16)v[i];
                win[(wd + j0 + i) & WIN_MASK] = (u16)v[i];
            }
    }
}

// A copy by the whole warp: symbol j (lane + 32 t) of L from p - D + (j mod
// D), always before p: written before this copy (by earlier barriers) and
// no write of the copy lands on it (out: positions >= p; window: see
// WIN_REACH), so every load of the copy is issued before its stores. j mod
// D without a division per symbol: r = lane mod D, then + 32 mod D a step.
template <bool NEAR>
__device__ __forceinline__ void copy_warp(u16* out, u16* win, u64 p, u32 D, u32 L) {
    const u32 lane = threadIdx.x & 31;
    const i64 s0 = (i64)p - (i64)D;
    if (L <= 32) {
        if (lane < L) {
            const u32 r = lane < D ? lane : lane % D;
            const u16 v = copy_src<NEAR>(out, win, s0 + r);
            out[p + lane] = v;
            win[(p + lane) & WIN_MASK] = v;
        }
        return;
    }
    // r = j mod D for every j < L (r < D and step < D: one subtraction a
    // step). D >= L: r = j throughout (j < D). 32 <= D < L: lane mod D =
    // lane, 32 mod D = 32 (0 for D = 32).
    u32 r = lane, step = D == 32 ? 0 : 32;
    if (D < 32) {
        r = lane % D;
        step = 32 % D;
    }
    constexpr u32 T = (258 + 31) / 32;
    if (s0 < 0) {
        copy_slow(out, win, s0, p, lane, 32, L, r, step, D, NEAR);
        return;
    }
    const u16* sp = out + s0;
    u16* dp = out + p + lane;
    const u32 ws = (u32)s0, wd = (u32)p + lane;
    u32 v[T];
#pragma unroll
    for (u32 t = 0; t < T; t++) {
        v[t] = 0;
        if (lane + 32 * t < L) v[t] = NEAR ? win[(ws + r) & WIN_MASK] : sp[r];
        r += step;
        if (r >= D) r -= D;
    }
#pragma unroll
    for (u32 t = 0; t < T; t++)
        if (lane + 32 * t < L) {
            dp[32 * t] = (u16)v[t];
            win[(wd + 32 * t) & WIN_MASK] = (u16)v[t];
        }
}

// Batches: all lanes decode up to 32 symbols (token k parked in lane k's
// registers, nothing written), then the batch is written: every literal and
// every short copy whose source lies wholly before the batch by its lane at
// once, then the other copies in order, each by the whole warp. A batch
// ends once its output passes BATCH_OUT, so no write of a batch lands on a
// window slot that one of its copies reads (see WIN_REACH).
__device__ __forceinline__ u32 compressed_block(BitIn& b, const Tables& t, bool first, u16* out,
                                                u16* win, u64 cap, u64& n) {
    const u32 lane = threadIdx.x & 31;
    Fast f = fast_at(b);
    const u64 end_bits = 8 * b.len;
    for (;;) {
        // Output positions as offsets from n (the batch's first): a batch
        // spans at most BATCH_OUT + 258 symbols. m = n + mo; the capacity
        // checks m == cap and m + L > cap against room = cap - n (n <= cap;
        // saturated: an offset never reaches 2^32 - 1), the distance check
        // D > m against min(n, 65536) (D <= 32768).
        const u64 left = cap - n;
        const u32 room = left > 0xffffffffull ? 0xffffffffu : (u32)left;
        const u32 nlo = n < 65536 ? (u32)n : 65536u;
        u32 kind = 0, val = 0, dist = 0, off = 0;  // kind: 0 none, 1 literal, 2 copy
        u32 mo = 0;
        u32 stop = BLOCK_DONE;
        bool more = true;
        for (u32 k = 0; k < 32 && mo <= BATCH_OUT; k++) {
            // One lookup and one consume: a literal, or a length code and
            // its extra bits (>= 32 bits peeked: <= 15 + 5).
            u32 lo = fpeek(b, f);
            u32 e = t.lit[lo & ((1u << LIT_BITS) - 1)];
            if (e & K_SLOW) e = decode_long<0>(lo, t.lit_count, t.lit_sorted, t.lit_first, t.lit_index, LIT_BITS);
            fconsume(f, e & 31);  // (no code: 0 bits)
            if (f.pos > end_bits) {
                // Where the symbol-at-a-time order stops: within the code, at
                // its end; else (a length code within the stream, its extra
                // bits past it) past the distance code and its extra bits
                // it reads next (a bad one: its code; none: nothing).
                stop = S_TRUNCATED;
                more = false;
                const u32 x = (e >> 5) & 31;
                if (f.pos - x > end_bits) {
                    f.pos -= x;
                } else {
                    lo = fpeek(b, f);
                    u32 d = t.dist[lo & ((1u << DIST_BITS) - 1)];
                    if (d & K_SLOW)
                        d = decode_long<1>(lo, t.dist_count, t.dist_sorted, t.dist_first, t.dist_index, DIST_BITS);
                    fconsume(f, d & 31);
                }
                break;
            }
            if ((e & K_MASK) == K_LIT) {
                if (mo == room) {
                    stop = S_FULL;
                    more = false;
                    break;
                }
                if (lane == k) {
                    kind = 1;
                    val = e >> 16;
                    off = mo;
                }
                mo++;
                continue;
            }
            if ((e & K_MASK) != K_LEN) {
                // End of block, or symbol 286/287 or no code (K_BAD).
                if (e & K_BAD) stop = S_CORRUPT;
                more = false;
                break;
            }
            const u32 L = entry_value(e, lo);
            // The distance code and its extra bits (<= 15 + 13; refilled).
            lo = fpeek(b, f);
            u32 d = t.dist[lo & ((1u << DIST_BITS) - 1)];
            if (d & K_SLOW)
                d = decode_long<1>(lo, t.dist_count, t.dist_sorted, t.dist_first, t.dist_index, DIST_BITS);
            fconsume(f, d & 31);  // (distance 30/31: its code; no code: 0 bits)
            if (d & K_BAD) {
                stop = (f.pos > end_bits) ? S_TRUNCATED : S_CORRUPT;
                more = false;
                break;
            }
            const u32 D = entry_value(d, lo);
            if (f.pos > end_bits) {
                stop = S_TRUNCATED;
                more = false;
                break;
            }
            if (first && D > nlo + mo) {
                stop = S_CORRUPT;
                more = false;
                break;
            }
            if (mo + L > room) {
                stop = S_FULL;
                more = false;
                break;
            }
            if (lane == k) {
                kind = 2;
                val = L;
                dist = D;
                off = mo;
            }
            mo += L;
        }
        // Every symbol a copy reads was written before it: earlier batches
        // (ordered by this barrier); a lane's own copy reads only those
        // (its source ends before the batch: p - D + L <= n); the ordered
        // copies also this batch's literals, lane copies (written first) and
        // earlier ordered copies (each copy starts with a barrier).
        __syncwarp();
        const bool par = kind == 2 && val <= PAR_MAX && dist >= off + val;
        if (kind == 1) {
            out[n + off] = (u16)val;
            win[(n + off) & WIN_MASK] = (u16)val;
        } else if (par) {
            const i64 s0 = (i64)(n + off) - (i64)dist;
            if (s0 < 0)  // (r = j < L <= D throughout)
                copy_slow(out, win, s0, n + off, 0, 1, val, 0, 1, dist, dist <= WIN_REACH);
            else if (dist <= WIN_REACH)
                copy_lane<true>(out, win, (u64)s0, n + off, val);
            else
                copy_lane<false>(out, win, (u64)s0, n + off, val);
        }
        u32 copies = __ballot_sync(FULL_MASK, kind == 2 && !par);
        if (copies) {
            const u32 lo = val | (off << 16);  // L < 2^9, off <= BATCH_OUT
            do {
                const u32 c = __ffs(copies) - 1;
                copies &= copies - 1;
                const u32 a = __shfl_sync(FULL_MASK, lo, c);
                const u32 D = __shfl_sync(FULL_MASK, dist, c);
                const u32 L = a & 0xffff;
                const u64 p = n + (a >> 16);
                __syncwarp();
                if (D <= WIN_REACH)
                    copy_warp<true>(out, win, p, D, L);
                else
                    copy_warp<false>(out, win, p, D, L);
            } while (copies);
        }
        n += mo;
        if (!more) {
            b.pos = f.pos;
            return stop;
        }
    }
}

__device__ void decode_span(const u8* in, const Job& job, const Task& task, u16* scratch, Tables& t,
                            u16* win, Result& res) {
    const u32 lane = threadIdx.x & 31;
    BitIn b = bit_in(in + job.in_off, job.in_len, task.start_bit);
    u16* out = scratch + task.slot_at;
    const u64 cap = task.slot_len;
    u64 n = 0;
    u32 blocks = 0;
    u32 end = CORRUPT, capped = 0;
    u64 end_bit = 0, produced = 0;
    for (;;) {
        const u64 bit = b.pos;
        if (blocks > 0 && (bit >= task.stop_bit || block_key(b, bit) == task.stop_key)) {
            end = STOPPED;
            end_bit = bit;
            produced = n;
            break;
        }
        const u64 block_n = n;
        const u32 head = take(b, 3);
        const u32 type = head >> 1;
        u32 stop;
        if (type == 0) {
            stop = stored_block(b, out, win, cap, n);
        } else if (type == 3) {
            stop = S_CORRUPT;
        } else {
            // Through a copy: `b` stays in registers (start_block is not
            // inlined, and an address taken would put `b` in local memory).
            BitIn hb = b;
            const u32 s = start_block(hb, type, t);
            b.pos = hb.pos;
            stop = s == TRUNCATED ? S_TRUNCATED
                   : s != 0       ? S_CORRUPT
                                  : compressed_block(b, t, task.first != 0, out, win, cap, n);
        }
        if (stop == S_FULL) {
            end = blocks == 0 ? TOO_LARGE : STOPPED;
            capped = blocks == 0 ? 0 : 1;
            end_bit = bit;
            produced = block_n;
            break;
        }
        if (stop != BLOCK_DONE) {
            end = stop == S_TRUNCATED ? TRUNCATED : CORRUPT;
            end_bit = b.pos;
            produced = n;
            break;
        }
        blocks++;
        if (head & 1) {
            end = FINAL;
            end_bit = b.pos;
            produced = n;
            break;
        }
    }
    __syncwarp();
    if (lane == 0) {
        res.end_bit = end_bit;
        res.end_key = end == STOPPED ? block_key(b, end_bit) : 0;
        res.produced = produced;
        res.end = end;
        res.capped = capped;
    }
}

// The chain index holding output byte `g` (starts ascending, starts[0] = 0).
__device__ __forceinline__ u32 span_of(const u64* starts, u32 count, u64 g) {
    u32 lo = 0, hi = count;
    while (hi - lo > 1) {
        const u32 mid = (lo + hi) / 2;
        if (starts[mid] <= g)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

}  // namespace span

using namespace span;

// Each thread tests 32 consecutive bit offsets from one 64-bit window
// (the cheap prefilters), the few that pass in full; a block tests 8192
// offsets per step and stops at the first step that holds a dynamic
// candidate. Stored candidates count only where a span has no dynamic one
// (`block_start::find_block_start`).
extern "C" __global__ void __launch_bounds__(SPAN_THREADS)
    inflate_find_block_starts(const u8* in, const Job* jobs, const u32* span_job, const u64* span_bit,
                              u32 n_spans, u64 span_bits, u64* found) {
    __shared__ unsigned long long best_dynamic, best_stored;
    const u32 s = blockIdx.x;
    if (s >= n_spans) return;
    const Job job = jobs[span_job[s]];
    const u8* lo = in + job.in_off;
    const u64 from = span_bit[s];
    const u64 end = min(from + span_bits, 8 * job.in_len);
    if (threadIdx.x == 0) {
        best_dynamic = NO_STOP;
        best_stored = NO_STOP;
    }
    __syncthreads();
    for (u64 base = from; base < end; base += 32 * blockDim.x) {
        const u64 first = base + 32 * threadIdx.x;
        if (first < end) {
            // 128 bits from `first`: every test below reads at most 17 + 57
            // bits from an offset below first + 32.
            BitIn b = bit_in(lo, job.in_len, first);
            u64 w0 = peek32(b);
            b.pos += 32;
            w0 |= (u64)peek32(b) << 32;
            b.pos += 32;
            u64 w1 = peek32(b);
            b.pos += 32;
            w1 |= (u64)peek32(b) << 32;
            u64 dyn = NO_STOP, sto = NO_STOP;
            for (u32 k = 0; k < 32 && first + k < end; k++) {
                const u64 h = k == 0 ? w0 : (w0 >> k) | (w1 << (64 - k));
                const u64 bit = first + k;
                if (dynamic_prefilter(h) && code_length_code_complete(h, (w0 >> (k + 17)) | (w1 << (47 - k))) &&
                    is_dynamic_start(lo, job.in_len, bit)) {
                    dyn = bit;
                    break;
                }
                if (sto == NO_STOP && stored_prefilter(h, bit) && is_stored_start(lo, job.in_len, bit))
                    sto = bit;
            }
            if (dyn != NO_STOP) atomicMin(&best_dynamic, dyn);
            if (sto != NO_STOP) atomicMin(&best_stored, sto);
        }
        __syncthreads();
        if (best_dynamic != NO_STOP) break;
    }
    if (threadIdx.x == 0) found[s] = best_dynamic != NO_STOP ? best_dynamic : best_stored;
}

extern "C" __global__ void __launch_bounds__(SPAN_WARPS * 32)
    inflate_decode_spans(const u8* in, const Job* jobs, const Task* tasks, u32 n_tasks, u16* scratch,
                         Result* results) {
    // Static shared memory stops at 48 KiB (more needs an opt-in at launch).
    static_assert(SPAN_WARPS * (sizeof(Tables) + WIN * sizeof(u16)) <= 48 * 1024,
                  "the span decoder's shared memory");
    __shared__ Tables tables[SPAN_WARPS];
    __shared__ u16 windows[SPAN_WARPS][WIN];
    const u32 w = threadIdx.x / 32;
    const u32 i = blockIdx.x * SPAN_WARPS + w;
    if (i >= n_tasks) return;
    const Task task = tasks[i];
    decode_span(in, jobs[task.job], task, scratch, tables[w], windows[w], results[i]);
}

// One round of resolving the chain's spans' last WINDOW symbols all at
// once: a marker is followed up to 4 hops back (each into an earlier span)
// and replaced where that ends at a byte; `pending` is set where it does
// not. Rounds repeat until none is pending (chains of markers through
// several spans' tails take as many rounds as hops / 4), and a chain still
// pending after a few rounds falls back to `inflate_resolve_tails`.
extern "C" __global__ void __launch_bounds__(SPAN_THREADS)
    inflate_resolve_tails_round(u16* scratch, const u64* chain_slot, const u64* chain_start, u32 count,
                                u64 total, u32* pending, u32* error) {
    const u64 n = (u64)count * WINDOW;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        const u32 t = (u32)(i / WINDOW);
        const u64 start = chain_start[t];
        const u64 len = (t + 1 < count ? chain_start[t + 1] : total) - start;
        const u64 tail = len < WINDOW ? len : WINDOW;
        const u64 k = i % WINDOW;
        if (k >= tail) continue;
        const u64 e = len - tail + k;
        u16* sym = scratch + chain_slot[t] + e;
        u32 v = *sym;
        u64 s0 = start;
        for (u32 hop = 0; hop < 4 && v >= MARKER; hop++) {
            const u64 back = s0 + (v - MARKER);
            if (back < WINDOW) {
                atomicOr(error, 1u);
                v = 0;
                break;
            }
            const u64 g = back - WINDOW;
            const u32 u = span_of(chain_start, count, g);
            s0 = chain_start[u];
            v = scratch[chain_slot[u] + (g - s0)];
        }
        if (v >= MARKER)
            atomicOr(pending, 1u);
        else
            *sym = (u16)v;
    }
}

// The chain's spans' last WINDOW symbols, span after span in stream order
// (one block): every marker there names a symbol of an earlier span's
// tail, resolved by the steps before. Afterwards every marker anywhere is
// one hop from its byte.
extern "C" __global__ void __launch_bounds__(SPAN_TAIL_THREADS)
    inflate_resolve_tails(u16* scratch, const u64* chain_slot, const u64* chain_start, u32 count,
                          u64 total, u32* error) {
    for (u32 t = 0; t < count; t++) {
        const u64 start = chain_start[t];
        const u64 len = (t + 1 < count ? chain_start[t + 1] : total) - start;
        const u64 from = len > WINDOW ? len - WINDOW : 0;
        u16* syms = scratch + chain_slot[t];
        for (u64 e = from + threadIdx.x; e < len; e += blockDim.x) {
            const u32 v = syms[e];
            if (v < MARKER) continue;
            const u64 back = start + (v - MARKER);
            u32 r = 0;
            if (back < WINDOW) {
                atomicOr(error, 1u);
            } else {
                const u64 g = back - WINDOW;
                const u32 u = span_of(chain_start, count, g);
                r = scratch[chain_slot[u] + (g - chain_start[u])];
                if (r >= MARKER) {
                    atomicOr(error, 1u);
                    r = 0;
                }
            }
            syms[e] = (u16)r;
        }
        __syncthreads();
    }
}

// Every output byte of a chained stream, markers resolved through the
// finished tails (one hop).
extern "C" __global__ void __launch_bounds__(SPAN_THREADS)
    inflate_resolve_markers(const u16* scratch, const u64* chain_slot, const u64* chain_start, u32 count,
                            u64 total, u8* out, u32* error) {
    for (u64 p = blockIdx.x * (u64)blockDim.x + threadIdx.x; p < total; p += (u64)gridDim.x * blockDim.x) {
        const u32 t = span_of(chain_start, count, p);
        const u64 start = chain_start[t];
        u32 v = scratch[chain_slot[t] + (p - start)];
        if (v >= MARKER) {
            const u64 back = start + (v - MARKER);
            if (back < WINDOW) {
                atomicOr(error, 1u);
                v = 0;
            } else {
                const u64 g = back - WINDOW;
                const u32 u = span_of(chain_start, count, g);
                v = scratch[chain_slot[u] + (g - chain_start[u])];
                if (v >= MARKER) {
                    atomicOr(error, 1u);
                    v = 0;
                }
            }
        }
        out[p] = (u8)v;
    }
}
