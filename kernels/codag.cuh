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
//   3. the entry's name in the Rust launcher table (src/gpu/kernels.rs).
//
// Every read is bounds-checked against the chunk's input range and every write
// against the job's output capacity; a decoder reports failure through the
// per-chunk `ChunkStatus`, never by reading or writing out of bounds.
//
// Launch constants (CODAG_WARPS_PER_BLOCK, CODAG_RING_BYTES) are passed by the
// Rust side as -D defines from one module (src/gpu/launch.rs), so both agree.
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

// One independent unit of work; mirrors `plan::JobDesc` in Rust (32 bytes).
struct ChunkJob {
    u64 in_off;     // byte offset of the chunk in the input buffer
    u64 in_len;     // bytes of input
    u64 out_off;    // element offset in the output buffer
    u64 out_count;  // elements the chunk must produce
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
    const u8* chunk;
    u64 len;
    u8* ring;     // RING bytes of shared memory owned by this warp
    u64 pos;      // chunk-relative position of the next unconsumed byte
    u64 loaded;   // ring coordinate (chunk position + skew) up to which the ring is filled
    u32 skew;     // chunk address modulo 4
    u32 pending;  // this lane's word of the line at `loaded`, already in flight
    u64 bit_buf;  // bit reader state (LSB-first), see fetch_bits
    u32 bit_cnt;

    __device__ __forceinline__ u32 load_word(u64 r) const {
        // r is a ring coordinate, a multiple of 4; the word covers chunk bytes
        // r - skew .. r - skew + 3.
        const u8* base = chunk - skew;
        i64 first = (i64)r - (i64)skew;
        if (first >= 0 && (u64)first + 4 <= len) {
            return *reinterpret_cast<const u32*>(base + r);
        }
        u32 w = 0;
        for (int b = 0; b < 4; ++b) {
            i64 p = first + b;
            if (p >= 0 && (u64)p < len) w |= (u32)__ldg(chunk + p) << (8 * b);
        }
        return w;
    }

    __device__ __forceinline__ void init(const u8* c, u64 n, u8* r) {
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
        u64 next = loaded + 4 * lane_id();
        pending = (next < (u64)skew + len) ? load_word(next) : 0u;
        __syncwarp();
    }

    // Bytes of input left after `pos`.
    __device__ __forceinline__ u64 remaining() const { return len - pos; }

    // Makes bytes [pos, pos + n) (clipped to the chunk) readable with byte().
    // n must be at most RING - 2 * LINE. Warp-uniform.
    __device__ __forceinline__ void ensure(u32 n) {
        u64 want = pos + n;
        if (want > len) want = len;
        want += skew;
        while (loaded < want) refill_line();
    }

    // Byte at pos + i; caller has ensured it and checked pos + i < len.
    __device__ __forceinline__ u8 byte(u64 i) const {
        return ring[(pos + i + skew) & (RING - 1)];
    }

    __device__ __forceinline__ void advance(u64 n) { pos += n; }

    // --- LSB-first bit reader (deflate order) over the same ring ---------
    // Up to 64 bits live in a register buffer that every lane holds
    // identically; it is topped up four bytes at a time from the ring.
    __device__ __forceinline__ void refill_bits() {
        if (bit_cnt > 32) return;
        ensure(4);
        const u64 rem = remaining();
        const u32 n = rem < 4 ? (u32)rem : 4u;
        u32 w = 0;
#pragma unroll
        for (u32 i = 0; i < 4; ++i)
            if (i < n) w |= (u32)byte(i) << (8 * i);
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
        return (u32)(bit_buf & ((1ull << n) - 1));
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
        u32 drop = bit_cnt & 7;
        skip_bits(drop);
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
        const u64 rem = in.remaining();
        avail = rem < WARP ? (u32)rem : WARP;
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
__device__ __forceinline__ void write_run(T* out, u64 len, u64 init, u64 delta) {
    for (u64 k = lane_id(); k < len; k += WARP) out[k] = (T)(init + k * delta);
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
    // bytes rewrites ring slots older than W - MAX_COPY, and at most a line
    // is unflushed, so NEAR + MAX_COPY + LINE <= W keeps both safe.
    static constexpr u32 MAX_COPY = 258;
    static constexpr u32 NEAR = W - 512;

    u8* ring;
    u8* dst;
    u64 cap;
    u64 pos;
    u64 flushed;  // ring coordinate below which global memory is written
    u32 skew;

    __device__ __forceinline__ void init(u8* d, u64 capacity, u8* r) {
        ring = r;
        dst = d;
        cap = capacity;
        pos = 0;
        skew = (u32)((size_t)d & (LINE - 1));
        flushed = 0;
    }

    __device__ __forceinline__ u8& slot(u64 q) const { return ring[(q + skew) & (W - 1)]; }

    // Stores ring coordinates [r, r + 4) to global memory, byte-wise where
    // the word leaves [0, limit) of the output.
    __device__ __forceinline__ void store_word(u64 r, u64 limit) const {
        const i64 q = (i64)r - (i64)skew;
        u8* g = dst - skew + r;
        if (q >= 0 && (u64)q + 4 <= limit) {
            *reinterpret_cast<u32*>(g) = *reinterpret_cast<const u32*>(ring + (r & (W - 1)));
        } else {
            for (int b = 0; b < 4; ++b)
                if (q + b >= 0 && (u64)(q + b) < limit) g[b] = ring[(r + b) & (W - 1)];
        }
    }

    // Writes every complete line to global memory.
    __device__ __forceinline__ void flush_lines() {
        if (flushed + LINE > pos + skew) return;
        __syncwarp();
        while (flushed + LINE <= pos + skew) {
            store_word(flushed + 4 * lane_id(), pos);
            flushed += LINE;
        }
    }

    // Writes the last, partial line. Call once at the end of the chunk.
    __device__ __forceinline__ void finish() {
        flush_lines();
        __syncwarp();
        if (flushed < pos + skew) store_word(flushed + 4 * lane_id(), pos);
        __syncwarp();
    }

    __device__ __forceinline__ bool room(u64 n) const { return n <= cap - pos; }

    __device__ __forceinline__ bool write_byte(u8 b) {
        if (!room(1)) return false;
        if (lane_id() == 0) slot(pos) = b;
        pos += 1;
        flush_lines();
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
    // Overlapping copies (offset < len) repeat the last `offset` bytes: byte
    // i comes from src + i % offset, always a byte before `pos`, so the
    // lanes need no ordering among themselves. Far copies read global memory
    // with 4-byte aligned loads joined by a funnel shift.
    __device__ __forceinline__ bool memcpy(u32 offset, u32 len) {
        if (offset == 0 || offset > pos || len > MAX_COPY || !room(len)) return false;
        __syncwarp();  // single-lane literal writes must be visible
        const u64 src = pos - offset;
        if (offset <= NEAR) {
            for (u32 i = lane_id(); i < len; i += WARP)
                slot(pos + i) = slot(src + (offset < len ? i % offset : i));
        } else {
            // offset > NEAR >= len: the source lies wholly in global memory.
            const u8* s = dst + src;
            const u32 sh = (u32)((size_t)s & 3);
            const u32* sw = reinterpret_cast<const u32*>(s - sh);
            for (u32 w = lane_id(); 4 * w < len; w += WARP) {
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
    __device__ __forceinline__ bool copy_from(input_stream& in, u64 n) {
        while (n > 0) {
            in.ensure(LINE);
            const u32 step = (u32)(n < LINE ? n : LINE);
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
