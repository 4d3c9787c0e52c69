// ORC integer run-length encoding, version 2, on the CODAG framework.
//
// Runs (top two header bits): SHORT_REPEAT (one big-endian value repeated
// 3-10 times), DIRECT (up to 512 values bit-packed MSB first), PATCHED_BASE
// (a sign-magnitude base plus narrow packed offsets, with a patch list that
// restores the high bits of a few outliers) and DELTA (a varint base, a
// signed first delta and either a constant step or packed delta magnitudes).
//
// One warp per chunk; every lane reads the same header bytes from the
// warp's shared-memory ring. Packed values are unpacked 32 (16 for widths
// above 56 bits) per warp step, each lane assembling its value from three
// aligned ring words, so any width costs the same few instructions. DELTA
// runs turn their deltas into values with a warp prefix sum; PATCHED_BASE
// parses its whole patch list at once, one entry per lane, and prefix-sums
// the gaps into positions.
//
// The semantics (what is an error, at which offset, what `produced` says)
// match the CPU reference in crates/warpread-codecs/src/orc_rle_v2/decode.rs exactly,
// including the order of the checks within a run and the cutting short of a
// run that holds more values than the job still wants.
#include "codag.cuh"

using namespace codag;

__device__ __forceinline__ u32 decode_width(u32 code) {
    code &= 31;
    if (code <= 23) return code + 1;
    // 24..31 -> 26, 28, 30, 32, 40, 48, 56, 64
    return code <= 27 ? 26 + 2 * (code - 24) : 40 + 8 * (code - 28);
}

__device__ __forceinline__ u32 closest_fixed(u32 bits) {
    if (bits == 0) return 1;
    if (bits <= 24) return bits;
    if (bits <= 32) return (bits + 1) & ~1u;
    return bits <= 64 ? (bits + 7) & ~7u : 64;
}

__device__ __forceinline__ u32 packed_len(u32 count, u32 width) {
    return (u32)(((u64)count * width + 7) >> 3);
}

template <bool SIGNED>
__device__ __forceinline__ u64 unzigzag(u64 v) {
    return SIGNED ? ((v >> 1) ^ (0 - (v & 1))) : v;
}

// Whether an element value (two's complement in 64 bits) is representable.
template <int BITS, bool SIGNED>
__device__ __forceinline__ bool in_range(u64 v) {
    const i64 x = (i64)v;
    if constexpr (BITS == 64) {
        return true;
    } else if constexpr (SIGNED) {
        return x >= -(1ll << (BITS - 1)) && x <= (1ll << (BITS - 1)) - 1;
    } else {
        return x >= 0 && x <= (i64)((1ull << BITS) - 1);
    }
}

// The `width`-bit (1..64) big-endian field starting `skip` (0..7) bits into
// byte in.pos + off. Reads 8 ring bytes through three aligned words; every
// encodable width with its possible skips fits in those 64 bits (64-bit
// fields are always byte-aligned). The bytes must be ensured; bytes past the
// field are masked off, so stale ring bytes past the chunk are harmless.
__device__ __forceinline__ u64 ring_field(const input_stream& in, u32 off, u32 skip, u32 width) {
    const u32 r = in.pos + in.skew + off;
    const u32* words = reinterpret_cast<const u32*>(in.ring);
    constexpr u32 M = RING / 4 - 1;
    const u32 i = r >> 2;
    const u32 a = words[i & M], b = words[(i + 1) & M], c = words[(i + 2) & M];
    const u32 sh = 8 * (r & 3);
    const u32 x0 = __funnelshift_r(a, b, sh);
    const u32 x1 = __funnelshift_r(b, c, sh);
    const u64 be = ((u64)__byte_perm(x0, 0, 0x0123) << 32) | __byte_perm(x1, 0, 0x0123);
    return (be << skip) >> (64 - width);
}

// The same field read straight from global memory, byte by byte, bytes at
// or past `len` reading as zero (used for the few patch-list entries).
__device__ __forceinline__ u64 global_field(const u8* chunk, u32 len, u32 at, u32 bit, u32 width) {
    const u32 first = at + (bit >> 3);
    u64 be = 0;
#pragma unroll
    for (u32 b = 0; b < 8; ++b) {
        const u32 p = first + b;
        be = (be << 8) | (p < len ? (u64)__ldg(chunk + p) : 0ull);
    }
    return (be << (bit & 7)) >> (64 - width);
}

// Reads the varint at in.pos + p with the CPU's rules for a BITS-wide value
// (crates/warpread-codecs/src/varint.rs): length limit, end of input, then width. The bytes
// up to p + 10 must be ensured. Warp-uniform.
template <int BITS>
__device__ __forceinline__ u32 read_varint(const input_stream& in, u32& p, u64& out) {
    constexpr u32 MAXB = (BITS + 6) / 7;
    const u32 rem = in.remaining();
    u64 v = 0;
    for (u32 i = 0;; ++i) {
        if (i == MAXB) return VARINT_OVERLONG;
        if (p + i >= rem) return INPUT_TRUNCATED;
        const u32 b = in.byte(p + i);
        v |= (u64)(b & 0x7f) << (7 * i);
        if (b < 0x80) {
            const bool top = BITS == 64 && i == MAXB - 1 && b > 1;
            const bool fits = BITS == 64 || (v >> (BITS % 64)) == 0;
            if (top || !fits) return VALUE_OUT_OF_RANGE;
            p += i + 1;
            out = v;
            return OK;
        }
    }
}

// Unpacks the first `n` of `all` fields of `width` bits starting at in.pos
// (byte-aligned), 32 (16 when wider than 56 bits) per warp step, a whole
// number of bytes per step, and calls f(k, valid, raw) on every lane of
// every step (so f may use warp collectives); lanes past the fields get
// valid = false and raw = 0. Returns with in.pos past all `all` fields.
template <typename F>
__device__ __forceinline__ void unpack_fields(input_stream& in, u32 n, u32 all, u32 width, F f) {
    const u32 lane = lane_id();
    const u32 step = width <= 56 ? 32 : 16;
    const u32 step_bytes = step * width / 8;
    const u32 start = in.pos;
    for (u32 j = 0; j < n; j += step) {
        in.pos = start + j / step * step_bytes;
        in.ensure(step_bytes + 8);
        const u32 k = j + lane;
        const bool valid = lane < step && k < n;
        const u32 bit = lane * width;
        f(k, valid, valid ? ring_field(in, bit >> 3, bit & 7, width) : 0ull);
    }
    in.pos = start + packed_len(all, width);
}

template <typename T, int BITS, bool SIGNED>
struct RleV2 {
    __device__ static u32 short_repeat(input_stream& in, u32 h0, u32 room, T* out, u32& n) {
        const u32 width = ((h0 >> 3) & 7) + 1;
        n = min((h0 & 7) + 3, room);
        if (in.remaining() < 1 + width) return INPUT_TRUNCATED;
        u64 raw = 0;
        for (u32 i = 1; i <= width; ++i) raw = (raw << 8) | in.byte(i);
        const u64 v = unzigzag<SIGNED>(raw);
        if (!in_range<BITS, SIGNED>(v)) return VALUE_OUT_OF_RANGE;
        write_run<T>(out, n, v, 0);
        in.advance(1 + width);
        return OK;
    }

    __device__ static u32 direct(input_stream& in, u32 h0, u32 room, T* out, u32& n) {
        const u32 rem = in.remaining();
        if (rem < 2) return INPUT_TRUNCATED;
        const u32 width = decode_width(h0 >> 1);
        const u32 all = (((h0 & 1) << 8) | in.byte(1)) + 1;
        if (rem - 2 < packed_len(all, width)) return INPUT_TRUNCATED;
        n = min(all, room);
        in.advance(2);
        bool bad = false;
        unpack_fields(in, n, all, width, [&](u32 k, bool valid, u64 raw) {
            const u64 v = unzigzag<SIGNED>(raw);
            if (!valid) return;
            if (in_range<BITS, SIGNED>(v)) out[k] = (T)v;
            else bad = true;
        });
        return __any_sync(FULL_MASK, bad) ? VALUE_OUT_OF_RANGE : OK;
    }

    __device__ static u32 patched_base(input_stream& in, const u8* chunk, u32 h0, u32 room, T* out,
                                       u32& n) {
        const u32 lane = lane_id();
        const u32 rem = in.remaining();
        if (rem < 4) return INPUT_TRUNCATED;
        const u32 h2 = in.byte(2), h3 = in.byte(3);
        const u32 width = decode_width(h0 >> 1);
        const u32 all = (((h0 & 1) << 8) | in.byte(1)) + 1;
        const u32 base_bytes = (h2 >> 5) + 1;
        const u32 patch_width = decode_width(h2);
        const u32 gap_width = (h3 >> 5) + 1;
        const u32 patches = h3 & 31;
        if (patches > 0 && gap_width + patch_width > 64) return INPUT_CORRUPT;
        const u32 entry_width = closest_fixed(gap_width + patch_width);
        const u32 data_len = packed_len(all, width);
        const u32 list_len = packed_len(patches, entry_width);
        if ((u64)4 + base_bytes + data_len + list_len > rem) return INPUT_TRUNCATED;

        in.ensure(12);
        u64 raw = 0;
        for (u32 i = 0; i < base_bytes; ++i) raw = (raw << 8) | in.byte(4 + i);
        const u64 sign = 1ull << (base_bytes * 8 - 1);
        const u64 base = (raw & sign) ? 0 - (raw & ~sign) : raw;

        // The patch list, one entry per lane: positions are the inclusive
        // prefix sums of the gaps; (255, 0) entries only extend the gap.
        const u32 data_at = in.pos + 4 + base_bytes;
        const u32 list_at = data_at + data_len;
        const bool has = lane < patches;
        u64 entry = 0;
        if (has) entry = global_field(chunk, in.len, list_at, lane * entry_width, entry_width);
        // patches > 0 implies patch_width <= 63, so these shifts are defined.
        const u32 gap = has ? (u32)(entry >> patch_width) : 0;
        const u64 patch = has ? entry & ((1ull << patch_width) - 1) : 0;
        const bool filler = has && gap == 255 && patch == 0;
        u32 at = gap;
        for (u32 d = 1; d < WARP; d <<= 1) {
            const u32 t = __shfl_up_sync(FULL_MASK, at, d);
            if (lane >= d) at += t;
        }
        const u32 fillers = __ballot_sync(FULL_MASK, filler);
        const u32 real = __ballot_sync(FULL_MASK, has && !filler);
        const u32 before = real & lanemask_lt();
        const u32 prev = before ? 31 - __clz(before) : 0;
        const u32 prev_at = __shfl_sync(FULL_MASK, at, prev);
        const bool dup = has && !filler && before != 0 && prev_at == at;
        if ((patches > 0 && (fillers >> (patches - 1) & 1)) || __any_sync(FULL_MASK, dup))
            return INPUT_CORRUPT;
        n = min(all, room);
        const u32 applied = __ballot_sync(FULL_MASK, has && !filler && at < n);

        // Unpatched values by all lanes; patched positions are skipped here
        // and written (and range-checked) by the lane holding the patch.
        in.advance(4 + base_bytes);
        bool bad = false;
        unpack_fields(in, n, all, width, [&](u32 k, bool valid, u64 off) {
            bool patched = false;
            for (u32 m = applied; m; m &= m - 1)
                patched |= k == __shfl_sync(FULL_MASK, at, __ffs(m) - 1);
            if (!valid || patched) return;
            const u64 v = base + off;
            if (in_range<BITS, SIGNED>(v)) out[k] = (T)v;
            else bad = true;
        });
        __syncwarp();
        if (applied >> lane & 1) {
            const u64 off = global_field(chunk, in.len, data_at, at * width, width);
            const u64 v = base + (off | (width < 64 ? patch << width : 0));
            if (in_range<BITS, SIGNED>(v)) out[at] = (T)v;
            else bad = true;
        }
        in.pos = list_at + list_len;
        return __any_sync(FULL_MASK, bad) ? VALUE_OUT_OF_RANGE : OK;
    }

    __device__ static u32 delta(input_stream& in, u32 h0, u32 room, T* out, u32& n) {
        const u32 lane = lane_id();
        if (in.remaining() < 2) return INPUT_TRUNCATED;
        const u32 code = (h0 >> 1) & 31;
        const u32 width = code == 0 ? 0 : decode_width(code);
        const u32 all = (((h0 & 1) << 8) | in.byte(1)) + 1;
        if (width != 0 && all < 2) return INPUT_CORRUPT;
        in.ensure(2 + 10 + 10);
        u32 p = 2;
        u64 raw, zz;
        u32 st = read_varint<BITS>(in, p, raw);
        if (st != OK) return st;
        st = read_varint<64>(in, p, zz);
        if (st != OK) return st;
        const u64 base = unzigzag<SIGNED>(raw);
        const u64 step = unzigzag<true>(zz);
        n = min(all, room);
        bool bad = false;
        if (width == 0) {
            for (u32 k = lane; k < n; k += WARP) {
                const u64 v = base + (u64)k * step;
                if (in_range<BITS, SIGNED>(v)) out[k] = (T)v;
                else bad = true;
            }
            in.advance(p);
            return __any_sync(FULL_MASK, bad) ? VALUE_OUT_OF_RANGE : OK;
        }
        if (in.remaining() - p < packed_len(all - 2, width)) return INPUT_TRUNCATED;
        if (lane < min(n, 2u)) {
            const u64 v = base + (lane ? step : 0);
            if (in_range<BITS, SIGNED>(v)) out[lane] = (T)v;
            else bad = true;
        }
        // Deltas share the first delta's sign; a warp prefix sum per step
        // turns them into values (wrapping, as the CPU's sequential sums).
        const bool down = (i64)step < 0;
        u64 carry = base + step;
        in.advance(p);
        unpack_fields(in, n > 2 ? n - 2 : 0, all - 2, width, [&](u32 k, bool valid, u64 d) {
            u64 s = d;
            for (u32 o = 1; o < WARP; o <<= 1) {
                const u64 t = __shfl_up_sync(FULL_MASK, s, o);
                if (lane >= o) s += t;
            }
            const u64 v = down ? carry - s : carry + s;
            if (valid) {
                if (in_range<BITS, SIGNED>(v)) out[2 + k] = (T)v;
                else bad = true;
            }
            carry = __shfl_sync(FULL_MASK, v, WARP - 1);
        });
        return __any_sync(FULL_MASK, bad) ? VALUE_OUT_OF_RANGE : OK;
    }

    __device__ static void decode(const u8* chunk, const ChunkJob& job, T* out, ChunkStatus* st,
                                  u8* ring) {
        input_stream in;
        in.init(chunk, (u32)job.in_len, ring);
        // 32-bit counters: Stage::validate bounds chunks below 4 Gi values.
        const u32 count = (u32)job.out_count;
        u32 produced = 0;
        u32 code = OK;
        u32 run_at = 0;
        while (produced < count) {
            run_at = in.pos;
            in.ensure(16);
            if (in.remaining() == 0) {
                code = OUTPUT_SHORT;
                break;
            }
            const u32 h0 = in.byte(0);
            const u32 room = count - produced;
            T* o = out + produced;
            u32 n = 0;
            switch (h0 >> 6) {
                case 0: code = short_repeat(in, h0, room, o, n); break;
                case 1: code = direct(in, h0, room, o, n); break;
                case 2: code = patched_base(in, chunk, h0, room, o, n); break;
                default: code = delta(in, h0, room, o, n); break;
            }
            if (code != OK) break;
            produced += n;
        }
        if (lane_id() == 0) {
            st->code = code;
            st->detail = code == OK ? 0u : run_at;
            st->produced = produced;
        }
    }
};

#define ORC_RLE_V2_ENTRY(NAME, T, BITS, SIGNED)                                              \
    extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)                     \
        NAME(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs, u32 njobs,     \
             T* __restrict__ output, ChunkStatus* __restrict__ status) {                     \
        for_each_chunk(njobs, [&](u64 j, u8* ring) {                                         \
            const ChunkJob job = jobs[j];                                                    \
            RleV2<T, BITS, SIGNED>::decode(input + job.in_off, job, output + job.out_off,    \
                                           status + j, ring);                                \
        });                                                                                  \
    }

// BITS is the width values are decoded and range-checked at. Signed streams
// are 64-bit on the wire whatever the column width, and the store keeps the
// low bits, as ORC C++ and Java narrow the decoded long (valid writers rely
// on it: cudf's TestOrcFile.int16.rle.size.orc); unsigned streams (lengths,
// indexes, nanoseconds) must fit their type. Mirrors orc_wire_type in
// crates/warpread-codecs/src/int.rs.
ORC_RLE_V2_ENTRY(orc_rle_v2_i8, i8, 64, true)
ORC_RLE_V2_ENTRY(orc_rle_v2_u8, u8, 8, false)
ORC_RLE_V2_ENTRY(orc_rle_v2_i16, short, 64, true)
ORC_RLE_V2_ENTRY(orc_rle_v2_u16, u16, 16, false)
ORC_RLE_V2_ENTRY(orc_rle_v2_i32, i32, 64, true)
ORC_RLE_V2_ENTRY(orc_rle_v2_u32, u32, 32, false)
ORC_RLE_V2_ENTRY(orc_rle_v2_i64, i64, 64, true)
ORC_RLE_V2_ENTRY(orc_rle_v2_u64, u64, 64, false)
