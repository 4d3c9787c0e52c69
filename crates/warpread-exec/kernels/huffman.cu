// Huffman decoding (docs/huffman-format.md): one thread block per block of
// a frame. A block in ways (format version 2, E²MC's parallel decoding
// ways) is decoded by decode_ways in either kernel: each thread decodes a
// contiguous share of the ways once, writing as it goes. Otherwise
// HUFF_THREADS threads each decode one contiguous range of the block's
// bits, and the two decoders of cuSZ differ only in where a thread's range
// starts:
//
// - huffman_gap: at the first codeword of its first subsequence, read from
//   the block's gap array (Yamamoto et al.'s gap arrays);
// - huffman_sync: at an arbitrary bit, then corrected until each thread
//   starts where its left neighbour's walk ends (Weissenberger and
//   Schmidt's self-synchronization). A round re-walks only the threads
//   whose start moved; by induction thread r is exact after round r, so
//   at most HUFF_THREADS rounds of at most (range + 24) bits each are
//   ever walked, whatever the input.
//
// Then both run the same three steps: a checked walk that counts each
// range's codewords and notes the first problem in it; a block scan of the
// counts; a replay that writes the symbols straight into the output
// (ByteWriter: 16-byte stores once a thread's run is aligned, bytes at its
// edges). With no output staging, shared memory holds only the table, so
// eight blocks share an SM (registers decide) instead of the five a 32 KiB
// staging window allowed; measured faster on the H200 than staging, for
// every symbol width and both decoders (benchmarks/huffman.md).
//
// Statuses: the CPU reference (codecs/huffman/decode.rs) walks from bit 0
// and reports the first problem in bit order. Here thread t's walk is
// trustworthy only if every thread before it walked cleanly to where t
// starts, so the lowest thread with a problem (an overflow counts as one)
// names the block's status; that is the problem the CPU meets first.
//
// Tables: a 2^LUT_BITS-entry lookup table in shared memory decodes codes of
// up to LUT_BITS bits in one load, and for 8-bit symbols the code after it
// too when both fit the table's bits (text codes average 4-5 bits, so most
// loads give two symbols); longer codes compare against the per-length
// first codes (shared) and read their symbol from the code section in
// global memory (cached: every block of a frame shares it).
//
// Latency: a block's header words are loaded by many threads at once, the
// table is built from symbols staged in shared memory, and each thread's
// bit reader keeps words ahead in flight. A step's common path has no
// branch that differs between lanes: a pair or a single code is chosen by
// selects, and only rare events (a code past the table, a problem, a
// subsequence boundary) leave it.
#include "codag.cuh"

#ifndef HUFF_THREADS
#error "HUFF_THREADS must be defined by the launcher"
#endif

namespace huff {

using codag::ChunkJob;
using codag::ChunkStatus;
using codag::u16;
using codag::u32;
using codag::u64;
using codag::u8;

constexpr int THREADS = HUFF_THREADS;
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps, at most 1024 threads");
// 11 bits: a 12-bit table (16 KiB) measured 5-12% slower with 8-bit symbols
// on the H200, faster only for some 16-bit sets.
constexpr u32 LUT_BITS = 11;           // format.rs LUT_BITS
constexpr u32 MAX_LEN = 24;            // code.rs MAX_CODE_LEN
constexpr u32 CODE_FIXED = 8;          // format.rs CODE_FIXED_BYTES
constexpr u32 BLOCK_FIXED = 8;         // format.rs BLOCK_FIXED_BYTES
// Short codes' symbols staged for the table build: at most 2^LUT_BITS of
// them (Kraft), 16 bits each.
constexpr u32 SHORT_SYMS_BYTES = 2u << LUT_BITS;
// Resident blocks per SM the kernels are compiled for: shared memory holds
// the table and header only (the output goes straight to global memory),
// so registers decide how many blocks share an SM.
constexpr int MIN_BLOCKS = 8;
constexpr u32 KIND_HUFFMAN = 0;
constexpr u32 KIND_RAW = 1;
constexpr u32 MAX_WAYS_LOG2 = 10;      // format.rs MAX_WAYS_LOG2

// Problems a walk can meet. The checked walk of a single-way block notes a
// gap mismatch, then a bad or cut codeword (the overflow check comes
// between them at one position, decided after the scan); a way's walk also
// notes running out of bits (short) and bits left after its symbols
// (overflow), in the CPU's order.
enum Event : u32 { EV_NONE = 0, EV_GAP = 1, EV_CORRUPT = 2, EV_TRUNCATED = 3, EV_SHORT = 4, EV_OVERFLOW = 5 };

// What thread 0 learns from the code section and block header.
struct Header {
    u32 status;      // codag::OK or the failure
    u64 detail;      // job-input offset of the failure
    u32 sb;          // symbol bytes
    u32 max_len;
    u32 sub_log2;
    u32 ways_log2;   // parallel ways of a Huffman block, as log2
    u32 lut_bits;
    u32 sym_at;      // job-input offset of the canonical symbols
    u32 kind;
    u32 tail;        // 1 if the last byte is stored raw
    u32 tail_byte;
    u32 payload;     // bits (Huffman) or bytes (raw)
    u32 gaps;        // gap entries
    u32 gaps_at;     // the gap array, or the way directory
    u32 payload_at;
    u32 first[MAX_LEN + 1];
    u32 count[MAX_LEN + 1];
    u32 offset[MAX_LEN + 1];
    // Left-aligned to lut_bits: the first lut_bits-bit prefix past the
    // codes of length l. A prefix's code length is the least l whose limit
    // is above it (canonical codes of one length are consecutive, shorter
    // ones first).
    u32 limit[MAX_LEN + 1];
    // The same left-aligned to 32 bits, for the codes past the table: the
    // first 32-bit window past the codes of length l (2^32 when they fill
    // the code space).
    u64 limit32[MAX_LEN + 1];
    u32 short_syms;  // symbols of codes of at most lut_bits bits
};

// Words the header parse reads: the code section's fixed part and counts,
// then the block header.
constexpr u32 HEAD_WORDS = (CODE_FIXED + 4 * MAX_LEN) / 4;
constexpr u32 BLOCK_WORDS = BLOCK_FIXED / 4;

// A table entry: the symbol field (8-bit symbols: first | second << 8;
// 16-bit: the symbol), the first code's length, the length of the codes
// the entry holds, how many (0: no code of at most lut_bits bits starts
// with this prefix).
__device__ __forceinline__ u32 entry_syms(u32 e) { return e & 0xffffu; }
__device__ __forceinline__ u32 entry_len(u32 e) { return (e >> 16) & 31u; }
__device__ __forceinline__ u32 entry_total(u32 e) { return (e >> 21) & 31u; }
__device__ __forceinline__ u32 entry_n(u32 e) { return e >> 26; }
__device__ __forceinline__ u32 make_entry(u32 syms, u32 len, u32 total, u32 n) {
    return syms | len << 16 | total << 21 | n << 26;
}

struct Shared {
    u32 lut[1u << LUT_BITS];
    alignas(16) u8 syms_buf[SHORT_SYMS_BYTES];
    Header h;
    u32 words[HEAD_WORDS + BLOCK_WORDS];
    u32 exit_[THREADS];
    u32 warp_sums[THREADS / 32];
    u32 fail_thread;  // single way: lowest thread with a problem; ways: lowest bad directory entry
    u32 fail_way;
    u32 total;
};

// Every thread: the header words, loaded at once (thread 0 alone would
// wait on each in turn). Words past the input are not loaded; the checks
// fail before they are used.
__device__ void load_header_words(Shared& s, const u8* in, u64 in_len, u64 in_off, u64 aux) {
    const u32 t = threadIdx.x;
    if (in_off & 3) return;
    if (t < HEAD_WORDS) {
        s.words[t] = 4ull * t + 4 <= in_len ? reinterpret_cast<const u32*>(in)[t] : 0u;
    } else if (t < HEAD_WORDS + BLOCK_WORDS) {
        const u64 at = aux + 4ull * (t - HEAD_WORDS);
        s.words[t] = (aux & 3) == 0 && at + 4 <= in_len ? reinterpret_cast<const u32*>(in)[at / 4] : 0u;
    }
}

// Thread 0: the checks of CodeSection::parse and check_block, in their
// order, with their details, on the loaded words.
__device__ void parse_header(const u32* words, u64 in_len, u64 in_off, u64 aux, u64 values, Header& h) {
    h.status = codag::OK;
    h.detail = 0;
    auto fail = [&](u32 code, u64 at) {
        h.status = code;
        h.detail = at;
    };
    if (in_off & 3) return fail(codag::INPUT_CORRUPT, 0);
    if (in_len < CODE_FIXED) return fail(codag::INPUT_TRUNCATED, in_len);
    const u32 w0 = words[0];
    const u32 sb = w0 & 0xff;
    if (sb != 1 && sb != 2) return fail(codag::INPUT_CORRUPT, 0);
    const u32 max_len = (w0 >> 8) & 0xff;
    if (max_len < 1 || max_len > MAX_LEN) return fail(codag::INPUT_CORRUPT, 1);
    const u32 sub_log2 = (w0 >> 16) & 0xff;
    if (sub_log2 != 0 && (sub_log2 < 5 || sub_log2 > 16)) return fail(codag::INPUT_CORRUPT, 2);
    const u32 ways_log2 = w0 >> 24;
    if (ways_log2 > MAX_WAYS_LOG2 || (ways_log2 != 0 && sub_log2 != 0)) return fail(codag::INPUT_CORRUPT, 3);
    const u64 n = words[1];
    if (n > (sb == 1 ? 256ull : 65536ull)) return fail(codag::INPUT_CORRUPT, 4);
    const u64 code_len = (CODE_FIXED + 4ull * max_len + n * sb + 3) & ~3ull;
    if (in_len < code_len) return fail(codag::INPUT_TRUNCATED, in_len);
    u64 sum = 0, kraft = 0;
    u32 code = 0, idx = 0;
    for (u32 l = 1; l <= max_len; ++l) {
        const u32 c = words[CODE_FIXED / 4 + l - 1];
        h.count[l] = c;
        sum += c;
        kraft += (u64)c << (max_len - l);
    }
    if (sum != n || kraft > (1ull << max_len)) return fail(codag::INPUT_CORRUPT, CODE_FIXED);
    const u32 lut_bits = max_len < LUT_BITS ? max_len : LUT_BITS;
    for (u32 l = 1; l <= max_len; ++l) {
        h.first[l] = code;
        h.offset[l] = idx;
        // Kraft's check keeps first + count within l bits.
        if (l <= lut_bits) h.limit[l] = (code + h.count[l]) << (lut_bits - l);
        h.limit32[l] = (u64)(code + h.count[l]) << (32 - l);
        code = (code + h.count[l]) << 1;
        idx += h.count[l];
        if (l == lut_bits) h.short_syms = idx;
    }
    h.sb = sb;
    h.max_len = max_len;
    h.sub_log2 = sub_log2;
    h.ways_log2 = ways_log2;
    h.lut_bits = lut_bits;
    h.sym_at = CODE_FIXED + 4 * max_len;
    // check_block
    if ((aux & 3) || aux < code_len || aux > in_len) return fail(codag::INPUT_CORRUPT, aux < in_len ? aux : in_len);
    if (in_len - aux < BLOCK_FIXED) return fail(codag::INPUT_TRUNCATED, in_len);
    const u32 b0 = words[HEAD_WORDS];
    const u32 kind = b0 & 0xff, tail = (b0 >> 8) & 0xff, tail_byte = (b0 >> 16) & 0xff, reserved = b0 >> 24;
    const u32 payload = words[HEAD_WORDS + 1];
    const bool odd = (values % sb) != 0;
    if (kind > KIND_RAW || tail > 1 || reserved != 0 || ((tail == 1) != (odd && kind == KIND_HUFFMAN)))
        return fail(codag::INPUT_CORRUPT, aux);
    if ((kind == KIND_RAW && tail_byte != 0) || (kind == KIND_HUFFMAN && tail == 0 && tail_byte != 0))
        return fail(codag::INPUT_CORRUPT, aux + 2);
    if (kind == KIND_HUFFMAN && payload > (1u << 31)) return fail(codag::INPUT_CORRUPT, aux + 4);
    const u64 gaps_at = aux + BLOCK_FIXED;
    u64 gaps = 0, payload_at = gaps_at, end;
    if (kind == KIND_RAW) {
        if ((u64)payload != values) return fail(codag::INPUT_CORRUPT, aux + 4);
        end = gaps_at + (((u64)payload + 3) & ~3ull);
    } else {
        if (sub_log2 != 0) gaps = ((u64)payload + (1ull << sub_log2) - 1) >> sub_log2;
        // The way directory: 16 bits a way but the last, padded to 4.
        const u64 dir_bytes = (2 * ((1ull << ways_log2) - 1) + 3) & ~3ull;
        payload_at = gaps_at + ((gaps + 3) & ~3ull) + dir_bytes;
        end = payload_at + 4 * (((u64)payload + 31) / 32);
    }
    if (end > in_len) return fail(codag::INPUT_TRUNCATED, in_len);
    h.kind = kind;
    h.tail = tail;
    h.tail_byte = tail_byte;
    h.payload = payload;
    h.gaps = (u32)gaps;
    h.gaps_at = (u32)gaps_at;
    h.payload_at = (u32)payload_at;
}

// Sequential bit window over a range of the payload's words; words past
// the payload read as zeros, as the CPU reference's `window`. A walk seeks
// its start once, then moves forward at most one word a code (codes are at
// most 24 bits), so moving on is a short branch the compiler predicates.
// The reader keeps AHEAD words beyond the window in flight: moving on to
// the next word loads the one AHEAD words further, first needed AHEAD words
// of codes later (the payload streams from L2: shared memory holds the
// table and the output, so L1 keeps little of it).
constexpr int AHEAD = 2;

struct BitReader {
    const u32* words;
    u32 nwords;
    u32 wi;   // index of w0
    u32 w0, w1;
    u32 q[AHEAD];  // words wi + 2 ...

    __device__ __forceinline__ u32 load(u32 i) const { return i < nwords ? __ldg(words + i) : 0u; }
    // Every walk seeks its start before its first window.
    __device__ __forceinline__ void init(const u32* p, u32 n) {
        words = p;
        nwords = n;
    }
    // Positions the window on bit `pos`.
    __device__ __forceinline__ void seek(u32 pos) {
        wi = pos >> 5;
        w0 = load(wi);
        w1 = load(wi + 1);
#pragma unroll
        for (int k = 0; k < AHEAD; ++k) q[k] = load(wi + 2 + k);
    }
    // The 32 bits from `pos`, which lies in word wi or wi + 1.
    __device__ __forceinline__ u32 window(u32 pos) {
        const u32 i = pos >> 5;
        if (i != wi) {
            w0 = w1;
            w1 = q[0];
#pragma unroll
            for (int k = 0; k + 1 < AHEAD; ++k) q[k] = q[k + 1];
            q[AHEAD - 1] = load(i + 1 + AHEAD);
            wi = i;
        }
        // The top 32 bits of w0:w1 shifted left by pos mod 32.
        return __funnelshift_l(w1, w0, pos & 31);
    }
};

// A way's bit reader: the stream bits from the current position left-
// aligned in a 64-bit buffer holding at least 32 of them, refilled a word
// at a time from two words kept in flight. A step's window is the buffer's
// top half and consuming a code is one 64-bit shift; the word-at-a-time
// reader above moves its queue of words instead (register copies on every
// word).
struct BitBuffer {
    const u32* words;
    u32 nwords;
    u32 next;    // index of the word after n1
    u64 buf;     // stream bits, left-aligned; below them zeros
    u32 have;    // valid bits in buf, at least 32
    u32 n0, n1;  // the next two words

    __device__ __forceinline__ u32 load(u32 i) const { return i < nwords ? __ldg(words + i) : 0u; }
    __device__ __forceinline__ void init(const u32* p, u32 n, u32 pos) {
        words = p;
        nwords = n;
        const u32 wi = pos >> 5;
        buf = ((u64)load(wi) << 32 | load(wi + 1)) << (pos & 31);
        have = 64 - (pos & 31);
        n0 = load(wi + 2);
        n1 = load(wi + 3);
        next = wi + 4;
    }
    // The next 32 stream bits.
    __device__ __forceinline__ u32 window() const { return (u32)(buf >> 32); }
    // Moves on by `len` bits (at most 24).
    __device__ __forceinline__ void consume(u32 len) {
        buf <<= len;
        have -= len;
        if (have < 32) {
            buf |= (u64)n0 << (32 - have);
            have += 32;
            n0 = n1;
            n1 = load(next++);
        }
    }
};

// A code longer than lut_bits at the top of `w` (a window whose table
// entry is empty), as a one-code table entry (0 when no code starts so);
// the second half of DecodeTables::decode. Its length is the least l whose
// 32-bit limit is above `w` (canonical codes of one length are consecutive,
// shorter ones first, and `w` is past every short code): one more than the
// limits `w` reaches, counted over every length so that the lanes of a
// warp take the same path.
__device__ __forceinline__ u32 decode_long(const Shared& s, const u8* in, u32 w) {
    const Header& h = s.h;
    if (w >= h.limit32[h.max_len]) return 0;
    u32 l = h.lut_bits + 1;
    for (u32 k = h.lut_bits + 1; k < h.max_len; ++k) l += w >= h.limit32[k];
    const u32 i = h.offset[l] + (w >> (32 - l)) - h.first[l];
    // The symbols start 4-aligned in the job's input (the parse checked
    // both): 16-bit ones load as one.
    const u32 sym = h.sb == 1 ? (u32)__ldg(in + h.sym_at + i)
                              : (u32)__ldg(reinterpret_cast<const u16*>(in + h.sym_at) + i);
    return make_entry(sym, l, l, 1);
}

// The length of the code at the top of a `bits`-bit prefix `p` (left-
// aligned to lut_bits), if one of at most `bits` bits starts there; 0 if
// none.
__device__ __forceinline__ u32 short_len(const Header& h, u32 p, u32 bits) {
    for (u32 l = 1; l <= bits; ++l)
        if (p < h.limit[l]) return l;
    return 0;
}

// Every thread: the symbols of the short codes staged in shared memory,
// then the lookup table, one entry per lut_bits-bit prefix.
__device__ void build_lut(Shared& s, const u8* in) {
    const Header& h = s.h;
    const u32 sb = h.sb, B = h.lut_bits;
    // In bounds: the short symbols lie inside the code section, whose
    // padded length the parse checked against the input; at most
    // 2^lut_bits of them (Kraft), so they fit their buffer.
    const u32 nwords = (h.short_syms * sb + 3) / 4;
    const u32* src = reinterpret_cast<const u32*>(in + h.sym_at);
    u32* dst = reinterpret_cast<u32*>(s.syms_buf);
    for (u32 i = threadIdx.x; i < nwords; i += THREADS) dst[i] = __ldg(src + i);
    __syncthreads();
    const u32 n = 1u << B;
    const u32 mask = n - 1;
    for (u32 e = threadIdx.x; e < n; e += THREADS) {
        u32 v = 0;
        const u32 l0 = short_len(h, e, B);
        if (l0 != 0) {
            const u32 i0 = h.offset[l0] + (e >> (B - l0)) - h.first[l0];
            if (sb == 1) {
                u32 syms = s.syms_buf[i0];
                u32 total = l0, k = 1;
                const u32 r = (e << l0) & mask;
                const u32 l1 = short_len(h, r, B - l0);
                if (l1 != 0) {
                    const u32 i1 = h.offset[l1] + (r >> (B - l1)) - h.first[l1];
                    syms |= (u32)s.syms_buf[i1] << 8;
                    total += l1;
                    k = 2;
                }
                v = make_entry(syms, l0, total, k);
            } else {
                const u32 sym = (u32)s.syms_buf[2 * i0] | (u32)s.syms_buf[2 * i0 + 1] << 8;
                v = make_entry(sym, l0, l0, 1);
            }
        }
        s.lut[e] = v;
    }
}

// An unchecked walk for self-synchronization: from `pos` to the first
// codeword start at or after `end`; bits no code starts with count as one
// bit, so the walk is a function of its start alone.
__device__ u32 walk_loose(const Shared& s, const u8* in, BitReader& r, u32 pos, u32 end) {
    r.seek(pos);
    while (pos < end) {
        const u32 w = r.window(pos);
        u32 e = s.lut[w >> (32 - s.h.lut_bits)];
        if (e == 0) e = decode_long(s, in, w);
        // Both codes of a pair start before `end`, or only the first.
        const bool pair = entry_n(e) == 2 && pos + entry_len(e) < end;
        const u32 len = pair ? entry_total(e) : entry_len(e);
        pos += len ? len : 1u;
    }
    return pos;
}

// Appends bytes to a thread's run of the output in global memory. Whole
// words are gathered four at a time into one 16-byte store once the run
// reaches a 16-byte boundary (a quarter of the store instructions and of
// the L2 requests of word stores); the run's partial first and last words,
// which it shares with the runs beside it, are written byte by byte.
struct ByteWriter {
    u8* word;  // the aligned word being filled
    u64 acc;   // its bytes so far (and a carry into the next)
    u32 fill;  // bytes of the word before the next one (ours or not)
    u32 lo;    // the first of ours in the first word
    bool first;
    u32 q0, q1, q2, nq;  // whole words waiting for the fourth of a 16-byte line

    __device__ __forceinline__ void init(u8* p) {
        const size_t a = (size_t)p;
        word = reinterpret_cast<u8*>(a & ~(size_t)3);
        fill = lo = (u32)(a & 3);
        acc = 0;
        first = true;
        q0 = q1 = q2 = nq = 0;
    }
    __device__ __forceinline__ void store_bytes(u8* at, u32 from, u32 to, u64 v) {
        for (u32 k = from; k < to; ++k) at[k] = (u8)(v >> (8 * k));
    }
    // A whole word of ours at `word`.
    __device__ __forceinline__ void whole(u32 v) {
        if (nq == 0 && ((size_t)word & 15) != 0) {
            *reinterpret_cast<u32*>(word) = v;
        } else if (nq == 3) {
            *reinterpret_cast<uint4*>(word - 12) = make_uint4(q0, q1, q2, v);
            nq = 0;
        } else {
            q0 = nq == 0 ? v : q0;
            q1 = nq == 1 ? v : q1;
            q2 = nq == 2 ? v : q2;
            ++nq;
        }
    }
    // The low 8n bits of `bytes` (n is 1 or 2).
    __device__ __forceinline__ void put(u32 bytes, u32 n) {
        acc |= (u64)bytes << (8 * fill);
        fill += n;
        if (fill >= 4) {
            if (first && lo != 0) {
                store_bytes(word, lo, 4, acc);
            } else {
                whole((u32)acc);
            }
            first = false;
            acc >>= 32;
            fill -= 4;
            word += 4;
        }
    }
    __device__ __forceinline__ void finish() {
        // Words still waiting, then the partial last word.
        u32* w = reinterpret_cast<u32*>(word) - nq;
        if (nq > 0) w[0] = q0;
        if (nq > 1) w[1] = q1;
        if (nq > 2) w[2] = q2;
        store_bytes(word, first ? lo : 0, fill, acc);
    }
};

// A way's output writer: bytes one at a time until the output reaches a
// 16-byte boundary, then gathered into a 128-bit line stored whole.
struct LineWriter {
    u8* p;       // the next byte while unaligned, then the line's start
    u32 head;    // bytes still to store one at a time
    u32 fill;    // bytes in `line`
    u64 lo, hi;  // the line's bytes 0-7 and 8-15

    __device__ __forceinline__ void init(u8* out) {
        p = out;
        head = (16u - (u32)((size_t)out & 15)) & 15;
        fill = 0;
        lo = hi = 0;
    }
    __device__ __forceinline__ void add(u64 v) {
        const u32 sh = 8 * fill;
        // Bytes 0-7 go to lo, a 2-byte value from byte 7 spills into hi.
        lo |= fill < 8 ? v << sh : 0ull;
        hi |= fill < 8 ? (sh > 48 ? v >> (64 - sh) : 0ull) : v << (sh - 64);
    }
    __device__ __forceinline__ void put_head(u32 bytes, u32 n) {
        for (u32 k = 0; k < n; ++k) {
            const u32 b = (bytes >> (8 * k)) & 0xffu;
            if (head != 0) {
                *p++ = (u8)b;
                --head;
            } else {
                add(b);
                ++fill;
            }
        }
    }
    // The low 8n bits of `bytes` (n is 1 or 2; a 1-byte put's high byte is 0).
    __device__ __forceinline__ void put(u32 bytes, u32 n) {
        if (head != 0) return put_head(bytes, n);
        add(bytes);
        fill += n;
        if (fill >= 16) {
            *reinterpret_cast<uint4*>(p) = make_uint4((u32)lo, (u32)(lo >> 32), (u32)hi, (u32)(hi >> 32));
            p += 16;
            fill -= 16;
            // The byte past the line (a 2-byte put from byte 15).
            lo = fill != 0 ? (u64)(bytes >> 8) : 0ull;
            hi = 0;
        }
    }
    __device__ __forceinline__ void finish() {
        for (u32 k = 0; k < fill; ++k) p[k] = (u8)((k < 8 ? lo : hi) >> (8 * (k & 7)));
    }
};

// Block-wide exclusive scan of `v`; `total` gets the sum.
__device__ u32 block_scan(Shared& s, u32 v, u32& total) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    u32 x = v;
    for (u32 d = 1; d < 32; d <<= 1) {
        const u32 y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31) s.warp_sums[warp] = x;
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 acc = 0;
        for (u32 i = 0; i < THREADS / 32; ++i) {
            const u32 t = s.warp_sums[i];
            s.warp_sums[i] = acc;
            acc += t;
        }
        s.total = acc;
    }
    __syncthreads();
    total = s.total;
    return s.warp_sums[warp] + x - v;
}

// A block in ways (E²MC's parallel decoding ways): way v holds symbols
// [v*q, (v+1)*q) of the block (q = ceil(symbols / ways)) and decodes alone
// from where the ways before it end (the directory holds each way's bits
// but the last's), so each symbol is decoded once and written as it is
// decoded: no count, no replay. Thread t decodes a contiguous share of the
// ways, whose start a block scan of the shares' bits gives. The directory
// is checked whole first (CPU: way_bits), then the lowest failing way names
// the block's status, as the CPU walks the ways in order.
__device__ void decode_ways(Shared& s, const u8* in, u8* out, u64 values, ChunkStatus* st) {
    const Header& h = s.h;
    const u32 t = threadIdx.x;
    const u32 V = 1u << h.ways_log2;
    const u32 P = h.payload;
    // 2-aligned: the block starts 4-aligned and its header is 8 bytes.
    const u16* dir = reinterpret_cast<const u16*>(in + h.gaps_at);
    const u32 per = (V + THREADS - 1) / THREADS;
    const u32 v0 = per * t < V ? per * t : V;
    const u32 v1 = v0 + per < V ? v0 + per : V;
    // The last way's bits are the payload's rest, not in the directory.
    const u32 v1_dir = v1 < V ? v1 : V - 1;
    u32 mine = 0;
    for (u32 v = v0; v < v1_dir; ++v) mine += __ldg(dir + v);
    u32 total;
    // Its barriers also publish the table.
    const u32 first = block_scan(s, mine, total);
    // The CPU stores the tail byte first, whatever the block's status.
    if (t == 0 && h.tail) out[values - 1] = (u8)h.tail_byte;
    {
        u32 e = first;
        for (u32 v = v0; v < v1_dir; ++v) {
            e += __ldg(dir + v);
            if (e > P) {
                atomicMin(&s.fail_thread, v);
                break;
            }
        }
    }
    __syncthreads();
    if (s.fail_thread != 0xffffffffu) {
        if (t == 0) {
            st->code = codag::INPUT_CORRUPT;
            st->detail = h.gaps_at + 2 * s.fail_thread;
            st->produced = 0;
        }
        return;
    }
    const u32 sb = h.sb, lut_shift = 32 - h.lut_bits;
    const u32* lut = s.lut;
    const u64 nsym = values / sb;
    const u64 q = (nsym + V - 1) / V;
    const u32* payload = reinterpret_cast<const u32*>(in + h.payload_at);
    const u32 nwords = (P + 31) / 32;
    u32 fail_v = 0xffffffffu, ev = EV_NONE, ev_pos = 0;
    u64 ev_sym = 0;
    u32 start = first;
    for (u32 v = v0; v < v1; ++v) {
        const u64 a = (u64)v * q < nsym ? (u64)v * q : nsym;
        const u64 b = a + q < nsym ? a + q : nsym;
        u32 pos = start;
        const u32 end = v + 1 < V ? pos + __ldg(dir + v) : P;
        start = end;
        u32 left = (u32)(b - a);
        BitBuffer r;
        r.init(payload, nwords, pos);
        LineWriter wr;
        wr.init(out + a * sb);
        for (;;) {
            // Two steps at a time while no check but the code's can fail:
            // at least two pairs' symbols left and bits for two codes of
            // any length before the way's end. Codes past the table decode
            // here too, so that the lanes of a warp stay in this loop
            // together (a lane leaving it would wait for all the others).
            while (left >= 4 && end - pos >= 2 * MAX_LEN) {
                u32 w = r.window();
                u32 e = lut[w >> lut_shift];
                if (e == 0 && (e = decode_long(s, in, w)) == 0) break;
                wr.put(entry_syms(e), sb == 2 ? 2u : entry_n(e));
                r.consume(entry_total(e));
                pos += entry_total(e);
                left -= entry_n(e);
                w = r.window();
                e = lut[w >> lut_shift];
                if (e == 0 && (e = decode_long(s, in, w)) == 0) break;
                wr.put(entry_syms(e), sb == 2 ? 2u : entry_n(e));
                r.consume(entry_total(e));
                pos += entry_total(e);
                left -= entry_n(e);
            }
            if (left == 0) break;
            // One checked step, in the CPU's order.
            const u32 w = r.window();
            u32 e = lut[w >> lut_shift];
            if (e == 0) {
                // The CPU checks for the way's end before decoding.
                e = pos >= end ? 0u : decode_long(s, in, w);
                if (e == 0) {
                    ev = pos >= end ? EV_SHORT : EV_CORRUPT;
                    break;
                }
            }
            const u32 len = entry_len(e), both = entry_total(e);
            const bool pair = entry_n(e) == 2 && left >= 2 && both <= end - pos;
            if (!pair && len > end - pos) {
                ev = pos >= end ? EV_SHORT : EV_TRUNCATED;
                break;
            }
            const u32 n = sb == 2 || pair ? 2u : 1u;
            wr.put(entry_syms(e) & (n == 2 ? 0xffffu : 0xffu), n);
            r.consume(pair ? both : len);
            pos += pair ? both : len;
            left -= 1 + pair;
        }
        if (left != (u32)(b - a)) wr.finish();
        if (ev == EV_NONE && pos != end) ev = EV_OVERFLOW;
        if (ev != EV_NONE) {
            fail_v = v;
            ev_pos = ev == EV_SHORT ? end : pos;
            ev_sym = b - left;
            break;
        }
    }
    if (fail_v != 0xffffffffu) atomicMin(&s.fail_way, fail_v);
    __syncthreads();
    const u32 first_fail = s.fail_way;
    if (first_fail == 0xffffffffu) {
        if (t == 0) {
            st->code = codag::OK;
            st->detail = 0;
            st->produced = values;
        }
    } else if (fail_v == first_fail) {
        st->code = ev == EV_OVERFLOW    ? codag::OUTPUT_OVERFLOW
                   : ev == EV_SHORT     ? codag::OUTPUT_SHORT
                   : ev == EV_TRUNCATED ? codag::INPUT_TRUNCATED
                                        : codag::INPUT_CORRUPT;
        st->detail = h.payload_at + ev_pos / 8;
        st->produced = ev_sym * sb;
    }
}

template <bool GAP>
__device__ void decode_job(Shared& s, const u8* input, const ChunkJob& job, u8* output, ChunkStatus* st) {
    const u8* in = input + job.in_off;
    load_header_words(s, in, job.in_len, job.in_off, job.aux);
    __syncthreads();
    if (threadIdx.x == 0) {
        parse_header(s.words, job.in_len, job.in_off, job.aux, job.out_count, s.h);
        s.fail_thread = 0xffffffffu;
        s.fail_way = 0xffffffffu;
    }
    __syncthreads();
    const Header& h = s.h;
    const u32 t = threadIdx.x;
    u8* out = output + job.out_off;
    const u64 values = job.out_count;
    if (h.status != codag::OK) {
        if (t == 0) {
            st->code = h.status;
            st->detail = h.detail > 0xffffffffull ? 0xffffffffu : (u32)h.detail;
            st->produced = 0;
        }
        return;
    }
    if (h.kind == KIND_RAW) {
        const u8* src = in + h.payload_at;
        for (u64 i = t; i < values; i += THREADS) out[i] = src[i];
        if (t == 0) {
            st->code = codag::OK;
            st->detail = 0;
            st->produced = values;
        }
        return;
    }
    build_lut(s, in);
    if (h.ways_log2 != 0) return decode_ways(s, in, out, values, st);

    const u32 P = h.payload;
    const u32 S = h.sub_log2 ? (1u << h.sub_log2) : 0u;
    const u8* gaps = in + h.gaps_at;
    const u32 G = h.gaps;
    const u32 sb = h.sb, lut_shift = 32 - h.lut_bits;
    const u64 nsym = values / sb;
    BitReader r;
    r.init(reinterpret_cast<const u32*>(in + h.payload_at), (P + 31) / 32);

    // This thread's range [start, end) of bits.
    u32 start, end;
    const bool by_gaps = GAP && G != 0;
    if (by_gaps) {
        // Runs of k or k + 1 subsequences, the longer ones first: the
        // warps holding only short runs finish early and leave their issue
        // slots to other blocks instead of idling behind one busy lane.
        const u32 k = G / THREADS, extra = G % THREADS;
        const u32 sub0 = t * k + (t < extra ? t : extra), n = k + (t < extra);
        if (n == 0) {
            start = end = P;
        } else {
            start = t == 0 ? 0u : sub0 * S + gaps[sub0];
            end = sub0 + n < G ? (sub0 + n) * S : P;
        }
    } else {
        const u32 R = ((P + THREADS - 1) / THREADS + 31) & ~31u;
        const u64 a = (u64)t * R;
        start = a < P ? (u32)a : P;
        end = a + R < P ? (u32)(a + R) : P;
    }
    __syncthreads();  // the table is built

    if (!by_gaps) {
        // Self-synchronization: each round, a thread whose left neighbour
        // now ends elsewhere than it starts walks again from there.
        u32 ex = walk_loose(s, in, r, start, end);
        s.exit_[t] = ex;
        for (int round = 0; round <= THREADS; ++round) {
            __syncthreads();
            const u32 want = t == 0 ? 0u : s.exit_[t - 1];
            __syncthreads();
            const bool moved = want != start;
            if (moved) {
                start = want;
                ex = walk_loose(s, in, r, start, end > start ? end : start);
                s.exit_[t] = ex;
            }
            if (!__syncthreads_or(moved)) break;
        }
    }

    // The checked walk: count codewords, check gaps, note the first
    // problem. `next` is the next subsequence boundary to check (the
    // first codeword start at or after it must be where its gap says);
    // `stop` the nearer of it and the range's end, the only places a step
    // has more to do than decode.
    u32 pos = start, count = 0, ev = EV_NONE, ev_pos = 0;
    {
        u32 j = (t == 0 || S == 0) ? 0u : start / S + 1;
        u32 next = S != 0 && j < G ? j * S : 0xffffffffu;
        // The next boundary's gap, loaded a subsequence before it is
        // checked.
        u32 gap = next != 0xffffffffu ? gaps[j] : 0u;
        u32 stop = next < end ? next : end;
        r.seek(start);
        for (;;) {
            if (pos >= stop) {
                if (pos >= next) {
                    bool bad_gap = false;
                    do {
                        if (pos != next + gap) {
                            bad_gap = true;
                            break;
                        }
                        ++j;
                        next = j < G ? j * S : 0xffffffffu;
                        gap = next != 0xffffffffu ? gaps[j] : 0u;
                    } while (pos >= next);
                    if (bad_gap) {
                        ev = EV_GAP;
                        ev_pos = pos;
                        break;
                    }
                }
                if (pos >= end) break;
                stop = next < end ? next : end;
            }
            const u32 w = r.window(pos);
            u32 e = s.lut[w >> lut_shift];
            if (e == 0) {
                e = decode_long(s, in, w);
                if (e == 0) {
                    ev = EV_CORRUPT;
                    ev_pos = pos;
                    break;
                }
            }
            // A pair counts at once when its second code starts before
            // `stop` (the checks fall on the code after it) and it ends
            // inside the payload.
            const u32 len = entry_len(e), both = entry_total(e);
            const bool pair = entry_n(e) == 2 && pos + len < stop && both <= P - pos;
            if (!pair && len > P - pos) {
                ev = EV_TRUNCATED;
                ev_pos = pos;
                break;
            }
            count += 1 + pair;
            pos += pair ? both : len;
        }
    }
    u32 total;
    const u32 prefix = block_scan(s, count, total);

    // Does this thread's range hold the block's first problem? An
    // overflow: the symbol after the last one starts here, before any
    // problem of this range; a bad codeword right after the last symbol is
    // an overflow too (the CPU checks the count before decoding).
    const u64 reach = (u64)prefix + count;
    const bool overflow = reach > nsym || (reach == nsym && (ev == EV_CORRUPT || ev == EV_TRUNCATED));
    if (overflow || ev != EV_NONE) atomicMin(&s.fail_thread, t);
    __syncthreads();
    const u32 fail_t = s.fail_thread;

    // Replay, writing straight into the output: only the codewords the
    // checked walk counted, so every one is valid. Symbols past the last
    // are never written: the replay of the overflowing range stops at the
    // first one, where the CPU reports the overflow.
    u32 left = count, i = prefix;
    u32 rpos = start;
    {
        r.seek(start);
        ByteWriter wr;
        wr.init(out + (u64)prefix * sb);
        while (left != 0 && i < nsym) {
            const u32 w = r.window(rpos);
            u32 e = s.lut[w >> lut_shift];
            if (e == 0) e = decode_long(s, in, w);
            // Pairs are 8-bit symbols; 16-bit ones are one put of two bytes.
            const bool pair = entry_n(e) == 2 && left >= 2 && i + 1 < nsym;
            const u32 n = sb == 2 || pair ? 2u : 1u;
            wr.put(entry_syms(e) & (n == 2 ? 0xffffu : 0xffu), n);
            rpos += pair ? entry_total(e) : entry_len(e);
            i += 1 + pair;
            left -= 1 + pair;
        }
        if (i > prefix) wr.finish();
    }
    if (t == 0 && h.tail) out[values - 1] = (u8)h.tail_byte;

    if (t == 0 && fail_t == 0xffffffffu) {
        if ((u64)total < nsym) {
            st->code = codag::OUTPUT_SHORT;
            st->detail = h.payload_at + P / 8;
            st->produced = (u64)total * sb;
        } else {
            st->code = codag::OK;
            st->detail = 0;
            st->produced = values;
        }
    }
    if (t == fail_t) {
        if (overflow) {
            // The overflow position: where the replay stopped, or the bad
            // codeword right after the last symbol.
            const u32 at = reach > nsym ? rpos : ev_pos;
            st->code = codag::OUTPUT_OVERFLOW;
            st->detail = h.payload_at + at / 8;
            st->produced = nsym * sb;
        } else {
            st->code = ev == EV_TRUNCATED ? codag::INPUT_TRUNCATED : codag::INPUT_CORRUPT;
            st->detail = h.payload_at + ev_pos / 8;
            st->produced = reach * sb;
        }
    }
}

template <bool GAP>
__device__ void decode_blocks(const u8* input, const ChunkJob* jobs, u32 njobs, u8* output, ChunkStatus* status) {
    __shared__ Shared s;
    for (u32 j = blockIdx.x; j < njobs; j += gridDim.x) {
        decode_job<GAP>(s, input, jobs[j], output, status + j);
        __syncthreads();
    }
}

}  // namespace huff

extern "C" __global__ void __launch_bounds__(HUFF_THREADS, huff::MIN_BLOCKS)
    huffman_gap(const codag::u8* input, const codag::ChunkJob* jobs, codag::u32 njobs,
                codag::u8* output, codag::ChunkStatus* status) {
    huff::decode_blocks<true>(input, jobs, njobs, output, status);
}

extern "C" __global__ void __launch_bounds__(HUFF_THREADS, huff::MIN_BLOCKS)
    huffman_sync(const codag::u8* input, const codag::ChunkJob* jobs, codag::u32 njobs,
                 codag::u8* output, codag::ChunkStatus* status) {
    huff::decode_blocks<false>(input, jobs, njobs, output, status);
}
