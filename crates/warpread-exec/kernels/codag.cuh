// CODAG: warp-level decoding framework (Park et al., "CODAG: Characterizing and
// Optimizing Decompression Algorithms for GPUs").
//
// The model: one warp owns one chunk job. All 32 lanes run the same decoder over
// the same symbol stream; there is no leader lane and no broadcast of parsed
// symbols, because every lane reads the same bytes out of a per-warp ring in
// shared memory (same-address shared loads are broadcast by the hardware).
// Where a symbol yields many outputs (a run, a copy, a window of literals) the
// lanes split the outputs among themselves.
//
// Writing a new codec:
//   1. a `__device__` function `decode_chunk(input_stream&, <output>, status&)`
//      that loops: `in.ensure(n)` → read header bytes with `in.byte(i)` or bits
//      with `in.peek_bits/fetch_bits` → emit typed runs with `write_run`, or
//      bytes through `output_window` (`write_byte`, `write_run`, `memcpy`)
//      → `in.advance(k)`;
//   2. an `extern "C" __global__` entry named `<codec>_<variant>` that calls
//      `codag::for_each_chunk` with that function;
//   3. the entry's name in the Rust launcher table (crates/warpread-exec/src/gpu/kernels.rs).
//
// Every read is bounds-checked against the chunk's input range and every write
// against the job's output capacity; a decoder reports failure through the
// per-chunk `ChunkStatus`, never by reading or writing out of bounds.
//
// Launch constants (CODAG_WARPS_PER_BLOCK, CODAG_RING_BYTES) are passed by the
// Rust side as -D defines from one module (crates/warpread-exec/src/gpu/launch.rs), so both agree.
#pragma once

#ifndef CODAG_WARPS_PER_BLOCK
#error "CODAG_WARPS_PER_BLOCK must be defined by the launcher"
#endif
#ifndef CODAG_RING_BYTES
#error "CODAG_RING_BYTES must be defined by the launcher"
#endif

namespace codag {

typedef unsigned char u8;
typedef signed char i8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;

constexpr int WARP = 32;
constexpr u32 FULL_MASK = 0xffffffffu;
constexpr int WARPS_PER_BLOCK = CODAG_WARPS_PER_BLOCK;
constexpr int RING = CODAG_RING_BYTES;
constexpr int LINE = 128;  // one refill: 32 lanes x 4 bytes, one cache line
static_assert(RING % LINE == 0 && (RING & (RING - 1)) == 0, "ring must be a power of two of lines");

// One independent unit of work; mirrors `plan::JobDesc` in Rust (40 bytes).
struct ChunkJob {
    u64 in_off;     // byte offset of the chunk in the input buffer
    u64 in_len;     // bytes of input
    u64 out_off;    // element offset in the output buffer
    u64 out_count;  // elements the chunk must produce
    u64 aux;        // the op's per-job parameter (0 unless the op uses one)
};

// Per-chunk result; mirrors `plan::ChunkStatus` in Rust (16 bytes).
struct ChunkStatus {
    u32 code;      // one of the Status values
    u32 detail;    // chunk-relative byte offset of the symbol that failed
    u64 produced;  // elements produced before the failing symbol (or in all)
};

// Keep in sync with `plan::StatusCode` (a Rust test checks the numbers).
enum Status : u32 {
    OK = 0,
    INPUT_TRUNCATED = 1,
    OUTPUT_OVERFLOW = 2,
    OUTPUT_SHORT = 3,
    VARINT_OVERLONG = 4,
    VALUE_OUT_OF_RANGE = 5,
    INPUT_CORRUPT = 6,
    PENDING = 0xffffffffu,
};

__device__ __forceinline__ u32 lane_id() { return threadIdx.x & (WARP - 1); }

// Lane 0 writes a job's status; the detail saturates at 32 bits, as the CPU
// reference's does.
__device__ __forceinline__ void put_status(ChunkStatus* st, u32 code, u64 detail, u64 produced) {
    if (lane_id() == 0) {
        st->code = code;
        st->detail = detail > 0xffffffffull ? 0xffffffffu : (u32)detail;
        st->produced = produced;
    }
}
// The status word lane 0 wrote, in every lane (after put_status or any
// other lane-0 write of `st`).
__device__ __forceinline__ u32 status_code(const ChunkStatus* st) {
    __syncwarp();
    return __shfl_sync(0xffffffffu, lane_id() == 0 ? st->code : 0u, 0);
}
__device__ __forceinline__ u32 lanemask_lt() {
    u32 m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

// ---------------------------------------------------------------------------
// input_stream: the chunk's bytes, staged through a per-warp shared-memory ring
// a cache line at a time. Ring coordinates are offset by the chunk's address
// modulo 4 (`skew`) so that every lane's refill load is an aligned 4-byte word;
// words that straddle the chunk's ends are loaded byte by byte, so no byte
// outside [chunk, chunk + len) is ever read.
//
// The next line is loaded into a register one refill ahead of need, so the
// global-load latency overlaps with decoding of the current lines.
// ---------------------------------------------------------------------------
struct input_stream {
    // Positions are 32-bit: Stage::validate keeps every chunk's input below
    // 4 GiB - 4 KiB, so ring coordinates cannot wrap.
    const u8* chunk;
    u32 len;
    u32 pos;      // chunk-relative position of the next unconsumed byte
    u32 loaded;   // ring coordinate (chunk position + skew) up to which the ring is filled
    u32 skew;     // chunk address modulo 4
    u32 pending;  // this lane's word of the line at `loaded`, already in flight
    u32 bit_cnt;
    u64 bit_buf;  // bit reader state (LSB-first), see fetch_bits
    u8* ring;     // RING bytes of shared memory owned by this warp

    __device__ __forceinline__ u32 load_word(u32 r) const {
        // r is a ring coordinate, a multiple of 4; the word covers chunk bytes
        // r - skew .. r - skew + 3.
        const u8* base = chunk - skew;
        const int first = (int)r - (int)skew;
        if (r >= skew && r - skew + 4 <= len) {
            return *reinterpret_cast<const u32*>(base + r);
        }
        u32 w = 0;
        for (int b = 0; b < 4; ++b) {
            const int p = first + b;
            if (p >= 0 && (u32)p < len) w |= (u32)__ldg(chunk + p) << (8 * b);
        }
        return w;
    }

    __device__ __forceinline__ void init(const u8* c, u32 n, u8* r) {
        chunk = c;
        len = n;
        ring = r;
        pos = 0;
        skew = (u32)((size_t)c & 3);
        loaded = 0;
        bit_buf = 0;
        bit_cnt = 0;
        pending = load_word(4 * lane_id());
    }

    // Commits the in-flight line to the ring and starts loading the next one.
    __device__ __forceinline__ void refill_line() {
        reinterpret_cast<u32*>(ring)[((loaded & (RING - 1)) >> 2) + lane_id()] = pending;
        loaded += LINE;
        const u32 next = loaded + 4 * lane_id();
        pending = (next < skew + len) ? load_word(next) : 0u;
        __syncwarp();
    }

    // Bytes of input left after `pos`.
    __device__ __forceinline__ u32 remaining() const { return len - pos; }

    // Makes bytes [pos, pos + n) (clipped to the chunk) readable with byte().
    // n must be at most RING - 2 * LINE. Warp-uniform.
    __device__ __forceinline__ void ensure(u32 n) {
        const u32 want = (n < len - pos ? pos + n : len) + skew;
        while (loaded < want) refill_line();
    }

    // Byte at pos + i; caller has ensured it and checked pos + i < len.
    __device__ __forceinline__ u8 byte(u32 i) const { return ring[(pos + i + skew) & (RING - 1)]; }

    __device__ __forceinline__ void advance(u32 n) { pos += n; }

    // --- LSB-first bit reader (deflate order) over the same ring ---------
    // Up to 64 bits live in a register buffer that every lane holds
    // identically; it is topped up four bytes at a time from the ring with
    // two aligned shared-memory loads and a funnel shift.
    __device__ __forceinline__ void refill_bits() {
        if (bit_cnt > 32) return;
        ensure(4);
        const u32 rem = remaining();
        const u32 n = rem < 4 ? rem : 4u;
        const u32 r = pos + skew;
        const u32* words = reinterpret_cast<const u32*>(ring);
        const u32 lo = words[(r >> 2) & (RING / 4 - 1)];
        const u32 hi = words[((r >> 2) + 1) & (RING / 4 - 1)];
        u32 w = __funnelshift_r(lo, hi, 8 * (r & 3));
        if (n < 4) w &= (1u << (8 * n)) - 1;  // bytes past the chunk read as zero
        bit_buf |= (u64)w << bit_cnt;
        bit_cnt += 8 * n;
        pos += n;
    }
    // True when at least n (<= 32) bits are buffered; false means the input
    // ended first.
    __device__ __forceinline__ bool need_bits(u32 n) {
        if (bit_cnt < n) refill_bits();
        return bit_cnt >= n;
    }
    __device__ __forceinline__ u32 peek_bits(u32 n) const {
        return (u32)bit_buf & (u32)((1ull << n) - 1);
    }
    __device__ __forceinline__ void skip_bits(u32 n) {
        bit_buf >>= n;
        bit_cnt -= n;
    }
    // Returns false (and leaves the value undefined) on end of input; n <= 32.
    __device__ __forceinline__ bool fetch_bits(u32 n, u32& v) {
        if (!need_bits(n)) return false;
        v = peek_bits(n);
        skip_bits(n);
        return true;
    }
    // Drops buffered bits up to the next byte boundary and returns the
    // unconsumed whole bytes to the byte stream.
    __device__ __forceinline__ void align_to_byte() {
        skip_bits(bit_cnt & 7);
        pos -= bit_cnt >> 3;
        bit_buf = 0;
        bit_cnt = 0;
    }
};

// ---------------------------------------------------------------------------
// byte_window: the next 32 input bytes spread over the warp, lane i holding
// byte pos + i, with a ballot of varint terminators (high bit clear). Header
// bytes are read from it with one shuffle and varint lengths with bit tricks
// on `ends`, so parsing a short run costs a few register operations instead
// of a chain of shared-memory loads. Bytes past the input read as 0x80
// (continuation), so they never look like a terminator.
// ---------------------------------------------------------------------------
struct byte_window {
    u32 byte;   // this lane's byte
    u32 ends;   // bit i: byte i ends a varint
    u32 avail;  // real input bytes in the window (< 32 only at the end)

    __device__ __forceinline__ void load(input_stream& in) {
        in.ensure(WARP);
        const u32 rem = in.remaining();
        avail = rem < WARP ? rem : WARP;
        byte = lane_id() < avail ? in.byte(lane_id()) : 0x80u;
        ends = __ballot_sync(FULL_MASK, byte < 0x80);
    }

    __device__ __forceinline__ u32 at(u32 i) const { return __shfl_sync(FULL_MASK, byte, i); }
};

// ---------------------------------------------------------------------------
// Typed output: a run is written by all lanes, each computing its elements
// from (init, delta) directly, so a run of any length costs len/32 stores.
// ---------------------------------------------------------------------------
template <typename T>
__device__ __forceinline__ void write_run(T* out, u32 len, u64 init, u64 delta) {
    if constexpr (sizeof(T) <= 4) {  // the low 32 bits suffice: cheaper arithmetic
        for (u32 k = lane_id(); k < len; k += WARP) out[k] = (T)((u32)init + k * (u32)delta);
    } else {
        for (u32 k = lane_id(); k < len; k += WARP) out[k] = (T)(init + (u64)k * delta);
    }
}

// Copies one `width`-byte value, 4 bytes at a time when both ends allow it.
__device__ __forceinline__ void copy_value(u8* o, const u8* s, u32 width) {
    if (((width | (u32)(size_t)o | (u32)(size_t)s) & 3) == 0) {
        for (u32 b = 0; b < width; b += 4)
            *reinterpret_cast<u32*>(o + b) = __ldg(reinterpret_cast<const u32*>(s + b));
    } else if (((width | (u32)(size_t)o) & 3) == 0) {
        // A source at any byte (a dictionary read where its page lies):
        // bytes in, words out, as the stores are what the output's
        // coalescing depends on.
        for (u32 b = 0; b < width; b += 4)
            *reinterpret_cast<u32*>(o + b) = (u32)__ldg(s + b) | ((u32)__ldg(s + b + 1) << 8) |
                                             ((u32)__ldg(s + b + 2) << 16) |
                                             ((u32)__ldg(s + b + 3) << 24);
    } else {
        for (u32 b = 0; b < width; ++b) o[b] = __ldg(s + b);
    }
}

// ---------------------------------------------------------------------------
// output_window<W>: byte output for LZ codecs. Output goes first into a
// per-warp shared-memory ring holding the most recent W bytes and is flushed
// to global memory a 128-byte line at a time (line boundaries aligned to
// global addresses, one 4-byte store per lane, so global memory sees full
// coalesced lines instead of single-byte stores). Back-references of up to
// NEAR bytes are served from the ring (shared-memory latency); older ones
// read global memory, which the flush has already written.
//
// Ring coordinate of output byte q is q + skew (skew = destination address
// mod 128); global address of ring coordinate r is dst - skew + r. `pos`,
// `flushed` and `cap` are warp-uniform. Every write is checked against `cap`
// before it happens; the line flush never writes outside [dst, dst + pos).
// ---------------------------------------------------------------------------
template <u32 W>
struct output_window {
    static_assert((W & (W - 1)) == 0 && W >= 2048, "window must be a power of two >= 2048");
    // Longest back-reference served from the ring. A copy of up to MAX_COPY
    // bytes rewrites ring slots older than W - MAX_COPY, and fewer than two
    // lines are unflushed, so NEAR + MAX_COPY + 2 * LINE <= W keeps both safe.
    static constexpr u32 MAX_COPY = 258;
    static constexpr u32 NEAR = W - 512;

    u8* ring;
    u8* dst;
    u32 cap;      // Stage::validate keeps capacities below 4 GiB
    u32 pos;
    u32 flushed;  // ring coordinate below which global memory is written
    u32 skew;

    __device__ __forceinline__ void init(u8* d, u32 capacity, u8* r) {
        ring = r;
        dst = d;
        cap = capacity;
        pos = 0;
        skew = (u32)((size_t)d & (LINE - 1));
        flushed = 0;
    }

    __device__ __forceinline__ u8& slot(u32 q) const { return ring[(q + skew) & (W - 1)]; }

    // Stores ring coordinates [r, r + 4) to global memory, byte-wise where
    // the word leaves [0, limit) of the output.
    __device__ __forceinline__ void store_word(u32 r, u32 limit) const {
        u8* g = dst - skew + r;
        if (r >= skew && r - skew + 4 <= limit) {
            *reinterpret_cast<u32*>(g) = *reinterpret_cast<const u32*>(ring + (r & (W - 1)));
        } else {
            for (u32 b = 0; b < 4; ++b)
                if (r + b >= skew && r + b - skew < limit) g[b] = ring[(r + b) & (W - 1)];
        }
    }

    // Writes every complete line to global memory.
    __device__ __forceinline__ void flush_lines() {
        if (flushed + LINE > pos + skew) return;
        __syncwarp();
        do {
            store_word(flushed + 4 * lane_id(), pos);
            flushed += LINE;
        } while (flushed + LINE <= pos + skew);
    }

    // Writes the last, partial line. Call once at the end of the chunk.
    __device__ __forceinline__ void finish() {
        flush_lines();
        __syncwarp();
        if (flushed < pos + skew) store_word(flushed + 4 * lane_id(), pos);
        __syncwarp();
    }

    __device__ __forceinline__ bool room(u32 n) const { return n <= cap - pos; }

    // One byte from every lane's identical value; flushes when a line fills.
    __device__ __forceinline__ bool write_byte(u8 b) {
        if (pos == cap) return false;
        if (lane_id() == 0) slot(pos) = b;
        pos += 1;
        if (((pos + skew) & (LINE - 1)) == 0) flush_lines();
        return true;
    }

    // Byte run: len bytes init + i * delta (mod 256), all lanes; len <= MAX_COPY.
    __device__ __forceinline__ bool write_run(u32 len, u8 init, u8 delta) {
        if (!room(len)) return false;
        for (u32 i = lane_id(); i < len; i += WARP) slot(pos + i) = (u8)(init + i * delta);
        pos += len;
        flush_lines();
        return true;
    }

    // LZ77 back-reference: len (<= MAX_COPY) bytes starting `offset` back.
    // Byte i comes from src + i % offset (so overlapping copies, offset <
    // len, repeat the last `offset` bytes), always a byte before `pos`, so
    // lanes need no ordering among themselves. Near copies: each lane builds
    // aligned 4-byte ring words (a 258-byte copy is three warp steps); the
    // source index advances by a precomputed step instead of a modulo per
    // byte. Far copies read global memory with 4-byte aligned loads joined by
    // a funnel shift.
    __device__ __forceinline__ bool memcpy(u32 offset, u32 len) {
        if (offset == 0 || offset > pos || len > MAX_COPY || !room(len)) return false;
        __syncwarp();  // single-lane literal writes must be visible
        const u32 src = pos - offset;
        const u32 lane = lane_id();
        if (offset <= NEAR) {
            // Each lane rewrites aligned 4-byte ring words of the destination
            // [d0, d1) (ring coordinates), merging bytes outside the copy.
            const u32 d0 = pos + skew, d1 = d0 + len;
            u32* ring32 = reinterpret_cast<u32*>(ring);
            for (u32 t = (d0 & ~3u) + 4 * lane; t < d1; t += 4 * WARP) {
                u32 j = t > d0 ? t - d0 : 0;  // source index of the word's first copied byte
                if (offset < len) j %= offset;  // only overlapping copies wrap
                u32 word = ring32[(t & (W - 1)) >> 2];
#pragma unroll
                for (u32 b = 0; b < 4; ++b) {
                    if (t + b >= d0 && t + b < d1) {
                        const u32 v = ring[(src + skew + j) & (W - 1)];
                        word = (word & ~(0xffu << (8 * b))) | (v << (8 * b));
                        j = j + 1 == offset ? 0 : j + 1;
                    }
                }
                ring32[(t & (W - 1)) >> 2] = word;
            }
        } else {
            // offset > NEAR >= len: the source lies wholly in global memory.
            const u8* s = dst + src;
            const u32 sh = (u32)((size_t)s & 3);
            const u32* sw = reinterpret_cast<const u32*>(s - sh);
            for (u32 w = lane; 4 * w < len; w += WARP) {
                const u32 lo = sw[w];
                const u32 v = sh ? __funnelshift_r(lo, sw[w + 1], 8 * sh) : lo;
#pragma unroll
                for (u32 b = 0; b < 4; ++b)
                    if (4 * w + b < len) slot(pos + 4 * w + b) = (u8)(v >> (8 * b));
            }
        }
        pos += len;
        flush_lines();
        return true;
    }

    // Copies n bytes of the input stream (after align_to_byte) to the output.
    // Returns false when the input ends first; capacity is checked by the
    // caller.
    __device__ __forceinline__ bool copy_from(input_stream& in, u32 n) {
        while (n > 0) {
            in.ensure(LINE);
            const u32 step = n < LINE ? n : LINE;
            if (in.remaining() < step) return false;
            for (u32 i = lane_id(); i < step; i += WARP) slot(pos + i) = in.byte(i);
            in.advance(step);
            pos += step;
            n -= step;
            flush_lines();
        }
        return true;
    }
};

// Runs `decode(job_index, warp_ring)` for every chunk job, one warp per job.
// Warps loop over jobs in grid-stride order so any grid size is correct.
template <typename F>
__device__ __forceinline__ void for_each_chunk(u32 njobs, F decode) {
    __shared__ __align__(16) u8 rings[WARPS_PER_BLOCK][RING];
    const u32 warp_in_block = threadIdx.x / WARP;
    const u64 stride = (u64)gridDim.x * WARPS_PER_BLOCK;
    for (u64 j = (u64)blockIdx.x * WARPS_PER_BLOCK + warp_in_block; j < njobs; j += stride) {
        decode(j, rings[warp_in_block]);
        __syncwarp();
    }
}

}  // namespace codag
