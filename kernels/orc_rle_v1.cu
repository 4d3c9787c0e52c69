// ORC integer run-length encoding, version 1, on the CODAG framework.
//
// Stream: a sequence of runs. Header byte h (signed):
//   h >= 0: a run of h + 3 values: a signed delta byte, then the base as a
//           varint; value i = base + i * delta.
//   h <  0: -h literal varints.
// Varints are little-endian base-128; signed streams zigzag-encode them.
//
// The warp parses from a byte_window (32 bytes, one per lane, with a ballot of
// varint terminators): a header is one shuffle, a run's base varint is a
// find-first-set on the terminator mask and an OR-reduction of the lanes'
// 7-bit groups, so short runs cost a few register operations. Literal varints
// are decoded a window at a time: each lane that holds a terminator assembles
// its varint and writes it at its rank among the terminators. A run is written
// by all lanes with write_run.
//
// The semantics (what is an error, at which offset, what `produced` says)
// match the CPU reference in src/codecs/orc_rle_v1/decode.rs exactly.
#include "codag.cuh"

using namespace codag;

template <int BITS>
struct width_traits {
    static constexpr u32 max_varint_bytes = (BITS + 6) / 7;
};

// True when the unsigned varint payload v fits in BITS bits.
template <int BITS>
__device__ __forceinline__ bool fits_bits(u64 v) {
    if constexpr (BITS == 64) return true;
    else return (v >> BITS) == 0;
}

template <bool SIGNED>
__device__ __forceinline__ u64 unzigzag(u64 v) {
    return SIGNED ? ((v >> 1) ^ (0 - (v & 1))) : v;
}

// Whether an element value (two's complement in 64 bits) is representable.
template <int BITS, bool SIGNED>
__device__ __forceinline__ bool in_range(i64 x) {
    if constexpr (BITS == 64) {
        return true;
    } else if constexpr (SIGNED) {
        const i64 lo = -(1ll << (BITS - 1)), hi = (1ll << (BITS - 1)) - 1;
        return x >= lo && x <= hi;
    } else {
        return x >= 0 && x <= (i64)((1ull << BITS) - 1);
    }
}

template <typename T, int BITS, bool SIGNED>
struct RleV1 {
    static constexpr u32 MAXB = width_traits<BITS>::max_varint_bytes;

    // What lane i finds when it assumes a header at window byte i: the next
    // header's position (0 = not a complete, valid header inside the
    // window), the values it yields, and for runs their base and delta. A
    // "valid" header here is one the serial path below would decode without
    // error, so the fast path never changes which streams are accepted.
    struct Spec {
        u64 base;
        u32 nxt;
        u32 n;
        u32 delta;
        bool run;
    };

    // Assembles the varint in window bytes [s, t] (t its terminator) and
    // says whether it is a valid value of BITS bits.
    __device__ static bool varint_at(const input_stream& in, u32 s, u32 t, u64& v) {
        if (t - s + 1 > MAXB) return false;
        v = 0;
        for (u32 k = s; k <= t; ++k) v |= (u64)(in.byte(k) & 0x7f) << (7 * (k - s));
        const u32 last = in.byte(t);
        const bool top = BITS == 64 && t - s + 1 == 10 && last > 1;
        return !top && fits_bits<BITS>(v);
    }

    __device__ static Spec analyze(const input_stream& in, const byte_window& w, u32& bad_ends) {
        const u32 i = lane_id();
        const u32 ends = w.ends;
        // As a literal varint that follows another (start = previous end + 1).
        const u32 below = ends & lanemask_lt();
        const u32 prev_end_plus1 = below ? 32 - __clz(below) : 0;
        bool bad = false;
        if (ends >> i & 1) {
            u64 v;
            bad = !varint_at(in, prev_end_plus1, i, v);
        }
        bad_ends = __ballot_sync(FULL_MASK, bad);
        Spec sp{0, 0, 0, 0, false};
        if (i >= w.avail) return sp;
        const int h = (int)(i8)w.byte;
        if (h >= 0) {
            if (i + 2 >= WARP || i + 1 >= w.avail) return sp;
            const u32 m = ends >> (i + 2);
            if (m == 0) return sp;
            const u32 t = i + 1 + __ffs(m);  // the base varint's terminator
            u64 v;
            if (!varint_at(in, i + 2, t, v)) return sp;
            const u32 n = (u32)h + 3;
            const i64 delta = (i64)(i8)in.byte(i + 1);
            const i64 base = (i64)unzigzag<SIGNED>(v);
            if (!in_range<BITS, SIGNED>(base) || !in_range<BITS, SIGNED>(base + (i64)(n - 1) * delta))
                return sp;
            sp = Spec{(u64)base, t + 1, n, (u32)delta, true};
        } else {
            const u32 k = (u32)(-h);
            u32 mm = i + 1 < WARP ? ends & (FULL_MASK << (i + 1)) : 0;
            if ((u32)__popc(mm) < k) return sp;
            const u32 t1 = __ffs(mm) - 1;
            for (u32 j = 1; j < k; ++j) mm &= mm - 1;  // drop the first k - 1 ends
            const u32 tk = __ffs(mm) - 1;
            u64 v;
            if (!varint_at(in, i + 1, t1, v)) return sp;
            const u32 later = (tk == 31 ? FULL_MASK : (1u << (tk + 1)) - 1) & ~((2u << t1) - 1);
            if (bad_ends & later) return sp;
            sp = Spec{0, tk + 1, k, 0, false};
        }
        return sp;
    }

    // Decodes the chain of valid headers that starts at window byte p and
    // lies wholly in the window, all of them in one warp step: literal
    // values by every lane that holds a varint end, runs one write_run each.
    // Returns the number of values produced (0: leave p to the serial path).
    __device__ static u32 chain(const input_stream& in, const byte_window& w, const Spec& sp,
                                u32 p, u32 room, T* out, u32& next) {
        const u32 lane = lane_id();
        u32 members = 0, total = 0, cur = p;
        while (cur < WARP) {
            const u32 nx = __shfl_sync(FULL_MASK, sp.nxt, cur);
            const u32 nn = __shfl_sync(FULL_MASK, sp.n, cur);
            if (nx == 0 || nn > room - total) break;
            members |= 1u << cur;
            total += nn;
            cur = nx;
        }
        if (members == 0) return 0;
        next = cur;
        // Output offset of each member: exclusive prefix sum of n.
        const bool member = members >> lane & 1;
        u32 incl = member ? sp.n : 0;
#pragma unroll
        for (u32 d = 1; d < WARP; d <<= 1) {
            const u32 o = __shfl_up_sync(FULL_MASK, incl, d);
            if (lane >= d) incl += o;
        }
        const u32 off = incl - (member ? sp.n : 0);
        // Literal values: this lane's varint belongs to the nearest member
        // header before it, when that header is a literal group reaching it.
        const u32 before = members & lanemask_lt();
        const u32 g = before ? 31 - __clz(before) : 0;
        const bool g_run = __shfl_sync(FULL_MASK, sp.run, g);
        const u32 g_nxt = __shfl_sync(FULL_MASK, sp.nxt, g);
        const u32 g_off = __shfl_sync(FULL_MASK, off, g);
        if (before && !g_run && (w.ends >> lane & 1) && lane < g_nxt) {
            const u32 after_g = w.ends & ~((2u << g) - 1);
            const u32 rank = __popc(after_g & lanemask_lt());
            const u32 prev = after_g & lanemask_lt();
            const u32 start = prev ? 32 - __clz(prev) : g + 1;
            u64 v = 0;
            for (u32 k = start; k <= lane; ++k) v |= (u64)(in.byte(k) & 0x7f) << (7 * (k - start));
            out[g_off + rank] = (T)unzigzag<SIGNED>(v);
        }
        u32 runs = members & __ballot_sync(FULL_MASK, sp.run);
        while (runs) {
            const u32 r = __ffs(runs) - 1;
            runs &= runs - 1;
            const u64 base = __shfl_sync(FULL_MASK, sp.base, r);
            const u32 delta = __shfl_sync(FULL_MASK, sp.delta, r);
            const u32 n = __shfl_sync(FULL_MASK, sp.n, r);
            const u32 o = __shfl_sync(FULL_MASK, off, r);
            write_run<T>(out + o, n, base, (u64)(i64)(int)delta);
        }
        return total;
    }

    __device__ static void decode(const u8* chunk, const ChunkJob& job, T* out, ChunkStatus* st,
                                  u8* ring) {
        input_stream in;
        in.init(chunk, (u32)job.in_len, ring);
        const u32 lane = lane_id();
        // 32-bit counters: Stage::validate bounds chunks below 4 Gi values.
        const u32 count = (u32)job.out_count;
        u32 produced = 0;
        u32 code = OK;
        u32 run_at = 0;
        // Parse position is in.pos + p; the window holds bytes in.pos .. in.pos + 31.
        byte_window w;
        w.load(in);
        u32 p = 0;
        u32 bad_ends;
        Spec sp = analyze(in, w, bad_ends);
        bool spec_fresh = true;
        while (produced < count) {
            if (p + 2 + MAXB > WARP) {  // keep a whole run header inside the window
                in.advance(p);
                p = 0;
                w.load(in);
                spec_fresh = false;
            }
            if (!spec_fresh) {
                sp = analyze(in, w, bad_ends);
                spec_fresh = true;
            }
            // Fast path: every valid header from p to the window's end at once.
            u32 next;
            const u32 got = chain(in, w, sp, p, count - produced, out + produced, next);
            if (got) {
                produced += got;
                p = next;
                continue;
            }
            run_at = in.pos + p;
            if (p >= w.avail) {
                code = OUTPUT_SHORT;
                break;
            }
            const int h = (int)(i8)w.at(p);
            if (h >= 0) {
                const u32 n = (u32)h + 3;
                if (w.avail - p < 2) {
                    code = INPUT_TRUNCATED;
                    break;
                }
                if (n > count - produced) {
                    code = OUTPUT_OVERFLOW;
                    break;
                }
                const i64 delta = (i64)(i8)w.at(p + 1);
                // The base varint lies wholly inside the window (p + 2 + MAXB <= 32).
                const u32 vstart = p + 2;
                const u32 m = w.ends >> vstart;
                if (m == 0) {
                    const u32 left_in = w.avail > vstart ? w.avail - vstart : 0;
                    code = left_in >= MAXB ? VARINT_OVERLONG : INPUT_TRUNCATED;
                    break;
                }
                const u32 nb = __ffs(m);
                if (nb > MAXB) {
                    code = VARINT_OVERLONG;
                    break;
                }
                const int k = (int)lane - (int)vstart;
                u64 c = 0;
                bool top = false;
                if (k >= 0 && k < (int)nb) {
                    c = (u64)(w.byte & 0x7f) << (7 * k);
                    top = BITS == 64 && k == 9 && w.byte > 1;  // bits past 63
                }
                const u64 v = (u64)__reduce_or_sync(FULL_MASK, (u32)c) |
                              ((u64)__reduce_or_sync(FULL_MASK, (u32)(c >> 32)) << 32);
                if (__any_sync(FULL_MASK, top) || !fits_bits<BITS>(v)) {
                    code = VALUE_OUT_OF_RANGE;
                    break;
                }
                const i64 base = (i64)unzigzag<SIGNED>(v);
                if (!in_range<BITS, SIGNED>(base) ||
                    !in_range<BITS, SIGNED>(base + (i64)(n - 1) * delta)) {
                    code = VALUE_OUT_OF_RANGE;
                    break;
                }
                write_run<T>(out + produced, n, (u64)base, (u64)delta);
                produced += n;
                p = vstart + nb;
            } else {
                u32 left = (u32)(-h);
                if (left > count - produced) {
                    code = OUTPUT_OVERFLOW;
                    break;
                }
                p += 1;
                u32 lit_produced = produced;
                while (left > 0) {
                    u32 m = p < WARP ? w.ends & (FULL_MASK << p) : 0;
                    if (m == 0 && p > 0) {  // the next varint starts in a later window
                        in.advance(p);
                        p = 0;
                        w.load(in);
                        spec_fresh = false;
                        m = w.ends;
                    }
                    if (m == 0) {
                        code = w.avail >= MAXB ? VARINT_OVERLONG : INPUT_TRUNCATED;
                        break;
                    }
                    const u32 k = min((u32)__popc(m), left);
                    const u32 before = m & lanemask_lt();
                    const u32 rank = __popc(before);
                    const bool mine = (m >> lane & 1) && rank < k;
                    const u32 start = before ? 32 - __clz(before) : p;
                    u32 err = OK;
                    u64 v = 0;
                    if (mine) {
                        const u32 nbytes = lane - start + 1;
                        if (nbytes > MAXB) {
                            err = VARINT_OVERLONG;
                        } else {
                            // Earlier bytes of a long varint sit in other lanes;
                            // the ring still holds them.
                            for (u32 i = start; i < lane; ++i)
                                v |= (u64)(in.byte(i) & 0x7f) << (7 * (i - start));
                            v |= (u64)w.byte << (7 * (nbytes - 1));
                            const bool top = BITS == 64 && nbytes == 10 && w.byte > 1;
                            if (top || !fits_bits<BITS>(v)) err = VALUE_OUT_OF_RANGE;
                        }
                    }
                    // The lowest-ranked failing varint decides, as on the CPU.
                    const u32 bad = __ballot_sync(FULL_MASK, err != OK);
                    if (bad) {
                        code = __shfl_sync(FULL_MASK, err, __ffs(bad) - 1);
                        break;
                    }
                    if (mine) out[lit_produced + rank] = (T)unzigzag<SIGNED>(v);
                    const u32 kth_end =
                        __ballot_sync(FULL_MASK, (m >> lane & 1) && rank == k - 1);
                    p = __ffs(kth_end);  // one past the k-th end
                    lit_produced += k;
                    left -= k;
                }
                if (code != OK) break;
                produced = lit_produced;
            }
        }
        if (lane == 0) {
            st->code = code;
            st->detail = code == OK ? 0u : run_at;
            st->produced = produced;
        }
    }
};

#define ORC_RLE_V1_ENTRY(NAME, T, BITS, SIGNED)                                              \
    extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)                     \
        NAME(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs, u32 njobs,     \
             T* __restrict__ output, ChunkStatus* __restrict__ status) {                     \
        for_each_chunk(njobs, [&](u64 j, u8* ring) {                                         \
            const ChunkJob job = jobs[j];                                                    \
            RleV1<T, BITS, SIGNED>::decode(input + job.in_off, job, output + job.out_off,    \
                                           status + j, ring);                                \
        });                                                                                  \
    }

ORC_RLE_V1_ENTRY(orc_rle_v1_i8, i8, 8, true)
ORC_RLE_V1_ENTRY(orc_rle_v1_u8, u8, 8, false)
ORC_RLE_V1_ENTRY(orc_rle_v1_i16, short, 16, true)
ORC_RLE_V1_ENTRY(orc_rle_v1_u16, u16, 16, false)
ORC_RLE_V1_ENTRY(orc_rle_v1_i32, i32, 32, true)
ORC_RLE_V1_ENTRY(orc_rle_v1_u32, u32, 32, false)
ORC_RLE_V1_ENTRY(orc_rle_v1_i64, i64, 64, true)
ORC_RLE_V1_ENTRY(orc_rle_v1_u64, u64, 64, false)
