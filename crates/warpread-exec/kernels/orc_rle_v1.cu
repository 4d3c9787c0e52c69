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
// match the CPU reference in crates/warpread-codecs/src/orc_rle_v1/decode.rs exactly.
#include "codag.cuh"

using namespace codag;

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
    static constexpr u32 MAXB = (BITS + 6) / 7;  // longest varint of BITS bits

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
        while (produced < count) {
            if (p + 2 + MAXB > WARP) {  // keep a whole run header inside the window
                in.advance(p);
                p = 0;
                w.load(in);
            }
            run_at = in.pos + p;
            if (p >= w.avail) {
                code = OUTPUT_SHORT;
                break;
            }
            const int h = (int)(i8)w.at(p);
            if (h >= 0) {
                // A run longer than the job still wants is cut short, as
                // ORC readers take only what they need of a run.
                const u32 n = min((u32)h + 3, count - produced);
                if (w.avail - p < 2) {
                    code = INPUT_TRUNCATED;
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
                u32 left = min((u32)(-h), count - produced);
                p += 1;
                u32 lit_produced = produced;
                while (left > 0) {
                    u32 m = p < WARP ? w.ends & (FULL_MASK << p) : 0;
                    if (m == 0 && p > 0) {  // the next varint starts in a later window
                        in.advance(p);
                        p = 0;
                        w.load(in);
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

// BITS is the width values are decoded and range-checked at. Signed streams
// are 64-bit on the wire whatever the column width, and the store keeps the
// low bits, as ORC C++ and Java narrow the decoded long (valid writers rely
// on it: cudf's TestOrcFile.int16.rle.size.orc); unsigned streams (lengths,
// indexes, nanoseconds) must fit their type. Mirrors orc_wire_type in
// crates/warpread-codecs/src/int.rs.
ORC_RLE_V1_ENTRY(orc_rle_v1_i8, i8, 64, true)
ORC_RLE_V1_ENTRY(orc_rle_v1_u8, u8, 8, false)
ORC_RLE_V1_ENTRY(orc_rle_v1_i16, short, 64, true)
ORC_RLE_V1_ENTRY(orc_rle_v1_u16, u16, 16, false)
ORC_RLE_V1_ENTRY(orc_rle_v1_i32, i32, 64, true)
ORC_RLE_V1_ENTRY(orc_rle_v1_u32, u32, 32, false)
ORC_RLE_V1_ENTRY(orc_rle_v1_i64, i64, 64, true)
ORC_RLE_V1_ENTRY(orc_rle_v1_u64, u64, 64, false)
