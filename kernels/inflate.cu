// Raw deflate (RFC 1951) decompression on the CODAG framework: one warp per
// compressed chunk (an ORC ZLIB compression chunk, a Parquet page, or a
// benchmark chunk).
//
// All lanes decode the same symbol stream from the same LSB-first bit buffer;
// Huffman codes are looked up in per-warp shared-memory tables (a 2^10-entry
// primary table for literal/length codes, 2^8 for distances; longer codes
// fall back to canonical decoding over the sorted symbol list). Tables are
// built by all lanes: lengths counted with shared atomics, canonical order by
// `__match_any_sync` ranks, table entries filled symbol-parallel. Literals are
// written by one lane, back-references copied by all lanes; output goes
// through the framework's output_window, a per-warp shared-memory ring of the
// last OUT_WINDOW bytes that serves near back-references from shared memory
// and writes global memory a full 128-byte line at a time.
//
// Validity rules follow zlib's inflate: over-subscribed codes are errors,
// incomplete codes are errors unless the code has a single symbol of length
// 1, a distance beyond the output so far is an error. Every read is bounded
// by the chunk, every write by the job's capacity; the status says which rule
// failed (corrupt, truncated, overflow) and `produced` holds the decompressed
// size on success.
#include "codag.cuh"

using namespace codag;

constexpr u32 LIT_BITS = 10;
constexpr u32 DIST_BITS = 8;
constexpr u32 MAX_BITS = 15;
constexpr u32 N_LIT = 288;
constexpr u32 N_DIST = 32;
constexpr u32 OUT_WINDOW = 4096;
typedef output_window<OUT_WINDOW> out_t;

__constant__ u16 LEN_BASE[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
__constant__ u8 LEN_EXTRA[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
__constant__ u16 DIST_BASE[30] = {1,    2,    3,    4,    5,    7,     9,     13,    17,  25,
                                  33,   49,   65,   97,   129,  193,   257,   385,   513, 769,
                                  1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
__constant__ u8 DIST_EXTRA[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                  6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
__constant__ u8 CL_ORDER[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

// One canonical Huffman code: a primary lookup table indexed by the next
// `bits` stream bits (entry = symbol | length << 9; length 0 means "longer
// than `bits`" or "no such code"), plus counts and sorted symbols for the
// slow path.
struct Huffman {
    u16 count[MAX_BITS + 1];
    u16 sorted[N_LIT];
};

struct WarpTables {
    u16 lit_lut[1 << LIT_BITS];
    u16 dist_lut[1 << DIST_BITS];
    Huffman lit;
    Huffman dist;
    u32 scratch[MAX_BITS + 2];  // per-length counters while building
    u8 lens[N_LIT + N_DIST];
};

__device__ __forceinline__ u32 reverse_bits(u32 code, u32 len) { return __brev(code) >> (32 - len); }

// Builds `h` and its primary table from code lengths lens[0..n). Returns
// false when the lengths do not form a valid code (zlib's rules).
__device__ bool build(const u8* lens, u32 n, Huffman& h, u16* lut, u32 lut_bits, u32* scratch,
                      bool allow_empty) {
    const u32 lane = lane_id();
    if (lane <= MAX_BITS) scratch[lane] = 0;
    __syncwarp();
    for (u32 i = lane; i < n; i += WARP)
        if (lens[i]) atomicAdd(&scratch[lens[i]], 1u);
    __syncwarp();
    // Validate and turn counts into first positions (lane 0; 15 steps).
    bool ok = true;
    if (lane == 0) {
        int left = 1;
        u32 total = 0, max_len = 0;
        for (u32 l = 1; l <= MAX_BITS; ++l) {
            left = (left << 1) - (int)scratch[l];
            if (left < 0) ok = false;
            total += scratch[l];
            if (scratch[l]) max_len = l;
        }
        if (total == 0) {
            ok = allow_empty;
        } else if (left > 0 && max_len != 1) {
            ok = false;  // incomplete code (only a lone 1-bit code may be)
        }
        u32 off = 0;
        for (u32 l = 0; l <= MAX_BITS; ++l) {
            h.count[l] = l == 0 ? 0 : (u16)scratch[l];
            u32 c = l == 0 ? 0 : scratch[l];
            scratch[l] = off;  // next sorted position for length l
            off += c;
        }
    }
    ok = __shfl_sync(FULL_MASK, ok, 0);
    __syncwarp();
    if (!ok) return false;
    // Sorted symbol order: by length, then symbol (canonical order).
    for (u32 base = 0; base < n; base += WARP) {
        const u32 i = base + lane;
        const u32 l = i < n ? lens[i] : 0;
        const u32 same = __match_any_sync(FULL_MASK, l);
        const u32 rank = __popc(same & lanemask_lt());
        if (i < n && l) h.sorted[scratch[l] + rank] = (u16)i;
        __syncwarp();
        if (i < n && l && rank == 0) scratch[l] += __popc(same);
        __syncwarp();
    }
    // Primary table: clear, then each symbol with a short code fills its
    // 2^(lut_bits - len) entries. Canonical code of the symbol at sorted
    // position p of length l: first_code[l] + (p - first_pos[l]).
    for (u32 e = lane; e < (1u << lut_bits); e += WARP) lut[e] = 0;
    __syncwarp();
    u32 code = 0, pos = 0;
    for (u32 l = 1; l <= MAX_BITS && l <= lut_bits; ++l) {
        const u32 cnt = h.count[l];
        for (u32 k = lane; k < cnt; k += WARP) {
            const u32 sym = h.sorted[pos + k];
            const u32 rev = reverse_bits(code + k, l);
            for (u32 e = rev; e < (1u << lut_bits); e += 1u << l) lut[e] = (u16)(sym | (l << 9));
        }
        code = (code + cnt) << 1;
        pos += cnt;
    }
    __syncwarp();
    return true;
}

// Decodes one symbol. Returns the symbol, or -1 (corrupt) / -2 (truncated).
__device__ __forceinline__ int decode_sym(input_stream& in, const Huffman& h, const u16* lut,
                                          u32 lut_bits) {
    in.need_bits(MAX_BITS);  // may come up short at the end of input
    const u32 e = lut[in.peek_bits(lut_bits)];
    const u32 len = e >> 9;
    if (len) {
        if (len > in.bit_cnt) return -2;
        in.skip_bits(len);
        return (int)(e & 511);
    }
    // Slow path: canonical decoding, one bit at a time (codes longer than
    // the primary table, or bits that start no code).
    u32 code = 0, first = 0, index = 0;
    for (u32 l = 1; l <= MAX_BITS; ++l) {
        if (l > in.bit_cnt) return -2;
        code |= (u32)(in.bit_buf >> (l - 1)) & 1u;
        const u32 cnt = h.count[l];
        if (code - first < cnt) {
            in.skip_bits(l);
            return (int)h.sorted[index + code - first];
        }
        index += cnt;
        first = (first + cnt) << 1;
        code <<= 1;
    }
    return -1;
}

// Adds the next `n` stream bits to `value`; false at the end of input.
__device__ __forceinline__ bool add_extra_bits(input_stream& in, u32 n, u32& value) {
    if (n == 0) return true;
    u32 extra;
    if (!in.fetch_bits(n, extra)) return false;
    value += extra;
    return true;
}

__device__ u32 inflate_chunk(input_stream& in, out_t& out, WarpTables& t) {
    const u32 lane = lane_id();
    for (;;) {
        u32 hdr;
        if (!in.fetch_bits(3, hdr)) return INPUT_TRUNCATED;
        const bool last = hdr & 1;
        const u32 type = hdr >> 1;
        if (type == 0) {
            in.align_to_byte();
            u32 len, nlen;
            if (!in.fetch_bits(16, len) || !in.fetch_bits(16, nlen)) return INPUT_TRUNCATED;
            if (len != (~nlen & 0xffffu)) return INPUT_CORRUPT;
            in.align_to_byte();  // return buffered whole bytes to the stream
            if (!out.room(len)) return OUTPUT_OVERFLOW;
            if (!out.copy_from(in, len)) return INPUT_TRUNCATED;
        } else if (type == 1 || type == 2) {
            // Fixed codes: all 32 distance codes exist (a complete code);
            // 30 and 31 are rejected when used, as zlib does.
            u32 nlen = 288, ndist = 32;
            if (type == 1) {
                for (u32 i = lane; i < N_LIT + N_DIST; i += WARP)
                    t.lens[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : i < 288 ? 8 : 5;
                __syncwarp();
            } else {
                u32 v;
                if (!in.fetch_bits(14, v)) return INPUT_TRUNCATED;
                nlen = (v & 31) + 257;
                ndist = ((v >> 5) & 31) + 1;
                const u32 ncode = (v >> 10) + 4;
                if (nlen > 286 || ndist > 30) return INPUT_CORRUPT;
                // Code-length code lengths, 3 bits each, in CL_ORDER.
                const u32 first = ncode < 10 ? ncode : 10;
                if (!in.need_bits(3 * first)) return INPUT_TRUNCATED;
                u64 bits3 = in.peek_bits(3 * first);
                in.skip_bits(3 * first);
                if (ncode > 10) {
                    if (!in.need_bits(3 * (ncode - 10))) return INPUT_TRUNCATED;
                    bits3 |= (u64)in.peek_bits(3 * (ncode - 10)) << 30;
                    in.skip_bits(3 * (ncode - 10));
                }
                if (lane < 19) {
                    const u32 idx = CL_ORDER[lane];
                    t.lens[N_LIT + N_DIST - 19 + idx] =
                        lane < ncode ? (u8)((bits3 >> (3 * lane)) & 7) : 0;
                }
                __syncwarp();
                // The code-length code uses the literal table's space.
                if (!build(t.lens + N_LIT + N_DIST - 19, 19, t.lit, t.lit_lut, 7, t.scratch, false))
                    return INPUT_CORRUPT;
                // Decode nlen + ndist lengths into lens (lane 0 writes; all decode).
                u32 i = 0, prev = 0;
                const u32 total = nlen + ndist;
                while (i < total) {
                    const int sym = decode_sym(in, t.lit, t.lit_lut, 7);
                    if (sym == -2) return INPUT_TRUNCATED;
                    if (sym < 0) return INPUT_CORRUPT;
                    // A 16 repeats the last length written, which is 0 after
                    // a 17 or 18 (zlib's rule).
                    u32 rep, val;
                    if (sym < 16) {
                        rep = 1;
                        val = sym;
                    } else {
                        u32 extra;
                        if (sym == 16) {
                            if (i == 0) return INPUT_CORRUPT;
                            if (!in.fetch_bits(2, extra)) return INPUT_TRUNCATED;
                            rep = 3 + extra;
                            val = prev;
                        } else if (sym == 17) {
                            if (!in.fetch_bits(3, extra)) return INPUT_TRUNCATED;
                            rep = 3 + extra;
                            val = 0;
                        } else {
                            if (!in.fetch_bits(7, extra)) return INPUT_TRUNCATED;
                            rep = 11 + extra;
                            val = 0;
                        }
                        if (i + rep > total) return INPUT_CORRUPT;
                    }
                    prev = val;
                    // Distance lengths overwrite the code-length code's
                    // lengths at the end of `lens`; its table is built.
                    for (u32 k = lane; k < rep; k += WARP) {
                        const u32 at = i + k;
                        t.lens[at < nlen ? at : N_LIT + (at - nlen)] = (u8)val;
                    }
                    i += rep;
                }
                __syncwarp();
                for (u32 k = nlen + lane; k < N_LIT; k += WARP) t.lens[k] = 0;
                __syncwarp();
                if (t.lens[256] == 0) return INPUT_CORRUPT;  // no end-of-block code
            }
            if (!build(t.lens, nlen, t.lit, t.lit_lut, LIT_BITS, t.scratch, false))
                return INPUT_CORRUPT;
            if (!build(t.lens + N_LIT, ndist, t.dist, t.dist_lut, DIST_BITS, t.scratch, true))
                return INPUT_CORRUPT;
            // Symbols.
            for (;;) {
                const int sym = decode_sym(in, t.lit, t.lit_lut, LIT_BITS);
                if (sym < 0) return sym == -2 ? INPUT_TRUNCATED : INPUT_CORRUPT;
                if (sym < 256) {
                    if (!out.write_byte((u8)sym)) return OUTPUT_OVERFLOW;
                    continue;
                }
                if (sym == 256) break;
                const u32 li = sym - 257;
                if (li >= 29) return INPUT_CORRUPT;
                u32 len = LEN_BASE[li];
                if (!add_extra_bits(in, LEN_EXTRA[li], len)) return INPUT_TRUNCATED;
                const int ds = decode_sym(in, t.dist, t.dist_lut, DIST_BITS);
                if (ds < 0) return ds == -2 ? INPUT_TRUNCATED : INPUT_CORRUPT;
                if (ds >= 30) return INPUT_CORRUPT;
                u32 dist = DIST_BASE[ds];
                if (!add_extra_bits(in, DIST_EXTRA[ds], dist)) return INPUT_TRUNCATED;
                if (dist > out.pos) return INPUT_CORRUPT;
                if (!out.room(len)) return OUTPUT_OVERFLOW;
                out.memcpy(dist, len);
            }
        } else {
            return INPUT_CORRUPT;  // reserved block type 3
        }
        if (last) return OK;
    }
}

extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)
    inflate_raw(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs, u32 njobs,
                u8* __restrict__ output, ChunkStatus* __restrict__ status) {
    __shared__ WarpTables tables[WARPS_PER_BLOCK];
    __shared__ __align__(16) u8 windows[WARPS_PER_BLOCK][OUT_WINDOW];
    WarpTables& t = tables[threadIdx.x / WARP];
    for_each_chunk(njobs, [&](u64 j, u8* ring) {
        const ChunkJob job = jobs[j];
        input_stream in;
        in.init(input + job.in_off, (u32)job.in_len, ring);
        out_t out;
        out.init(output + job.out_off, (u32)job.out_count, windows[threadIdx.x / WARP]);
        const u32 code = inflate_chunk(in, out, t);
        // Bytes produced before a failure are written too (unspecified
        // content, but never outside the job's range).
        out.finish();
        if (lane_id() == 0) {
            // The failing position is where the bit reader stood.
            const u32 at = in.pos > in.bit_cnt / 8 ? in.pos - in.bit_cnt / 8 : 0;
            status[j].code = code;
            status[j].detail = code == OK ? 0u : at;
            status[j].produced = out.pos;
        }
    });
}
