#!/usr/bin/env python3
"""Converts Parquet files to ORC with pyarrow (warpread has no ORC writer).

    parquet_to_orc.py IN.parquet OUT.orc [--compression zlib] [--version 0.12]
                      [--tile N] [--stripe-mib 64]

--tile N repeats the table N times (bigger benchmark inputs from small real
data). View and large string types are cast to plain strings, which the ORC
writer takes.
"""
import argparse

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq


def plain(t: pa.Table) -> pa.Table:
    fields = []
    for f in t.schema:
        ty = f.type
        if pa.types.is_string_view(ty) or pa.types.is_large_string(ty):
            ty = pa.string()
        elif pa.types.is_binary_view(ty) or pa.types.is_large_binary(ty):
            ty = pa.binary()
        elif pa.types.is_dictionary(ty):
            ty = ty.value_type
        fields.append(pa.field(f.name, ty, f.nullable))
    return t.cast(pa.schema(fields))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--compression", default="zlib")
    ap.add_argument("--version", default="0.12", choices=["0.11", "0.12"])
    ap.add_argument("--tile", type=int, default=1)
    ap.add_argument("--stripe-mib", type=int, default=64)
    a = ap.parse_args()
    t = plain(pq.read_table(a.input))
    if a.tile > 1:
        t = pa.concat_tables([t] * a.tile)
    orc.write_table(t, a.output, compression=a.compression, file_version=a.version,
                    stripe_size=a.stripe_mib << 20)
    print(f"{a.output}: {t.num_rows} rows, {len(t.schema)} columns, ORC {a.version} {a.compression}")


if __name__ == "__main__":
    main()
