#!/usr/bin/env python3
"""pyarrow's ORC and Parquet readers (all cores) on the same files as
`warpread bench read`: file to Arrow table in host memory, wall-clock, median
of several runs. The format is taken from the file's magic bytes.

    orc_read_bench.py FILE... [--runs 5] [--json]

GB/s counts the table's buffer bytes (`Table.nbytes`), like warpread's
Arrow output bytes.
"""
import argparse
import json
import statistics
import time

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq


def reader(path):
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic == b"PAR1":
        return lambda: pq.read_table(path, use_threads=True)
    return lambda: orc.ORCFile(path).read()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = []
    for f in a.files:
        read = reader(f)
        read()  # warm-up (page cache)
        times = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            t = read()
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        rows.append({"file": f, "reader": f"pyarrow {pa.__version__} (cpu threads {pa.cpu_count()})",
                     "rows": t.num_rows, "arrow_bytes": t.nbytes, "median_s": med,
                     "gbps": t.nbytes / med / 1e9})
    if a.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(f"{r['file']:<40} {r['rows']:>10} {r['arrow_bytes'] / 2**20:>10.1f} MiB "
                  f"{r['median_s']:>8.3f} s {r['gbps']:>7.2f} GB/s  {r['reader']}")


if __name__ == "__main__":
    main()
