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
