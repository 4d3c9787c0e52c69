// Huffman decoding (docs/huffman-format.md): one thread block per block of
// a frame, HUFF_THREADS threads each decoding one contiguous range of the
// block's bits. The two decoders of cuSZ differ only in where a thread's
// range starts:
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
// counts; a replay that writes the symbols into a shared-memory staging
// window (STAGE bytes of output at a time), flushed to global memory with
// coalesced stores.
//
// Statuses: the CPU reference (codecs/huffman/decode.rs) walks from bit 0
// and reports the first problem in bit order. Here thread t's walk is
// trustworthy only if every thread before it walked cleanly to where t
// starts, so the lowest thread with a problem (an overflow counts as one)
// names the block's status; that is the problem the CPU meets first.
//
// Tables: a 2^LUT_BITS-entry lookup table in shared memory decodes codes of
// up to LUT_BITS bits in one load; longer codes compare against the
// per-length first codes (shared) and read their symbol from the code
// section in global memory (cached: every block of a frame shares it).
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
constexpr u32 LUT_BITS = 11;           // format.rs LUT_BITS
constexpr u32 MAX_LEN = 24;            // code.rs MAX_CODE_LEN
constexpr u32 CODE_FIXED = 8;          // format.rs CODE_FIXED_BYTES
constexpr u32 BLOCK_FIXED = 8;         // format.rs BLOCK_FIXED_BYTES
constexpr u32 STAGE = 32768;           // staging window, bytes (even): one default block
constexpr u32 KIND_HUFFMAN = 0;
constexpr u32 KIND_RAW = 1;

// Problems a checked walk can meet, ranked as the CPU meets them at one
// position: a gap mismatch, then (not noted here) the overflow check, then
// a bad or cut codeword.
enum Event : u32 { EV_NONE = 0, EV_GAP = 1, EV_CORRUPT = 2, EV_TRUNCATED = 3 };

// What thread 0 learns from the code section and block header.
struct Header {
    u32 status;      // codag::OK or the failure
    u64 detail;      // job-input offset of the failure
    u32 sb;          // symbol bytes
    u32 max_len;
    u32 sub_log2;
    u32 lut_bits;
    u32 sym_at;      // job-input offset of the canonical symbols
    u32 kind;
    u32 tail;        // 1 if the last byte is stored raw
    u32 tail_byte;
    u32 payload;     // bits (Huffman) or bytes (raw)
    u32 gaps;        // gap entries
    u32 gaps_at;
    u32 payload_at;
    u32 first[MAX_LEN + 1];
    u32 count[MAX_LEN + 1];
    u32 offset[MAX_LEN + 1];
};

struct Shared {
    u32 lut[1u << LUT_BITS];
    alignas(16) u8 stage[STAGE];
    Header h;
    u32 exit_[THREADS];
    u32 warp_sums[THREADS / 32];
    u32 fail_thread;
    u32 total;
};

__device__ __forceinline__ u32 rd32(const u8* p) {
    return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

// Thread 0: the checks of CodeSection::parse and check_block, in their
// order, with their details.
__device__ void parse_header(const u8* in, u64 in_len, u64 in_off, u64 aux, u64 values, Header& h) {
    h.status = codag::OK;
    h.detail = 0;
    auto fail = [&](u32 code, u64 at) {
        h.status = code;
        h.detail = at;
    };
    if (in_off & 3) return fail(codag::INPUT_CORRUPT, 0);
    if (in_len < CODE_FIXED) return fail(codag::INPUT_TRUNCATED, in_len);
    const u32 sb = in[0];
    if (sb != 1 && sb != 2) return fail(codag::INPUT_CORRUPT, 0);
    const u32 max_len = in[1];
    if (max_len < 1 || max_len > MAX_LEN) return fail(codag::INPUT_CORRUPT, 1);
    const u32 sub_log2 = in[2];
    if (sub_log2 != 0 && (sub_log2 < 5 || sub_log2 > 16)) return fail(codag::INPUT_CORRUPT, 2);
    if (in[3] != 0) return fail(codag::INPUT_CORRUPT, 3);
    const u64 n = rd32(in + 4);
    if (n > (sb == 1 ? 256ull : 65536ull)) return fail(codag::INPUT_CORRUPT, 4);
    const u64 code_len = (CODE_FIXED + 4ull * max_len + n * sb + 3) & ~3ull;
    if (in_len < code_len) return fail(codag::INPUT_TRUNCATED, in_len);
    u64 sum = 0, kraft = 0;
    u32 code = 0, idx = 0;
    for (u32 l = 1; l <= max_len; ++l) {
        const u32 c = rd32(in + CODE_FIXED + 4 * (l - 1));
        h.count[l] = c;
        sum += c;
        kraft += (u64)c << (max_len - l);
    }
    if (sum != n || kraft > (1ull << max_len)) return fail(codag::INPUT_CORRUPT, CODE_FIXED);
    for (u32 l = 1; l <= max_len; ++l) {
        h.first[l] = code;
        h.offset[l] = idx;
        code = (code + h.count[l]) << 1;
        idx += h.count[l];
    }
    h.sb = sb;
    h.max_len = max_len;
    h.sub_log2 = sub_log2;
    h.lut_bits = max_len < LUT_BITS ? max_len : LUT_BITS;
    h.sym_at = CODE_FIXED + 4 * max_len;
    // check_block
    if ((aux & 3) || aux < code_len || aux > in_len) return fail(codag::INPUT_CORRUPT, aux < in_len ? aux : in_len);
    if (in_len - aux < BLOCK_FIXED) return fail(codag::INPUT_TRUNCATED, in_len);
    const u8* b = in + aux;
    const u32 kind = b[0], tail = b[1], tail_byte = b[2], reserved = b[3];
    const u32 payload = rd32(b + 4);
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
        payload_at = gaps_at + ((gaps + 3) & ~3ull);
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
// the payload read as zeros, as the CPU reference's `window`.
struct BitReader {
    const u32* words;
    u32 nwords;
    u32 wi;   // index of w0
    u32 w0, w1;

    __device__ __forceinline__ u32 load(u32 i) const { return i < nwords ? __ldg(words + i) : 0u; }
    __device__ __forceinline__ void init(const u32* p, u32 n) {
        words = p;
        nwords = n;
        wi = 0xffffffffu;
        w0 = w1 = 0;
    }
    __device__ __forceinline__ u32 window(u32 pos) {
        const u32 i = pos >> 5;
        if (i != wi) {
            // Not on the first load: wi starts at ~0, and ~0 + 1 is word 0.
            if (wi != 0xffffffffu && i == wi + 1) {
                w0 = w1;
            } else {
                w0 = load(i);
            }
            w1 = load(i + 1);
            wi = i;
        }
        const u64 pair = (u64)w0 << 32 | w1;
        return (u32)((pair << (pos & 31)) >> 32);
    }
};

// The codeword at the top of `w`: length (0 when no code starts so) and
// symbol; DecodeTables::decode.
__device__ __forceinline__ u32 decode(const Shared& s, const u8* in, u32 w, u32& sym) {
    const Header& h = s.h;
    const u32 e = s.lut[w >> (32 - h.lut_bits)];
    if (e != 0) {
        sym = e & 0xffffu;
        return e >> 16;
    }
    for (u32 l = h.lut_bits + 1; l <= h.max_len; ++l) {
        const u32 k = (w >> (32 - l)) - h.first[l];
        if (k < h.count[l]) {
            const u32 i = h.offset[l] + k;
            const u8* p = in + h.sym_at + i * h.sb;
            sym = h.sb == 1 ? (u32)p[0] : ((u32)p[0] | (u32)p[1] << 8);
            return l;
        }
    }
    return 0;
}

// Every thread: the lookup table of codes of at most lut_bits bits, one
// entry per prefix (each entry finds its code by the per-length compare).
__device__ void build_lut(Shared& s, const u8* in) {
    const Header& h = s.h;
    const u32 n = 1u << h.lut_bits;
    for (u32 e = threadIdx.x; e < n; e += THREADS) {
        u32 v = 0;
        for (u32 l = 1; l <= h.lut_bits; ++l) {
            const u32 k = (e >> (h.lut_bits - l)) - h.first[l];
            if (k < h.count[l]) {
                const u32 i = h.offset[l] + k;
                const u8* p = in + h.sym_at + i * h.sb;
                const u32 sym = h.sb == 1 ? (u32)p[0] : ((u32)p[0] | (u32)p[1] << 8);
                v = sym | l << 16;
                break;
            }
        }
        s.lut[e] = v;
    }
}

// An unchecked walk for self-synchronization: from `pos` to the first
// codeword start at or after `end`; bits no code starts with count as one
// bit, so the walk is a function of its start alone.
__device__ u32 walk_loose(const Shared& s, const u8* in, BitReader& r, u32 pos, u32 end) {
    while (pos < end) {
        u32 sym;
        const u32 len = decode(s, in, r.window(pos), sym);
        pos += len ? len : 1u;
    }
    return pos;
}

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

template <bool GAP>
__device__ void decode_job(Shared& s, const u8* input, const ChunkJob& job, u8* output, ChunkStatus* st) {
    const u8* in = input + job.in_off;
    if (threadIdx.x == 0) {
        parse_header(in, job.in_len, job.in_off, job.aux, job.out_count, s.h);
        s.fail_thread = 0xffffffffu;
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

    const u32 P = h.payload;
    const u32 S = h.sub_log2 ? (1u << h.sub_log2) : 0u;
    const u8* gaps = in + h.gaps_at;
    const u32 G = h.gaps;
    const u64 nsym = values / h.sb;
    BitReader r;
    r.init(reinterpret_cast<const u32*>(in + h.payload_at), (P + 31) / 32);

    // This thread's range [start, end) of bits.
    u32 start, end;
    const bool by_gaps = GAP && G != 0;
    if (by_gaps) {
        const u32 k = (G + THREADS - 1) / THREADS;
        const u64 sub0 = (u64)t * k;
        if (sub0 >= G) {
            start = end = P;
        } else {
            start = t == 0 ? 0u : (u32)(sub0 * S + gaps[sub0]);
            end = sub0 + k < G ? (u32)((sub0 + k) * S) : P;
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
    // problem.
    u32 pos = start, count = 0, ev = EV_NONE, ev_pos = 0;
    {
        u32 j = (t == 0 || S == 0) ? 0u : start / S + 1;
        for (;;) {
            bool bad_gap = false;
            while (S != 0 && j < G && (u64)j * S <= pos) {
                if (pos != j * S + gaps[j]) {
                    bad_gap = true;
                    break;
                }
                ++j;
            }
            if (bad_gap) {
                ev = EV_GAP;
                ev_pos = pos;
                break;
            }
            if (pos >= end) break;
            u32 sym;
            const u32 len = decode(s, in, r.window(pos), sym);
            if (len == 0) {
                ev = EV_CORRUPT;
                ev_pos = pos;
                break;
            }
            if (len > P - pos) {
                ev = EV_TRUNCATED;
                ev_pos = pos;
                break;
            }
            ++count;
            pos += len;
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

    // Replay and write, one staging window at a time.
    u32 left = count;
    u64 idx = prefix;
    u32 rpos = start;
    for (u64 w0 = 0; w0 < values; w0 += STAGE) {
        const u64 w1 = w0 + STAGE < values ? w0 + STAGE : values;
        // Symbols past the last are never written: the replay of the
        // overflowing range stops at the first one, where the CPU reports
        // the overflow.
        while (left != 0 && idx < nsym && idx * h.sb < w1) {
            u32 sym;
            const u32 len = decode(s, in, r.window(rpos), sym);
            const u64 o = idx * h.sb - w0;
            s.stage[o] = (u8)sym;
            if (h.sb == 2) s.stage[o + 1] = (u8)(sym >> 8);
            rpos += len;
            ++idx;
            --left;
        }
        if (t == 0 && h.tail && values - 1 >= w0 && values - 1 < w1) s.stage[values - 1 - w0] = (u8)h.tail_byte;
        __syncthreads();
        const u32 n = (u32)(w1 - w0);
        u8* dst = out + w0;
        if ((((size_t)dst) & 3) == 0) {
            const u32* src4 = reinterpret_cast<const u32*>(s.stage);
            u32* dst4 = reinterpret_cast<u32*>(dst);
            for (u32 i = t; i < n / 4; i += THREADS) dst4[i] = src4[i];
            for (u32 i = (n & ~3u) + t; i < n; i += THREADS) dst[i] = s.stage[i];
        } else {
            for (u32 i = t; i < n; i += THREADS) dst[i] = s.stage[i];
        }
        __syncthreads();
    }

    if (t == 0 && fail_t == 0xffffffffu) {
        if ((u64)total < nsym) {
            st->code = codag::OUTPUT_SHORT;
            st->detail = h.payload_at + P / 8;
            st->produced = (u64)total * h.sb;
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
            st->produced = nsym * h.sb;
        } else {
            st->code = ev == EV_TRUNCATED ? codag::INPUT_TRUNCATED : codag::INPUT_CORRUPT;
            st->detail = h.payload_at + ev_pos / 8;
            st->produced = reach * h.sb;
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

extern "C" __global__ void __launch_bounds__(HUFF_THREADS)
    huffman_gap(const codag::u8* input, const codag::ChunkJob* jobs, codag::u32 njobs,
                codag::u8* output, codag::ChunkStatus* status) {
    huff::decode_blocks<true>(input, jobs, njobs, output, status);
}

extern "C" __global__ void __launch_bounds__(HUFF_THREADS)
    huffman_sync(const codag::u8* input, const codag::ChunkJob* jobs, codag::u32 njobs,
                 codag::u8* output, codag::ChunkStatus* status) {
    huff::decode_blocks<false>(input, jobs, njobs, output, status);
}
