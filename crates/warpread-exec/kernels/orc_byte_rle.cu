// ORC byte run-length encoding and boolean RLE on the CODAG framework.
//
// Byte RLE: a header byte h >= 0 is a run of h + 3 copies of the next byte;
// h < 0 is followed by -h literal bytes. Boolean RLE is byte RLE of bytes
// whose bits, most significant first, are the booleans; the kernel writes
// one byte (0 or 1) per boolean.
//
// One warp per chunk: every lane reads the header from the warp's ring, and
// the lanes split a run's or literal group's outputs (up to 130 bytes, or
// 1040 booleans) among themselves.
//
// Statuses match the CPU references in crates/warpread-codecs/src/orc_byte_rle/decode.rs:
// boolean statuses are those of byte RLE over ceil(n / 8) bytes, with
// `produced` counting booleans (at most n).
#include "codag.cuh"

using namespace codag;

// Decodes byte RLE; `emit(first_byte, n_bytes, run_byte, literal)` writes
// the outputs of n bytes starting at output byte first_byte, where literal
// bytes are in.byte(1 + i). Returns the status; `produced` counts bytes.
template <typename Emit>
__device__ __forceinline__ u32 byte_rle(input_stream& in, u32 count, u32& produced, u32& run_at,
                                       Emit emit) {
    while (produced < count) {
        run_at = in.pos;
        in.ensure(LINE + 1);  // a header and up to 128 literal bytes
        const u32 rem = in.remaining();
        if (rem == 0) return OUTPUT_SHORT;
        const int h = (int)(i8)in.byte(0);
        if (h >= 0) {
            // Runs longer than still wanted are cut short, as ORC readers do.
            const u32 n = min((u32)h + 3, count - produced);
            if (rem < 2) return INPUT_TRUNCATED;
            emit(produced, n, in.byte(1), false);
            produced += n;
            in.advance(2);
        } else {
            const u32 n = (u32)(-h);
            if (rem - 1 < n) return INPUT_TRUNCATED;
            const u32 take = min(n, count - produced);
            emit(produced, take, 0u, true);
            produced += take;
            in.advance(1 + n);
        }
        __syncwarp();
    }
    return OK;
}

__device__ __forceinline__ void write_status(ChunkStatus* st, u32 code, u32 run_at, u64 produced) {
    if (lane_id() == 0) {
        st->code = code;
        st->detail = code == OK ? 0u : run_at;
        st->produced = produced;
    }
}

extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)
    orc_byte_rle(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs, u32 njobs,
                 u8* __restrict__ output, ChunkStatus* __restrict__ status) {
    for_each_chunk(njobs, [&](u64 j, u8* ring) {
        const ChunkJob job = jobs[j];
        input_stream in;
        in.init(input + job.in_off, (u32)job.in_len, ring);
        u8* out = output + job.out_off;
        u32 produced = 0, run_at = 0;
        const u32 code = byte_rle(in, (u32)job.out_count, produced, run_at,
                                  [&](u32 first, u32 n, u32 b, bool literal) {
                                      for (u32 i = lane_id(); i < n; i += WARP)
                                          out[first + i] = literal ? in.byte(1 + i) : (u8)b;
                                  });
        write_status(status + j, code, run_at, produced);
    });
}

extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP)
    orc_bool_rle(const u8* __restrict__ input, const ChunkJob* __restrict__ jobs, u32 njobs,
                 u8* __restrict__ output, ChunkStatus* __restrict__ status) {
    for_each_chunk(njobs, [&](u64 j, u8* ring) {
        const ChunkJob job = jobs[j];
        input_stream in;
        in.init(input + job.in_off, (u32)job.in_len, ring);
        u8* out = output + job.out_off;
        const u32 bools = (u32)job.out_count;
        u32 produced = 0, run_at = 0;
        const u32 code = byte_rle(in, (bools + 7) / 8, produced, run_at,
                                  [&](u32 first, u32 n, u32 b, bool literal) {
                                      // Booleans of bytes [first, first + n), clipped to
                                      // the job's count (the last byte is padded).
                                      const u32 lo = 8 * first;
                                      const u32 hi = min(8 * (first + n), bools);
                                      for (u32 t = lo + lane_id(); t < hi; t += WARP) {
                                          const u32 byte = literal ? in.byte(1 + t / 8 - first) : b;
                                          out[t] = (u8)((byte >> (7 - t % 8)) & 1);
                                      }
                                  });
        write_status(status + j, code, run_at, min((u64)produced * 8, (u64)bools));
    });
}
