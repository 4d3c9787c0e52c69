// Raw deflate (RFC 1951) decompression on the CODAG framework: one warp per
// compressed chunk (an ORC ZLIB compression chunk, a Parquet page, or a
// benchmark chunk).
//
// Design: decode a batch of symbols, then write it with the whole warp.
//
// Variant G = variant F (below) plus:
//  - no error return inside the symbol loop: a bad literal/length symbol
//    (286/287, no matching long code) ends the batch through the (rare)
//    end-of-block branch with eob = its entry (K_BAD), a bad distance code
//    (30/31, no matching long code) has value 0 and ends the batch like
//    LSOFT does; K_BAD entries consume no bits, so the bit reader stands
//    where F returned, and the batch returns INPUT_CORRUPT before its write
//    phase (same statuses). F's two checks were each a compare plus a chain
//    of four predicated BREAKs out of the nested loops (8 instructions) per
//    match;
//  - decode_long inlined (F: a call with a convergence barrier, a result
//    move and ABI registers on every match's path: 97 -> 94 registers);
//  - table entries carry the number of extra bits (bits 5-9) instead of the
//    code length, and entry_value is two funnel shifts whose counts the
//    hardware takes mod 32 (no masks);
//  - long resolved copies four at a time, one per quarter warp (F: two, one
//    per half warp; the warp issued both the whole-piece and the partial-
//    word paths anyway, now each lane runs both);
//  - the end-of-batch window flush is inlined (the other sites still call
//    flush_lines).
//
// Variant F = variant E (below) plus:
//  - the window is flushed once 1536 bytes are pending (BATCH_FLUSH; was
//    512), a third of the calls;
//  - a copy with distance 1, 2, 4 or 8 that still has to be done in order
//    (its pattern was not known while decoding: after a far copy, say)
//    reads its pattern from the window after a barrier and is written like
//    a pattern copy, instead of copy_match's byte-wise head and modulos;
//  - in a long copy's half warp, lanes 0-7 write only whole 16-byte pieces
//    (no per-word checks) and lanes 8-15 one word each of the partial pieces
//    at the ends (E: every lane checked every word of its 32 bytes, and six
//    lanes wrote the end bytes).
//
// Variant E = variant D (below) plus:
//  - fused length + distance entries (K_FUSED): where a length code, its
//    extra bits, a distance code and its extra bits fit in the 10 lookup
//    bits, the literal/length entry carries both (built after the tables of
//    a dynamic block): one lookup per match (55% of MC0's, 63% of TC2's
//    matches, 38% of MC3's; none on text);
//  - two decode loops (a macro, instantiated twice): batches after one that
//    had a copy with distance <= 8 or a copy longer than 32 bytes keep the
//    last 8 bytes and stage far copies as in D; the others (most text
//    batches) run the plain loop, as fast as the built-in kernel's;
//  - the write phase makes one warp reduction of flags (distance error,
//    which write paths have work, whether to track next) instead of a vote
//    per path; long resolved copies two at a time, one per half warp, 32
//    bytes per lane;
//  - the window is flushed to global memory in 16-byte pieces (four lines
//    per warp step) when window slots and global addresses agree modulo 16
//    (128-byte lines as before otherwise).
//
// Variant D (long-match data: MC0, MC3, TC2, CD2): the batch design below,
// with more of a batch's copies written in parallel and none of them waiting
// on global memory in the write phase.
//  - Pattern copies: the decode phase keeps the last 8 output bytes in two
//    registers (a literal shifts its byte in; kst tells which are known,
//    reloaded from the window before a batch otherwise). A copy with
//    distance 1, 2, 4 or 8 over known bytes is an 8-byte pattern repeated:
//    the pattern goes with the token (tQ0/tQ1) and the register copy of the
//    last bytes is updated (a rotation), so the copy no longer depends on
//    bytes of the same batch. Before, every such copy (99% of MC0's and
//    TC2's copies, 39% of MC3's) read bytes of its own batch and was done in
//    order by the whole warp with three barriers and a reciprocal modulo
//    each (copy_match).
//  - Staged far copies: a copy longer than 32 bytes reaching back further
//    than the window (D > B_NEAR; 38% of MC3's copies, half of CD2's) has
//    its source (flushed) loaded by the warp with cp.async into a per-warp
//    staging buffer right when it is decoded; the write phase waits once
//    per batch (usually long done) and copies from shared memory. Before,
//    each paid its own global round trips in order. The window is flushed at
//    the end of a batch's write phase, so fewer than BATCH_FLUSH bytes are
//    unflushed while the next batch decodes.
//  - Resolved long copies (pattern, staged, or from the window before the
//    batch) are written by the whole warp one after another without
//    barriers, a 16-byte piece per lane (one step for 258 bytes; six lanes
//    write the partial words at the ends byte-wise); short pattern copies by
//    their own lane. What remains for copy_match: copies reading bytes of
//    their batch with other distances, and far long copies the staging
//    buffer has no room for.
// Same statuses as the built-in kernel (checked in the emulator).
//
// Why: on the CODAG suite the kernel runs one wave (2048 chunks, every warp
// resident), so time is the latency of one warp's symbol loop. Nsight put
// that at ~110 dependent instructions per Huffman symbol; besides table
// lookups, every symbol paid for its own output (a literal's capacity and
// line checks, a copy's warp-wide routine and barrier), and on text over
// half of all copies reach back further than the shared-memory window
// (distance > 3.5 KB: 55% on TXT, 42-51% on HRG, TPC, TPT), each of which
// stalled the whole warp on one global-memory round trip (~500+ cycles)
// before the next symbol could be decoded.
//
// So the work is split in two phases per batch of up to 32 symbols:
//  1. decode only: all lanes run the Huffman decoder (64-bit bit buffer,
//     table entries that carry length/distance base and extra-bit counts, no
//     constant-memory loads); token i (literal, or length and distance, and
//     its output offset in the batch) is parked in lane i's registers with a
//     select, nothing is written, and no capacity, distance or flush check is
//     made per symbol;
//  2. write: one capacity check and one ballot of distance checks per batch;
//     every literal lane stores its byte; every copy whose source lies before
//     the batch and is at most 32 bytes long is copied by its own lane, all
//     such lanes at once - near sources from the window, far ones from
//     global memory, so the global round trips of a whole batch overlap
//     instead of following each other; the remaining copies (longer ones, and
//     ones that read bytes of the same batch) are then done in order by the
//     whole warp with word-wise copies.
// Phase 1 is the same serial chain as before minus all output work; phase 2
// costs a few dozen instructions per batch rather than per symbol.
//
// Also: entries with base/extra bits so one lookup
// and one shift consume code and extra bits; a 64-bit bit buffer topped up a
// whole aligned ring word at a time, zeros past the chunk, running past the
// end detected from the bit position; the output window flushed to global
// memory in batches of lines; canonical decoding of long codes from table
// bits + 1.
//
// Validity rules follow zlib's inflate exactly as the previous kernel did:
// over-subscribed codes are errors, incomplete codes are errors unless the
// code has a single symbol of length 1, a distance beyond the output so far
// is an error, lengths 286/287 and distances 30/31 are errors when used.
// Every global read is bounded by the chunk (input) or by the bytes already
// produced (far back-references), every write by the job's capacity; the
// status says which rule failed (corrupt, truncated, overflow) and
// `produced` holds the decompressed size on success.
#include "codag.cuh"
#include "deflate.cuh"

using namespace codag;
using namespace deflate;

constexpr u32 LIT_BITS = 10;   // primary literal/length table: 2^10 entries
constexpr u32 DIST_BITS = 8;   // primary distance table: 2^8 entries
constexpr u32 CL_BITS = 7;     // code-length code (all its codes fit)
constexpr u32 MAX_BITS = 15;
constexpr u32 N_LIT = 288;
constexpr u32 N_DIST = 32;

// Output window: the last W bytes of output, per warp, in shared memory.
constexpr u32 W = 4096;
constexpr u32 WMASK = W - 1;
// The window is written to global memory once FLUSH_T bytes are pending.
constexpr u32 FLUSH_T = 1024;
// FLUSH_T + 128 <= W: a stored block's 128-byte steps never overwrite
// unflushed bytes.
static_assert(FLUSH_T + LINE <= W, "window constraints");
// Batches: at most 32 tokens; a copy that takes the output past LSOFT ends
// its batch. Literals end none (their path has no check), so up to 30 of
// them may follow the last copy that stayed within LSOFT, before the copy
// that ends the batch: a batch writes at most LSOFT + 32 + 258 = BATCH_MAX
// bytes. (LSOFT used to be BATCH_MAX - 258, which such literals could
// overrun by up to 28 bytes.) At a batch's write phase at most
// BATCH_FLUSH bytes are unflushed. Copies of the batch reach back at most
// B_NEAR bytes in the window, further ones read global memory:
//  - B_NEAR + BATCH_MAX + 7 <= W: the batch's writes (plus 3 bytes past the
//    last copy's end) never alias window bytes it reads (reads start at most
//    3 bytes before a source);
//  - BATCH_FLUSH + BATCH_MAX + 3 <= W: they never alias unflushed bytes;
//  - B_NEAR + 1 >= BATCH_MAX + BATCH_FLUSH: a far source is flushed.
constexpr u32 LSOFT = 766;
constexpr u32 BATCH_MAX = LSOFT + WARP + 258;
constexpr u32 BATCH_FLUSH = 1536;
constexpr u32 B_NEAR = 3016;
constexpr u32 PAR_MAX = 32;  // longest copy done by a single lane
// Long copies done by the warp in 16-byte pieces read the window from up to
// 15 bytes (plus 3 for word alignment) before their source: B_NEAR +
// BATCH_MAX + 19 <= W keeps those reads off the slots the batch writes.
// (Past the source's end they may read bytes of the batch: not used.)
// Staged far copies (D > B_NEAR) are read from global memory while the batch
// is still being decoded: at that point fewer than BATCH_FLUSH bytes are
// unflushed, so B_NEAR >= BATCH_MAX + BATCH_FLUSH + 15 keeps every byte of
// the 16-byte pieces they read flushed.
static_assert(B_NEAR + BATCH_MAX + 19 <= W && BATCH_FLUSH + BATCH_MAX + 3 <= W &&
                  B_NEAR >= BATCH_MAX + BATCH_FLUSH + 15 && B_NEAR > 258 && BATCH_FLUSH >= LINE,
              "batch window constraints");
// Staging buffer per warp for far copies (cp.async in the decode phase).
constexpr u32 STG = 1024;
// Token flags in tD (bits 0-15: the distance, at most 32768).
constexpr u32 F_PAT = 1u << 16;  // period 1/2/4/8 copy whose 8 pattern bytes are in tQ0/tQ1
constexpr u32 F_STG = 1u << 17;  // far copy whose source is staged at tQ0
constexpr u32 DMASK = 0xffff;
static_assert(RING >= 256, "input ring");

// Table entries: deflate.cuh's format (fused entries: see K_FUSED). Here a
// K_BAD entry consumes 0 bits (value 0), and in the code-length code's
// table K_LIT is a length 0..15, K_LEN a 16 (repeat the previous length),
// K_EOB a 17 or 18 (repeat zero).
__constant__ u8 CL_ORDER[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

// Counts and canonically sorted symbols of one code, for codes longer than
// its primary table.
struct Huffman {
    u16 count[MAX_BITS + 1];
    u16 first;  // canonical code of the first code of length table bits + 1
    u16 index;  // its position in `sorted`
};

struct WarpTables {
    u32 lit_lut[1 << LIT_BITS];
    u32 dist_lut[1 << DIST_BITS];
    Huffman lit;
    Huffman dist;
    u16 lit_sorted[N_LIT];
    u16 dist_sorted[N_DIST];
    u32 scratch[MAX_BITS + 2];  // per-length counters while building
    u8 lens[N_LIT + N_DIST];
    u8 cl_lens[20];
};

// Entry of symbol `sym` with code length `len` in each kind of table.
// kind 0: literal/length, 1: distance, 2: code-length code.
template <int KIND>
__device__ __forceinline__ u32 make_entry(u32 sym, u32 len) {
    // Bits 5-9: the number of extra bits (G; F kept the code length there).
    if (KIND == 0) {
        return lit_len_entry(sym, len, K_BAD);  // a bad one consumes nothing: decoding stops at it
    } else if (KIND == 1) {
        return dist_entry(sym, len, K_BAD);  // a bad one consumes nothing; its value (distance) is 0
    } else {
        if (sym < 16) return (sym << 16) | K_LIT | len;
        if (sym == 16) return (3u << 16) | K_LEN | (2u << 5) | (len + 2);
        if (sym == 17) return (3u << 16) | K_EOB | (3u << 5) | (len + 3);
        return (11u << 16) | K_EOB | (7u << 5) | (len + 7);
    }
}

// Fused length + distance entries (kind K_FUSED) in the literal/length table:
// where a length code, its extra bits, a distance code and its extra bits
// all fit in the LIT_BITS lookup bits, the entry carries the length and the
// distance, so such a match costs one lookup. Bits 0-4 = bits to consume,
// 5-11 = (distance - 1) & 127, 12-15 = kind, 16-23 = length - 3,
// 24-31 = (distance - 1) >> 7. K_EOB is set, so the hot path tells them
// apart from an end of block only after the (rare) K_EOB branch.
constexpr u32 K_FUSED = K_LEN | K_EOB;

// deflate.cuh's entry_value for table building and header decoding (a
// separate function so
// the lc/ tools' per-line estimate of the hot one is not averaged with these
// sites' unrolled copies).
__device__ __forceinline__ u32 entry_value_cold(u32 e, u32 lo) {
    const u32 top = __funnelshift_l(0u, lo, 0u - e);
    return (e >> 16) + __funnelshift_l(top, 0u, e >> 5);
}

// Builds the code of lens[0..n) and its primary table of `bits` index bits.
// Returns false when the lengths do not form a valid code (zlib's rules).
template <int KIND>
__device__ bool build(const u8* lens, u32 n, Huffman& h, u16* sorted, u32* lut, u32 bits, u32* scratch,
                      bool allow_empty) {
    const u32 lane = lane_id();
    if (lane <= MAX_BITS) scratch[lane] = 0;
    __syncwarp();
    for (u32 i = lane; i < n; i += WARP)
        if (lens[i]) atomicAdd(&scratch[lens[i]], 1u);
    __syncwarp();
    // Validate and turn counts into first positions (lane 0; 15 steps).
    bool ok = true;
    if (lane == 0) {
        int left = 1;
        u32 total = 0, max_len = 0;
        for (u32 l = 1; l <= MAX_BITS; ++l) {
            left = left * 2 - (int)scratch[l];
            if (left < 0) ok = false;
            total += scratch[l];
            if (scratch[l]) max_len = l;
        }
        if (total == 0) {
            ok = allow_empty;
        } else if (left > 0 && max_len != 1) {
            ok = false;  // incomplete code (only a lone 1-bit code may be)
        }
        u32 off = 0, first = 0;
        for (u32 l = 0; l <= MAX_BITS; ++l) {
            const u32 c = l == 0 ? 0 : scratch[l];
            h.count[l] = (u16)c;
            if (l >= 1 && l <= bits) first = (first + c) << 1;
            if (l == bits) h.index = (u16)(off + c);
            scratch[l] = off;  // next sorted position for length l
            off += c;
        }
        h.first = (u16)first;
    }
    ok = __shfl_sync(FULL_MASK, ok, 0);
    __syncwarp();
    if (!ok) return false;
    // Sorted symbol order: by length, then symbol (canonical order).
    for (u32 base = 0; base < n; base += WARP) {
        const u32 i = base + lane;
        const u32 l = i < n ? lens[i] : 0;
        const u32 same = __match_any_sync(FULL_MASK, l);
        const u32 rank = __popc(same & lanemask_lt());
        if (i < n && l) sorted[scratch[l] + rank] = (u16)i;
        __syncwarp();
        if (i < n && l && rank == 0) scratch[l] += __popc(same);
        __syncwarp();
    }
    // Primary table: every entry starts as "longer code", then each code of
    // at most `bits` bits fills its 2^(bits - len) entries, the (symbol,
    // replica) pairs of one length spread over the lanes.
    const u32 size = 1u << bits;
    for (u32 e = lane; e < size; e += WARP) lut[e] = K_SLOW;
    __syncwarp();
    u32 code = 0, pos = 0;
    for (u32 l = 1; l <= bits; ++l) {
        const u32 cnt = h.count[l];
        const u32 rbits = bits - l;
        const u32 m = cnt << rbits;
        for (u32 i = lane; i < m; i += WARP) {
            const u32 k = i >> rbits;
            const u32 sym = sorted[pos + k];
            const u32 rev = __brev(code + k) >> (32 - l);
            lut[rev | ((i & ((1u << rbits) - 1)) << l)] = make_entry<KIND>(sym, l);
        }
        code = (code + cnt) << 1;
        pos += cnt;
    }
    __syncwarp();
    return true;
}

// Adds fused entries to a dynamic block's literal/length table (after both
// tables are built). A distance entry found from the bits after a length
// code is used only when its code and extra bits lie within the lookup bits,
// so it is the entry of every stream with these bits.
__device__ void fuse_tables(WarpTables& t) {
    for (u32 i = lane_id(); i < (1u << LIT_BITS); i += WARP) {
        const u32 e = t.lit_lut[i];
        if ((e & K_MASK) != K_LEN) continue;
        const u32 n1 = e & 31;
        if (n1 >= LIT_BITS) continue;
        const u32 rest = i >> n1;
        const u32 d = t.dist_lut[rest & ((1u << DIST_BITS) - 1)];
        const u32 n2 = d & 31;
        if ((d & (K_SLOW | K_BAD)) || n1 + n2 > LIT_BITS) continue;
        const u32 L = entry_value_cold(e, i), D1 = entry_value_cold(d, rest) - 1;
        t.lit_lut[i] = ((D1 >> 7) << 24) | ((L - 3) << 16) | K_FUSED | ((D1 & 127) << 5) | (n1 + n2);
    }
    __syncwarp();
}

// Canonical decoding of a code longer than the table (bits + 1 .. 15) from
// the next stream bits `lo`; returns the entry of the symbol, or K_BAD when
// no code matches. The caller has at least 15 valid bits in `lo`.
// Inlined (G; F: __noinline__): the call's convergence barrier (BSSY/BSYNC),
// result move and ABI register constraints were on every match's path.
template <int KIND>
__device__ __forceinline__ u32 decode_long(u32 lo, const Huffman& h, const u16* sorted, u32 bits) {
    const u32 rev = __brev(lo);
    u32 first = h.first, index = h.index;
    for (u32 l = bits + 1; l <= MAX_BITS; ++l) {
        const u32 code = rev >> (32 - l);
        const u32 cnt = h.count[l];
        if (code - first < cnt) return make_entry<KIND>(sorted[index + code - first], l);
        index += cnt;
        first = (first + cnt) << 1;
    }
    return K_BAD;
}

// ---------------------------------------------------------------------------
// Bit reader: 64-bit LSB-first buffer over the framework's input ring. Ring
// coordinate r holds chunk byte r - skew; the buffer is topped up one aligned
// ring word at a time. Past the chunk the ring holds zeros (refill_line loads
// zeros there), so decoding never stalls on the end of input; a refill that
// would start more than 8 bytes past the end means the stream has consumed
// past it (truncated), and a stream is accepted only if its consumed bits
// end within the chunk.
// ---------------------------------------------------------------------------
struct Bits {
    u64 bb;  // buffered bits, next stream bit in bit 0
    u32 bc;  // number of valid bits in bb
    u32 wr;  // next ring word to append (ring coordinate / 4)
};

// Appends one word when fewer than 32 bits are buffered. False: the stream
// ran past the end of the chunk.
__device__ __forceinline__ bool refill(input_stream& in, Bits& b) {
    if (b.bc >= 32) return true;
    const u32 r = 4 * b.wr;
    while (r + 4 > in.loaded) {
        if (r > in.len + in.skew + 8) return false;
        in.refill_line();
    }
    const u32 w = reinterpret_cast<const u32*>(in.ring)[b.wr & (RING / 4 - 1)];
    b.bb |= (u64)w << b.bc;
    b.bc += 32;
    b.wr += 1;
    return true;
}

// Positions the reader at ring coordinate q (a byte boundary within or at the
// end of the chunk).
__device__ __forceinline__ void bits_at(input_stream& in, Bits& b, u32 q) {
    b.wr = q >> 2;
    while (4 * b.wr + 4 > in.loaded) in.refill_line();
    const u32 w = reinterpret_cast<const u32*>(in.ring)[b.wr & (RING / 4 - 1)];
    b.bb = (u64)(w >> (8 * (q & 3)));
    b.bc = 32 - 8 * (q & 3);
    b.wr += 1;
}

__device__ __forceinline__ void consume(Bits& b, u32 n) {
    b.bb >>= n;
    b.bc -= n;
}

// Ring coordinate (times 8: bits) of the next unconsumed bit; 64 bits wide,
// as chunks may hold up to 4 GiB.
__device__ __forceinline__ u64 bit_pos(const Bits& b) { return 32ull * b.wr - b.bc; }

// ---------------------------------------------------------------------------
// Output: a per-warp window of the last W bytes (byte at output position p in
// slot p mod W) flushed to global memory a 128-byte line (aligned to global
// addresses) at a time, one 4-byte store per lane.
// ---------------------------------------------------------------------------
struct Out {
    u8* win;   // W bytes of shared memory
    u8* dst;   // global address of output position 0
    u8* line;  // global address of the first unflushed line (128-aligned)
    u32 pos;   // bytes produced
    u32 cap;   // capacity (Stage::validate keeps it below 4 GiB)
    u32 fl;    // output position up to which global memory is written
    u32 lend;  // output position where the line at `line` ends
    u32 lim;   // min(cap, fl + FLUSH_T): a write at or past it takes the slow path
};

__device__ __forceinline__ void set_lim(Out& o) {
    const u32 room = o.cap - o.fl;  // fl <= pos <= cap
    o.lim = room > FLUSH_T ? o.fl + FLUSH_T : o.cap;
}

__device__ __forceinline__ void out_init(Out& o, u8* dst, u32 cap, u8* win) {
    o.win = win;
    o.dst = dst;
    o.line = (u8*)((size_t)dst & ~(size_t)(LINE - 1));
    o.pos = 0;
    o.cap = cap;
    o.fl = 0;
    o.lend = LINE - (u32)((size_t)dst & (LINE - 1));
    set_lim(o);
}

// Window word holding output positions p..p+3 (p any position).
__device__ __forceinline__ u32 win_word(const u8* win, u32 p) {
    const u32* w32 = reinterpret_cast<const u32*>(win);
    const u32 lo = w32[(p & WMASK) >> 2];
    const u32 hi = w32[((p & WMASK) >> 2) + 1 & (WMASK >> 2)];
    return __funnelshift_r(lo, hi, 8 * (p & 3));
}

// Writes this lane's word of the line [lend - LINE, lend) at global address
// `line`: the bytes at output positions [fl, hi) of it (a line's first bytes
// may lie before the output, or already be written).
__device__ __forceinline__ void store_line_word(const u8* win, u8* line, u32 fl, u32 lend, u32 hi) {
    const u32 lane = lane_id();
    const u32 start = lend - LINE;  // output position of the line's first byte (may wrap)
    const u32 skip = fl - start;    // bytes of this line before fl (0 but for the first line)
    const u32 have = hi - start;    // bytes of this line before hi
    u8* g = line + 4 * lane;
    const u32 w = win_word(win, start + 4 * lane);
    if (4 * lane >= skip && 4 * lane + 4 <= have) {
        *reinterpret_cast<u32*>(g) = w;
    } else {
#pragma unroll
        for (u32 b = 0; b < 4; ++b)
            if (4 * lane + b >= skip && 4 * lane + b < have) g[b] = (u8)(w >> (8 * b));
    }
}

struct Flushed {
    u8* line;
    u32 fl, lend;
};

// Writes every complete line below `pos` to global memory. Not inlined: it
// runs once per FLUSH_T bytes, and inlined copies of its address arithmetic
// get hoisted into the symbol loop.
// (G: the body is inlined at the end of a batch's write phase, see
// flush_batch; the other sites call it.)
__device__ __forceinline__ Flushed flush_lines_body(const u8* win, u8* line, u32 pos, u32 fl, u32 lend) {
    __syncwarp();
    if (pos - fl < lend - fl) return Flushed{line, fl, lend};  // (wrap-safe: fl <= pos, fl < lend)
    const u32 nl = ((pos - fl) - (lend - fl)) / LINE + 1;      // complete lines
    const u32 start = lend - LINE;  // output position of the first line's first byte (may wrap)
    if ((start & 15) == 0) {
        // Window slots and global addresses agree modulo 16: 16-byte pieces,
        // four lines per warp step. Only the first line of the output has
        // bytes before fl (before the output), in whole pieces here.
        const u32 skip = fl - start;
        for (u32 k = 16 * lane_id(); k < nl * LINE; k += 16 * WARP) {
            if (k < skip) continue;
            const uint4 v = *reinterpret_cast<const uint4*>(win + ((start + k) & WMASK));
            *reinterpret_cast<uint4*>(line + k) = v;
        }
    } else {
        for (u32 i = 0; i < nl; ++i) {
            store_line_word(win, line, fl, lend, lend);
            fl = lend;
            lend += LINE;
            line += LINE;
        }
        return Flushed{line, fl, lend};
    }
    const u32 end = start + nl * LINE;
    return Flushed{line + nl * LINE, end, end + LINE};
}

__device__ __noinline__ Flushed flush_lines(const u8* win, u8* line, u32 pos, u32 fl, u32 lend) {
    return flush_lines_body(win, line, pos, fl, lend);
}

// The flush at the end of a batch (every ~1.5 KiB of output): inlined, as
// the call's register saves and restores cost more than its loop on
// long-match data.
__device__ __forceinline__ void flush_batch(Out& o) {
    const Flushed f = flush_lines_body(o.win, o.line, o.pos, o.fl, o.lend);
    o.line = f.line;
    o.fl = f.fl;
    o.lend = f.lend;
    set_lim(o);
}

__device__ __forceinline__ void flush(Out& o) {
    const Flushed f = flush_lines(o.win, o.line, o.pos, o.fl, o.lend);
    o.line = f.line;
    o.fl = f.fl;
    o.lend = f.lend;
    set_lim(o);
}

// Writes the last, partial line. Call once at the end of the chunk.
__device__ __forceinline__ void out_finish(Out& o) {
    flush(o);
    __syncwarp();
    if (o.pos != o.fl) store_line_word(o.win, o.line, o.fl, o.lend, o.pos);
    __syncwarp();
}

// x mod d for x < 2^16, 1 <= d < 2^16, through a float reciprocal (exact
// after one correction step).
__device__ __forceinline__ u32 mod_small(u32 x, u32 d) {
    const float r = __frcp_rn(__uint2float_rn(d));
    const u32 q = __float2uint_rz(__fmul_rn(__uint2float_rn(x), r));
    int m = (int)x - (int)(q * d);
    if (m < 0) m += (int)d;
    else if (m >= (int)d) m -= (int)d;
    return (u32)m;
}

// Stores the copy word v at output position p (4-aligned), of which only the
// first n bytes belong to the copy: later bytes may hold later tokens of the
// batch already.
__device__ __forceinline__ void store_copy_word(u8* win, u32 p, u32 v, u32 n) {
    if (n >= 4) {
        reinterpret_cast<u32*>(win)[(p & WMASK) >> 2] = v;
    } else {
        for (u32 b = 0; b < n; ++b) win[(p + b) & WMASK] = (u8)(v >> (8 * b));
    }
}

// LZ77 back-reference done by the whole warp: L (3..258) bytes from D
// (1..pos) back to output position o.pos. Byte i of the copy is source byte
// i mod D. The caller has checked D <= pos and the capacity; the batch
// constraints keep window and flush state safe.
__device__ __forceinline__ void copy_match(Out& o, u32 D, u32 L) {
    const u32 lane = lane_id();
    __syncwarp();  // earlier window writes (other lanes) and flushes are visible
    const u32 d0 = o.pos;
    const u32 s0 = d0 - D;
    u8* win = o.win;
    const u32* w32 = reinterpret_cast<const u32*>(win);
    // Head: bytes [0, H) one per lane, up to the second aligned word, so the
    // word loop below finds every source byte it reads below d0 + 3 written.
    u32 H = ((d0 + 7) & ~3u) - d0;  // 4..7
    if (H > L) H = L;
    if (D <= B_NEAR) {
        if (lane < H) {
            const u32 j = D < L ? mod_small(lane, D) : lane;
            win[(d0 + lane) & WMASK] = win[(s0 + j) & WMASK];
        }
        if (L > H) {
            __syncwarp();
            u32 k = H + 4 * lane;  // copy offset of this lane's first word
            u32 j = k, step = 4 * WARP;
            if (D < L) {
                j = mod_small(k, D);
                step = mod_small(4 * WARP, D);
            }
            // Source bytes s0 + j .. + 3 all lie in [s0, d0 + 3): never
            // written by this loop, so its words are independent.
            for (; k < L; k += 4 * WARP) {
                const u32 s = s0 + j;
                const u32 lo = w32[(s & WMASK) >> 2];
                const u32 hi = w32[((s & WMASK) >> 2) + 1 & (WMASK >> 2)];
                store_copy_word(win, d0 + k, __funnelshift_r(lo, hi, 8 * (s & 3)), L - k);
                j += step;
                if (j >= D) j -= D;
            }
        }
    } else {
        // D > B_NEAR > L: not overlapping, and the source is flushed.
        const u8* src = o.dst + s0;
        if (lane < H) win[(d0 + lane) & WMASK] = src[lane];
        for (u32 k = H + 4 * lane; k < L; k += 4 * WARP) {
            const u8* s = src + k;
            const u32 sh = (u32)((size_t)s & 3);
            const u32* sw = reinterpret_cast<const u32*>(s - sh);
            const u32 lo = sw[0];
            const u32 v = sh ? __funnelshift_r(lo, sw[1], 8 * sh) : lo;
            store_copy_word(win, d0 + k, v, L - k);
        }
    }
    __syncwarp();
    o.pos = d0 + L;
}

// Copies a stored block's n bytes from ring coordinate q. The caller has
// checked that they lie within the chunk and fit the capacity.
__device__ __forceinline__ void copy_stored(input_stream& in, Out& o, u32 q, u32 n) {
    const u32 lane = lane_id();
    while (n > 0) {
        const u32 step = n < LINE ? n : LINE;
        while (in.loaded < q + step) in.refill_line();
        if (o.pos + step > o.lim) flush(o);  // capacity checked: makes room
        __syncwarp();
        for (u32 i = lane; i < step; i += WARP) o.win[(o.pos + i) & WMASK] = in.ring[(q + i) & (RING - 1)];
        o.pos += step;
        q += step;
        n -= step;
    }
}

// Copies of at most PAR_MAX (<= 32) bytes, one per lane where `par`: x bytes
// from output position src (distance D: window or, past B_NEAR, global
// memory) to output position dst, which does not wrap around the window.
// The words covering the source are all loaded first, so a whole batch's
// global round trips overlap. xmax: the longest such copy (warp-uniform).
__device__ __forceinline__ void copy_parallel(const Out& o, bool par, u32 src, u32 D, u32 dst, u32 x, u32 xmax) {
    static_assert(PAR_MAX <= 32, "nine words cover a copy");
    if (!par) return;
    u32 w[9];
    u32 sh;
    if (D <= B_NEAR) {
        const u32* w32 = reinterpret_cast<const u32*>(o.win);
        const u32 base = (src & WMASK) >> 2;
        sh = src & 3;
        const u32 nw = (sh + x + 3) >> 2;
#pragma unroll
        for (u32 k = 0; k < 9; ++k) {
            w[k] = 0;
            if (4 * k < xmax + 6 && k < nw) w[k] = w32[(base + k) & (WMASK >> 2)];
        }
    } else {
        const u8* g = o.dst + src;
        sh = (u32)((size_t)g & 3);
        const u32* ga = reinterpret_cast<const u32*>(g - sh);
        const u32 nw = (sh + x + 3) >> 2;
#pragma unroll
        for (u32 k = 0; k < 9; ++k) {
            w[k] = 0;
            if (4 * k < xmax + 6 && k < nw) w[k] = ga[k];
        }
    }
    u8* d = o.win + (dst & WMASK);
#pragma unroll
    for (u32 k = 0; k < 8; ++k) {
        if (4 * k < xmax) {
            const u32 v = __funnelshift_r(w[k], w[k + 1], 8 * sh);
#pragma unroll
            for (u32 b = 0; b < 4; ++b)
                if (4 * k + b < x) d[4 * k + b] = (u8)(v >> (8 * b));
        }
    }
}

// ---------------------------------------------------------------------------
// Variant D additions: staged far sources, pattern copies, long copies in
// 16-byte pieces.
// ---------------------------------------------------------------------------
// One 16-byte asynchronous copy global -> shared (no register round trip:
// issued while decoding, waited for in the write phase).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
#if __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
#else
    *reinterpret_cast<uint4*>(smem) = *reinterpret_cast<const uint4*>(gmem);
#endif
}
__device__ __forceinline__ void cp_async_wait_all() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// Bytes ph..ph+3 (mod 8) of the 8-byte pattern q0 (bytes 0-3), q1 (4-7).
__device__ __forceinline__ u32 pat4(u32 q0, u32 q1, u32 ph) {
    const u32 a = (ph & 4) ? q1 : q0, b = (ph & 4) ? q0 : q1;
    return __funnelshift_r(a, b, 8 * (ph & 3));
}
__device__ __forceinline__ u8 pat1(u32 q0, u32 q1, u32 i) { return (u8)(((i & 4) ? q1 : q0) >> (8 * (i & 3))); }

// A pattern copy of 3..PAR_MAX bytes by its own lane: output bytes [d, d+L),
// byte i = pattern byte i mod 8; whole aligned words where they fit.
__device__ __forceinline__ void copy_pat_short(u8* win, u32 d, u32 L, u32 q0, u32 q1) {
    const u32 a = (d + 3) & ~3u;  // first aligned word inside (d + L >= a: L >= 3)
    const u32 end = d + L;
#pragma unroll
    for (u32 b = 0; b < 3; ++b)
        if (d + b < a) win[(d + b) & WMASK] = pat1(q0, q1, b);
    const u32 pa = (a - d) & 7;
    const u32 va = pat4(q0, q1, pa), vb = pat4(q0, q1, pa ^ 4);
    u32* w32 = reinterpret_cast<u32*>(win);
#pragma unroll
    for (u32 k = 0; k < PAR_MAX / 4; ++k) {
        const u32 w = a + 4 * k;
        if (w + 4 <= end) w32[(w & WMASK) >> 2] = (k & 1) ? vb : va;
    }
    const u32 e = end & ~3u;  // >= a
#pragma unroll
    for (u32 b = 0; b < 3; ++b)
        if (e + b < end) win[(e + b) & WMASK] = pat1(q0, q1, e + b - d);
}



// Phase 1 of a batch: decode up to 32 tokens into lane registers (the
// locals of inflate_chunk: ntok, tot, tA, tD, tQ0, tQ1, stop, sb). Lane i
// holds token i: tA = batch offset | literal byte or length << 16, tD =
// distance | flags (0: literal), tQ0/tQ1 = the pattern of a pattern copy or
// the staging offset of a staged one. TRACK: keep the last 8 output bytes
// (hl, hh; valid from batch offset kst on) to resolve period-1/2/4/8 copies,
// and stage far long copies; without it (batches after one with no short-
// distance or long copy: text) the loop is the plain decoder. A macro, not a
// function, so that its failures return from inflate_chunk directly (an
// inlined function's returns merge first, and the compiler then copies every
// live value on the hot path).
#define DECODE_BATCH(TRACK) \
    for (;;) { \
        /* One check covers refill and the end of the batch, so the literal */ \
        /* path below has none. */ \
        if (br.bc < 32 || ntok >= stop) { \
            if (ntok >= stop) break; \
            if (!refill(in, br)) return INPUT_TRUNCATED;  /* >= 32 bits buffered */ \
        } \
        u32 lo = (u32)br.bb; \
        u32 e = t.lit_lut[lo & ((1u << LIT_BITS) - 1)]; \
        if ((e & K_MASK) != K_LIT) { \
            if (e & K_SLOW) e = decode_long<0>(lo, t.lit, t.lit_sorted, LIT_BITS); \
            if ((e & K_MASK) != K_LIT) { \
                consume(br, e & 31);  /* (K_BAD: 0 bits) */ \
                u32 L, D; \
                if (e & (K_EOB | K_BAD)) { \
                    if (!(e & K_LEN)) { \
                        /* End of block, or a bad symbol (eob & K_BAD: */ \
                        /* an error once the loop has ended). */ \
                        eob = e; \
                        break; \
                    } \
                    /* Fused length and distance; the refill the distance */ \
                    /* would have made (same bits consumed by then). */ \
                    L = ((e >> 16) & 0xff) + 3; \
                    D = (((e >> 24) << 7) | ((e >> 5) & 127)) + 1; \
                    if (br.bc < 32 && !refill(in, br)) return INPUT_TRUNCATED; \
                } else { \
                    /* Length, then distance. */ \
                    L = entry_value(e, lo); \
                    if (br.bc < 32 && !refill(in, br)) return INPUT_TRUNCATED;  /* >= 28 bits */ \
                    lo = (u32)br.bb; \
                    u32 d = t.dist_lut[lo & ((1u << DIST_BITS) - 1)]; \
                    if (d & K_SLOW) d = decode_long<1>(lo, t.dist, t.dist_sorted, DIST_BITS); \
                    consume(br, d & 31);  /* (K_BAD: 0 bits, D = 0) */ \
                    D = entry_value(d, lo); \
                } \
                const u32 a = (L << 16) | tot; \
                const bool mine = lane == ntok; \
                u32 dv = D; \
                if (TRACK) { \
                    if (__builtin_expect(D > 8, 1)) { \
                        kst = (int)(tot + L);  /* the bytes after it are not known */ \
                        if (__builtin_expect(L > PAR_MAX, 0) && D > B_NEAR) { \
                            /* A far long copy: start loading its source */ \
                            /* (flushed: D > B_NEAR) into the staging buffer */ \
                            /* now, 16-byte pieces, one per lane. */ \
                            const u32 pos = o.pos + tot; \
                            const size_t g = (size_t)(o.dst + (pos - D)); \
                            const size_t ga = g & ~(size_t)15; \
                            const u32 nb = (u32)(((g + L + 15) & ~(size_t)15) - ga); \
                            if (D <= pos && ga >= (size_t)o.dst && sb + nb <= STG) { \
                                if (16 * lane < nb) cp_async16(stg + sb + 16 * lane, (const void*)(ga + 16 * lane)); \
                                if (mine) tQ0 = sb + (u32)(g & 15); \
                                sb += nb; \
                                dv = D | F_STG; \
                            } \
                        } \
                    } else if (((0x116u >> D) & 1) && (int)D <= (int)tot - kst) { \
                        /* Period 1, 2, 4 or 8 over known bytes: the copy is */ \
                        /* the 8-byte pattern q repeated. */ \
                        const u32 sel = D == 1 ? 0x3333u : D == 2 ? 0x3232u : 0x3210u; \
                        const u32 q1 = __byte_perm(hh, 0, sel); \
                        const u32 q0 = D == 8 ? hl : q1; \
                        /* Last 8 bytes after it: bytes r..r+7 of (L < 8 ? */ \
                        /* the last 8 : q) followed by q. */ \
                        const u32 r = L & 7; \
                        const u32 c0 = L < 8 ? hl : q0, c1 = L < 8 ? hh : q1; \
                        const u32 sh = 8 * (r & 3); \
                        const u32 f01 = __funnelshift_r(c0, c1, sh), f12 = __funnelshift_r(c1, q0, sh), \
                                  f23 = __funnelshift_r(q0, q1, sh); \
                        hl = r < 4 ? f01 : f12; \
                        hh = r < 4 ? f12 : f23; \
                        dv = D | F_PAT; \
                        if (mine) { \
                            tQ0 = q0; \
                            tQ1 = q1; \
                        } \
                    } else { \
                        kst = (int)(tot + L); \
                    } \
                } \
                if (mine) { \
                    tA = a; \
                    tD = dv; \
                } \
                tot += L; \
                ntok += 1; \
                dlast = D; \
                if (tot > LSOFT || D == 0) stop = 0;  /* ends the batch (D == 0: a bad distance) */ \
                continue; \
            } \
        } \
        /* Literal. */ \
        consume(br, e & 31); \
        const u32 a = (e & 0xffff0000u) | tot; \
        if (lane == ntok) tA = a;  /* tD stays 0: a literal */ \
        if (TRACK) { \
            hl = __byte_perm(hl, hh, 0x4321); \
            hh = __byte_perm(hh, e, 0x6321);  /* the literal (bits 16-23 of e) */ \
        } \
        tot += 1; \
        ntok += 1; \
    } \
    if (!(TRACK)) kst = (int)tot; /* nothing known */ \
    kst -= (int)tot;  /* batch offsets of the next batch */

// N words of a resolved copy's source for the output words from position w
// (4-aligned) on, funnel-shifted to the destination's alignment: from the
// staging buffer (F_STG; words outside it clamped, their bytes unused) or
// the window D back. Not for pattern copies.
template <int N>
__device__ __forceinline__ void copy_src_words(const u8* win, const u8* stg, u32 dv, u32 q0, u32 w, u32 dd,
                                               u32 (&v)[N]) {
    u32 x[N + 1];
    u32 sh;
    if (dv & F_STG) {
        // Staged bytes q0 .. q0 + L - 1; words outside the buffer are
        // clamped (their bytes are not used).
        const int s = (int)q0 + (int)(w - dd);
        sh = (u32)s & 3;
        const int wi = s >> 2;  // arithmetic: floor
        const u32* s32 = reinterpret_cast<const u32*>(stg);
#pragma unroll
        for (int j = 0; j <= N; ++j) {
            int k = wi + j;
            k = k < 0 ? 0 : k > (int)(STG / 4 - 1) ? (int)(STG / 4 - 1) : k;
            x[j] = s32[k];
        }
    } else {
        const u32 s = w - (dv & DMASK);
        sh = s & 3;
        const u32* w32 = reinterpret_cast<const u32*>(win);
#pragma unroll
        for (u32 j = 0; j <= (u32)N; ++j) x[j] = w32[((s >> 2) + j) & (WMASK >> 2)];
    }
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = __funnelshift_r(x[j], x[j + 1], 8 * sh);
}

// A resolved copy (3 <= L <= 258) by a quarter warp (8 lanes), no barrier.
// Lane h of the quarter writes the whole 16-byte pieces A + 32h and
// A + 32h + 16 where they lie below B (output positions [A, B): at most 16
// pieces for 258 bytes, 16-byte stores only), then one word of a partial
// piece: h < 4 the piece at the start, h >= 4 the one at the end (a word
// store where the word lies inside the copy, bytes otherwise). Sources: the
// 8-byte pattern (F_PAT), the staging buffer from offset q0 (F_STG), or the
// window D back (D >= the copy's batch offset + L: bytes before the batch,
// complete). Window reads start at most 15 bytes before the source, so they
// never reach slots this batch writes (B_NEAR + BATCH_MAX + 19 <= W); past
// its end they may read bytes of the batch, which are not used. L == 0:
// nothing. (Variant F did the same by half warps: lanes 0-7 the whole
// pieces, lanes 8-15 the partial words; the warp issued both paths anyway,
// so a quarter doing both writes twice the copies per pass.)
__device__ __forceinline__ void copy_long_quarter(u8* win, const u8* stg, u32 dd, u32 L, u32 dv, u32 q0, u32 q1) {
    if (L == 0) return;
    const u32 h = lane_id() & 7;
    const u32 end = dd + L;
    const u32 A = (dd + 15) & ~15u;  // first whole piece
    const u32 B = end & ~15u;        // past the last one (below A: none)
    const u32 c = A + 32 * h;
    if (c + 16 <= B && B >= A) {  // (wrap-safe enough: positions are far below 2^32 - 32)
        u32 v[8];
        if (dv & F_PAT) {
            const u32 ph = (c - dd) & 7;  // the same for every piece
            const u32 a = pat4(q0, q1, ph), b = pat4(q0, q1, ph ^ 4);
#pragma unroll
            for (int j = 0; j < 8; ++j) v[j] = (j & 1) ? b : a;
        } else {
            copy_src_words<8>(win, stg, dv, q0, c, dd, v);
        }
        *reinterpret_cast<uint4*>(win + (c & WMASK)) = make_uint4(v[0], v[1], v[2], v[3]);
        if (c + 32 <= B) *reinterpret_cast<uint4*>(win + ((c + 16) & WMASK)) = make_uint4(v[4], v[5], v[6], v[7]);
    }
    u32 w;
    if (h < 4) {
        if ((dd & 15) == 0) return;  // no partial piece at the start
        w = (dd & ~15u) + 4 * h;
    } else {
        if ((end & 15) == 0 || B < A) return;  // none at the end, or it is the one at the start
        w = B + 4 * (h - 4);
    }
    if (w + 4 <= dd || w >= end) return;
    u32 v[1];
    if (dv & F_PAT) {
        v[0] = pat4(q0, q1, (w - dd) & 7);
    } else {
        copy_src_words<1>(win, stg, dv, q0, w, dd, v);
    }
    if (w >= dd && w + 4 <= end) {
        reinterpret_cast<u32*>(win)[(w & WMASK) >> 2] = v[0];
    } else {
#pragma unroll
        for (u32 b = 0; b < 4; ++b)
            if (w + b >= dd && w + b < end) win[(w + b) & WMASK] = (u8)(v[0] >> (8 * b));
    }
}


__device__ u32 inflate_chunk(input_stream& in, Out& o, WarpTables& t, Bits& br, u8* stg) {
    const u32 lane = lane_id();
    const u64 end_bits = 8ull * (in.len + in.skew);  // stream bits must end by here
    // The last 8 output bytes (hl: bytes pos-8..pos-5, hh: pos-4..pos-1),
    // valid from batch offset kst on (reloaded before a batch otherwise).
    u32 hl = 0, hh = 0;
    int kst = 0;
    bool track = true;
    for (;;) {
        if (!refill(in, br)) return INPUT_TRUNCATED;
        const u32 hdr = (u32)br.bb & 7;
        consume(br, 3);
        const bool last = hdr & 1;
        const u32 type = hdr >> 1;
        if (type == 0) {
            consume(br, br.bc & 7);  // to a byte boundary
            if (!refill(in, br)) return INPUT_TRUNCATED;
            const u32 len = (u32)br.bb & 0xffff, nlen = ((u32)br.bb >> 16) & 0xffff;
            consume(br, 32);
            if (len != (~nlen & 0xffffu)) return INPUT_CORRUPT;
            const u64 q64 = bit_pos(br) / 8;
            const u32 q = (u32)q64;
            if (q64 > in.len + in.skew || len > in.len + in.skew - q) return INPUT_TRUNCATED;
            if (len > o.cap - o.pos) return OUTPUT_OVERFLOW;
            copy_stored(in, o, q, len);
            bits_at(in, br, q + len);
            // Batches start with fewer than BATCH_FLUSH bytes unflushed.
            __syncwarp();
            if (o.pos - o.fl >= BATCH_FLUSH) flush(o);
            __syncwarp();
            kst = 0;
        } else if (type == 1 || type == 2) {
            // Fixed codes: all 32 distance codes exist (a complete code);
            // 30 and 31 are rejected when used, as zlib does.
            u32 nlen = 288, ndist = 32;
            if (type == 1) {
                for (u32 i = lane; i < N_LIT + N_DIST; i += WARP)
                    t.lens[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : i < 288 ? 8 : 5;
                __syncwarp();
            } else {
                if (!refill(in, br)) return INPUT_TRUNCATED;
                const u32 v = (u32)br.bb & 0x3fff;
                consume(br, 14);
                nlen = (v & 31) + 257;
                ndist = ((v >> 5) & 31) + 1;
                const u32 ncode = (v >> 10) + 4;
                if (nlen > 286 || ndist > 30) return INPUT_CORRUPT;
                // Code-length code lengths, 3 bits each, in CL_ORDER.
                if (!refill(in, br)) return INPUT_TRUNCATED;
                const u32 first = ncode < 10 ? ncode : 10;
                u64 bits3 = br.bb & ((1ull << (3 * first)) - 1);
                consume(br, 3 * first);
                if (ncode > 10) {
                    if (!refill(in, br)) return INPUT_TRUNCATED;
                    bits3 |= (br.bb & ((1ull << (3 * (ncode - 10))) - 1)) << 30;
                    consume(br, 3 * (ncode - 10));
                }
                if (lane < 19) t.cl_lens[CL_ORDER[lane]] = lane < ncode ? (u8)((bits3 >> (3 * lane)) & 7) : 0;
                __syncwarp();
                // The code-length code's table uses the literal table's space.
                if (!build<2>(t.cl_lens, 19, t.lit, t.lit_sorted, t.lit_lut, CL_BITS, t.scratch, false))
                    return INPUT_CORRUPT;
                // Decode nlen + ndist lengths into lens (lanes write runs).
                u32 i = 0, prev = 0;
                const u32 total = nlen + ndist;
                while (i < total) {
                    if (br.bc < 16 && !refill(in, br)) return INPUT_TRUNCATED;
                    const u32 lo = (u32)br.bb;
                    const u32 e = t.lit_lut[lo & ((1u << CL_BITS) - 1)];
                    if (e & (K_SLOW | K_BAD)) return INPUT_CORRUPT;  // no such code
                    consume(br, e & 31);
                    const u32 v2 = entry_value_cold(e, lo);
                    const u32 kind = e & K_MASK;
                    u32 rep = 1, val = v2;
                    if (kind != K_LIT) {
                        // A 16 repeats the last length written, which is 0
                        // after a 17 or 18 (zlib's rule).
                        if (kind == K_LEN) {
                            if (i == 0) return INPUT_CORRUPT;
                            val = prev;
                        } else {
                            val = 0;
                        }
                        rep = v2;
                        if (rep > total - i) return INPUT_CORRUPT;
                    }
                    prev = val;
                    for (u32 k = lane; k < rep; k += WARP) {
                        const u32 at = i + k;
                        t.lens[at < nlen ? at : N_LIT + (at - nlen)] = (u8)val;
                    }
                    i += rep;
                }
                __syncwarp();
                for (u32 k = nlen + lane; k < N_LIT; k += WARP) t.lens[k] = 0;
                __syncwarp();
                if (t.lens[256] == 0) return INPUT_CORRUPT;  // no end-of-block code
            }
            if (!build<0>(t.lens, nlen, t.lit, t.lit_sorted, t.lit_lut, LIT_BITS, t.scratch, false))
                return INPUT_CORRUPT;
            if (!build<1>(t.lens + N_LIT, ndist, t.dist, t.dist_sorted, t.dist_lut, DIST_BITS, t.scratch, true))
                return INPUT_CORRUPT;
            if (type == 2) fuse_tables(t);  // (fixed codes: never 10 bits or less)
            // Symbols, a batch at a time.
            u32 eob = 0;
            do {
                // The last 8 output bytes, when some are not known from the
                // tokens decoded so far (block start, after a copy that is
                // not a pattern copy): from the window, complete up to o.pos.
                // Batch offsets from kst on are known (kst <= 0 at a batch
                // start: -kst bytes before the batch are).
                if (track && kst > -8) {
                    __syncwarp();
                    hl = win_word(o.win, o.pos - 8);
                    hh = win_word(o.win, o.pos - 4);
                    kst = o.pos < 8 ? -(int)o.pos : -8;
                }
                // Phase 1.
                u32 ntok = 0, tot = 0, tA = 0, tD = 0, tQ0 = 0, tQ1 = 0, stop = WARP, sb = 0, dlast = 1;
                if (track) {
                    DECODE_BATCH(true)
                } else {
                    DECODE_BATCH(false)
                }
                // A bad literal/length symbol or distance ended the batch
                // where the built-in kernel returned (nothing consumed).
                if ((eob & K_BAD) || dlast == 0) return INPUT_CORRUPT;
                if (ntok == 0) continue;  // (the loop condition ends the block)
                // Phase 2: write the batch.
                if (tot > o.cap - o.pos) return OUTPUT_OVERFLOW;
                if (sb) cp_async_wait_all();
                __syncwarp();  // the previous batch's window writes and the staged bytes are visible
                const u32 P = o.pos;
                const bool act = lane < ntok;
                const u32 off = tA & 0xffff, x = tA >> 16;
                const bool cp = act && tD != 0;
                const u32 D = tD & DMASK;
                // Each token's write path, then one warp reduction of flags
                // (bit 0: a distance beyond the output so far, an error;
                // then which paths have work; bit 5: the next batch should
                // track the last bytes: a copy needs them or the staging).
                const bool pat = cp && (tD & F_PAT);
                const bool before = cp && !pat && D >= off + x;  // source wholly before the batch
                const bool spat = pat && x <= PAR_MAX;
                const bool par = before && x <= PAR_MAX && ((P + off) & WMASK) + x <= W;
                const bool lng = x > PAR_MAX && (pat || (before && ((tD & F_STG) || D <= B_NEAR)));
                const bool sq = cp && !spat && !par && !lng;
                const u32 fl = __reduce_or_sync(FULL_MASK, (cp && D > P + off ? 1u : 0u) | (spat ? 2u : 0u) |
                                                               (par ? 4u : 0u) | (lng ? 8u : 0u) | (sq ? 16u : 0u) |
                                                               (cp && (D <= 8 || x > PAR_MAX) ? 32u : 0u));
                // A distance may reach back to the first byte of the output.
                if (fl & 1) return INPUT_CORRUPT;
                if (act && tD == 0) o.win[(P + off) & WMASK] = (u8)x;
                // Short pattern copies, one lane each.
                if (spat) copy_pat_short(o.win, P + off, x, tQ0, tQ1);
                // Short copies whose source ends before the batch, not
                // wrapping around the window: one lane each, all at once.
                if (fl & 4) {
                    const u32 xmax = __reduce_max_sync(FULL_MASK, par ? x : 0u);
                    copy_parallel(o, par, P + off - D, D, P + off, x, xmax);
                }
                // Long resolved copies: pattern, staged, or from the window;
                // by the whole warp, four at a time (one per quarter warp),
                // no barrier between.
                if (fl & 8) {
                    u32 lm = __ballot_sync(FULL_MASK, lng);
                    const u32 qd = lane >> 3;
                    while (lm) {
                        // Quarter qd takes the qd-th remaining copy.
                        const u32 m1 = lm & (lm - 1), m2 = m1 & (m1 - 1), m3 = m2 & (m2 - 1);
                        const u32 ms = qd == 0 ? lm : qd == 1 ? m1 : qd == 2 ? m2 : m3;
                        lm = m3 & (m3 - 1);
                        const u32 src = __ffs(ms) - 1;  // (ms == 0: lane 31, unused)
                        const u32 ai = __shfl_sync(FULL_MASK, tA, src);
                        const u32 di = __shfl_sync(FULL_MASK, tD, src);
                        const u32 q0i = __shfl_sync(FULL_MASK, tQ0, src);
                        const u32 q1i = __shfl_sync(FULL_MASK, tQ1, src);
                        copy_long_quarter(o.win, stg, P + (ai & 0xffff), ms ? ai >> 16 : 0, di, q0i, q1i);
                    }
                }
                // The rest in token order, by the whole warp (copy_match
                // begins with a barrier: the bytes above are visible).
                if (fl & 16) {
                    u32 seq = __ballot_sync(FULL_MASK, sq);
                    while (seq) {
                        const u32 i = __ffs(seq) - 1;
                        seq &= seq - 1;
                        const u32 ai = __shfl_sync(FULL_MASK, tA, i);
                        const u32 di = __shfl_sync(FULL_MASK, tD, i) & DMASK;
                        const u32 d0 = P + (ai & 0xffff);
                        if (di <= 8 && ((0x116u >> di) & 1)) {
                            // Period 1, 2, 4 or 8: its pattern from the
                            // window (complete up to d0 after the barrier),
                            // then written like a pattern copy.
                            __syncwarp();
                            const u32 h0 = win_word(o.win, d0 - 8), h1 = win_word(o.win, d0 - 4);
                            // The word read last may hold bytes from d0 on,
                            // which the copy stores (unused here): every
                            // lane reads before any stores.
                            __syncwarp();
                            const u32 sel = di == 1 ? 0x3333u : di == 2 ? 0x3232u : 0x3210u;
                            const u32 q1 = __byte_perm(h1, 0, sel);
                            const u32 q0 = di == 8 ? h0 : q1;
                            copy_long_quarter(o.win, stg, d0, lane < 8 ? ai >> 16 : 0, di | F_PAT, q0, q1);
                            __syncwarp();
                        } else {
                            o.pos = d0;
                            copy_match(o, di, ai >> 16);
                        }
                    }
                }
                o.pos = P + tot;
                track = (fl & 32) != 0;
                // Flush here (flush_lines begins with a barrier), so the
                // next batch's staged reads find their bytes in global
                // memory. (The next batch reaches the window only after a
                // barrier: the reload of the last bytes, or its phase 2.)
                if (o.pos - o.fl >= BATCH_FLUSH) {
                    flush_batch(o);
                    __syncwarp();
                } else if (sb) {
                    __syncwarp();  // the staged bytes are read before the next batch stages more
                }
            } while (!eob);
        } else {
            return INPUT_CORRUPT;  // reserved block type 3
        }
        if (last) return bit_pos(br) <= end_bits ? OK : INPUT_TRUNCATED;
    }
}

extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)
    inflate_raw(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs, u32 njobs,
                u8* __restrict__ output, ChunkStatus* __restrict__ status) {
    __shared__ WarpTables tables[WARPS_PER_BLOCK];
    __shared__ __align__(16) u8 windows[WARPS_PER_BLOCK][W];
    __shared__ __align__(16) u8 staging[WARPS_PER_BLOCK][STG];
    WarpTables& t = tables[threadIdx.x / WARP];
    for_each_chunk(njobs, [&](u64 j, u8* ring) {
        const ChunkJob job = jobs[j];
        input_stream in;
        in.init(input + job.in_off, (u32)job.in_len, ring);
        Out o;
        out_init(o, output + job.out_off, (u32)job.out_count, windows[threadIdx.x / WARP]);
        Bits br;
        bits_at(in, br, in.skew);
        u32 code = inflate_chunk(in, o, t, br, staging[threadIdx.x / WARP]);
        cp_async_wait_all();  // a failure may leave staged copies in flight
        // A failure past the end of the input is a truncation.
        const u64 at_bits = bit_pos(br);
        const u64 end_bits = 8ull * (in.len + in.skew);
        if (code != OK && at_bits > end_bits) code = INPUT_TRUNCATED;
        // Bytes produced before a failure are written too (unspecified
        // content, but never outside the job's range).
        if (o.pos > o.cap) o.pos = o.cap;
        out_finish(o);
        if (lane_id() == 0) {
            // The failing position is where the bit reader stood.
            const u64 at64 = at_bits / 8;
            u32 at = at64 > in.skew ? (u32)(at64 - in.skew) : 0;
            if (at > in.len) at = in.len;
            status[j].code = code;
            status[j].detail = code == OK ? 0u : at;
            status[j].produced = o.pos;
        }
    });
}
