#!/usr/bin/env python3
"""Generate warpread's ORC test fixtures and their pyarrow-side expected outputs.

Usage: python3 scripts/gen_orc_fixtures.py [--out testdata/orc] [--check]

Writes into testdata/orc/:
  NAME.orc      the fixture
  NAME.arrow    Arrow IPC file of pyarrow.orc.ORCFile(NAME.orc).read(): what pyarrow
                reads back (schema included), not what was written
  MANIFEST.tsv  one line per fixture: name, rows, stripes, compression, file version,
                description, then facts read back from the file itself by
                scripts/orc_inspect.py (block size, writer timezone, column encodings,
                integer-RLE run kinds found)

Writers: pyarrow (the default; pyarrow >= 26) and, for what pyarrow's ORC writer
cannot do, pyorc (`pip install pyorc==0.12.0`, ORC C++ 2.3.1): compression blocks
smaller than 64 KiB (pyarrow's ORC writer refuses any compression_block_size that is
not a multiple of its fixed 64 KiB memory block), many stripes in a compressed file,
CHAR/VARCHAR, a non-UTC writer timezone.  Files from pyorc are named pyorc_*.  When
pyorc is missing those fixtures are left as they are (and said so).

Deterministic: fixed seeds, no clocks; rerunning with the same pyarrow/pyorc gives
byte-identical files (checked: --check regenerates into a temp dir and compares).
"""
import argparse
import datetime as dt
import decimal
import filecmp
import os
import sys
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.orc as orc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import orc_expected  # noqa: E402
import orc_inspect  # noqa: E402

D = decimal.Decimal
NS = 1_000_000_000
ORC_EPOCH_S = 1_420_070_400  # 2015-01-01 00:00:00 UTC


def with_nulls(values, rng, frac):
    """Replace a fraction of a Python list's items by None (positions from rng)."""
    mask = rng.random(len(values)) < frac
    return [None if m else v for v, m in zip(values, mask)]


# ----------------------------------------------------------------- tables

def types_table(n=100, seed=1):
    """One column of every type pyarrow's ORC writer supports, edge values first."""
    rng = np.random.default_rng(seed)
    cols = {}

    def ints(dtype, lo, hi):
        edge = [lo, hi, 0, -1, 1]
        v = edge + rng.integers(lo, hi, n - len(edge), endpoint=True, dtype=np.int64).tolist()
        return pa.array(with_nulls(v, rng, 0.1), dtype)

    b = (rng.random(n) < 0.5).tolist()
    cols["bool"] = pa.array(with_nulls(b, rng, 0.1), pa.bool_())
    cols["bool_nonull"] = pa.array((rng.random(n) < 0.7).tolist(), pa.bool_())
    cols["i8"] = ints(pa.int8(), -128, 127)
    cols["i16"] = ints(pa.int16(), -32768, 32767)
    cols["i32"] = ints(pa.int32(), -2**31, 2**31 - 1)
    cols["i64"] = ints(pa.int64(), -2**63, 2**63 - 1)
    cols["i64_nonull"] = pa.array(rng.integers(-10**12, 10**12, n).tolist(), pa.int64())

    specials = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.0, -1.5]
    f32 = np.float32
    f32_edge = specials + [float(np.finfo(f32).max), float(-np.finfo(f32).max),
                           float(np.finfo(f32).tiny), 1.4e-45]
    f64_edge = specials + [np.finfo(np.float64).max, -np.finfo(np.float64).max,
                           np.finfo(np.float64).tiny, 5e-324]
    cols["f32"] = pa.array(with_nulls(
        f32_edge + (rng.standard_normal(n - len(f32_edge)) * 1e3).astype(f32).tolist(), rng, 0.1),
        pa.float32())
    cols["f64"] = pa.array(with_nulls(
        f64_edge + (rng.standard_normal(n - len(f64_edge)) * 1e6).tolist(), rng, 0.1), pa.float64())

    words = ["", "a", "hello", "héllo wörld", "日本語テキスト", "🦀 rust", "e\u0301", "tab\tnew\nline",
             "nul\x00byte", "Ω≈ç√∫"]
    strs = list(words) + ["x" * 3000, "λ" * 1500]  # long values (3000 bytes each)
    while len(strs) < n:
        k = int(rng.integers(0, 4))
        if k == 0:
            strs.append("")
        elif k == 1:
            strs.append(words[int(rng.integers(0, len(words)))])
        else:
            ln = int(rng.integers(1, 40))
            strs.append("".join(chr(int(c)) for c in rng.integers(0x20, 0x7F, ln)))
    cols["str"] = pa.array(with_nulls(strs, rng, 0.1), pa.string())
    cols["str_nonull"] = pa.array([f"row{i}-{words[i % len(words)]}" for i in range(n)], pa.string())
    bins = [b"", b"\x00", b"\xff\xfe\x00\x01"] + [
        rng.integers(0, 256, int(rng.integers(0, 24)), dtype=np.uint8).tobytes() for _ in range(n - 3)]
    cols["bin"] = pa.array(with_nulls(bins, rng, 0.1), pa.binary())

    date_edge = [0, -1, 1, 16436, 16435, -719162, 2932896, -25567, 24837]  # 1970, 2015-01-01, 0001, 9999, 1900, 2038
    dates = date_edge + rng.integers(-50000, 50000, n - len(date_edge)).tolist()
    cols["date"] = pa.array(with_nulls(dates, rng, 0.1), pa.date32())

    ts = timestamp_edges()
    lo, hi = -9_000_000_000 * NS, 9_000_000_000 * NS  # ~1684 .. 2255 (ns range)
    ts += rng.integers(lo, hi, n - len(ts), dtype=np.int64).tolist()
    cols["ts"] = pa.array(with_nulls(ts, rng, 0.1), pa.timestamp("ns"))
    cols["ts_utc"] = pa.array(with_nulls(ts, rng, 0.1), pa.timestamp("ns", "UTC"))

    for p, s in [(4, 2), (10, 0), (18, 9), (19, 4), (38, 0), (38, 10), (38, 38)]:
        cols[f"dec_{p}_{s}"] = decimal_column(rng, n, p, s)

    cols["all_null_i32"] = pa.array([None] * n, pa.int32())
    cols["all_null_str"] = pa.array([None] * n, pa.string())

    struct_t = pa.struct([("a", pa.int32()), ("b", pa.string()),
                          ("c", pa.struct([("d", pa.float64()), ("e", pa.bool_())]))])
    sv = []
    for i in range(n):
        r = rng.random()
        if r < 0.1:
            sv.append(None)
        else:
            inner = None if rng.random() < 0.15 else {
                "d": None if rng.random() < 0.2 else float(rng.standard_normal()),
                "e": None if rng.random() < 0.2 else bool(rng.random() < 0.5)}
            sv.append({"a": None if rng.random() < 0.2 else int(rng.integers(-1000, 1000)),
                       "b": None if rng.random() < 0.2 else words[i % len(words)],
                       "c": inner})
    cols["struct"] = pa.array(sv, struct_t)
    cols["list_i64"] = pa.array(list_values(rng, n, lambda: int(rng.integers(-10**9, 10**9))),
                                pa.list_(pa.int64()))
    cols["list_str"] = pa.array(list_values(rng, n, lambda: words[int(rng.integers(0, len(words)))]),
                                pa.list_(pa.string()))
    maps = []
    for i in range(n):
        r = rng.random()
        if r < 0.1:
            maps.append(None)
        elif r < 0.2:
            maps.append([])
        else:
            k = int(rng.integers(1, 5))
            maps.append([(f"k{j}", None if rng.random() < 0.2 else int(rng.integers(-99, 99)))
                         for j in range(k)])
    cols["map"] = pa.array(maps, pa.map_(pa.string(), pa.int32()))
    ls_t = pa.list_(pa.struct([("x", pa.int32()), ("y", pa.string())]))
    cols["list_struct"] = pa.array(list_values(rng, n, lambda: None if rng.random() < 0.1 else {
        "x": None if rng.random() < 0.2 else int(rng.integers(0, 1000)),
        "y": None if rng.random() < 0.2 else words[int(rng.integers(0, len(words)))]}, item_nulls=0.0),
        ls_t)
    return pa.table(cols)


def list_values(rng, n, item, item_nulls=0.15):
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.1:
            out.append(None)
        elif r < 0.2:
            out.append([])
        else:
            k = int(rng.integers(1, 6))
            out.append([None if rng.random() < item_nulls else item() for _ in range(k)])
    return out


def decimal_column(rng, n, p, s):
    top = 10 ** p - 1
    edge = [top, -top, 0, 1, -1]
    vals = edge + [int(x) for x in (rng.random(n - len(edge)) * 2 - 1) * float(top)]
    # float(top) loses digits past 2^53: add exact random low digits so p=38 values use all 38 digits
    vals = [v if abs(v) < 10**15 else (v // 10**15) * 10**15 + int(rng.integers(0, 10**15)) for v in vals]
    vals = [max(-top, min(top, v)) for v in vals]
    with decimal.localcontext() as ctx:
        ctx.prec = 100
        dec = [D(v).scaleb(-s) for v in vals]
    assert all(d.as_tuple().exponent == -s for d in dec)
    return pa.array(with_nulls(dec, rng, 0.1), pa.decimal128(p, s))


def timestamp_edges():
    """Timestamps (ns since 1970 UTC) that stress ORC's seconds/nanos split."""
    e = [0, -1, 1, -NS, -NS + 1, -NS - 1, NS - 1, -500_000_000, -1_500_000_000,
         (ORC_EPOCH_S * NS) - 1, ORC_EPOCH_S * NS, ORC_EPOCH_S * NS + 1,   # around ORC's 2015 epoch
         -2_208_988_800 * NS + 123_456_789,                                   # 1900-01-01 00:00:00.123456789
         -2_208_988_800 * NS - 1,                                             # 1899-12-31 23:59:59.999999999
         1_700_000_000 * NS + 120_000_000, 1_700_000_000 * NS + 100, 1_700_000_000 * NS + 1000,
         951_782_400 * NS,                                                    # 2000-02-29
         -9_223_372_036 * NS, 9_223_372_035 * NS + 999_999_999]              # near the ns limits
    return e


def int_segments(rng, signed=True, scale=2**40):
    """An int64 sequence whose parts hit every RLE v2 sub-encoding and RLE v1 runs and literals."""
    seg = []
    # SHORT_REPEAT: runs of 3..10 equal values (widths 1..6 bytes)
    vals = rng.integers(-scale if signed else 0, scale, 40)
    seg.append(np.repeat(vals, rng.integers(3, 11, 40))[:250])
    # DELTA with delta 0 (long constant run), fixed delta +1, fixed delta -7
    seg.append(np.full(600, -5 if signed else 5))
    seg.append(np.arange(1000, 1300))
    seg.append(10_000 - 7 * np.arange(200))
    # DELTA with bit-packed deltas: monotonic with varying steps, both directions
    seg.append(np.cumsum(rng.integers(1, 5000, 200)))
    seg.append(10**9 - np.cumsum(rng.integers(1, 300, 200)))
    # DIRECT: random (small, wide, full 64-bit range)
    seg.append(rng.integers(-100 if signed else 0, 100, 150))
    seg.append(rng.integers(-2**31 if signed else 0, 2**31, 150))
    # PATCHED_BASE: small values with rare huge outliers
    small = rng.integers(0, 128, 600)
    out = rng.random(600) < 0.015
    seg.append(np.where(out, rng.integers(2**30, 2**44, 600), small))
    # PATCHED_BASE with negative base
    small = rng.integers(-2000, -1900, 300)
    seg.append(np.where(rng.random(300) < 0.02, rng.integers(2**35, 2**40, 300), small))
    # RLE v1 runs with delta at the limits (-128, +127) and max run length (130)
    seg.append(np.arange(0, 131 * 127, 127))
    seg.append(50_000 - 128 * np.arange(131))
    seg.append(rng.integers(-2**63 if signed else 0, 2**63 - 1, 100, dtype=np.int64))
    return np.concatenate([s.astype(np.int64) for s in seg])


def ints_table(seed=2):
    rng = np.random.default_rng(seed)
    v = int_segments(rng)
    n = len(v)
    nulls = rng.random(n) < 0.15
    i32 = np.clip(v, -2**31, 2**31 - 1).astype(np.int32)
    i16 = np.clip(v // 1024, -2**15, 2**15 - 1).astype(np.int16)
    # byte RLE: runs (3..130 equal bytes) and literals; boolean RLE: long runs and noise
    i8 = np.concatenate([np.repeat(rng.integers(-128, 128, 20), rng.integers(3, 140, 20)),
                         rng.integers(-128, 128, n)])[:n].astype(np.int8)
    bools = np.concatenate([np.ones(1000, bool), np.zeros(700, bool), np.arange(400) % 2 == 0,
                            rng.random(n) < 0.5])[:n]
    dates = np.concatenate([np.arange(16000, 16000 + 1000), np.full(600, 0),
                            rng.integers(-700000, 2900000, n)])[:n].astype(np.int32)
    return pa.table({
        "i64": pa.array(v, pa.int64()),
        "i64_nulls": pa.array(v, pa.int64(), mask=nulls),
        "i32": pa.array(i32, pa.int32()),
        "i16": pa.array(i16, pa.int16()),
        "i8": pa.array(i8, pa.int8()),
        "bool": pa.array(bools, pa.bool_()),
        "date": pa.array(dates, pa.date32()),
        "row": pa.array(np.arange(n, dtype=np.int32)),
    })


def strings_table(n=1000, seed=3):
    rng = np.random.default_rng(seed)
    vocab = ["", "alpha", "beta", "gamma", "δέλτα", "ε", "日本", "東京都", "🦀", "a b c", "CAPS",
             "x" * 40, "mixed ünïcödé", "\u0000"]
    low = [vocab[int(i)] for i in rng.integers(0, len(vocab), n)]
    high = ["".join(chr(int(c)) for c in rng.integers(0x61, 0x7B, int(rng.integers(0, 16)))) + str(i)
            for i in range(n)]
    longs = [("long-" + str(i) + "-") * int(rng.integers(50, 400)) if i % 125 == 0 else f"s{i % 37}"
             for i in range(n)]
    sorted_ = sorted(high)
    return pa.table({
        "low_card": pa.array(with_nulls(low, rng, 0.1)),
        "low_card_nonull": pa.array(low),
        "high_card": pa.array(with_nulls(high, rng, 0.05)),
        "sorted": pa.array(sorted_),
        "long": pa.array(with_nulls(longs, rng, 0.05)),
        "all_null": pa.array([None] * n, pa.string()),
        "bin_low_card": pa.array([v.encode() for v in low], pa.binary()),
    })


def nested_table(n=400, seed=4):
    rng = np.random.default_rng(seed)

    def maybe(p, f):
        return None if rng.random() < p else f()

    rows = []
    for i in range(n):
        rows.append({
            "ll": maybe(0.1, lambda: [maybe(0.15, lambda: [maybe(0.1, lambda: int(rng.integers(-50, 50)))
                                                           for _ in range(int(rng.integers(0, 4)))])
                                      for _ in range(int(rng.integers(0, 4)))]),
            "m_list": maybe(0.1, lambda: [(f"key{j}", maybe(0.2, lambda: [maybe(0.1, lambda: float(rng.random()))
                                                                           for _ in range(int(rng.integers(0, 3)))]))
                                          for j in range(int(rng.integers(0, 4)))]),
            "s_list": maybe(0.1, lambda: {"id": i, "tags": maybe(0.2, lambda: [f"t{int(x)}" for x in
                                                                               rng.integers(0, 9, int(rng.integers(0, 4)))]),
                                          "inner": maybe(0.2, lambda: {"z": maybe(0.2, lambda: bool(rng.random() < 0.5))})}),
            "l_s_l": maybe(0.1, lambda: [maybe(0.1, lambda: {"a": int(rng.integers(0, 100)),
                                                             "b": maybe(0.2, lambda: [f"v{int(x)}" for x in
                                                                                      rng.integers(0, 5, int(rng.integers(0, 3)))])})
                                         for _ in range(int(rng.integers(0, 3)))]),
            "m_struct": maybe(0.1, lambda: [(int(k), maybe(0.1, lambda: {"p": maybe(0.2, lambda: str(int(rng.integers(0, 9)))),
                                                                        "q": float(rng.random())}))
                                            for k in rng.choice(1000, int(rng.integers(0, 4)), replace=False)]),
        })
    schema = pa.schema([
        ("ll", pa.list_(pa.list_(pa.int32()))),
        ("m_list", pa.map_(pa.string(), pa.list_(pa.float64()))),
        ("s_list", pa.struct([("id", pa.int64()), ("tags", pa.list_(pa.string())),
                              ("inner", pa.struct([("z", pa.bool_())]))])),
        ("l_s_l", pa.list_(pa.struct([("a", pa.int16()), ("b", pa.list_(pa.string()))]))),
        ("m_struct", pa.map_(pa.int64(), pa.struct([("p", pa.string()), ("q", pa.float32())]))),
    ])
    return pa.Table.from_pylist(rows, schema)


def timestamps_table(seed=5):
    """Timestamps of every Arrow unit (pyarrow's ORC writer turns them all into ORC TIMESTAMP,
    read back as ns), nanos with every count of trailing zeros, pre-1970 and pre-2015 values."""
    rng = np.random.default_rng(seed)
    e = timestamp_edges()
    trailing = [1_600_000_000 * NS + 123_456_789 // 10**k * 10**k for k in range(10)]
    trailing += [-(1_600_000_000 * NS + 123_456_789 // 10**k * 10**k) for k in range(10)]
    rand = rng.integers(-3_000_000_000 * NS, 3_000_000_000 * NS, 400, dtype=np.int64).tolist()
    ns = e + trailing + rand
    n = len(ns)
    s = [v // NS for v in ns]
    ms = [v // 10**6 for v in ns]
    us = [v // 1000 for v in ns]
    seq = [ORC_EPOCH_S * NS + i * 3_600 * NS for i in range(n)]  # hourly from 2015: DELTA-encoded seconds
    return pa.table({
        "ts_ns": pa.array(with_nulls(ns, rng, 0.05), pa.timestamp("ns")),
        "ts_us": pa.array(us, pa.timestamp("us")),
        "ts_ms": pa.array(ms, pa.timestamp("ms")),
        "ts_s": pa.array(s, pa.timestamp("s")),
        "ts_hourly": pa.array(seq, pa.timestamp("ns")),
        "ts_utc_ns": pa.array(with_nulls(ns, rng, 0.05), pa.timestamp("ns", "UTC")),
        "ts_ny_ns": pa.array(ns, pa.timestamp("ns", "America/New_York")),
        "date_from_ts": pa.array([v // (86400 * NS) for v in ns], pa.int32()).cast(pa.date32()),
    })


def union_table(n=200, seed=6):
    rng = np.random.default_rng(seed)
    tags = rng.integers(0, 3, n).astype(np.int8)
    ints = pa.array(with_nulls(rng.integers(-10**6, 10**6, n).tolist(), rng, 0.1), pa.int32())
    strs = pa.array(with_nulls([f"u{i}" for i in range(n)], rng, 0.1), pa.string())
    dbl = pa.array(rng.standard_normal(n), pa.float64())
    sparse = pa.UnionArray.from_sparse(pa.array(tags), [ints, strs, dbl], ["i", "s", "d"])
    # dense: children hold only the values of their tag
    offs, kids = [], [[], [], []]
    for i, t in enumerate(tags):
        offs.append(len(kids[t]))
        kids[t].append([ints, strs, dbl][t][i].as_py())
    dense = pa.UnionArray.from_dense(pa.array(tags), pa.array(offs, pa.int32()),
                                     [pa.array(kids[0], pa.int32()), pa.array(kids[1], pa.string()),
                                      pa.array(kids[2], pa.float64())], ["i", "s", "d"])
    return pa.table({"row": pa.array(np.arange(n, dtype=np.int32)), "sparse": sparse, "dense": dense})


def coercions_table():
    """Arrow types pyarrow's ORC writer accepts but stores as another ORC type."""
    ns = timestamp_edges()[:12]
    n = len(ns)
    return pa.table({
        "large_string": pa.array([f"ls{i}" if i % 4 else None for i in range(n)], pa.large_string()),
        "large_binary": pa.array([bytes([i]) * i for i in range(n)], pa.large_binary()),
        "fixed_binary4": pa.array([bytes([i, i + 1, i + 2, i + 3]) for i in range(n)], pa.binary(4)),
        "large_list": pa.array([[i] * (i % 3) for i in range(n)], pa.large_list(pa.int32())),
        "fixed_list2": pa.array([[i, -i] for i in range(n)], pa.list_(pa.int64(), 2)),
        "date64": pa.array([v // 10**6 // 86_400_000 * 86_400_000 for v in ns], pa.date64()),
        "ts_s": pa.array([v // NS for v in ns], pa.timestamp("s")),
        "ts_ms_tz_tokyo": pa.array([v // 10**6 for v in ns], pa.timestamp("ms", "Asia/Tokyo")),
        "dense_union": pa.UnionArray.from_dense(pa.array([0, 1] * (n // 2), pa.int8()),
                                                pa.array([i // 2 for i in range(n)], pa.int32()),
                                                [pa.array(range(n // 2), pa.int64()),
                                                 pa.array([str(i) for i in range(n // 2)])]),
    })


def many_stripes_table(n=4800, seed=7):
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int32)),
        "v": pa.array(rng.integers(-30000, 30000, n).astype(np.int16), mask=rng.random(n) < 0.1),
        "s": pa.array([f"k{int(x)}" for x in rng.integers(0, 300, n)]),
        "b": pa.array(rng.random(n) < 0.3, mask=rng.random(n) < 0.05),
    })


def row_groups_table(n=6000, seed=8):
    """Columns for row-group pruning: sorted ones (id, k, d, ts) prune to contiguous row groups,
    unsorted ones (v, f) to scattered ones; nulls in most, a mostly-null column (sparse), a nested one."""
    rng = np.random.default_rng(seed)
    i = np.arange(n)
    return pa.table({
        "id": pa.array(i.astype(np.int64)),
        "v": pa.array(rng.integers(-1000, 1000, n).astype(np.int32), mask=rng.random(n) < 0.1),
        "f": pa.array(np.round(rng.standard_normal(n) * 100, 1), mask=rng.random(n) < 0.02),
        "s": pa.array([f"s{int(x):05d}" for x in rng.integers(0, 100000, n)]),
        "k": pa.array([f"k{x // 500:02d}" for x in i], mask=rng.random(n) < 0.05),
        "d": pa.array((20000 - i // 20).astype(np.int32), pa.date32()),
        "ts": pa.array(ORC_EPOCH_S * NS + i * 60 * NS, pa.timestamp("ns"), mask=rng.random(n) < 0.05),
        "dec": pa.array([D(int(x)).scaleb(-2) for x in rng.integers(-10**6, 10**6, n)],
                        pa.decimal128(10, 2), mask=rng.random(n) < 0.05),
        "sparse": pa.array(rng.integers(0, 100, n), mask=(i // 300) % 3 != 1),
        "b": pa.array(rng.random(n) < 0.3, mask=rng.random(n) < 0.05),
        "lst": pa.array([None if rng.random() < 0.05 else rng.integers(-99, 99, int(rng.integers(0, 4))).tolist()
                         for _ in range(n)], pa.list_(pa.int16())),
    })


# ----------------------------------------------------------------- writing

class Gen:
    def __init__(self, out):
        self.out = out
        self.rows = []
        self.skipped = []

    def _finish(self, name, desc, writer):
        path = os.path.join(self.out, name + ".orc")
        table = orc_expected.read_orc(path)
        orc_expected.write_ipc(table, os.path.join(self.out, name + ".arrow"))
        info = orc_inspect.inspect(path)
        sm = orc_inspect.summary(info)
        f = orc.ORCFile(path)
        assert f.nrows == sm["rows"] == table.num_rows and f.nstripes == sm["stripes"], name
        encs = ",".join(f"{k}:{v}" for k, v in sm["encodings"].items())
        runs = ",".join(f"{k}:{v}" for k, v in sm["runs"].items())
        self.rows.append([name + ".orc", sm["rows"], sm["stripes"], sm["compression"], sm["version"],
                          desc, writer, sm["blockSize"], info.get("rowIndexStride", ""),
                          "|".join(sm["writerTimezones"]), sm["chunks"], encs, runs])

    def pa(self, name, table, desc, **opts):
        """Write with pyarrow.  opts: pyarrow.orc.write_table keyword arguments."""
        path = os.path.join(self.out, name + ".orc")
        orc.write_table(table, path, **opts)
        back = orc_expected.read_orc(path)
        assert back.num_rows == table.num_rows, name
        self._finish(name, desc, "pyarrow " + pa.__version__)

    def pyorc(self, name, schema, rows, desc, **opts):
        try:
            import pyorc
        except ImportError:
            self.skipped.append(name)
            return
        path = os.path.join(self.out, name + ".orc")
        with open(path, "wb") as fo:
            with pyorc.Writer(fo, schema, **opts) as w:
                for r in rows:
                    w.write(r)
        self._finish(name, desc, f"pyorc {pyorc.__version__} (ORC C++ {pyorc.orc_version})")

    def manifest(self):
        hdr = ["file", "rows", "stripes", "compression", "file_version", "description", "writer",
               "compression_block_size", "row_index_stride", "writer_timezone", "compressed_chunks",
               "column_encodings", "int_rle_runs"]
        with open(os.path.join(self.out, "MANIFEST.tsv"), "w") as f:
            f.write("\t".join(hdr) + "\n")
            for r in sorted(self.rows):
                f.write("\t".join(str(x) for x in r) + "\n")


# ORC C++ (via pyorc) writes, for each null union value, one extra value taken from uninitialised
# memory at the end of child 0's stream (the tags stream has entries for non-null rows only, so
# readers that count tags never see them).  That file's .orc bytes vary between runs; its .arrow
# does not.
NONDETERMINISTIC = {"pyorc_union_nulls_v12_zlib.orc"}

CODECS = {"none": "uncompressed", "zlib": "zlib", "snappy": "snappy", "zstd": "zstd", "lz4": "lz4"}
VERS = {"v11": "0.11", "v12": "0.12"}


def generate_pyarrow(g):
    types = types_table()
    for v, fv in VERS.items():
        for c, comp in CODECS.items():
            g.pa(f"types_{v}_{c}", types,
                 f"every pyarrow-writable type: ints/floats (NaN,±inf,-0.0)/strings (empty, non-ASCII, 3000-byte)/binary/"
                 f"date/timestamp ns (pre-1970, pre-2015, sub-second)/timestamp UTC (TIMESTAMP_INSTANT)/"
                 f"decimal (4,2)..(38,38)/struct/list/map/list<struct>; nulls everywhere, all-null and no-null columns; "
                 f"direct strings", file_version=fv, compression=comp)
    ints = ints_table()
    for name, fv, c in (("v11_none", "0.11", "none"), ("v12_none", "0.12", "none"), ("v12_zlib", "0.12", "zlib")):
        g.pa(f"ints_{name}", ints,
             "integer runs for every RLE v2 sub-encoding (SHORT_REPEAT, DELTA fixed and bit-packed, DIRECT, "
             "PATCHED_BASE incl. negative base) and RLE v1 runs (delta -128/+127, length 130) and literals; "
             "int64/32/16/date, byte RLE (int8), boolean RLE; one int64 column with 15% nulls",
             file_version=fv, compression=CODECS[c])
    strs = strings_table()
    for name, fv, thr, c in (("v11_dict_zlib", "0.11", 1.0, "zlib"), ("v11_direct_snappy", "0.11", 0.0, "snappy"),
                             ("v12_dict_none", "0.12", 1.0, "none"), ("v12_direct_none", "0.12", 0.0, "none"),
                             ("v12_dict50_zstd", "0.12", 0.5, "zstd")):
        what = {1.0: "every string column dictionary-encoded", 0.0: "direct",
                0.5: "dictionary for low-cardinality columns, direct for the rest"}[thr]
        g.pa(f"strings_{name}", strs,
             f"strings, dictionary_key_size_threshold={thr} ({what}): low/high cardinality, empty, non-ASCII, NUL, "
             "long (to 4 KB), all-null; binary (always direct)",
             file_version=fv, compression=CODECS[c], dictionary_key_size_threshold=thr)
    nested = nested_table()
    g.pa("nested_v12_zlib", nested, "deep nesting: list<list<int32>>, map<string,list<double>>, "
         "struct<id,list<string>,struct<bool>>, list<struct<int16,list<string>>>, map<int64,struct<string,float>>; "
         "nulls and empties at every level", file_version="0.12", compression="zlib")
    g.pa("nested_v11_none", nested, "nested_v12_zlib's table, RLE v1, uncompressed",
         file_version="0.11", compression="uncompressed")
    tst = timestamps_table()
    g.pa("timestamps_v12_zlib", tst, "timestamps: Arrow s/ms/us/ns (all stored as ORC TIMESTAMP, read back as ns), "
         "nanos with 0..9 trailing zeros, negative (pre-1970) with nanos, around ORC's 2015 epoch, near ns limits; "
         "tz=UTC and tz=America/New_York (TIMESTAMP_INSTANT, read back as tz=UTC)", file_version="0.12", compression="zlib")
    g.pa("timestamps_v11_none", tst, "timestamps_v12_zlib's table, RLE v1, uncompressed",
         file_version="0.11", compression="uncompressed")
    g.pa("union_v12_zlib", union_table(), "ORC UNION from Arrow sparse and dense unions (int32|string|double), "
         "null children; pyarrow reads both back as sparse_union", file_version="0.12", compression="zlib")
    g.pa("union_v11_none", union_table(), "union_v12_zlib's table, RLE v1, uncompressed",
         file_version="0.11", compression="uncompressed")
    g.pa("coercions_v12_none", coercions_table(), "Arrow types stored as another ORC type: large_string, large_binary, "
         "fixed_size_binary, large_list, fixed_size_list, date64 (-> TIMESTAMP), timestamp[s], "
         "timestamp[ms,Asia/Tokyo] (-> TIMESTAMP_INSTANT), dense_union", file_version="0.12", compression="uncompressed")
    empty = types.slice(0, 0)
    g.pa("empty_v12_zlib", empty, "0 rows, types table schema", file_version="0.12", compression="zlib")
    g.pa("empty_v11_none", empty, "0 rows, types table schema", file_version="0.11", compression="uncompressed")
    g.pa("single_row_v12_snappy", types.slice(0, 1), "1 row of the types table (edge values)",
         file_version="0.12", compression="snappy")
    null_row = pa.table({c: pa.nulls(1, types.schema.field(c).type) for c in types.column_names})
    g.pa("single_null_row_v11_zlib", null_row, "1 row, every column null (types schema)",
         file_version="0.11", compression="zlib")
    ms = many_stripes_table()
    g.pa("many_stripes_v12_none", ms, "4800 rows in 24 stripes of 200 rows (stripe_size=1 KiB, batch_size=200), "
         "row_index_stride=90 (row groups straddle stripe ends); int32 seq, int16 with nulls, short strings, bool with nulls. pyarrow cannot make "
         "many stripes in a compressed file (see pyorc_many_stripes_*)",
         file_version="0.12", compression="uncompressed", stripe_size=1024, batch_size=200, row_index_stride=90)
    g.pa("many_stripes_v11_none", ms, "many_stripes_v12_none's table and layout, RLE v1",
         file_version="0.11", compression="uncompressed", stripe_size=1024, batch_size=200, row_index_stride=90)
    g.pa("rowgroups_v12_zlib", row_groups_table(),
         "row-group pruning: 6000 rows in stripes of 2300, 2300 and 1400 rows (stripe_size=1 KiB, batch_size=2300), "
         "row_index_stride=300 (each stripe ends in a short row group); sorted int64/dictionary string/date/timestamp, "
         "unsorted int32 and double with nulls, direct strings, decimal(10,2), a column null in 2 of 3 row groups, bool, "
         "list<int16> (a nested column: stripes read whole and sliced)",
         file_version="0.12", compression="zlib", stripe_size=1024, batch_size=2300, row_index_stride=300,
         dictionary_key_size_threshold=0.5)


def generate_pyorc(g):
    try:
        import pyorc
    except ImportError:
        # The pyorc_* files are left as they are: so are their manifest lines.
        try:
            with open(os.path.join(g.out, "MANIFEST.tsv")) as f:
                kept = [ln.rstrip("\n").split("\t") for ln in f if ln.startswith("pyorc_")]
        except FileNotFoundError:
            kept = []
        g.rows += kept
        g.skipped += [r[0] for r in kept]
        return
    ints = ints_table()
    ischema = "struct<i64:bigint,i64_nulls:bigint,i32:int,i16:smallint,i8:tinyint,bool:boolean,date:date,row:int>"
    irows = [tuple(r.values()) for r in ints.to_pylist()]
    for c, kind in (("zlib", pyorc.CompressionKind.ZLIB), ("lz4", pyorc.CompressionKind.LZ4)):
        g.pyorc(f"pyorc_ints_v12_{c}_block1k", ischema, irows,
                "ints table with 1 KiB compression blocks: every stream spans many chunks, runs and varints cross chunk "
                "boundaries", compression=kind, compression_block_size=1024, memory_block_size=1024)
    strs = strings_table()
    sschema = ("struct<low_card:string,low_card_nonull:string,high_card:string,sorted:string,long:string,"
               "all_null:string,bin_low_card:binary>")
    srows = [tuple(r.values()) for r in strs.to_pylist()]
    g.pyorc("pyorc_strings_v12_dict_zlib_block1k", sschema, srows,
            "strings table, dictionary encoding, 1 KiB compression blocks", compression=pyorc.CompressionKind.ZLIB,
            compression_block_size=1024, memory_block_size=1024, dict_key_size_threshold=1.0)
    ms = many_stripes_table()
    mrows = [tuple(r.values()) for r in ms.to_pylist()]
    g.pyorc("pyorc_many_stripes_v12_zstd_block1k", "struct<id:int,v:smallint,s:string,b:boolean>", mrows,
            "many_stripes table compressed: 12 stripes of 400 rows (stripe_size=1 byte: ORC C++ closes a stripe once "
            "a chunk was flushed), 1 KiB zstd blocks, row_index_stride=90",
            compression=pyorc.CompressionKind.ZSTD, compression_block_size=1024, memory_block_size=1024,
            stripe_size=1, batch_size=200, row_index_stride=90)
    g.pyorc("pyorc_many_stripes_v12_snappy_block2k", "struct<id:int,v:smallint,s:string,b:boolean>", mrows,
            "many_stripes table compressed: 8 stripes of 600 rows, 2 KiB snappy blocks, row_index_stride=1000 "
            "(larger than a stripe)",
            compression=pyorc.CompressionKind.SNAPPY, compression_block_size=2048, memory_block_size=1024,
            stripe_size=512, batch_size=300, row_index_stride=1000)
    # CHAR / VARCHAR (pyarrow reads both as string; CHAR comes back space-padded as stored)
    cv = [(f"c{i}"[:5] if i % 7 else None, ("vc" * (i % 6)) if i % 5 else None, "é" * (i % 4)) for i in range(200)]
    g.pyorc("pyorc_char_varchar_v12_zlib", "struct<c:char(5),v:varchar(10),c_utf8:char(3)>", cv,
            "ORC CHAR(5), VARCHAR(10), CHAR(3) with non-ASCII (pyarrow reads them as string)",
            compression=pyorc.CompressionKind.ZLIB)
    # Non-UTC writer timezone: the same wall-clock values written with writer timezone
    # America/Los_Angeles (DST) and Asia/Kolkata (+5:30); pyorc writes datetimes given in that zone.
    import zoneinfo
    walls = [dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(1900, 1, 1, 0, 0, 0),
             dt.datetime(2014, 12, 31, 23, 59, 59), dt.datetime(2015, 1, 1), dt.datetime(2015, 7, 1, 12, 0, 0),
             dt.datetime(2020, 3, 8, 1, 30), dt.datetime(2020, 3, 8, 3, 30), dt.datetime(2020, 11, 1, 1, 30),
             dt.datetime(2024, 2, 29, 13, 14, 15, 161718), dt.datetime(1950, 6, 15, 8, 0, 0),
             dt.datetime(1969, 12, 31, 23, 59, 59, 500000), dt.datetime(1969, 12, 31, 20, 0, 0, 1000),
             dt.datetime(1969, 12, 31, 12, 0, 0, 999), dt.datetime(1960, 1, 1, 0, 0, 0, 1),
             dt.datetime(1970, 1, 1, 0, 0, 0, 1000), dt.datetime(1970, 1, 1, 7, 59, 59, 250000)]
    for zname, tag in (("UTC", "utc"), ("America/Los_Angeles", "la"), ("Asia/Kolkata", "kolkata")):
        z = zoneinfo.ZoneInfo(zname)
        rows = [(w.replace(tzinfo=z), w.replace(tzinfo=z), i) for i, w in enumerate(walls)]
        g.pyorc(f"pyorc_timestamps_tz_{tag}_v12_none",
                "struct<ts:timestamp,ts_instant:timestamp with local time zone,i:int>", rows,
                f"ORC TIMESTAMP and TIMESTAMP_INSTANT written by ORC C++ with writer timezone {zname}; wall clocks "
                "(DST edges 2020-03-08/2020-11-01, pre-1970 with fractions, 1900); pyarrow returns the writer's wall "
                "clock for TIMESTAMP (except +-1 s where ORC C++'s negative-seconds fix-ups disagree, see README) "
                "and the UTC instant for TIMESTAMP_INSTANT",
                compression=pyorc.CompressionKind.NONE, timezone=z)
    # UNION as written by ORC C++ with a null union value (Arrow has no union-level nulls)
    urows = [(i, None if i % 9 == 0 else (i * 3 if i % 2 else f"s{i}")) for i in range(120)]
    g.pyorc("pyorc_union_nulls_v12_zlib", "struct<i:int,u:uniontype<int,string>>", urows,
            "ORC UNION with null union values (PRESENT stream on the union column); ORC C++ appends one junk value "
            "per null union row to child 0's stream (tags count only non-null rows): readers must go by tag counts",
            compression=pyorc.CompressionKind.ZLIB)
    # decimals with precision 0 < p <= 18 (ORC C++ Decimal64 path) and p > 18, written by ORC C++ from Python Decimals
    drows = [(D(i * 37 - 500).scaleb(-2) if i % 6 else None, D(-(10**37) + i * 10**30 + 7) if i % 4 else None)
             for i in range(100)]
    g.pyorc("pyorc_decimals_v12_snappy", "struct<d10_2:decimal(10,2),d38_0:decimal(38,0)>", drows,
            "decimal(10,2) and decimal(38,0) with nulls, written by ORC C++ via pyorc",
            compression=pyorc.CompressionKind.SNAPPY)


def generate(out):
    os.makedirs(out, exist_ok=True)
    g = Gen(out)
    generate_pyarrow(g)
    generate_pyorc(g)
    g.manifest()
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "testdata", "orc"))
    ap.add_argument("--check", action="store_true",
                    help="regenerate into a temp dir and compare byte for byte with --out")
    a = ap.parse_args()
    if a.check:
        with tempfile.TemporaryDirectory() as tmp:
            g = generate(tmp)
            names = sorted(os.listdir(tmp))
            _, mismatch, errors = filecmp.cmpfiles(a.out, tmp, names, shallow=False)
            if "MANIFEST.tsv" in mismatch:
                # the nondeterministic files' lines may differ (their run counts include the junk values)
                def stable(d):
                    with open(os.path.join(d, "MANIFEST.tsv")) as f:
                        return [ln for ln in f if ln.split("\t")[0] not in NONDETERMINISTIC]
                if stable(a.out) == stable(tmp):
                    mismatch.remove("MANIFEST.tsv")
            known = [n for n in mismatch if n in NONDETERMINISTIC]
            bad = [n for n in mismatch + errors if n not in NONDETERMINISTIC]
            for n in bad:
                print(f"differs: {n}")
            for n in known:
                print(f"differs (known nondeterministic writer output): {n}")
            print(f"{len(names) - len(mismatch) - len(errors)}/{len(names)} files identical")
            return 1 if bad else 0
    g = generate(a.out)
    print(f"wrote {len(g.rows)} fixtures to {os.path.normpath(a.out)}")
    if g.skipped:
        print(f"pyorc not importable: left {len(g.skipped)} pyorc_* fixtures as they are", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
