#!/usr/bin/env python3
"""Writes a Parquet file of decimal columns as pyarrow stores them
(big-endian FIXED_LEN_BYTE_ARRAY), for timing the host's decimal widening:

    decimal_parquet.py OUT.parquet [--rows 6000000] [--columns 4]
                       [--precision 15] [--scale 2] [--compression none]

Values are uniform in +-10^(precision-3), seeded, so runs compare.
"""
import argparse

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=6_000_000)
    ap.add_argument("--columns", type=int, default=4)
    ap.add_argument("--precision", type=int, default=15)
    ap.add_argument("--scale", type=int, default=2)
    ap.add_argument("--compression", default="none")
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    bound = 10 ** min(a.precision - 3, 18)
    cols = {}
    for i in range(a.columns):
        lo = rng.integers(-bound, bound, a.rows).astype(np.int64)
        # Decimal128's 16 little-endian bytes: the value and its sign.
        words = np.empty(2 * a.rows, np.int64)
        words[0::2] = lo
        words[1::2] = np.where(lo < 0, -1, 0)
        cols[f"d{i}"] = pa.Array.from_buffers(
            pa.decimal128(a.precision, a.scale), a.rows, [None, pa.py_buffer(words.tobytes())]
        )
    pq.write_table(pa.table(cols), a.out, compression=a.compression, row_group_size=1_000_000)


if __name__ == "__main__":
    main()
