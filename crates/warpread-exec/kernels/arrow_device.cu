// Device-resident Arrow output: Arrow packs booleans and validity one bit
// per row, which DLPack cannot describe, so columns exported through
// DLPack get them as one byte per row. One thread per output byte; every
// read and write is checked against the lengths the host passed, and a
// thread that would step outside them sets `*status` instead.
#include "codag.cuh"

using namespace codag;

extern "C" __global__ void warpread_bits_to_bytes(const u8 *bits,
                                                  u64 bits_len,
                                                  u64 bit_offset,
                                                  u64 n,
                                                  u8 *out,
                                                  u64 out_len,
                                                  u32 *status) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        u64 b = bit_offset + i;
        if (b < bit_offset || (b >> 3) >= bits_len || i >= out_len) {
            atomicOr(status, 1u);
            return;
        }
        out[i] = (u8)((bits[b >> 3] >> (b & 7)) & 1u);
    }
}

// Decimals stored as 32- or 64-bit integers (Parquet INT32 / INT64) widened
// to Arrow's 128-bit Decimal128 on the device: one thread per value, the
// high word the sign's extension. `width` is 4 or 8 and `in` aligned to it
// (the host checks both); reads and writes stay inside the given lengths.
extern "C" __global__ void warpread_widen_decimal(const u8 *in, u64 in_len, u32 width, u64 n,
                                                  u8 *out, u64 out_len, u32 *status) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if ((width != 4 && width != 8) || (i + 1) * width > in_len || (i + 1) * 16 > out_len) {
            atomicOr(status, 1u);
            return;
        }
        i64 v = width == 4 ? (i64)reinterpret_cast<const i32 *>(in)[i]
                           : reinterpret_cast<const i64 *>(in)[i];
        i64 *o = reinterpret_cast<i64 *>(out) + 2 * i;
        o[0] = v;
        o[1] = v < 0 ? -1 : 0;
    }
}
