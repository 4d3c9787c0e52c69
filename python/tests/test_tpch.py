"""The 22 TPC-H queries in datafusion-python over warpread tables (the FFI
table provider) against the same queries over DataFusion's own Parquet
reader, on data generated once per run by `warpread gen tpch` at scale
0.01 (GZIP Parquet: its pages inflate in warpread's decoder)."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest
from datafusion import SessionContext

from conftest import ROOT, target_dir
from warpread.datafusion import table_provider

TABLES = ["lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region"]
QUERIES = sorted((ROOT / "queries" / "tpch").glob("q*.sql"), key=lambda p: int(p.stem[1:]))
SCALE = "0.01"
# Several row groups per large table (lineitem has 60,000 rows), so that
# scans split and prune them.
ROWS_PER_GROUP = 16384


def test_all_22_queries_are_there():
    assert [q.stem for q in QUERIES] == [f"q{i}" for i in range(1, 23)]


@pytest.fixture(scope="session")
def tpch(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tpch")
    exe = target_dir() / "debug" / "warpread"
    if not exe.is_file():
        pytest.fail(f"{exe} is missing: `cargo test` (scripts/test.sh runs it first) builds it")
    cmd = [str(exe)]
    args = ["gen", "tpch", "--scale", SCALE, "--format", "parquet", "--compression", "gzip"]
    args += ["--rows-per-group", str(ROWS_PER_GROUP), str(out)]
    subprocess.run(cmd + args, cwd=ROOT, check=True)
    for t in TABLES:
        assert (out / f"{t}.parquet").is_file(), t
    return out


@pytest.fixture(scope="session")
def sessions(tpch: Path, cpu):
    ours, theirs = SessionContext(), SessionContext()
    for t in TABLES:
        ours.register_table(t, table_provider(tpch / f"{t}.parquet", backend=cpu))
        theirs.register_parquet(t, str(tpch / f"{t}.parquet"))
    return ours, theirs


def _key(v):
    if isinstance(v, float) and math.isnan(v):
        return (0, "nan")
    if v is None:
        return (1, "")
    return (2, repr(v))


def _rows(table):
    return sorted((tuple(_key(v) for v in r.values()) for r in table.to_pylist()))


@pytest.mark.parametrize("query", QUERIES, ids=lambda p: p.stem)
def test_tpch_query_matches_datafusions_reader(query: Path, sessions):
    ours, theirs = sessions
    text = query.read_text()
    got = ours.sql(text).to_arrow_table()
    want = theirs.sql(text).to_arrow_table()
    assert got.schema.names == want.schema.names
    assert got.num_rows == want.num_rows
    if got.equals(want):
        return
    # Rows in another order where the query leaves ties unordered.
    assert _rows(got) == _rows(want), f"{query.stem}: results differ"
