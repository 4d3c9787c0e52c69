// The Parquet RLE/bit-packed hybrid (definition and repetition levels,
// dictionary indices, RLE booleans) on the CODAG framework.
//
// A stream is a sequence of runs, each after a ULEB128 header h (at most 5
// bytes, a 32-bit value): h even, an RLE run of h >> 1 copies of one value
// in ceil(bit_width / 8) little-endian bytes; h odd, h >> 1 groups of eight
// values bit-packed LSB first.
//
// One warp per job; every lane reads the same header bytes from the ring.
// RLE runs are written with write_run. Bit-packed runs are unpacked 32
// values per warp step (the step's 4 * bit_width bytes are whole), each lane
// assembling its value from three aligned ring words with two funnel shifts:
// a value of up to 32 bits starting at any bit of a byte fits in 40 bits.
//
// Statuses match crates/warpread-codecs/src/parquet_hybrid/decode.rs exactly: the checks run
// in the same order, and a run is cut short once the job's count is reached
// (a last bit-packed run may lack the bytes of values nobody asked for).
#include "codag.cuh"

using namespace codag;

// The `width`-bit (0..32) little-endian field starting `skip` (0..7) bits
// into byte in.pos + off; the bytes must be ensured. Bytes past the field
// are masked off, so stale ring bytes past the chunk's end are harmless.
__device__ __forceinline__ u32 ring_field_le(const input_stream& in, u32 off, u32 skip, u32 width) {
    const u32 r = in.pos + in.skew + off;
    const u32* words = reinterpret_cast<const u32*>(in.ring);
    constexpr u32 M = RING / 4 - 1;
    const u32 i = r >> 2;
    const u32 a = words[i & M], b = words[(i + 1) & M], c = words[(i + 2) & M];
    const u32 sh = 8 * (r & 3);
    const u64 x = (u64)__funnelshift_r(a, b, sh) | ((u64)__funnelshift_r(b, c, sh) << 32);
    return (u32)((x >> skip) & ((1ull << width) - 1));
}

// Where decoded values go. Both sinks are warp-collective and return NONE,
// or the position (from `at`) of the first value they refuse.
constexpr u32 NONE = 0xffffffffu;

// u32 values as they are (levels, booleans, indices).
struct U32Sink {
    u32* out;
    __device__ __forceinline__ u32 repeat(u32 at, u32 take, u32 v) const {
        write_run<u32>(out + at, take, v, 0);
        return NONE;
    }
    // Lane `lane_id()` holds value at + lane when `valid`.
    __device__ __forceinline__ u32 packed(u32 at, u32 v, bool valid) const {
        if (valid) out[at + lane_id()] = v;
        return NONE;
    }
};

// The `width`-byte dictionary values the indices select (DictPage); an
// index past the dictionary's `n` entries is refused.
struct DictSink {
    u8* out;
    const u8* dict;
    u32 n;
    u32 width;
    __device__ __forceinline__ u32 repeat(u32 at, u32 take, u32 v) const {
        if (take == 0) return NONE;
        if (v >= n) return 0;
        const u8* src = dict + (u64)v * width;
        for (u32 k = lane_id(); k < take; k += WARP) copy_value(out + (u64)(at + k) * width, src, width);
        return NONE;
    }
    __device__ __forceinline__ u32 packed(u32 at, u32 v, bool valid) const {
        const u32 bad = __ballot_sync(FULL_MASK, valid && v >= n);
        if (bad) return __ffs(bad) - 1;
        if (valid) copy_value(out + (u64)(at + lane_id()) * width, dict + (u64)v * width, width);
        return NONE;
    }
};

// Decodes `count` values from the `len` bytes at `chunk` into `sink`. The
// status detail is the failing run's offset plus `base` (where the stream
// starts in the job's input).
template <typename Sink>
__device__ void hybrid_decode(const u8* chunk, u32 len, u32 count, u32 bw, const Sink& sink,
                              ChunkStatus* st, u8* ring, u64 base) {
    const u32 lane = lane_id();
    u32 produced = 0;
    u32 code = OK;
    u32 run_at = 0;
    if (bw > 32) {
        code = INPUT_CORRUPT;
    } else {
        input_stream in;
        in.init(chunk, len, ring);
        const u32 value_bytes = (bw + 7) / 8;
        while (produced < count) {
            run_at = in.pos;
            if (in.remaining() == 0) {
                code = OUTPUT_SHORT;
                break;
            }
            in.ensure(16);
            // ULEB128 header of at most 5 bytes, with the CPU's order of
            // checks: end of input, then the 32-bit range, then the length.
            const u32 rem = in.remaining();
            u64 h = 0;
            u32 hn = 0;
            for (;; ++hn) {
                if (hn == 5) {
                    code = VARINT_OVERLONG;
                    break;
                }
                if (hn >= rem) {
                    code = INPUT_TRUNCATED;
                    break;
                }
                const u32 b = in.byte(hn);
                h |= (u64)(b & 0x7f) << (7 * hn);
                if (b < 0x80) {
                    if (h > 0xffffffffull) code = VALUE_OUT_OF_RANGE;
                    ++hn;
                    break;
                }
            }
            if (code != OK) break;
            const u32 rlen = (u32)(h >> 1);
            const u32 room = count - produced;
            if ((h & 1) == 0) {
                if (rem - hn < value_bytes) {
                    code = INPUT_TRUNCATED;
                    break;
                }
                u32 v = 0;
                for (u32 k = 0; k < value_bytes; ++k) v |= (u32)in.byte(hn + k) << (8 * k);
                if (bw < 32 && (v >> bw) != 0) {
                    code = VALUE_OUT_OF_RANGE;
                    break;
                }
                const u32 take = rlen < room ? rlen : room;
                const u32 bad = sink.repeat(produced, take, v);
                if (bad != NONE) {
                    code = VALUE_OUT_OF_RANGE;
                    produced += bad;
                    break;
                }
                produced += take;
                in.advance(hn + value_bytes);
            } else {
                const u32 left = rem - hn;
                const u64 run_bytes = (u64)rlen * bw;
                const u32 avail_bytes = run_bytes < left ? (u32)run_bytes : left;
                const u64 avail_values = bw == 0 ? (u64)rlen * 8 : (u64)avail_bytes * 8 / bw;
                const u64 all = (u64)rlen * 8;
                const u32 want = all < room ? (u32)all : room;
                if (avail_values < want) {
                    code = INPUT_TRUNCATED;
                    break;
                }
                in.advance(hn);
                if (bw == 0) {
                    const u32 bad = sink.repeat(produced, want, 0);
                    if (bad != NONE) {
                        code = VALUE_OUT_OF_RANGE;
                        produced += bad;
                        break;
                    }
                } else {
                    // 32 values a step: 4 * bw bytes, so every step starts on
                    // a byte and lane l's value starts at bit l * bw.
                    const u32 start = in.pos;
                    const u32 step_bytes = 4 * bw;
                    const u32 bit = lane * bw;
                    u32 bad = NONE;
                    u32 j = 0;
                    for (; j < want; j += WARP) {
                        in.pos = start + (j / WARP) * step_bytes;
                        in.ensure(step_bytes + 12);
                        const u32 v = ring_field_le(in, bit >> 3, bit & 7, bw);
                        bad = sink.packed(produced + j, v, j + lane < want);
                        if (bad != NONE) break;
                    }
                    in.pos = start;
                    if (bad != NONE) {
                        code = VALUE_OUT_OF_RANGE;
                        produced += j + bad;
                        break;
                    }
                }
                produced += want;
                in.advance(avail_bytes);
            }
        }
    }
    if (lane == 0) {
        st->code = code;
        st->detail = code == OK ? 0u : (u32)(run_at + base);
        st->produced = produced;
    }
}

// `param` is the bit width (ParquetOp::Hybrid), the same for every job.
extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)
    parquet_hybrid(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs, u32 njobs,
                   u32* __restrict__ output, ChunkStatus* __restrict__ status, u32 param) {
    for_each_chunk(njobs, [&](u64 j, u8* ring) {
        const ChunkJob job = jobs[j];
        const U32Sink sink{output + job.out_off};
        // Stage::validate: input and count below 2^32.
        hybrid_decode(input + job.in_off, (u32)job.in_len, (u32)job.out_count, param, sink, status + j,
                      ring, 0);
    });
}

// A dictionary page (ParquetOp::DictPage): the job's input starts with the
// dictionary's entries (`aux` low 32 bits: their bytes, `param` = width
// bytes each); at `aux` >> 32 the indices' bit width byte, then the hybrid
// indices to the end of the input. What lies between (other pages of the
// column chunk, this page's levels) is never read, so jobs run over the
// decompressed chunk as it is. Gathered as decoded, with the statuses of
// crates/warpread-codecs/src/parquet_dict/page.rs.
extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)
    parquet_dict_page(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs, u32 njobs,
                      u8* __restrict__ output, ChunkStatus* __restrict__ status, u32 param) {
    for_each_chunk(njobs, [&](u64 j, u8* ring) {
        const ChunkJob job = jobs[j];
        const u8* in = input + job.in_off;
        ChunkStatus* st = status + j;
        const u64 len = job.in_len;
        const u64 dict_len = job.aux & 0xffffffffull;
        const u64 at = job.aux >> 32;
        const u32 w = param ? param : 1u;
        if (dict_len > len || dict_len % w != 0 || at < dict_len || at > len) {
            put_status(st, INPUT_CORRUPT, 0, 0);
            return;
        }
        const u32 count = param ? (u32)job.out_count : 0u;
        if (at == len) {
            if (count == 0) {
                put_status(st, OK, 0, 0);
            } else {
                put_status(st, INPUT_TRUNCATED, at, 0);
            }
            return;
        }
        const u32 bw = __ldg(in + at);
        if (bw > 32) {
            put_status(st, INPUT_CORRUPT, at, 0);
            return;
        }
        const u64 base = at + 1;
        const DictSink sink{output + job.out_off * param, in, (u32)(dict_len / w), param};
        hybrid_decode(in + base, (u32)(len - base), count, bw, sink, st, ring, base);
    });
}

// ---------------------------------------------------------------------------
// Byte-array dictionary gathers (ParquetOp::ByteDictOffsets / ByteDictData):
// one job per column chunk, its input the dictionary's offsets and bytes,
// then each page's value count and index section (the layout and statuses
// of crates/warpread-codecs/src/parquet_dict/bytes.rs). The offsets pass writes a leading 0
// and each value's end; the data pass, sized by the last offset, the
// entries' bytes. Both decode the indices with hybrid_decode; a warp-wide
// inclusive scan of the selected entries' lengths gives each lane its
// value's end, and `pos` (the bytes before the step, the same in every
// lane) carries on across steps and pages.
// ---------------------------------------------------------------------------

// A little-endian u32 at any byte address of the input.
__device__ __forceinline__ u32 ld_le32(const u8* p) {
    return (u32)__ldg(p) | ((u32)__ldg(p + 1) << 8) | ((u32)__ldg(p + 2) << 16) |
           ((u32)__ldg(p + 3) << 24);
}

template <bool DATA>
struct ByteDictSink {
    u32* ends;        // offsets pass: this page's first value's end slot
    u8* bytes;        // data pass: the job's output
    const u8* offs;   // the dictionary's n + 1 offsets
    const u8* dict;   // its bytes
    u32 n;
    u64 cap;          // the most an end may reach
    u64& pos;         // bytes before the next value (warp-uniform)

    __device__ __forceinline__ void put(u32 idx, u32 s, u32 len, u64 end) const {
        if (DATA) {
            u8* o = bytes + (end - len);
            for (u32 k = 0; k < len; ++k) o[k] = __ldg(dict + s + k);
        } else {
            ends[idx] = (u32)end;
        }
    }
    __device__ __forceinline__ u32 repeat(u32 at, u32 take, u32 v) const {
        if (take == 0) return NONE;
        if (v >= n) return 0;
        const u32 s = ld_le32(offs + 4ull * v);
        const u32 len = ld_le32(offs + 4ull * v + 4) - s;
        u32 fit = take;
        if (len > 0 && pos + (u64)take * len > cap) fit = pos > cap ? 0u : (u32)((cap - pos) / len);
        if (DATA && len > 32) {
            // Long entries: the warp copies each value together.
            for (u32 k = 0; k < fit; ++k) {
                u8* o = bytes + pos + (u64)k * len;
                for (u32 b = lane_id(); b < len; b += WARP) o[b] = __ldg(dict + s + b);
            }
        } else {
            for (u32 k = lane_id(); k < fit; k += WARP) put(at + k, s, len, pos + (u64)(k + 1) * len);
        }
        pos += (u64)fit * len;
        return fit < take ? fit : NONE;
    }
    __device__ __forceinline__ u32 packed(u32 at, u32 v, bool valid) const {
        const u32 lane = lane_id();
        // The first value refused, as the CPU walks them: an index past the
        // dictionary, or an end past `cap` before it (a bad index counts
        // as empty, so the ends before it are exact).
        const u32 bad = __ballot_sync(FULL_MASK, valid && v >= n);
        u32 s = 0, len = 0;
        if (valid && v < n) {
            s = ld_le32(offs + 4ull * v);
            len = ld_le32(offs + 4ull * v + 4) - s;
        }
        u64 incl = len;
#pragma unroll
        for (u32 d = 1; d < WARP; d <<= 1) {
            const u64 x = __shfl_up_sync(FULL_MASK, incl, d);
            if (lane >= d) incl += x;
        }
        const u64 end = pos + incl;
        const u32 over = __ballot_sync(FULL_MASK, valid && end > cap);
        if (bad | over) return __ffs(bad | over) - 1;
        if (valid) put(at + lane, s, len, end);
        pos += __shfl_sync(FULL_MASK, incl, WARP - 1);
        return NONE;
    }
};

template <bool DATA>
__device__ void byte_dict_job(const u8* in, u64 len, u8* out, u64 cap, ChunkStatus* st, u8* ring) {
    const u32 lane = lane_id();
    // The CPU's order: no room for the offsets' leading 0 comes first.
    if (!DATA && cap == 0) {
        put_status(st, OUTPUT_OVERFLOW, 0, 0);
        return;
    }
    if (len < 8) {
        put_status(st, INPUT_CORRUPT, 0, 0);
        return;
    }
    const u32 n = ld_le32(in), m = ld_le32(in + 4);
    const u64 off_end = 8 + 4 * ((u64)n + 1);
    if (off_end > len) {
        put_status(st, INPUT_CORRUPT, 0, 0);
        return;
    }
    const u8* offs = in + 8;
    bool ok = true;
    for (u64 i = lane; i < n; i += WARP) ok &= ld_le32(offs + 4 * i) <= ld_le32(offs + 4 * i + 4);
    ok = __all_sync(FULL_MASK, ok) && ld_le32(offs) == 0;
    const u64 dict_len = ld_le32(offs + 4ull * n);
    if (!ok || off_end + dict_len > len) {
        put_status(st, INPUT_CORRUPT, 0, 0);
        return;
    }
    u32* ends = reinterpret_cast<u32*>(out);
    u64 room = 0;
    if (!DATA) {
        if (lane == 0) ends[0] = 0;
        room = cap - 1;
    }
    u64 p = (off_end + dict_len + 3) & ~3ull;
    u64 values = 0, pos = 0;
    for (u32 page = 0; page < m; ++page) {
        if (p + 8 > len) {
            put_status(st, INPUT_CORRUPT, p, values);
            return;
        }
        const u32 count = ld_le32(in + p), slen = ld_le32(in + p + 4);
        if (p + 8 + slen > len) {
            put_status(st, INPUT_CORRUPT, p, values);
            return;
        }
        if (count > 0) {
            if (!DATA && values + count > room) {
                put_status(st, OUTPUT_OVERFLOW, p, values);
                return;
            }
            if (slen == 0) {
                put_status(st, INPUT_TRUNCATED, p + 8, values);
                return;
            }
            const u32 bw = __ldg(in + p + 8);
            if (bw > 32) {
                put_status(st, INPUT_CORRUPT, p + 8, values);
                return;
            }
            const u64 base = p + 9;
            const ByteDictSink<DATA> sink{ends + 1 + values, out, offs, in + off_end, n,
                                          DATA ? cap : 0x7fffffffull, pos};
            hybrid_decode(in + base, slen - 1, count, bw, sink, st, ring, base);
            if (status_code(st) != OK) {
                if (lane == 0) st->produced += values;
                return;
            }
            values += count;
        }
        p = (p + 8 + slen + 3) & ~3ull;
    }
    if (DATA ? pos < cap : values < room) {
        put_status(st, OUTPUT_SHORT, len, values);
        return;
    }
    put_status(st, OK, 0, cap);
}

extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)
    parquet_byte_dict_offsets(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs,
                              u32 njobs, u32* __restrict__ output, ChunkStatus* __restrict__ status,
                              u32 param) {
    (void)param;
    for_each_chunk(njobs, [&](u64 j, u8* ring) {
        const ChunkJob job = jobs[j];
        byte_dict_job<false>(input + job.in_off, job.in_len,
                             reinterpret_cast<u8*>(output + job.out_off), job.out_count, status + j,
                             ring);
    });
}

extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)
    parquet_byte_dict_data(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs,
                           u32 njobs, u8* __restrict__ output, ChunkStatus* __restrict__ status,
                           u32 param) {
    (void)param;
    for_each_chunk(njobs, [&](u64 j, u8* ring) {
        const ChunkJob job = jobs[j];
        byte_dict_job<true>(input + job.in_off, job.in_len, output + job.out_off, job.out_count,
                            status + j, ring);
    });
}
