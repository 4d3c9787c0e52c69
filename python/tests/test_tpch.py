"""The 22 TPC-H queries in datafusion-python over warpread tables (the FFI
table provider) against the same queries over DataFusion's own Parquet
reader, on data generated once per run by `warpread gen tpch` at scale
0.01 (GZIP Parquet: its pages inflate in warpread's decoder)."""

from __future__ import annotations

from pathlib import Path

import pytest
from datafusion import SessionContext

from compare import same_rows
from conftest import ROOT, TPCH_TABLES
from warpread.datafusion import table_provider

QUERIES = sorted((ROOT / "queries" / "tpch").glob("q*.sql"), key=lambda p: int(p.stem[1:]))


def test_all_22_queries_are_there():
    assert [q.stem for q in QUERIES] == [f"q{i}" for i in range(1, 23)]


@pytest.fixture(scope="session")
def sessions(tpch: Path, cpu):
    ours, theirs = SessionContext(), SessionContext()
    for t in TPCH_TABLES:
        ours.register_table(t, table_provider(tpch / f"{t}.parquet", backend=cpu))
        theirs.register_parquet(t, str(tpch / f"{t}.parquet"))
    return ours, theirs


@pytest.mark.parametrize("query", QUERIES, ids=lambda p: p.stem)
def test_tpch_query_matches_datafusions_reader(query: Path, sessions):
    ours, theirs = sessions
    text = query.read_text()
    got = ours.sql(text).to_arrow_table()
    want = theirs.sql(text).to_arrow_table()
    assert got.schema.names == want.schema.names
    assert got.num_rows == want.num_rows
    assert same_rows(got, want), f"{query.stem}: results differ"
