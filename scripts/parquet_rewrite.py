#!/usr/bin/env python3
"""Rewrites a Parquet file with another compression codec (pyarrow), for the
end-to-end Parquet benchmarks on the same data in every codec.

    parquet_rewrite.py IN.parquet OUT.parquet [--compression gzip] [--tile N]
                       [--row-group-rows 1048576]

--tile N repeats the table N times (bigger inputs from small real data).
"""
import argparse

import pyarrow as pa
import pyarrow.parquet as pq


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--compression", default="gzip")
    ap.add_argument("--tile", type=int, default=1)
    ap.add_argument("--row-group-rows", type=int, default=1 << 20)
    a = ap.parse_args()
    t = pq.read_table(a.input)
    if a.tile > 1:
        t = pa.concat_tables([t] * a.tile)
    pq.write_table(t, a.output, compression=a.compression, row_group_size=a.row_group_rows)
    print(f"{a.output}: {t.num_rows} rows, {len(t.schema)} columns, Parquet {a.compression}")


if __name__ == "__main__":
    main()
