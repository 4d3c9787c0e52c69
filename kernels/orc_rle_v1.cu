// ORC integer run-length encoding, version 1, on the CODAG framework.
//
// Stream: a sequence of runs. Header byte h (signed):
//   h >= 0: a run of h + 3 values: a signed delta byte, then the base as a
//           varint; value i = base + i * delta.
//   h <  0: -h literal varints.
// Varints are little-endian base-128; signed streams zigzag-encode them.
//
// Literal varints are decoded a 32-byte window at a time: every lane tests one
// byte for the terminator (high bit clear), a ballot gives all varint ends in
// the window, and each lane that holds an end assembles its varint and writes
// it at its rank among the ends. A run is written by all lanes with write_run.
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

    // Decodes one varint whose first byte is at in.pos + at; all lanes get
    // the same result. Returns a Status; `nbytes` is its length.
    __device__ static u32 scalar_varint(input_stream& in, u64 at, u64& v, u32& nbytes) {
        in.ensure((u32)(at + MAXB));
        v = 0;
        for (u32 i = 0;; ++i) {
            if (i == MAXB) return VARINT_OVERLONG;
            if (in.pos + at + i >= in.len) return INPUT_TRUNCATED;
            u32 b = in.byte(at + i);
            v |= (u64)(b & 0x7f) << (7 * i);
            if (b < 0x80) {
                nbytes = i + 1;
                // the last byte may carry bits above BITS
                if (i == MAXB - 1 && BITS % 7 != 0 && (b >> (BITS - 7 * i)) != 0)
                    return VALUE_OUT_OF_RANGE;
                return fits_bits<BITS>(v) ? OK : VALUE_OUT_OF_RANGE;
            }
        }
    }

    __device__ static void decode(const u8* chunk, const ChunkJob& job, T* out, ChunkStatus* st,
                                  u8* ring) {
        input_stream in;
        in.init(chunk, job.in_len, ring);
        const u32 lane = lane_id();
        u64 produced = 0;
        u32 code = OK;
        u64 run_at = 0;
        while (produced < job.out_count) {
            run_at = in.pos;
            if (in.pos >= in.len) {
                code = OUTPUT_SHORT;
                break;
            }
            in.ensure(2 + MAXB);
            const int h = (int)(i8)in.byte(0);
            if (h >= 0) {
                const u64 n = (u64)h + 3;
                if (in.remaining() < 2) {
                    code = INPUT_TRUNCATED;
                    break;
                }
                if (n > job.out_count - produced) {
                    code = OUTPUT_OVERFLOW;
                    break;
                }
                const i64 delta = (i64)(i8)in.byte(1);
                u64 v;
                u32 nb;
                code = scalar_varint(in, 2, v, nb);
                if (code != OK) break;
                const i64 base = (i64)unzigzag<SIGNED>(v);
                if (!in_range<BITS, SIGNED>(base) ||
                    !in_range<BITS, SIGNED>(base + (i64)(n - 1) * delta)) {
                    code = VALUE_OUT_OF_RANGE;
                    break;
                }
                write_run<T>(out + produced, n, (u64)base, (u64)delta);
                produced += n;
                in.advance(2 + nb);
            } else {
                u64 left = (u64)(-h);
                if (left > job.out_count - produced) {
                    code = OUTPUT_OVERFLOW;
                    break;
                }
                in.advance(1);
                u64 lit_produced = produced;
                while (left > 0) {
                    in.ensure(WARP);
                    const bool have = in.pos + lane < in.len;
                    const u32 b = have ? in.byte(lane) : 0x80u;
                    const u32 ends = __ballot_sync(FULL_MASK, b < 0x80);
                    const u32 avail = (u32)min((u64)WARP, in.remaining());
                    if (ends == 0) {
                        code = avail >= MAXB ? VARINT_OVERLONG : INPUT_TRUNCATED;
                        break;
                    }
                    const u32 k = (u32)min((u64)__popc(ends), left);
                    const u32 before = ends & lanemask_lt();
                    const u32 rank = __popc(before);
                    const bool mine = (ends >> lane & 1) && rank < k;
                    const u32 start = before ? 32 - __clz(before) : 0;
                    u32 err = OK;
                    u64 v = 0;
                    if (mine) {
                        const u32 nbytes = lane - start + 1;
                        if (nbytes > MAXB) {
                            err = VARINT_OVERLONG;
                        } else {
                            for (u32 i = start; i <= lane; ++i)
                                v |= (u64)(in.byte(i) & 0x7f) << (7 * (i - start));
                            const u32 last = b;
                            if (nbytes == MAXB && BITS % 7 != 0 &&
                                (last >> (BITS - 7 * (MAXB - 1))) != 0)
                                err = VALUE_OUT_OF_RANGE;
                            else if (!fits_bits<BITS>(v))
                                err = VALUE_OUT_OF_RANGE;
                        }
                    }
                    // The lowest-ranked failing varint decides, as on the CPU.
                    const u32 bad = __ballot_sync(FULL_MASK, err != OK);
                    if (bad) {
                        code = __shfl_sync(FULL_MASK, err, __ffs(bad) - 1);
                        break;
                    }
                    if (mine) out[lit_produced + rank] = (T)unzigzag<SIGNED>(v);
                    // Position after the k-th end in the window.
                    const u32 kth_end =
                        __ballot_sync(FULL_MASK, (ends >> lane & 1) && rank == k - 1);
                    in.advance(__ffs(kth_end));
                    lit_produced += k;
                    left -= k;
                }
                if (code != OK) break;
                produced = lit_produced;
            }
        }
        if (lane == 0) {
            st->code = code;
            st->detail = code == OK ? 0u : (u32)min(run_at, (u64)0xffffffffu);
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
