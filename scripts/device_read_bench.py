#!/usr/bin/env python3
"""File in page cache to Arrow in GPU memory, side by side in one process:

- warpread ``read_parquet`` / ``read_orc`` with ``device=True`` (CUDA
  backend): decoded buffers stay where the kernels wrote them, the rest is
  uploaded; every buffer is on the device when the call returns;
- what a Python user does today: pyarrow reads the file into host memory
  (all cores), then every buffer of the table is copied to the GPU with
  CuPy (``cupy.asarray`` of each buffer, then a device synchronize).

GB/s counts decoded bytes: the Arrow buffer bytes of the host table
(``Table.nbytes`` of pyarrow's read). Each reader: one warm-up, then the
median of ``--runs``. Before timing, the device table is copied back and
compared with the CPU backend's read of the same file (a mismatch exits 1).

    device_read_bench.py FILE... [--runs 5] [--json OUT]
"""
import argparse
import json
import statistics
import sys
import time

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq

import warpread


def is_parquet(path):
    with open(path, "rb") as f:
        return f.read(4) == b"PAR1"


def pyarrow_read(path):
    if is_parquet(path):
        return pq.read_table(path, use_threads=True)
    return orc.ORCFile(path).read()


def to_gpu(table, cp):
    """Every buffer of `table` copied to the device (CuPy arrays kept)."""
    out = []
    for col in table.columns:
        for chunk in col.chunks:
            for buf in chunk.buffers():
                if buf is not None and buf.size:
                    out.append(cp.asarray(memoryview(buf).cast("B")))
    cp.cuda.Device().synchronize()
    return out


def median_time(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        kept = fn()
        times.append(time.perf_counter() - t0)
        del kept
    return statistics.median(times), times


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--group-mib", type=int, nargs="*", default=[],
                    help="also time device reads with these read-group sizes")
    a = ap.parse_args()
    import cupy as cp

    gpu = warpread.Backend("cuda")
    cpu = warpread.Backend("cpu")
    rows = []
    for path in a.files:
        read = warpread.read_parquet if is_parquet(path) else warpread.read_orc
        host = read(path, backend=cpu)
        dev = read(path, backend=gpu, device=True)
        same = dev.to_arrow().equals(host)
        origin = dev.device_bytes()
        del dev
        print(f"{path}: device read copied back equals the CPU backend's: {same}; bytes {origin}",
              flush=True)
        if not same:
            return 1
        nbytes = pyarrow_read(path).nbytes
        del host
        w_med, w_all = median_time(lambda: read(path, backend=gpu, device=True), a.runs)
        # The same decode into host memory, for where the time goes.
        h_med, _ = median_time(lambda: read(path, backend=gpu), a.runs)
        groups = {}
        for mib in a.group_mib:
            g_med, _ = median_time(
                lambda: read(path, backend=gpu, device=True, group_bytes=mib << 20), a.runs)
            groups[mib] = nbytes / g_med / 1e9
        p_med, p_all = median_time(lambda: to_gpu(pyarrow_read(path), cp), a.runs)
        row = {
            "file": path,
            "arrow_bytes": nbytes,
            "warpread_device_s": w_med,
            "warpread_device_runs": w_all,
            "pyarrow_plus_copy_s": p_med,
            "pyarrow_plus_copy_runs": p_all,
            "warpread_gbps": nbytes / w_med / 1e9,
            "pyarrow_plus_copy_gbps": nbytes / p_med / 1e9,
            "ratio": p_med / w_med,
            "warpread_host_gbps": nbytes / h_med / 1e9,
            "warpread_device_gbps_by_group_mib": groups,
            "device_bytes": origin,
            "pyarrow": pa.__version__,
            "cpu_threads": pa.cpu_count(),
        }
        rows.append(row)
        print(f"{path:<44} {nbytes / 2**20:>9.1f} MiB  warpread device {row['warpread_gbps']:>7.2f} GB/s"
              f"  pyarrow+cupy {row['pyarrow_plus_copy_gbps']:>6.2f} GB/s  ratio {row['ratio']:.2f}x"
              f"  (warpread to host {row['warpread_host_gbps']:.2f} GB/s; device by group MiB "
              + ", ".join(f"{k}: {v:.2f}" for k, v in groups.items()) + ")",
              flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
