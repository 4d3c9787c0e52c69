// Fault injection only (CudaOptions::faults, `sticky`): a kernel that
// stores through an address no allocation holds, so the device raises
// CUDA_ERROR_ILLEGAL_ADDRESS and the context stays unusable, as after a
// real kernel fault. Nothing else launches it.
#include "codag.cuh"

extern "C" __global__ void warpread_fault(unsigned int marker) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        *reinterpret_cast<volatile unsigned int *>(8ull) = marker;
    }
}
