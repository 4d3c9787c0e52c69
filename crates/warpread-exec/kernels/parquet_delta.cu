// Parquet DELTA_BINARY_PACKED on the CODAG framework, into i32 or i64.
//
// Header: <block size> <miniblocks per block> <total count> <first value>
// (ULEB128, the first zigzag); then blocks of <min delta> (zigzag ULEB128),
// one bit-width byte per miniblock and the miniblocks' deltas bit-packed LSB
// first. Value i + 1 = value i + min delta + delta i, wrapping.
//
// One warp per job. Headers are parsed by every lane from the ring; a
// miniblock is unpacked 32 deltas per warp step (16 above 56 bits, so a
// step's bytes fit the ring's look-ahead), each lane assembling its field
// from four aligned ring words, and a 64-bit warp prefix sum of
// (min delta + delta) plus the previous step's last value turns deltas into
// values. Miniblock widths are read from global memory when a miniblock is
// entered (a block may have many).
//
// Statuses match crates/warpread-codecs/src/parquet_delta_binary_packed/decode.rs exactly:
// header varints (offset of the failing varint), header sanity
// (InputCorrupt at 0), too few values (OutputShort at the input's end), then
// per block and miniblock in stream order: the min-delta varint, the width
// bytes, a width over the type's (InputCorrupt at the block), and the first
// value whose bits the input lacks (InputTruncated at the block, produced =
// the values before it). Miniblocks and blocks are only entered when a value
// of them is needed, as in the CPU's lazy walk.
#include "codag.cuh"

using namespace codag;

// Reads the varint at in.pos + p for a BITS-wide value with the rules of
// crates/warpread-codecs/src/varint.rs: length limit, end of input, then width. The bytes up
// to p + 10 must be ensured. Warp-uniform.
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

__device__ __forceinline__ u64 unzigzag(u64 v) { return (v >> 1) ^ (0 - (v & 1)); }

// The `width`-bit (1..64) little-endian field starting `skip` (0..7) bits
// into byte in.pos + off: up to 71 bits, taken from four aligned ring words.
// The bytes must be ensured; bytes past the field are masked off.
__device__ __forceinline__ u64 ring_field_le64(const input_stream& in, u32 off, u32 skip, u32 width) {
    const u32 r = in.pos + in.skew + off;
    const u32* words = reinterpret_cast<const u32*>(in.ring);
    constexpr u32 M = RING / 4 - 1;
    const u32 i = r >> 2;
    const u32 a = words[i & M], b = words[(i + 1) & M], c = words[(i + 2) & M], d = words[(i + 3) & M];
    const u32 sh = 8 * (r & 3);
    const u64 lo = (u64)__funnelshift_r(a, b, sh) | ((u64)__funnelshift_r(b, c, sh) << 32);
    const u32 top = __funnelshift_r(c, d, sh) & 0xff;  // byte 8 of the field's span
    const u64 x = skip ? (lo >> skip) | ((u64)top << (64 - skip)) : lo;
    return width == 64 ? x : x & ((1ull << width) - 1);
}

template <typename T, u32 BITS>
__device__ void delta_decode(const u8* chunk, const ChunkJob& job, T* out, ChunkStatus* st, u8* ring) {
    const u32 lane = lane_id();
    const u32 len = (u32)job.in_len;
    const u32 n = (u32)job.out_count;  // Stage::validate: below 2^32
    u32 code = OK;
    u64 detail = 0;
    u32 done = 0;

    input_stream in;
    in.init(chunk, len, ring);
    in.ensure(32);
    u32 p = 0;
    u64 block_size = 0, miniblocks = 0, total = 0, first = 0;
    u32 at = 0;
    code = read_varint<32>(in, p, block_size);
    if (code == OK) {
        at = p;
        code = read_varint<32>(in, p, miniblocks);
    }
    if (code == OK) {
        at = p;
        code = read_varint<32>(in, p, total);
    }
    if (code == OK) {
        at = p;
        code = read_varint<64>(in, p, first);
    }
    if (code != OK) {
        detail = at;
    } else if (block_size == 0 || block_size % 128 != 0 || miniblocks == 0 ||
               block_size % miniblocks != 0 || (block_size / miniblocks) % 32 != 0) {
        code = INPUT_CORRUPT;
    } else if (n > total) {
        code = OUTPUT_SHORT;
        detail = len;
    } else if (n > 0) {
        const u32 per_mini = (u32)(block_size / miniblocks);
        const u32 nminis = (u32)miniblocks;
        u64 value = unzigzag(first);
        if (lane == 0) out[0] = (T)value;
        done = 1;
        // Chunk position of the next block header; never past len while
        // values remain (a miniblock that ends past the input fails first).
        u32 pos = p;
        while (done < n && code == OK) {
            const u32 block_at = pos;
            in.pos = pos;
            in.ensure(16);
            u32 q = 0;
            u64 zz = 0;
            code = read_varint<64>(in, q, zz);
            if (code != OK) {
                detail = block_at;
                break;
            }
            const u64 min_delta = unzigzag(zz);
            const u32 widths_at = block_at + q;
            if (len - widths_at < nminis) {
                code = INPUT_TRUNCATED;
                detail = block_at;
                break;
            }
            pos = widths_at + nminis;
            for (u32 mini = 0; mini < nminis && done < n; ++mini) {
                const u32 width = __ldg(chunk + widths_at + mini);
                if (width > BITS) {
                    code = INPUT_CORRUPT;
                    detail = block_at;
                    break;
                }
                const u32 left = n - done;
                const u32 take = per_mini < left ? per_mini : left;
                T* o = out + done;
                if (width == 0) {
                    // Every delta is 0 and no byte is read (the CPU needs
                    // none either, even past the input's end).
                    write_run<T>(o, take, value + min_delta, min_delta);
                    value += (u64)take * min_delta;
                    done += take;
                    continue;  // a zero-width body is empty: pos stays
                }
                // Values k < take need (k + 1) * width bits after pos.
                const u64 avail_bits = 8ull * (pos < len ? len - pos : 0);
                const u64 fit = avail_bits / width;
                if (fit < take) {
                    code = INPUT_TRUNCATED;
                    detail = block_at;
                    done += (u32)fit;
                    break;
                }
                const u32 step = width <= 56 ? 32 : 16;
                const u32 step_bytes = step * width / 8;
                const u32 bit = lane * width;
                for (u32 j = 0; j < take; j += step) {
                    in.pos = pos + j / step * step_bytes;
                    in.ensure(step_bytes + 16);
                    const bool valid = lane < step && j + lane < take;
                    u64 s = valid ? min_delta + ring_field_le64(in, bit >> 3, bit & 7, width) : 0;
                    for (u32 d = 1; d < WARP; d <<= 1) {
                        const u64 t = __shfl_up_sync(FULL_MASK, s, d);
                        if (lane >= d) s += t;
                    }
                    const u64 v = value + s;
                    if (valid) o[j + lane] = (T)v;
                    value = __shfl_sync(FULL_MASK, v, WARP - 1);
                }
                done += take;
                // Whole miniblock consumed (or the job is done): the next
                // miniblock's body follows this one's padded body.
                pos += (u32)((u64)per_mini * width / 8 < 0xffffffffull ? (u64)per_mini * width / 8
                                                                       : 0xffffffffull);
            }
        }
    }
    if (lane == 0) {
        st->code = code;
        st->detail = code == OK ? 0u : (detail > 0xffffffffull ? 0xffffffffu : (u32)detail);
        st->produced = code == OK ? n : done;
    }
}

#define PARQUET_DELTA_ENTRY(NAME, T, BITS)                                                   \
    extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)                     \
        NAME(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs, u32 njobs,     \
             T* __restrict__ output, ChunkStatus* __restrict__ status, u32 param) {          \
        (void)param;                                                                         \
        for_each_chunk(njobs, [&](u64 j, u8* ring) {                                         \
            const ChunkJob job = jobs[j];                                                    \
            delta_decode<T, BITS>(input + job.in_off, job, output + job.out_off, status + j, \
                                  ring);                                                     \
        });                                                                                  \
    }

PARQUET_DELTA_ENTRY(parquet_delta_i32, i32, 32)
PARQUET_DELTA_ENTRY(parquet_delta_i64, i64, 64)
