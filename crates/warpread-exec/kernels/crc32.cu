// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, initial value and
// final xor 0xFFFFFFFF: the gzip / zlib CRC) of each job's input bytes, one
// u32 per job, on the CODAG framework: one warp per job.
//
// Arithmetic. A 32-bit register r stands for a polynomial over GF(2) in the
// reflected order of the standard CRC: bit i is the coefficient of x^(31-i).
// Feeding a byte is r' = (r ^ b) * x^8 mod P, a 32-bit little-endian word
// r' = (r ^ w) * x^32 mod P. With the register starting at 0 ("raw" CRC) the
// whole is linear, so the raw CRC of a message "positioned at" byte q (the
// message's bytes before q, zeros between its end and q) is the sum over
// its 4-byte words w at byte p of w * x^(8 (q - p)): bytes can be
// processed in any order and their contributions added, leading zeros
// contribute nothing, and moving the position by d bytes multiplies by
// x^(8 d) (d < 0 too: x is invertible mod P, as P has a constant term).
//
// The warp. A job's bytes, from its start to its end rounded up to 16
// (`body_end`, z = body_end - end bytes past the job), are covered by
// `rounds` rounds of G = 512 bytes ending at body_end; the first round
// starts up to G - 1 bytes before the job. Bytes outside the job read as
// zeros and are never loaded. In each round lane l takes the aligned 16
// bytes at l * 16: one coalesced 512-byte load per warp. Each lane keeps the
// raw CRC of its own bytes positioned at the start of its next 16 bytes, so
// one round is
//     s' = (s ^ w0) * x^(8G) + w1 * x^(8G-32) + w2 * x^(8G-64) + w3 * x^(8G-96)
// After the last round lane l's state is positioned 16 l bytes past
// body_end, 16 l + z past the job's end: multiplied by x^(-8 (16 l + z))
// (a constant of the lane and z) it is positioned at the end, and the xor of
// the 32 lanes is the raw CRC of the job. The initial value 0xFFFFFFFF is
// the same as xoring 0xFF into the first four bytes, so jobs of fewer than
// four bytes go byte by byte instead; the final xor last.
//
// Tables in registers. A product v * c (c constant) is linear in v's bits,
// so it is the xor of seven lookups, one per 5-bit piece of v, in 32-entry
// tables. Lane i holds entry i of every table and a lookup is a
// `__shfl_sync` from the lane the piece names: four multipliers times seven
// pieces are 28 registers and 28 shuffles a round. On an H100 this reads
// ~2.5 TB/s over a thousand 1 MiB jobs (a device-to-device copy there moves
// 2.85 TB/s, read and write counted), 2.4 TB/s over 16 KiB jobs, 1.3 TB/s
// over 4 KiB jobs; one 1 MiB job alone takes ~200 us. Shared-memory tables
// of 256 entries (16 lookups a round, copied in per block) measured slower:
// random bank conflicts held them at ~2.1 TB/s, and one job at ~300 us.
// Eight rounds of loads in flight (BATCH) measured best for 1 MiB jobs; four
// is a little faster below 16 KiB.
//
// Reads: only bytes of the job are read (loads are aligned 16-byte words
// wholly inside the job, or single bytes); the job's one u32 is written by
// lane 0 at its output element. Statuses: a job must ask for exactly one
// value: 0 is OUTPUT_OVERFLOW at byte 0, more is OUTPUT_SHORT at the end of
// the input, nothing written in either case (crates/warpread-exec/src/cpu.rs, `crc32_job`,
// is the reference).
#include "codag.cuh"

using namespace codag;

namespace crc32 {

// 4-byte words each lane reads per round (1, 2 or 4).
#ifndef CRC32_WORDS
#define CRC32_WORDS 4
#endif
// Rounds of loads each lane keeps in flight.
#ifndef CRC32_BATCH
#define CRC32_BATCH 8
#endif

constexpr u32 WORDS = CRC32_WORDS;
constexpr u32 BATCH = CRC32_BATCH;
static_assert(WORDS == 1 || WORDS == 2 || WORDS == 4, "a lane reads 4, 8 or 16 bytes a round");
constexpr u32 LANE_BYTES = 4 * WORDS;
constexpr u32 ROUND = WARP * LANE_BYTES;  // G
// 5-bit pieces of a 32-bit word: a table of 32 entries, one per lane.
constexpr u32 PIECES = 7;
// Jobs shorter than this go byte by byte: the parallel path puts the
// initial value into the first four bytes.
constexpr u64 SMALL = 4;

constexpr u32 POLY = 0xEDB88320u;
constexpr u32 ONE = 0x80000000u;  // the polynomial 1

// r * x mod P.
__host__ __device__ constexpr u32 mul_x(u32 r) { return (r >> 1) ^ ((r & 1u) ? POLY : 0u); }

// r / x mod P: the inverse of mul_x (its result has bit 31 set exactly when
// the bit shifted out was 1).
__host__ __device__ constexpr u32 div_x(u32 r) {
    const u32 b = r >> 31;
    return ((r ^ (b ? POLY : 0u)) << 1) | b;
}

// a * b mod P: b * x^k summed over the terms x^k of a.
__host__ __device__ constexpr u32 mul_mod(u32 a, u32 b) {
    u32 p = 0;
    for (int k = 0; k < 32; ++k) {
        if (a & (ONE >> k)) p ^= b;
        b = mul_x(b);
    }
    return p;
}

// x^e mod P by squaring.
__host__ __device__ constexpr u32 x_pow(u32 e) {
    u32 result = ONE;
    u32 sq = mul_x(ONE);  // x^(2^i)
    while (e != 0) {
        if (e & 1u) result = mul_mod(result, sq);
        sq = mul_mod(sq, sq);
        e >>= 1;
    }
    return result;
}

struct Tables {
    // round[k][c][i] = (i << 5c) * x^(8 ROUND - 32 k) mod P: piece c of word
    // k of a lane's round, moved to the lane's next round (the last piece
    // has two bits: entries past 3 are 0).
    u32 round[WORDS][PIECES][WARP];
    // byte[c][i] = (i << 5c) * x^8 mod P: the byte-at-a-time table in two
    // pieces (the second has three bits).
    u32 byte[2][WARP];
    // back[z][c][l] = x^(24 - 8 c) * x^(-8 (LANE_BYTES l + z)) mod P: the
    // multiplier that moves lane l's state to the job's end, split for
    // `mul_back`.
    u32 back[LANE_BYTES][4][WARP];
};

__host__ __device__ constexpr Tables make_tables() {
    Tables t{};
    for (u32 k = 0; k < WORDS; ++k) {
        const u32 c = x_pow(8 * ROUND - 32 * k);
        for (u32 p = 0; p < PIECES; ++p)
            for (u32 i = 0; i < WARP && (5 * p + 5 <= 32 || i < (1u << (32 - 5 * p))); ++i)
                t.round[k][p][i] = mul_mod(i << (5 * p), c);
    }
    const u32 x8 = x_pow(8);
    for (u32 i = 0; i < WARP; ++i) t.byte[0][i] = mul_mod(i, x8);
    for (u32 i = 0; i < 8; ++i) t.byte[1][i] = mul_mod(i << 5, x8);
    // Multiplying by a power of x is that many mul_x or div_x steps.
    u32 b = ONE;  // x^(-8 (LANE_BYTES l + z))
    for (u32 l = 0; l < WARP; ++l) {
        for (u32 z = 0; z < LANE_BYTES; ++z) {
            for (u32 c = 0; c < 4; ++c) {
                u32 v = b;
                for (u32 i = 0; i < 24 - 8 * c; ++i) v = mul_x(v);
                t.back[z][c][l] = v;
            }
            for (u32 i = 0; i < 8; ++i) b = div_x(b);
        }
    }
    return t;
}

// Computed by the compiler; each lane loads its entries once per thread.
__device__ const Tables TABLES = make_tables();

// Checks of the arithmetic, at compile time.
static_assert(mul_mod(ONE, 0x12345678u) == 0x12345678u, "1 is the unit");
static_assert(div_x(mul_x(0xdeadbeefu)) == 0xdeadbeefu && div_x(mul_x(1u)) == 1u, "div_x inverts mul_x");
static_assert(mul_mod(x_pow(100), x_pow(28)) == x_pow(128), "powers add");
static_assert(mul_mod(0xffu, x_pow(8)) == 0x2d02ef8du, "the classic table's last entry");

// This lane's entries of the tables.
struct LaneTables {
    u32 round[WORDS][PIECES];
    u32 byte[2];

    __device__ __forceinline__ void load(u32 lane) {
#pragma unroll
        for (u32 k = 0; k < WORDS; ++k)
#pragma unroll
            for (u32 p = 0; p < PIECES; ++p) round[k][p] = __ldg(&TABLES.round[k][p][lane]);
        byte[0] = __ldg(&TABLES.byte[0][lane]);
        byte[1] = __ldg(&TABLES.byte[1][lane]);
    }

    // v * x^(8 ROUND - 32 k): the lane a shuffle reads is its index's low
    // five bits (PTX shfl.sync.idx), so each piece is one shift.
    __device__ __forceinline__ u32 mul(u32 k, u32 v) const {
        u32 r = __shfl_sync(FULL_MASK, round[k][0], v);
#pragma unroll
        for (u32 p = 1; p < PIECES; ++p) r ^= __shfl_sync(FULL_MASK, round[k][p], v >> (5 * p));
        return r;
    }

    // One byte fed into register r (all lanes, warp-uniform).
    __device__ __forceinline__ u32 feed(u32 r, u32 b) const {
        const u32 i = (r ^ b) & 0xffu;
        return (r >> 8) ^ __shfl_sync(FULL_MASK, byte[0], i) ^ __shfl_sync(FULL_MASK, byte[1], i >> 5);
    }
};

// s * m mod P, where k[c] = m * x^(24 - 8 c): byte c of s (its terms of
// degree 24 - 8 c to 31 - 8 c) times m is an eight-step product from k[c],
// so the four bytes are four short independent chains instead of one of 32.
__device__ __forceinline__ u32 mul_back(u32 s, const u32 (&k)[4]) {
    u32 p[4];
#pragma unroll
    for (u32 c = 0; c < 4; ++c) {
        u32 b = k[c];
        p[c] = 0;
#pragma unroll
        for (u32 i = 0; i < 8; ++i) {
            p[c] ^= b & (0u - ((s >> (8 * c + 7 - i)) & 1u));
            b = mul_x(b);
        }
    }
    return (p[0] ^ p[1]) ^ (p[2] ^ p[3]);
}

struct Words {
    u32 w[WORDS];
};

// One aligned LANE_BYTES-byte load, wholly inside the job.
__device__ __forceinline__ Words load_words(size_t a) {
    Words r;
    if constexpr (WORDS == 4) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(a));
        r.w[0] = v.x;
        r.w[1] = v.y;
        r.w[2] = v.z;
        r.w[3] = v.w;
    } else if constexpr (WORDS == 2) {
        const uint2 v = __ldg(reinterpret_cast<const uint2*>(a));
        r.w[0] = v.x;
        r.w[1] = v.y;
    } else {
        r.w[0] = __ldg(reinterpret_cast<const u32*>(a));
    }
    return r;
}

// The same bytes where some lie outside the job (read as zeros, never
// loaded) or among its first four (xored with 0xFF: the initial value).
__device__ __forceinline__ Words load_words_at_edge(size_t a, size_t start, size_t end) {
    Words r;
#pragma unroll
    for (u32 k = 0; k < WORDS; ++k) {
        u32 v = 0;
#pragma unroll
        for (u32 b = 0; b < 4; ++b) {
            const size_t p = a + 4 * k + b;
            if (p >= start && p < end) {
                u32 byte = __ldg(reinterpret_cast<const u8*>(p));
                if (p - start < 4) byte ^= 0xffu;
                v |= byte << (8 * b);
            }
        }
        r.w[k] = v;
    }
    return r;
}

// One round of a lane: its state moved from the start of these bytes to the
// start of its bytes in the next round, their contribution added (the
// words after the first do not depend on the state: summed first, they
// stay off the chain from one round to the next).
__device__ __forceinline__ u32 round(const LaneTables& t, u32 s, const Words& w) {
    u32 rest = 0;
#pragma unroll
    for (u32 k = 1; k < WORDS; ++k) rest ^= t.mul(k, w.w[k]);
    return t.mul(0, s ^ w.w[0]) ^ rest;
}

// A lane's bytes at `a`, which may lie partly outside the job.
__device__ __forceinline__ Words load_checked(size_t a, size_t start, size_t end) {
    Words w;
    if (a >= start + 4 && a + LANE_BYTES <= end) {
        w = load_words(a);
    } else {
        w = load_words_at_edge(a, start, end);
    }
    return w;
}

__device__ void job_crc(const LaneTables& t, const u8* in, const ChunkJob& job, u32* out,
                        ChunkStatus* st) {
    const u64 n = job.in_len;
    if (job.out_count == 0) {
        put_status(st, OUTPUT_OVERFLOW, 0, 0);
        return;
    }
    if (job.out_count > 1) {
        put_status(st, OUTPUT_SHORT, n, 0);
        return;
    }
    const u32 lane = lane_id();
    u32 crc;
    if (n < SMALL) {
        // Every lane the same bytes (broadcast loads).
        u32 r = 0xffffffffu;
        for (u32 i = 0; i < (u32)n; ++i) r = t.feed(r, __ldg(in + i));
        crc = ~r;
    } else {
        // Addresses as integers: the first and last rounds' may lie outside
        // the job.
        const size_t start = (size_t)in;
        const size_t end = start + n;
        const size_t body_end = (end + LANE_BYTES - 1) & ~(size_t)(LANE_BYTES - 1);
        const u64 rounds = (body_end - start + ROUND - 1) / ROUND;
        const size_t base = body_end - rounds * ROUND;
        const size_t mine = base + (size_t)LANE_BYTES * lane;
        // The first round or two (base > start - ROUND) hold bytes before
        // the job or its first four, rounds [tail, rounds) bytes past its end
        // (the last one when z > 0): loads are checked for them, plain in
        // between. Each lane keeps BATCH rounds' loads in flight: a slot,
        // once consumed, is refilled with the round BATCH further on.
        const u64 tail = body_end != end ? rounds - 1 : rounds;
        static_assert(BATCH >= 2, "the first two rounds are loaded in the prologue");
        u32 s = 0;
        Words w[BATCH];
#pragma unroll
        for (u32 k = 0; k < BATCH; ++k)
            if (k < rounds) w[k] = load_checked(mine + k * ROUND, start, end);
        u64 r = 0;
        // Refills of rounds in [BATCH, tail): plain.
        for (; r + 2 * BATCH <= tail; r += BATCH) {
#pragma unroll
            for (u32 k = 0; k < BATCH; ++k) {
                s = round(t, s, w[k]);
                w[k] = load_words(mine + (r + k + BATCH) * ROUND);
            }
        }
        for (; r < rounds; r += BATCH) {
#pragma unroll
            for (u32 k = 0; k < BATCH; ++k) {
                if (r + k < rounds) {
                    s = round(t, s, w[k]);
                    if (r + k + BATCH < rounds)
                        w[k] = load_checked(mine + (r + k + BATCH) * ROUND, start, end);
                }
            }
        }
        // Every lane's state positioned at the job's end, then summed.
        const u32* kb = &TABLES.back[body_end - end][0][lane];
        const u32 k[4] = {__ldg(kb), __ldg(kb + WARP), __ldg(kb + 2 * WARP), __ldg(kb + 3 * WARP)};
        s = mul_back(s, k);
#pragma unroll
        for (u32 d = WARP / 2; d > 0; d /= 2) s ^= __shfl_xor_sync(FULL_MASK, s, d);
        crc = ~s;
    }
    if (lane == 0) *out = crc;
    put_status(st, OK, 0, 1);
}

}  // namespace crc32

// One warp per job (codag::for_each_chunk; its shared-memory rings are
// unused and compiled away).
extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)
    crc32_ieee(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs, u32 njobs,
               u8* __restrict__ output, ChunkStatus* __restrict__ status) {
    crc32::LaneTables t;
    t.load(lane_id());
    for_each_chunk(njobs, [&](u64 j, u8*) {
        const ChunkJob job = jobs[j];
        crc32::job_crc(t, input + job.in_off, job, reinterpret_cast<u32*>(output) + job.out_off,
                       status + j);
    });
}
