// What the two inflate kernels (inflate.cu, warp per stream; inflate_span.cu,
// speculative spans) share: RFC 1951's length and distance symbols, computed
// rather than loaded from constant tables (no constant-bank load on a symbol
// loop's path), and the format of their 32-bit lookup-table entries.
#pragma once

#include "codag.cuh"

namespace deflate {

using codag::u32;

// Length base and extra bits of length symbol 257 + li (li < 29), and of
// distance symbol d (d < 30); the CPU's tables are
// `warpread_codecs::deflate::symbols`.
__device__ __forceinline__ u32 len_extra(u32 li) { return li < 8 || li == 28 ? 0 : (li - 4) >> 2; }
__device__ __forceinline__ u32 len_base(u32 li) {
    return li < 8 ? li + 3 : li == 28 ? 258 : ((4 + (li & 3)) << len_extra(li)) + 3;
}
__device__ __forceinline__ u32 dist_extra(u32 d) { return d < 4 ? 0 : (d >> 1) - 1; }
__device__ __forceinline__ u32 dist_base(u32 d) { return d < 4 ? d + 1 : ((2 + (d & 1)) << dist_extra(d)) + 1; }

// Lookup-table entries (u32): bits 0-4 = bits to consume (the code and its
// extra bits), bits 5-9 = extra bits, bits 12-15 = kind, bits 16-31 = value
// (the byte, the length base or the distance base). One peek of at least
// 32 bits holds a code (<= 15 bits) and its extra bits (<= 5 for a length,
// <= 13 for a distance): one lookup and one consume a symbol, its value
// from the same peeked bits. Each kernel says what a kind means in its
// code-length table and how many bits a bad symbol consumes.
constexpr u32 K_LIT = 0x0000;   // literal (value: the byte); every valid distance
constexpr u32 K_LEN = 0x1000;   // length (value: its base)
constexpr u32 K_EOB = 0x2000;   // end of block
constexpr u32 K_SLOW = 0x4000;  // no code of at most the table's bits starts here
constexpr u32 K_BAD = 0x8000;   // a symbol that is an error when used
constexpr u32 K_MASK = 0xF000;

// Entry of literal/length symbol `sym` (< 288) with a code of `len` bits,
// and of distance symbol `sym` (< 32). `bad` is the entry of a symbol no
// stream may use (286, 287; distances 30, 31): each kernel says how many
// bits it consumes.
__device__ __forceinline__ u32 lit_len_entry(u32 sym, u32 len, u32 bad) {
    if (sym < 256) return (sym << 16) | K_LIT | len;
    if (sym == 256) return K_EOB | len;
    if (sym < 286) {
        const u32 li = sym - 257;
        return (len_base(li) << 16) | K_LEN | (len_extra(li) << 5) | (len + len_extra(li));
    }
    return bad;
}
__device__ __forceinline__ u32 dist_entry(u32 sym, u32 len, u32 bad) {
    if (sym < 30) return (dist_base(sym) << 16) | (dist_extra(sym) << 5) | (len + dist_extra(sym));
    return bad;
}

// Value of an entry from the bits `lo` its code starts at: the base plus
// the x = bits 5-9 extra bits that end the tc = bits 0-4 bits consumed. Two
// funnel shifts whose counts the hardware takes mod 32 (no masking):
// lo << (32 - tc) ((-e) mod 32; tc == 0: lo), then its top x bits (x == 0:
// none).
__device__ __forceinline__ u32 entry_value(u32 e, u32 lo) {
    const u32 top = __funnelshift_l(0u, lo, 0u - e);
    return (e >> 16) + __funnelshift_l(top, 0u, e >> 5);
}

}  // namespace deflate
