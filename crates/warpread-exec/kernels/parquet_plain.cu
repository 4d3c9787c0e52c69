// Parquet PLAIN decoding of fixed-width values and booleans, the
// fixed-width dictionary gather and BYTE_STREAM_SPLIT, on the CODAG
// framework.
//
// These have no symbols to parse: a job's status depends only on its sizes
// (and, for the gather, on each index), so the warp checks those first,
// exactly as crates/warpread-codecs/src/parquet_plain/decode.rs, parquet_dict/decode.rs and
// parquet_byte_stream_split/decode.rs do, then all lanes move bytes. Global
// memory is read directly (no ring): every byte is read once, and reads stay
// inside the job's checked range except for the aligned words of warp_copy,
// which contain at least one byte of the range and so never leave the input
// allocation.
#include "codag.cuh"

using namespace codag;

// Copies n bytes from src to dst with all lanes. Destination words are
// aligned 4-byte stores; each is assembled from two aligned source words
// with a funnel shift (an aligned word holding a byte of the source lies in
// the same allocation). The unaligned head and tail go byte by byte.
__device__ __forceinline__ void warp_copy(u8* dst, const u8* src, u64 n) {
    const u32 lane = lane_id();
    const u64 head64 = (4 - ((size_t)dst & 3)) & 3;
    const u32 head = (u32)(head64 < n ? head64 : n);
    if (lane < head) dst[lane] = __ldg(src + lane);
    const u64 words = (n - head) / 4;
    u32* d = reinterpret_cast<u32*>(dst + head);
    const u8* s = src + head;
    const u32 sh = (u32)((size_t)s & 3);
    const u32* sw = reinterpret_cast<const u32*>(s - sh);
    if (sh == 0) {
        for (u64 w = lane; w < words; w += WARP) d[w] = __ldg(sw + w);
    } else {
        for (u64 w = lane; w < words; w += WARP)
            d[w] = __funnelshift_r(__ldg(sw + w), __ldg(sw + w + 1), 8 * sh);
    }
    const u64 done = head + 4 * words;
    if (lane < n - done) dst[done + lane] = __ldg(src + done + lane);
}

__device__ __forceinline__ u32 load_u32_le(const u8* p) {
    return (u32)__ldg(p) | ((u32)__ldg(p + 1) << 8) | ((u32)__ldg(p + 2) << 16) |
           ((u32)__ldg(p + 3) << 24);
}

// PLAIN booleans, LSB first, one output byte (0 or 1) per value.
__device__ void plain_bool(const u8* in, const ChunkJob& job, u8* out, ChunkStatus* st) {
    const u64 len = job.in_len, count = job.out_count;
    const u64 need = (count + 7) / 8;
    if (len < need) {
        put_status(st, INPUT_TRUNCATED, len, len * 8);
        return;
    }
    // Each lane expands one input byte into eight output bytes per step, so
    // a warp step writes 256 contiguous bytes.
    for (u64 b = lane_id(); b < need; b += WARP) {
        const u32 v = __ldg(in + b);
        const u64 first = 8 * b;
        const u32 k = count - first < 8 ? (u32)(count - first) : 8u;
        u8* o = out + first;
        if (k == 8 && ((size_t)o & 3) == 0) {
            // Spread bits 0..3 and 4..7 over the bytes of two words.
            const u32 lo = ((v & 1) | ((v & 2) << 7) | ((v & 4) << 14) | ((v & 8) << 21));
            const u32 hi = (((v >> 4) & 1) | (((v >> 4) & 2) << 7) | (((v >> 4) & 4) << 14) |
                            (((v >> 4) & 8) << 21));
            reinterpret_cast<u32*>(o)[0] = lo;
            reinterpret_cast<u32*>(o)[1] = hi;
        } else {
            for (u32 i = 0; i < k; ++i) o[i] = (u8)((v >> i) & 1);
        }
    }
    put_status(st, OK, 0, count);
}

// PLAIN fixed-width values: the first count * width bytes copied out.
__device__ void plain_fixed(const u8* in, const ChunkJob& job, u32 width, u8* out, ChunkStatus* st) {
    const u64 len = job.in_len;
    const u64 bytes = job.out_count * width;
    if (len < bytes) {
        const u64 whole = len / (width ? width : 1);
        put_status(st, INPUT_TRUNCATED, whole * width, whole);
        return;
    }
    warp_copy(out, in, bytes);
    put_status(st, OK, 0, width ? job.out_count : 0);
}


// Dictionary gather: <u32 n> <n * width dictionary bytes> <u32 index per
// value>. The first index past the dictionary fails the job (a ballot per
// step of 32 indices finds the lowest, which the sequential CPU meets first).
__device__ void dict_gather(const u8* in, const ChunkJob& job, u32 width, u8* out, ChunkStatus* st) {
    const u64 len = job.in_len;
    if (len < 4) {
        put_status(st, INPUT_TRUNCATED, 0, 0);
        return;
    }
    const u32 n = load_u32_le(in);
    const u64 count = width ? job.out_count : 0;
    const u64 dict_end = (u64)n * width + 4;  // below 2^64: no overflow to report
    if (len < dict_end || (len - dict_end) / 4 < count) {
        put_status(st, INPUT_TRUNCATED, 0, 0);
        return;
    }
    const u8* dict = in + 4;
    const u8* idx = in + dict_end;
    const u32 lane = lane_id();
    for (u64 base = 0; base < count; base += WARP) {
        const u64 i = base + lane;
        const bool valid = i < count;
        const u32 k = valid ? load_u32_le(idx + 4 * i) : 0;
        const u32 bad = __ballot_sync(FULL_MASK, valid && k >= n);
        if (bad) {
            const u64 first = base + (__ffs(bad) - 1);
            put_status(st, VALUE_OUT_OF_RANGE, dict_end + 4 * first, first);
            return;
        }
        if (valid) copy_value(out + i * width, dict + (u64)k * width, width);
    }
    put_status(st, OK, 0, count);
}

// BYTE_STREAM_SPLIT: the page is `width` streams of len / width bytes,
// stream b holding byte b of every value. Lane-strided values, so each
// stream is read by the warp in 32 contiguous bytes; 4- and 8-byte values
// leave as one aligned store when the output allows it.
__device__ void byte_stream_split(const u8* in, const ChunkJob& job, u32 width, u8* out,
                                  ChunkStatus* st) {
    const u64 len = job.in_len;
    if (width == 0 || len % width != 0) {
        put_status(st, INPUT_CORRUPT, 0, 0);
        return;
    }
    const u64 stride = len / width;
    const u64 n = job.out_count;
    if (n > stride) {
        put_status(st, OUTPUT_SHORT, len, 0);
        return;
    }
    const bool aligned = ((size_t)out & 7) == 0;
    for (u64 i = lane_id(); i < n; i += WARP) {
        u8* o = out + i * width;
        if (width == 4 && aligned) {
            u32 v = 0;
            for (u32 b = 0; b < 4; ++b) v |= (u32)__ldg(in + b * stride + i) << (8 * b);
            *reinterpret_cast<u32*>(o) = v;
        } else if (width == 8 && aligned) {
            u64 v = 0;
            for (u32 b = 0; b < 8; ++b) v |= (u64)__ldg(in + b * stride + i) << (8 * b);
            *reinterpret_cast<u64*>(o) = v;
        } else {
            for (u32 b = 0; b < width; ++b) o[b] = __ldg(in + b * stride + i);
        }
    }
    put_status(st, OK, 0, n);
}

#define PARQUET_PLAIN_ENTRY(NAME, CALL)                                                      \
    extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)                     \
        NAME(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs, u32 njobs,     \
             u8* __restrict__ output, ChunkStatus* __restrict__ status, u32 param) {         \
        for_each_chunk(njobs, [&](u64 j, u8*) {                                              \
            const ChunkJob job = jobs[j];                                                    \
            const u8* in = input + job.in_off;                                               \
            ChunkStatus* st = status + j;                                                    \
            (void)param;                                                                     \
            CALL;                                                                            \
        });                                                                                  \
    }

// `param` is unused for booleans and the value width in bytes otherwise;
// output offsets count elements, so a job's bytes start at out_off * width.
PARQUET_PLAIN_ENTRY(parquet_plain_bool, plain_bool(in, job, output + job.out_off, st))
PARQUET_PLAIN_ENTRY(parquet_plain_fixed,
                    plain_fixed(in, job, param, output + job.out_off * param, st))
PARQUET_PLAIN_ENTRY(parquet_dict_gather,
                    dict_gather(in, job, param, output + job.out_off * param, st))
PARQUET_PLAIN_ENTRY(parquet_byte_stream_split,
                    byte_stream_split(in, job, param, output + job.out_off * param, st))
