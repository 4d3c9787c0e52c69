#!/usr/bin/env python3
"""TPC-H's 22 queries (queries/tpch) in DuckDB over a folder of Parquet
files (one file or folder per table, as `warpread gen tpch` writes them):
the anchor that benchmarks/devices.md compares warpread against on the
same host and files. Prints each query's median and the total, and with
--json one JSON object.

    python3 scripts/duckdb_tpch.py DATA_DIR [--threads N] [--runs 3] [--warmup 1]
"""
import argparse
import json
import os
import statistics
import sys
import time

import duckdb

TABLES = ["customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"]


def table_source(data_dir, table):
    path = os.path.join(data_dir, f"{table}.parquet")
    if os.path.isdir(path):
        path = os.path.join(path, "*.parquet")
    elif not os.path.exists(path):
        path = os.path.join(data_dir, table, "*.parquet")
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data_dir")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    qdir = os.path.join(here, "..", "queries", "tpch")
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    for t in TABLES:
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{table_source(args.data_dir, t)}')")
    medians = {}
    for q in range(1, 23):
        name = f"q{q}.sql"
        with open(os.path.join(qdir, name)) as f:
            sql = f.read()
        times = []
        rows = 0
        for run in range(args.warmup + args.runs):
            t = time.perf_counter()
            rows = len(con.execute(sql).fetchall())
            if run >= args.warmup:
                times.append(time.perf_counter() - t)
        medians[q] = statistics.median(times)
        if not args.json:
            print(f"Q{q:<3} {medians[q]:8.3f} s  {rows} rows", flush=True)
    total = sum(medians.values())
    if args.json:
        print(json.dumps({"duckdb": duckdb.__version__, "threads": args.threads,
                          "medians": medians, "total": total}))
    else:
        print(f"DuckDB {duckdb.__version__}, {args.threads} threads: total {total:.2f} s")


if __name__ == "__main__":
    sys.exit(main())
