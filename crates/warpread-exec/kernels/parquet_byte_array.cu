// Parquet BYTE_ARRAY pages in two passes on the CODAG framework: the
// lengths pass writes each value's length as a u32, the data pass the
// values' bytes end to end (its job's count is the sum of the lengths). For
// PLAIN (a 4-byte length before each value), DELTA_LENGTH_BYTE_ARRAY (the
// lengths as one DELTA_BINARY_PACKED stream, then the bytes) and
// DELTA_BYTE_ARRAY (prefix lengths and suffix lengths as two
// DELTA_BINARY_PACKED streams, then the suffixes).
//
// One warp per job; every decision is warp-uniform. Statuses (code, detail,
// produced) are those of the CPU references, value for value:
// crates/warpread-codecs/src/parquet_plain/decode.rs (byte_array_lengths, byte_array_data),
// parquet_delta_length_byte_array/decode.rs and
// parquet_delta_byte_array/decode.rs, whose length streams go through the
// lazy `Reader` of parquet_delta_binary_packed/decode.rs, mirrored here as
// `dbp` (same state, same order of checks, same offsets).
//
// - PLAIN: the walk from length to length is sequential. The warp keeps a
//   128-byte window of the chunk in registers (lane l holds the aligned word
//   at base + 4l) and reads each length with two shuffles, reloading the
//   window when a length leaves it. Lengths are gathered 32 per store;
//   values are copied by all lanes.
// - DELTA_LENGTH_BYTE_ARRAY: lengths are unpacked 32 per warp step (a step
//   never crosses a miniblock: steps are aligned to 32 deltas and
//   miniblocks hold a multiple of 32), each lane reading its field from
//   global memory, and a warp prefix sum of (min delta + delta) gives the
//   values. The data pass skips the length stream miniblock by miniblock
//   (widths only) and copies the bytes after it.
// - DELTA_BYTE_ARRAY: both length streams are first walked to their ends
//   (which is where the CPU finds all their errors), then decoded in
//   lockstep 32 values a step. The data pass rebuilds values one at a time,
//   all lanes copying the prefix from the previous value in the output and
//   the suffix from the input; runs of empty values in zero-width,
//   zero-delta miniblocks are skipped a miniblock at a time.
//
// Reads stay inside the job's input range (edge words are read byte by
// byte) and writes inside its output range; every loop is bounded by the
// input's bytes or the job's count or capacity.
#include "codag.cuh"

using namespace codag;

// ---------------------------------------------------------------------------
// Byte copies. RO: the source is the (read-only) input, loaded through the
// non-coherent cache; otherwise it is this job's own output, written earlier
// by the warp (made visible by __syncwarp), loaded with plain loads.
// ---------------------------------------------------------------------------
template <bool RO>
__device__ __forceinline__ u32 ld8(const u8* p) {
    if constexpr (RO) return __ldg(p);
    else return *p;
}

template <bool RO>
__device__ __forceinline__ u32 ld32(const u32* p) {
    if constexpr (RO) return __ldg(p);
    else return *p;
}

// The aligned word at address w, its bytes outside [lo, hi) read as zero and
// never loaded.
template <bool RO>
__device__ __forceinline__ u32 word_in(size_t w, size_t lo, size_t hi) {
    if (w >= lo && w + 4 <= hi) return ld32<RO>(reinterpret_cast<const u32*>(w));
    u32 v = 0;
#pragma unroll
    for (u32 b = 0; b < 4; ++b)
        if (w + b >= lo && w + b < hi) v |= ld8<RO>(reinterpret_cast<const u8*>(w + b)) << (8 * b);
    return v;
}

// Copies n bytes from src to dst (not overlapping) with all lanes, reading
// only [src, src + n) and writing only [dst, dst + n). Long copies store
// aligned 4-byte words, each assembled from two aligned source words.
template <bool RO>
__device__ void copy_bytes(u8* dst, const u8* src, u32 n) {
    const u32 lane = lane_id();
    if (n < 2 * WARP) {
        for (u32 t = lane; t < n; t += WARP) dst[t] = (u8)ld8<RO>(src + t);
        return;
    }
    const u32 head = (4 - (u32)((size_t)dst & 3)) & 3;  // < n
    if (lane < head) dst[lane] = (u8)ld8<RO>(src + lane);
    const u32 words = (n - head) / 4;
    u32* d = reinterpret_cast<u32*>(dst + head);
    const size_t s = (size_t)src + head;
    const u32 sh = (u32)(s & 3);
    if (sh == 0) {
        // Every source word lies inside [src + head, src + n).
        const u32* sw = reinterpret_cast<const u32*>(s);
        for (u32 w = lane; w < words; w += WARP) d[w] = ld32<RO>(sw + w);
    } else {
        const size_t lo = (size_t)src, hi = (size_t)src + n, sw = s - sh;
        for (u32 w = lane; w < words; w += WARP) {
            const size_t a = sw + 4 * (size_t)w;
            d[w] = __funnelshift_r(word_in<RO>(a, lo, hi), word_in<RO>(a + 4, lo, hi), 8 * sh);
        }
    }
    const u32 done = head + 4 * words;
    if (lane < n - done) dst[done + lane] = (u8)ld8<RO>(src + done + lane);
}

// ---------------------------------------------------------------------------
// PLAIN
// ---------------------------------------------------------------------------

// A 128-byte window of the chunk held by the warp: lane l holds the aligned
// word at base + 4l (bytes outside the chunk read as zero, never loaded).
struct word_window {
    size_t lo, hi;  // the chunk's address range
    size_t base;
    u32 word;
    bool loaded;

    __device__ __forceinline__ void init(const u8* in, u32 len) {
        lo = (size_t)in;
        hi = lo + len;
        base = 0;
        word = 0;
        loaded = false;
    }

    // The little-endian u32 at address a; the caller has checked that its
    // four bytes are in the chunk. Warp-uniform.
    __device__ __forceinline__ u32 u32_at(size_t a) {
        if (!loaded || a < base || a + 4 > base + LINE) {
            base = a & ~(size_t)3;
            loaded = true;
            word = word_in<true>(base + 4 * (size_t)lane_id(), lo, hi);
        }
        const u32 o = (u32)(a - base);  // <= 124
        const u32 w0 = __shfl_sync(FULL_MASK, word, o >> 2);
        const u32 w1 = __shfl_sync(FULL_MASK, word, ((o >> 2) + 1) & (WARP - 1));
        return __funnelshift_r(w0, w1, 8 * (o & 3));
    }
};

__device__ void plain_lengths(const u8* in, u32 len, u32 n, u32* out, ChunkStatus* st) {
    const u32 lane = lane_id();
    word_window win;
    win.init(in, len);
    u64 pos = 0;
    u32 mine = 0;  // lane l: the length of value 32k + l of the current group
    for (u32 i = 0; i < n; ++i) {
        if (pos + 4 > len) {
            put_status(st, pos >= len ? OUTPUT_SHORT : INPUT_TRUNCATED, pos, i);
            return;
        }
        const u32 l = win.u32_at((size_t)in + pos);
        if ((u64)len - pos - 4 < l) {
            put_status(st, INPUT_TRUNCATED, pos, i);
            return;
        }
        if (lane == (i & (WARP - 1))) mine = l;
        if ((i & (WARP - 1)) == WARP - 1) out[i - (WARP - 1) + lane] = mine;
        pos += 4 + (u64)l;
    }
    const u32 base = n & ~(u32)(WARP - 1);
    if (lane < n - base) out[base + lane] = mine;
    put_status(st, OK, 0, n);
}

__device__ void plain_data(const u8* in, u32 len, u32 cap, u8* out, ChunkStatus* st) {
    word_window win;
    win.init(in, len);
    u64 pos = 0;
    u32 written = 0;
    // Each value takes at least 4 input bytes: at most len / 4 iterations.
    while (written < cap) {
        if (pos + 4 > len) {
            put_status(st, OUTPUT_SHORT, pos, written);
            return;
        }
        const u32 l = win.u32_at((size_t)in + pos);
        if ((u64)len - pos - 4 < l) {
            put_status(st, INPUT_TRUNCATED, pos, written);
            return;
        }
        if (cap - written < l) {
            put_status(st, OUTPUT_OVERFLOW, pos, written);
            return;
        }
        copy_bytes<true>(out + written, in + pos + 4, l);
        written += l;
        pos += 4 + (u64)l;
    }
    put_status(st, OK, 0, written);
}

// ---------------------------------------------------------------------------
// DELTA_BINARY_PACKED length streams (32-bit values)
// ---------------------------------------------------------------------------

// The varint at stream offset `at` for a BITS-wide value with the rules of
// crates/warpread-codecs/src/varint.rs (length limit, end of input, then width): lane i
// loads byte at + i, a ballot finds the terminator. Warp-uniform.
template <u32 BITS>
__device__ __forceinline__ u32 gvarint(const u8* in, u32 len, u64 at, u64& out, u32& nbytes) {
    constexpr u32 MAXB = (BITS + 6) / 7;
    const u32 lane = lane_id();
    const u64 left = at < len ? len - at : 0;
    const u32 avail = left < MAXB ? (u32)left : MAXB;
    const u32 b = lane < avail ? (u32)__ldg(in + at + lane) : 0x80u;
    const u32 term = __ballot_sync(FULL_MASK, b < 0x80);
    if (term == 0) return avail == MAXB ? VARINT_OVERLONG : INPUT_TRUNCATED;
    const u32 t = __ffs(term) - 1;  // < avail <= MAXB
    u64 part = lane <= t ? (u64)(b & 0x7f) << (7 * lane) : 0;
#pragma unroll
    for (u32 d = 1; d < WARP; d <<= 1) part |= __shfl_xor_sync(FULL_MASK, part, d);
    const u32 last = __shfl_sync(FULL_MASK, b, t);
    const bool top = BITS == 64 && t == MAXB - 1 && last > 1;
    const bool fits = BITS == 64 || (part >> (BITS % 64)) == 0;
    if (top || !fits) return VALUE_OUT_OF_RANGE;
    out = part;
    nbytes = t + 1;
    return OK;
}

__device__ __forceinline__ u64 unzigzag(u64 v) { return (v >> 1) ^ (0 - (v & 1)); }

// The CPU's `Reader` for a 32-bit stream, field for field (values kept to
// their low 32 bits, which is all a length uses). Positions that may run
// past the input (pos, body_at) are 64-bit.
struct dbp {
    const u8* in;
    u32 len;
    u32 per_mini, nminis, total;
    u32 done;  // values handed out
    u32 value, min_delta;
    u64 pos;  // where the next block header starts once this block is done
    bool have_block;
    u32 block_at, widths_at;
    u32 mini, in_mini, width;
    u64 body_at;
};

__device__ __forceinline__ u64 body_len(const dbp& r) { return (u64)r.per_mini * r.width / 8; }

// Reader::new. On failure `at` is the CPU's offset (produced is 0).
__device__ u32 dbp_new(dbp& r, const u8* in, u32 len, u64& at) {
    u64 block_size = 0, miniblocks = 0, total = 0, first = 0;
    u32 nb = 0;
    u64 p = 0;
    u32 c = gvarint<32>(in, len, p, block_size, nb);
    if (c == OK) {
        p += nb;
        c = gvarint<32>(in, len, p, miniblocks, nb);
    }
    if (c == OK) {
        p += nb;
        c = gvarint<32>(in, len, p, total, nb);
    }
    if (c == OK) {
        p += nb;
        c = gvarint<64>(in, len, p, first, nb);
    }
    if (c != OK) {
        at = p;
        return c;
    }
    p += nb;
    if (block_size == 0 || block_size % 128 != 0 || miniblocks == 0 || block_size % miniblocks != 0 ||
        (block_size / miniblocks) % 32 != 0) {
        at = 0;
        return INPUT_CORRUPT;
    }
    r.in = in;
    r.len = len;
    r.per_mini = (u32)(block_size / miniblocks);
    r.nminis = (u32)miniblocks;
    r.total = (u32)total;
    r.done = 0;
    r.value = (u32)unzigzag(first);
    r.min_delta = 0;
    r.pos = p;
    r.have_block = false;
    r.block_at = (u32)p;
    r.widths_at = 0;
    r.mini = 0;
    r.in_mini = r.per_mini;
    r.width = 0;
    r.body_at = p;
    return OK;
}

// Reader::next_miniblock. On failure `at` is the CPU's offset (produced is
// r.done).
__device__ u32 dbp_next_mini(dbp& r, u64& at) {
    if (r.have_block) {
        r.pos = r.body_at + body_len(r);
        r.mini += 1;
        r.have_block = r.mini < r.nminis;
    }
    if (!r.have_block) {
        u64 zz = 0;
        u32 nb = 0;
        const u32 c = gvarint<64>(r.in, r.len, r.pos, zz, nb);
        if (c != OK) {
            at = r.pos;
            return c;
        }
        // The varint's bytes are in the input: pos + nb <= len < 2^32.
        r.block_at = (u32)r.pos;
        r.min_delta = (u32)unzigzag(zz);
        r.widths_at = r.block_at + nb;
        if (r.len - r.widths_at < r.nminis) {
            at = r.block_at;
            return INPUT_TRUNCATED;
        }
        r.pos = (u64)r.widths_at + r.nminis;
        r.mini = 0;
        r.have_block = true;
    }
    const u32 width = __ldg(r.in + r.widths_at + r.mini);  // widths_at + nminis <= len
    if (width > 32) {
        at = r.block_at;
        return INPUT_CORRUPT;
    }
    r.width = width;
    r.body_at = r.pos;
    r.in_mini = 0;
    return OK;
}

// The next `want` values (1 <= want <= 32, r.done + want <= r.total; 1 for
// the first value), lane l getting value r.done + l in `v`. Callers step by
// groups aligned to 32 deltas, so a step stays in one miniblock (clamped to
// it regardless). `got` values are valid; got < want is a failure (code,
// at) with produced = the old r.done + got, as the CPU's per-value walk
// meets it. Warp-uniform.
__device__ u32 dbp_step(dbp& r, u32 want, u32& v, u32& got, u64& at) {
    const u32 lane = lane_id();
    if (r.done == 0) {  // the header's first value
        v = r.value;
        got = 1;
        r.done = 1;
        return want <= 1 ? OK : INPUT_CORRUPT;  // callers ask for it alone
    }
    got = 0;
    if (r.in_mini == r.per_mini) {
        const u32 c = dbp_next_mini(r, at);
        if (c != OK) return c;
    }
    const u32 room = r.per_mini - r.in_mini;
    const u32 cnt = want < room ? want : room;
    const u32 w = r.width;
    u32 ok = cnt;
    if (w > 0) {
        // Value k of the miniblock needs bits [k w, (k + 1) w) after body_at.
        const u64 avail_bits = r.body_at < r.len ? 8ull * (r.len - r.body_at) : 0;
        const u64 fit = avail_bits / w;
        const u64 left = fit > r.in_mini ? fit - r.in_mini : 0;
        if (left < cnt) ok = (u32)left;
    }
    u32 s = 0;
    if (lane < ok) {
        u32 delta = 0;
        if (w > 0) {
            const u64 bit = (u64)(r.in_mini + lane) * w;
            const u64 first = r.body_at + (bit >> 3);
            const u32 skip = (u32)(bit & 7);
            const u32 nbytes = (skip + w + 7) >> 3;  // <= 5
            u64 x = 0;
            for (u32 b = 0; b < nbytes; ++b)
                if (first + b < r.len) x |= (u64)__ldg(r.in + first + b) << (8 * b);
            x >>= skip;
            delta = w == 32 ? (u32)x : (u32)x & ((1u << w) - 1);
        }
        s = r.min_delta + delta;
    }
#pragma unroll
    for (u32 d = 1; d < WARP; d <<= 1) {
        const u32 t = __shfl_up_sync(FULL_MASK, s, d);
        if (lane >= d) s += t;
    }
    v = r.value + s;
    if (ok > 0) r.value = __shfl_sync(FULL_MASK, v, ok - 1);
    r.in_mini += ok;
    r.done += ok;
    got = ok;
    if (ok < cnt) {
        at = r.block_at;
        return INPUT_TRUNCATED;
    }
    return OK;
}

// Reader::end: skips the remaining values (widths only) and gives the
// stream's end in `end`; on failure `at` and `produced` as the CPU's.
// Bounded by the stream's bytes: every miniblock entered has a width byte.
__device__ u32 dbp_end(dbp& r, u64& end, u64& at, u64& produced) {
    if (r.total <= 1) {
        end = r.pos;
        return OK;
    }
    if (r.done == 0) r.done = 1;
    while (r.done < r.total) {
        if (r.in_mini == r.per_mini) {
            const u32 c = dbp_next_mini(r, at);
            if (c != OK) {
                produced = r.done;
                return c;
            }
        }
        const u32 a = r.per_mini - r.in_mini, b = r.total - r.done;
        const u32 take = a < b ? a : b;
        r.in_mini += take;
        r.done += take;
    }
    end = r.body_at + body_len(r);
    if (end > r.len) {
        at = r.block_at;
        produced = r.done;
        return INPUT_TRUNCATED;
    }
    return OK;
}

// Warp sum of a u64.
__device__ __forceinline__ u64 warp_sum(u64 x) {
#pragma unroll
    for (u32 d = 1; d < WARP; d <<= 1) x += __shfl_xor_sync(FULL_MASK, x, d);
    return x;
}

// Inclusive warp prefix sum of a u64.
__device__ __forceinline__ u64 warp_scan(u64 x) {
    const u32 lane = lane_id();
#pragma unroll
    for (u32 d = 1; d < WARP; d <<= 1) {
        const u64 t = __shfl_up_sync(FULL_MASK, x, d);
        if (lane >= d) x += t;
    }
    return x;
}

// The size of the next aligned step from value `done` with `left` values
// wanted: the first value alone, then groups of 32 deltas.
__device__ __forceinline__ u32 step_size(u32 done, u32 left) {
    if (done == 0) return 1;
    const u32 room = WARP - ((done - 1) & (WARP - 1));
    return left < room ? left : room;
}

// ---------------------------------------------------------------------------
// DELTA_LENGTH_BYTE_ARRAY
// ---------------------------------------------------------------------------

__device__ void dlba_lengths(const u8* in, u32 len, u32 n, u32* out, ChunkStatus* st) {
    const u32 lane = lane_id();
    dbp r;
    u64 at = 0;
    u32 c = dbp_new(r, in, len, at);
    if (c != OK) {
        put_status(st, c, at, 0);
        return;
    }
    const u32 have = n < r.total ? n : r.total;
    u64 sum = 0;
    while (r.done < have) {
        const u32 base = r.done;
        u32 v = 0, got = 0;
        c = dbp_step(r, step_size(base, have - base), v, got, at);
        const bool valid = lane < got;
        const u32 neg = __ballot_sync(FULL_MASK, valid && (i32)v < 0);
        if (neg) {
            put_status(st, VALUE_OUT_OF_RANGE, 0, base + __ffs(neg) - 1);
            return;
        }
        if (c != OK) {
            put_status(st, c, at, base + got);
            return;
        }
        if (valid) out[base + lane] = v;
        sum += warp_sum(valid ? v : 0);
    }
    if (have < n) {
        put_status(st, OUTPUT_SHORT, 0, have);
        return;
    }
    u64 end = 0, produced = 0;
    c = dbp_end(r, end, at, produced);
    if (c != OK) {
        put_status(st, c, at, produced);
        return;
    }
    if ((u64)len - end >= sum) put_status(st, OK, 0, n);
    else put_status(st, INPUT_TRUNCATED, end, 0);
}

__device__ void dlba_data(const u8* in, u32 len, u32 cap, u8* out, ChunkStatus* st) {
    dbp r;
    u64 at = 0, start = 0, produced = 0;
    u32 c = dbp_new(r, in, len, at);
    if (c != OK) {
        put_status(st, c, at, 0);
        return;
    }
    c = dbp_end(r, start, at, produced);
    if (c != OK) {
        put_status(st, c, at, produced);
        return;
    }
    if ((u64)len - start >= cap) {  // start <= len
        copy_bytes<true>(out, in + start, cap);
        put_status(st, OK, 0, cap);
    } else {
        put_status(st, INPUT_TRUNCATED, start, 0);
    }
}

// ---------------------------------------------------------------------------
// DELTA_BYTE_ARRAY
// ---------------------------------------------------------------------------

// The CPU's `open`: the prefix stream walked to its end, then the suffix
// length stream after it (its failures' offsets shifted by where it
// starts). P and Q are left fresh, as the CPU reopens them.
__device__ u32 dba_open(const u8* in, u32 len, dbp& P, dbp& Q, u32& bytes_at, u64& at, u64& produced) {
    produced = 0;
    u32 c = dbp_new(P, in, len, at);
    if (c != OK) return c;
    dbp t = P;
    u64 suffix_at = 0;
    c = dbp_end(t, suffix_at, at, produced);
    if (c != OK) return c;
    // suffix_at <= len
    c = dbp_new(Q, in + suffix_at, len - (u32)suffix_at, at);
    if (c != OK) {
        at += suffix_at;
        return c;
    }
    t = Q;
    u64 q_end = 0;
    c = dbp_end(t, q_end, at, produced);
    if (c != OK) {
        at += suffix_at;
        return c;
    }
    bytes_at = (u32)(suffix_at + q_end);  // <= len
    return OK;
}

// A failed step of one of the lockstep streams, reported as the CPU's
// `next` would (prefix stream first; its next_value offsets are not
// shifted). Unreachable once `dba_open` has walked both streams, which met
// every error they can give; kept so that statuses stay exact regardless.
__device__ __forceinline__ void dba_step_failure(ChunkStatus* st, u32 cp, u32 gp, u64 atp, u32 cq, u32 gq,
                                                 u64 atq, u32 base) {
    if (cp != OK && gp <= gq) put_status(st, cp, atp, base + gp);
    else if (cq != OK) put_status(st, cq, atq, base + gq);
    else put_status(st, INPUT_CORRUPT, 0, base + (gp < gq ? gp : gq));
}

__device__ void dba_lengths(const u8* in, u32 len, u32 n, u32* out, ChunkStatus* st) {
    const u32 lane = lane_id();
    dbp P, Q;
    u32 bytes_at = 0;
    u64 at = 0, produced = 0;
    u32 c = dba_open(in, len, P, Q, bytes_at, at, produced);
    if (c != OK) {
        put_status(st, c, at, produced);
        return;
    }
    const u64 blen = len - bytes_at;
    const u32 avail = P.total < Q.total ? P.total : Q.total;
    u32 prev = 0;    // the previous value's length (p + q < 2^32)
    u64 sbytes = 0;  // suffix bytes of the values so far
    u32 done = 0;
    while (done < n) {
        if (done >= avail) {
            put_status(st, OUTPUT_SHORT, 0, done);
            return;
        }
        const u32 lim = n < avail ? n : avail;
        const u32 want = step_size(done, lim - done);
        u32 p = 0, q = 0, gp = 0, gq = 0;
        u64 atp = 0, atq = 0;
        const u32 cp = dbp_step(P, want, p, gp, atp);
        const u32 cq = dbp_step(Q, want, q, gq, atq);
        const u32 got = gp < gq ? gp : gq;
        const bool valid = lane < got;
        const bool range = (i32)p < 0 || (i32)q < 0;
        const u32 full = p + q;
        u32 before = __shfl_up_sync(FULL_MASK, full, 1);
        if (lane == 0) before = prev;
        const bool corrupt = !range && p > before;
        const u64 cum = sbytes + warp_scan(valid && !range ? (u64)q : 0);
        const bool trunc = cum > blen;
        const u32 bad = __ballot_sync(FULL_MASK, valid && (range || corrupt || trunc));
        if (bad) {
            const u32 f = __ffs(bad) - 1;
            const u32 code = __shfl_sync(FULL_MASK, range ? VALUE_OUT_OF_RANGE : corrupt ? INPUT_CORRUPT : INPUT_TRUNCATED, f);
            put_status(st, code, code == INPUT_TRUNCATED ? bytes_at : 0, done + f);
            return;
        }
        if (got < want) {
            dba_step_failure(st, cp, gp, atp, cq, gq, atq, done);
            return;
        }
        if (valid) out[done + lane] = full;
        prev = __shfl_sync(FULL_MASK, full, got - 1);
        sbytes = __shfl_sync(FULL_MASK, cum, got - 1);
        done += got;
    }
    put_status(st, OK, 0, n);
}

__device__ void dba_data(const u8* in, u32 len, u32 cap, u8* out, ChunkStatus* st) {
    const u32 lane = lane_id();
    dbp P, Q;
    u32 bytes_at = 0;
    u64 at = 0, produced = 0;
    u32 c = dba_open(in, len, P, Q, bytes_at, at, produced);
    if (c != OK) {
        put_status(st, c, at, produced);
        return;
    }
    const u8* bytes = in + bytes_at;
    const u32 blen = len - bytes_at;
    const u32 avail = P.total < Q.total ? P.total : Q.total;
    u32 written = 0, prev_at = 0, suffix_at = 0, i = 0;
    while (written < cap) {
        if (i >= avail) {
            put_status(st, OUTPUT_SHORT, 0, written);
            return;
        }
        const u32 want = step_size(i, avail - i);
        u32 pv = 0, qv = 0, gp = 0, gq = 0;
        u64 atp = 0, atq = 0;
        const u32 cp = dbp_step(P, want, pv, gp, atp);
        const u32 cq = dbp_step(Q, want, qv, gq, atq);
        const u32 got = gp < gq ? gp : gq;
        const u32 base = i;
        for (u32 k = 0; k < got && written < cap; ++k) {
            const u32 p = __shfl_sync(FULL_MASK, pv, k);
            const u32 q = __shfl_sync(FULL_MASK, qv, k);
            if ((i32)p < 0 || (i32)q < 0) {
                put_status(st, VALUE_OUT_OF_RANGE, 0, i);
                return;
            }
            if (p > written - prev_at) {
                put_status(st, INPUT_CORRUPT, 0, written);
                return;
            }
            if ((u64)p + q > cap - written) {
                put_status(st, OUTPUT_OVERFLOW, 0, written);
                return;
            }
            if (q > blen - suffix_at) {
                put_status(st, INPUT_TRUNCATED, bytes_at, written);
                return;
            }
            // The prefix comes from the previous value, [prev_at, prev_at +
            // p), wholly before this one; its bytes were stored by this warp
            // before the last __syncwarp.
            u8* dst = out + written;
            const u32 total = p + q;
            if (total < 2 * WARP) {
                for (u32 t = lane; t < total; t += WARP)
                    dst[t] = t < p ? out[prev_at + t] : __ldg(bytes + suffix_at + (t - p));
            } else {
                copy_bytes<false>(dst, out + prev_at, p);
                copy_bytes<true>(dst + p, bytes + suffix_at, q);
            }
            __syncwarp();
            suffix_at += q;
            prev_at = written;
            written += total;
            ++i;
        }
        if (written >= cap) break;
        if (got < want) {
            dba_step_failure(st, cp, gp, atp, cq, gq, atq, base);
            return;
        }
        // Empty values in zero-width, zero-delta miniblocks of both streams
        // change nothing but the count: skip the rest of those miniblocks at
        // once (a few header bytes may claim 2^32 of them).
        if (P.width == 0 && Q.width == 0 && P.min_delta == 0 && Q.min_delta == 0 && P.value == 0 &&
            Q.value == 0 && P.done == i && Q.done == i && i >= 2 && P.in_mini < P.per_mini &&
            Q.in_mini < Q.per_mini) {
            u32 skip = avail - i;
            const u32 a = P.per_mini - P.in_mini, b = Q.per_mini - Q.in_mini;
            if (a < skip) skip = a;
            if (b < skip) skip = b;
            P.in_mini += skip;
            P.done += skip;
            Q.in_mini += skip;
            Q.done += skip;
            i += skip;
        }
    }
    put_status(st, OK, 0, written);
}

// A successful data job's status detail says whether every output byte is
// ASCII (ChunkStatus::ok_bytes): the reader then skips its host UTF-8 pass
// over the strings. The output was just written by this warp, so the pass
// reads it back from L2; lanes take 16-byte words where the job's bytes
// allow, the ragged ends byte by byte.
__device__ void mark_ascii(const u8* out, u32 cap, ChunkStatus* st) {
    if (status_code(st) != OK) return;
    const u32 lane = lane_id();
    u32 any = 0;
    const u32 head = (u32)((16 - ((size_t)out & 15)) & 15);
    const u32 lead = head < cap ? head : cap;
    if (lane < lead) any |= out[lane];
    const u32 words = (cap - lead) / 16;
    const uint4* w = reinterpret_cast<const uint4*>(out + lead);
    for (u32 k = lane; k < words; k += WARP) {
        const uint4 v = w[k];
        any |= v.x | v.y | v.z | v.w;
    }
    for (u32 k = lead + words * 16 + lane; k < cap; k += WARP) any |= out[k];
    const bool ascii = __all_sync(FULL_MASK, (any & 0x80808080u) == 0);
    if (lane == 0) st->detail = ascii ? 1u : 0u;
}

// Lengths passes leave their statuses as they are.
__device__ __forceinline__ void keep_status(const u32*, u32, ChunkStatus*) {}

// ---------------------------------------------------------------------------
// Entries: `param` is unused (0); lengths pass outputs are u32 elements,
// data pass outputs bytes; AFTER runs on each job's output and status.
// ---------------------------------------------------------------------------
#define PARQUET_BYTE_ARRAY_ENTRY(NAME, T, FN, AFTER)                                          \
    extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)                      \
        NAME(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs, u32 njobs,      \
             T* output, ChunkStatus* __restrict__ status, u32 param) {                        \
        (void)param;                                                                          \
        for_each_chunk(njobs, [&](u64 j, u8*) {                                               \
            const ChunkJob job = jobs[j];                                                     \
            FN(input + job.in_off, (u32)job.in_len, (u32)job.out_count, output + job.out_off, \
               status + j);                                                                   \
            AFTER(output + job.out_off, (u32)job.out_count, status + j);                      \
        });                                                                                   \
    }

PARQUET_BYTE_ARRAY_ENTRY(parquet_byte_array_lengths_plain, u32, plain_lengths, keep_status)
PARQUET_BYTE_ARRAY_ENTRY(parquet_byte_array_data_plain, u8, plain_data, mark_ascii)
PARQUET_BYTE_ARRAY_ENTRY(parquet_byte_array_lengths_delta_length, u32, dlba_lengths, keep_status)
PARQUET_BYTE_ARRAY_ENTRY(parquet_byte_array_data_delta_length, u8, dlba_data, mark_ascii)
PARQUET_BYTE_ARRAY_ENTRY(parquet_byte_array_lengths_delta, u32, dba_lengths, keep_status)
PARQUET_BYTE_ARRAY_ENTRY(parquet_byte_array_data_delta, u8, dba_data, mark_ascii)
