#!/usr/bin/env python3
"""Host<->device copy bandwidth on the GPU host (CuPy), the ceiling for a
read whose stage outputs all come down: pinned and pageable host memory,
both directions, CUDA events, median of RUNS copies of SIZE MiB.

    pcie_bandwidth.py [--mib 1024] [--runs 9]
"""
import argparse
import statistics

import cupy as cp
import numpy as np


def timed(copy, runs):
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(runs + 1):
        start.record()
        copy()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return statistics.median(times[1:])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=9)
    a = ap.parse_args()
    n = a.mib << 20
    dev = cp.zeros(n, dtype=cp.uint8)
    pinned_mem = cp.cuda.alloc_pinned_memory(n)
    pinned = np.frombuffer(pinned_mem, dtype=np.uint8, count=n)
    pageable = np.ones(n, dtype=np.uint8)
    for name, host in (("pinned", pinned), ("pageable", pageable)):
        d2h = timed(lambda: dev.get(out=host), a.runs)
        h2d = timed(lambda: dev.set(host), a.runs)
        print(f"{name:9} {a.mib} MiB: device->host {n / d2h / 1e9:6.2f} GB/s, "
              f"host->device {n / h2d / 1e9:6.2f} GB/s")


if __name__ == "__main__":
    main()
