#!/usr/bin/env python3
"""What page-locking host memory costs on this host, three ways.

    python3 scripts/pinned_alloc_bench.py [TOTAL_MIB] [BLOCK_MIB...]

For each block size: TOTAL_MIB in blocks of that size, allocated with
cudaHostAlloc (what the pinned pool does today), and as anonymous mmap
memory that is touched (with and without transparent huge pages asked for
by madvise) and then registered with cudaHostRegister. Prints MiB/s of each
step and a host-to-device and device-to-host copy rate from the first
block, so a registered block can be compared with an allocated one.
"""

import ctypes
import mmap
import sys
import time

import cupy
import numpy as np

rt = cupy.cuda.runtime
MiB = 1 << 20


def thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def copy_rate(ptr, size):
    dev = cupy.empty(size, dtype=np.uint8)
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    rates = []
    for kind in (rt.memcpyHostToDevice, rt.memcpyDeviceToHost):
        best = 0.0
        for _ in range(5):
            start.record()
            if kind == rt.memcpyHostToDevice:
                rt.memcpyAsync(dev.data.ptr, ptr, size, kind, 0)
            else:
                rt.memcpyAsync(ptr, dev.data.ptr, size, kind, 0)
            stop.record()
            stop.synchronize()
            ms = cupy.cuda.get_elapsed_time(start, stop)
            best = max(best, size / (ms / 1e3) / 1e9)
        rates.append(best)
    return rates


def host_alloc(total, block):
    t = time.perf_counter()
    ptrs = [rt.hostAlloc(block, 0) for _ in range(total // block)]
    dt = time.perf_counter() - t
    rates = copy_rate(ptrs[0], block)
    for p in ptrs:
        rt.freeHost(p)
    return {"alloc_s": dt}, rates


def registered(total, block, huge):
    maps, ptrs = [], []
    t0 = time.perf_counter()
    for _ in range(total // block):
        m = mmap.mmap(-1, block, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        if huge:
            m.madvise(mmap.MADV_HUGEPAGE)
        maps.append(m)
    t1 = time.perf_counter()
    for m in maps:
        np.frombuffer(m, dtype=np.uint8)[::4096] = 0
    t2 = time.perf_counter()
    for m in maps:
        p = ctypes.addressof(ctypes.c_char.from_buffer(m))
        rt.hostRegister(p, block, 0)
        ptrs.append(p)
    t3 = time.perf_counter()
    rates = copy_rate(ptrs[0], block)
    t4 = time.perf_counter()
    for p in ptrs:
        rt.hostUnregister(p)
    t5 = time.perf_counter()
    return {"map_s": t1 - t0, "touch_s": t2 - t1, "register_s": t3 - t2,
            "unregister_s": t5 - t4}, rates


def main():
    total = int(sys.argv[1]) * MiB if len(sys.argv) > 1 else 2048 * MiB
    blocks = [int(b) * MiB for b in sys.argv[2:]] or [16 * MiB, 64 * MiB, 256 * MiB]
    print(f"transparent huge pages: {thp_mode()}; {total // MiB} MiB in all")
    cupy.cuda.Device(0).synchronize()
    for block in blocks:
        for name, run in [("cudaHostAlloc", lambda: host_alloc(total, block)),
                          ("mmap+touch+register", lambda: registered(total, block, False)),
                          ("mmap+THP+touch+register", lambda: registered(total, block, True))]:
            steps, (h2d, d2h) = run()
            setup = sum(v for k, v in steps.items() if k != "unregister_s")
            parts = ", ".join(f"{k} {v:.3f}" for k, v in steps.items())
            print(f"{block // MiB:>4} MiB blocks  {name:<25} {total / MiB / setup:>8.0f} MiB/s "
                  f"({parts}); H2D {h2d:.1f} GB/s, D2H {d2h:.1f} GB/s")


if __name__ == "__main__":
    main()
