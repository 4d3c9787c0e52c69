#!/usr/bin/env python3
"""Generate warpread's Parquet test fixtures with pyarrow.

Usage: python3 scripts/gen_parquet_fixtures.py [--out testdata/parquet]

The expected output is not stored: tests/it/parquet_differential.rs reads
every fixture with the parquet crate's Arrow reader and compares. The files
cover every physical type, the logical types pyarrow writes, nulls, nested
lists / structs / maps, every codec pyarrow writes (none, snappy, gzip,
brotli, zstd, lz4 = LZ4_RAW), data pages v1 and v2, dictionary pages, the
delta and byte-stream-split encodings, RLE booleans, INT96 timestamps,
several row groups and pages, and the page index. Deterministic (fixed
seeds); MANIFEST.tsv lists them.
"""
import argparse
import datetime as dt
import decimal
import os
import random
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

N = 1200


def with_nulls(rng, values, p=0.15):
    return [None if rng.random() < p else v for v in values]


def types_table(n=N, seed=1):
    rng = random.Random(seed)
    ints = [rng.randint(-(2**31), 2**31 - 1) for _ in range(n)]
    longs = [rng.randint(-(2**63), 2**63 - 1) for _ in range(n)]
    words = ["", "a", "hello", "wörld", "parquet", "x" * 40, "日本語"]
    base = dt.datetime(2001, 2, 3, 4, 5, 6, 789123)
    cols = {
        "bool": pa.array(with_nulls(rng, [rng.random() < 0.4 for _ in range(n)]), pa.bool_()),
        "i8": pa.array(with_nulls(rng, [rng.randint(-128, 127) for _ in range(n)]), pa.int8()),
        "i16": pa.array(with_nulls(rng, [rng.randint(-(2**15), 2**15 - 1) for _ in range(n)]), pa.int16()),
        "i32": pa.array(with_nulls(rng, ints), pa.int32()),
        "i64": pa.array(with_nulls(rng, longs), pa.int64()),
        "u8": pa.array(with_nulls(rng, [rng.randint(0, 255) for _ in range(n)]), pa.uint8()),
        "u16": pa.array(with_nulls(rng, [rng.randint(0, 2**16 - 1) for _ in range(n)]), pa.uint16()),
        "u32": pa.array(with_nulls(rng, [rng.randint(0, 2**32 - 1) for _ in range(n)]), pa.uint32()),
        "u64": pa.array(with_nulls(rng, [rng.randint(0, 2**64 - 1) for _ in range(n)]), pa.uint64()),
        "f16": pa.array(with_nulls(rng, [rng.uniform(-100, 100) for _ in range(n)]), pa.float32()).cast(pa.float16()),
        "f32": pa.array(with_nulls(rng, [rng.uniform(-1e6, 1e6) for _ in range(n)]), pa.float32()),
        "f64": pa.array(with_nulls(rng, [rng.uniform(-1e9, 1e9) for _ in range(n)] ), pa.float64()),
        "str": pa.array(with_nulls(rng, [rng.choice(words) + str(rng.randint(0, 50)) for _ in range(n)]), pa.string()),
        "lstr": pa.array(with_nulls(rng, [rng.choice(words) for _ in range(n)]), pa.large_string()),
        "bin": pa.array(with_nulls(rng, [bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 12))) for _ in range(n)]), pa.binary()),
        "fsb": pa.array(with_nulls(rng, [bytes(rng.randint(0, 255) for _ in range(5)) for _ in range(n)]), pa.binary(5)),
        "date": pa.array(with_nulls(rng, [dt.date(1970, 1, 1) + dt.timedelta(days=rng.randint(-20000, 20000)) for _ in range(n)]), pa.date32()),
        "date64": pa.array(with_nulls(rng, [dt.date(1970, 1, 1) + dt.timedelta(days=rng.randint(-2000, 2000)) for _ in range(n)]), pa.date64()),
        "t32s": pa.array(with_nulls(rng, [rng.randint(0, 86399) for _ in range(n)]), pa.time32("s")),
        "t32ms": pa.array(with_nulls(rng, [rng.randint(0, 86399999) for _ in range(n)]), pa.time32("ms")),
        "t64us": pa.array(with_nulls(rng, [rng.randint(0, 86399999999) for _ in range(n)]), pa.time64("us")),
        "t64ns": pa.array(with_nulls(rng, [rng.randint(0, 86399999999999) for _ in range(n)]), pa.time64("ns")),
        "ts_s": pa.array(with_nulls(rng, [base + dt.timedelta(seconds=rng.randint(-10**9, 10**9)) for _ in range(n)]), pa.timestamp("s")),
        "ts_ms": pa.array(with_nulls(rng, [base + dt.timedelta(milliseconds=rng.randint(-10**12, 10**12)) for _ in range(n)]), pa.timestamp("ms")),
        "ts_us_utc": pa.array(with_nulls(rng, [base + dt.timedelta(microseconds=rng.randint(-10**15, 10**15)) for _ in range(n)]), pa.timestamp("us", tz="UTC")),
        "ts_ns_tz": pa.array(with_nulls(rng, [rng.randint(-(2**62), 2**62) for _ in range(n)]), pa.timestamp("ns", tz="Europe/Paris")),
        "dur": pa.array(with_nulls(rng, [rng.randint(-(10**12), 10**12) for _ in range(n)]), pa.duration("us")),
        "dec9": pa.array(with_nulls(rng, [decimal.Decimal(rng.randint(-10**9 + 1, 10**9 - 1)).scaleb(-2) for _ in range(n)]), pa.decimal128(9, 2)),
        "dec18": pa.array(with_nulls(rng, [decimal.Decimal(rng.randint(-10**18 + 1, 10**18 - 1)).scaleb(-4) for _ in range(n)]), pa.decimal128(18, 4)),
        "dec38": pa.array(with_nulls(rng, [decimal.Decimal(rng.randint(-10**38 + 1, 10**38 - 1)).scaleb(-10) for _ in range(n)]), pa.decimal128(38, 10)),
        "dec50": pa.array(with_nulls(rng, [decimal.Decimal(rng.randint(-10**50 + 1, 10**50 - 1)).scaleb(-5) for _ in range(n)]), pa.decimal256(50, 5)),
        "uuid": pa.array(with_nulls(rng, [uuid.UUID(int=rng.getrandbits(128)).bytes for _ in range(n)]), pa.binary(16)).cast(pa.uuid()),
        "cat": pa.array(with_nulls(rng, [rng.choice(words) for _ in range(n)])).dictionary_encode(),
    }
    return pa.table(cols)


def nested_table(n=N, seed=2):
    rng = random.Random(seed)

    def maybe(v, p=0.1):
        return None if rng.random() < p else v

    lists = [maybe([maybe(rng.randint(-99, 99)) for _ in range(rng.randint(0, 5))]) for _ in range(n)]
    strlists = [maybe([maybe(rng.choice(["a", "bc", "", "def"])) for _ in range(rng.randint(0, 4))]) for _ in range(n)]
    structs = [maybe({"a": maybe(rng.randint(0, 1000)), "b": maybe(rng.choice(["x", "yy", "zzz"]))}) for _ in range(n)]
    lstructs = [maybe([maybe({"k": rng.randint(0, 9), "v": maybe(rng.random())}) for _ in range(rng.randint(0, 3))]) for _ in range(n)]
    maps = [maybe([(rng.choice(["a", "b", "c", "d"]) + str(i), maybe(rng.randint(0, 50))) for i in range(rng.randint(0, 4))]) for _ in range(n)]
    lol = [maybe([maybe([maybe(rng.randint(0, 9)) for _ in range(rng.randint(0, 3))]) for _ in range(rng.randint(0, 3))]) for _ in range(n)]
    deep = [maybe({"inner": maybe({"xs": maybe([rng.randint(0, 5) for _ in range(rng.randint(0, 3))]), "s": maybe("s" * rng.randint(0, 3))}), "n": rng.randint(0, 3)}) for _ in range(n)]
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "list_i32": pa.array(lists, pa.list_(pa.int32())),
        "list_str": pa.array(strlists, pa.list_(pa.string())),
        "struct": pa.array(structs, pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "list_struct": pa.array(lstructs, pa.list_(pa.struct([pa.field("k", pa.int8(), nullable=False), ("v", pa.float64())]))),
        "map": pa.array(maps, pa.map_(pa.string(), pa.int32())),
        "list_list": pa.array(lol, pa.list_(pa.list_(pa.int16()))),
        "deep": pa.array(deep, pa.struct([("inner", pa.struct([("xs", pa.list_(pa.int32())), ("s", pa.string())])), pa.field("n", pa.int32(), nullable=False)])),
        "large_list": pa.array(lists, pa.large_list(pa.int32())),
    })


def encodings_table(n=N, seed=3):
    rng = random.Random(seed)
    prefixes = ["http://example.com/", "http://example.org/a/", "ftp://x/"]
    return pa.table({
        "i32": pa.array(with_nulls(rng, [rng.randint(-1000, 1000) * 7 for _ in range(n)]), pa.int32()),
        "i32_sorted": pa.array(sorted(rng.randint(-(2**31), 2**31 - 1) for _ in range(n)), pa.int32()),
        "i64": pa.array(with_nulls(rng, [rng.randint(-(2**63), 2**63 - 1) for _ in range(n)]), pa.int64()),
        "i64_small": pa.array([i * 3 - 100 for i in range(n)], pa.int64()),
        "f32": pa.array(with_nulls(rng, [rng.uniform(-1, 1) for _ in range(n)]), pa.float32()),
        "f64": pa.array(with_nulls(rng, [rng.uniform(-1, 1) for _ in range(n)]), pa.float64()),
        "fsb": pa.array(with_nulls(rng, [bytes(rng.randint(0, 3) for _ in range(6)) for _ in range(n)]), pa.binary(6)),
        "str": pa.array(with_nulls(rng, [rng.choice(prefixes) + str(rng.randint(0, 10**6)) for _ in range(n)]), pa.string()),
        "str2": pa.array(with_nulls(rng, [rng.choice(prefixes) * rng.randint(0, 2) for _ in range(n)]), pa.string()),
        "bool": pa.array(with_nulls(rng, [rng.random() < 0.2 for _ in range(n)]), pa.bool_()),
    })


def page_index_table(n=6000, seed=5):
    """Columns for page pruning: sorted ones (pages with narrow, increasing
    min/max), nulls, all-null stretches, a dictionary column, a list and a
    struct (read whole, cut to the kept rows)."""
    rng = random.Random(seed)
    day0 = dt.date(2020, 1, 1)
    colors = ["red", "green", "blue", "cyan", "magenta"]
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "k32": pa.array(with_nulls(rng, [i // 3 for i in range(n)], 0.05), pa.int32()),
        "day": pa.array(with_nulls(rng, [day0 + dt.timedelta(days=i // 40) for i in range(n)], 0.05), pa.date32()),
        "name": pa.array(with_nulls(rng, [f"n{i:06d}" for i in range(n)], 0.1), pa.string()),
        "color": pa.array([rng.choice(colors) for _ in range(n)]).dictionary_encode(),
        "score": pa.array([i * 0.25 for i in range(n)], pa.float64()),
        # Values in the first 600 rows of each row group of 1500, nulls
        # after: the tail becomes one page of nulls only.
        "sparse": pa.array([i if i % 1500 < 600 else None for i in range(n)], pa.int32()),
        "rnd": pa.array([rng.randint(-(10**6), 10**6) for _ in range(n)], pa.int32()),
        "tags": pa.array([[rng.randint(0, 99) for _ in range(rng.randint(0, 3))] for _ in range(n)], pa.list_(pa.int32())),
        "pt": pa.array([{"x": rng.randint(0, 9), "y": rng.choice(colors)} for _ in range(n)],
                       pa.struct([("x", pa.int32()), ("y", pa.string())])),
    })


def write(out, name, table, manifest, desc, **kw):
    path = os.path.join(out, name + ".parquet")
    pq.write_table(table, path, **kw)
    manifest.append((name, table.num_rows, desc))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "testdata", "parquet"))
    args = ap.parse_args()
    out = args.out
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith(".parquet"):
            os.remove(os.path.join(out, f))
    m = []
    types = types_table()
    small = types_table(n=250, seed=11)
    write(out, "types_snappy_v1", types, m, "every type, nulls, dictionary pages, snappy, v1, page index",
          compression="snappy", row_group_size=500, data_page_size=2048, write_page_index=True)
    write(out, "types_none_v2", small, m, "every type, uncompressed, data page v2",
          compression="none", data_page_version="2.0")
    for codec in ["gzip", "brotli", "zstd", "lz4"]:
        write(out, f"types_{codec}_v1", small, m, f"every type, {codec}, v1", compression=codec)
        write(out, f"types_{codec}_v2_plain", small, m, f"every type, {codec}, v2, no dictionary",
              compression=codec, data_page_version="2.0", use_dictionary=False)
    write(out, "types_int_decimals", small, m, "decimals stored as INT32/INT64",
          compression="snappy", store_decimal_as_integer=True)
    write(out, "types_int96", small.select(["ts_s", "ts_ms", "ts_us_utc", "ts_ns_tz", "i32"]), m,
          "INT96 timestamps", compression="gzip", use_deprecated_int96_timestamps=True)
    nested = nested_table()
    write(out, "nested_snappy_v1", nested, m, "lists, structs, maps, nulls, v1",
          compression="snappy", row_group_size=900, data_page_size=2048)
    write(out, "nested_gzip_v2", nested, m, "nested, gzip, data page v2, no dictionary",
          compression="gzip", data_page_version="2.0", use_dictionary=False, data_page_size=4096)
    enc = encodings_table()
    write(out, "enc_delta_v2", enc, m, "DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, RLE booleans, v2",
          compression="zstd", data_page_version="2.0", use_dictionary=False, data_page_size=2048,
          column_encoding={"i32": "DELTA_BINARY_PACKED", "i32_sorted": "DELTA_BINARY_PACKED",
                           "i64": "DELTA_BINARY_PACKED", "i64_small": "DELTA_BINARY_PACKED",
                           "str": "DELTA_BYTE_ARRAY", "str2": "DELTA_LENGTH_BYTE_ARRAY",
                           "fsb": "DELTA_BYTE_ARRAY", "bool": "RLE",
                           "f32": "BYTE_STREAM_SPLIT", "f64": "BYTE_STREAM_SPLIT"})
    write(out, "enc_delta_v1", enc, m, "delta encodings in v1 pages, uncompressed",
          compression="none", use_dictionary=False, data_page_size=2048,
          column_encoding={"i32": "DELTA_BINARY_PACKED", "i64": "DELTA_BINARY_PACKED",
                           "str": "DELTA_BYTE_ARRAY", "str2": "DELTA_LENGTH_BYTE_ARRAY",
                           "fsb": "DELTA_BYTE_ARRAY", "i32_sorted": "BYTE_STREAM_SPLIT",
                           "i64_small": "BYTE_STREAM_SPLIT"})
    write(out, "enc_byte_stream_split", enc, m, "BYTE_STREAM_SPLIT for floats, ints and FLBA",
          compression="snappy", use_dictionary=False,
          column_encoding={"f32": "BYTE_STREAM_SPLIT", "f64": "BYTE_STREAM_SPLIT", "i32": "BYTE_STREAM_SPLIT",
                           "i64": "BYTE_STREAM_SPLIT", "fsb": "BYTE_STREAM_SPLIT"})
    write(out, "enc_dict_many_pages", enc, m, "dictionary, many small pages and row groups",
          compression="gzip", row_group_size=400, data_page_size=512, write_page_index=True)
    pruned = page_index_table()
    for codec, version in [("gzip", "1.0"), ("snappy", "2.0")]:
        write(out, f"page_index_{codec}_v{version[0]}", pruned, m,
              f"page index, many pages per column, 4 row groups, {codec}, data page v{version[0]}",
              compression=codec, data_page_version=version, row_group_size=1500,
              data_page_size=1024, write_batch_size=100, write_page_index=True,
              use_dictionary=["k32", "color", "pt.y"])
    write(out, "empty", types.slice(0, 0), m, "no rows", compression="snappy")
    with open(os.path.join(out, "MANIFEST.tsv"), "w") as f:
        f.write("name\trows\tdescription\n")
        for name, rows, desc in m:
            f.write(f"{name}\t{rows}\t{desc}\n")


if __name__ == "__main__":
    main()
