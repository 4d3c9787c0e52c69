"""warpread tables in datafusion-python through the FFI table provider:
results against DataFusion's own readers and pyarrow, the projection,
filters and limit reaching the scan, options, errors."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest
from datafusion import SessionContext

import warpread
from compare import difference
from conftest import TESTDATA
from warpread.datafusion import table_provider

TYPES = TESTDATA / "parquet" / "types_snappy_v1.parquet"
ORC = TESTDATA / "orc" / "many_stripes_v12_none.orc"


def sql(ctx: SessionContext, q: str) -> pa.Table:
    return ctx.sql(q).to_arrow_table()


def rows(t: pa.Table) -> list:
    """The rows of ``t`` in a canonical order."""
    return sorted(tuple((v is None, repr(v)) for v in r.values()) for r in t.to_pylist())


def plan_text(ctx: SessionContext, q: str) -> str:
    rows = sql(ctx, "EXPLAIN " + q).to_pylist()
    return "\n".join(r["plan"] for r in rows if r["plan_type"] == "physical_plan")


def test_parquet_table_equals_datafusions_reader(cpu):
    ctx = SessionContext()
    ctx.register_table("w", table_provider(TYPES, backend=cpu))
    ctx.register_parquet("d", str(TYPES))
    got = sql(ctx, "SELECT * FROM w")
    want = sql(ctx, "SELECT * FROM d")
    assert got.num_rows == pq.ParquetFile(TYPES).metadata.num_rows
    assert difference(got, want) is None, difference(got, want)


def test_orc_table_equals_pyarrow(cpu):
    ctx = SessionContext()
    ctx.register_table("o", table_provider(ORC, backend=cpu))
    want = po.ORCFile(ORC).read()
    got = sql(ctx, "SELECT * FROM o")
    assert difference(got, want) is None, difference(got, want)


def test_projection_filter_and_limit_reach_the_scan(cpu):
    ctx = SessionContext()
    ctx.register_table("w", table_provider(TYPES, backend=cpu))
    ctx.register_parquet("d", str(TYPES))
    q = "SELECT str, i32 FROM {} WHERE i32 >= 100 AND i64 < 5000"
    got, want = sql(ctx, q.format("w")), sql(ctx, q.format("d"))
    assert 0 < got.num_rows
    assert rows(got) == rows(want)
    plan = plan_text(ctx, q.format("w"))
    scan = next(l for l in plan.splitlines() if "WarpreadTableExec" in l)
    # Only the columns the query reads (i64 for the filter), and the
    # filters handed to warpread's source, which prunes with them.
    assert "projection=[i32, i64, str]" in scan, scan
    assert "pruning_predicate=" in scan and "i32" in scan and "i64" in scan, scan
    plan = plan_text(ctx, "SELECT i32 FROM w LIMIT 7")
    scan = next(l for l in plan.splitlines() if "WarpreadTableExec" in l)
    assert "limit=7" in scan, scan
    assert sql(ctx, "SELECT i32 FROM w LIMIT 7").num_rows == 7


def test_options_and_unknown_keys(cpu):
    ctx = SessionContext()
    p = table_provider(TYPES, options={"warpread.backend": "cpu", "warpread.read_ahead": 1, "warpread.fast_like": False})
    ctx.register_table("w", p)
    assert sql(ctx, "SELECT count(*) AS n FROM w")["n"][0].as_py() == pq.ParquetFile(TYPES).metadata.num_rows
    with pytest.raises(ValueError, match="warpread.no_such_key"):
        table_provider(TYPES, options={"warpread.no_such_key": "1"})
    with pytest.raises(ValueError, match="warpread.read_ahead"):
        table_provider(TYPES, options={"warpread.read_ahead": "many"})
    with pytest.raises(ValueError, match="datafusion.execution.batch_size"):
        table_provider(TYPES, options={"datafusion.execution.batch_size": "8"})


def test_a_folder_of_files_is_one_table(tmp_path, cpu):
    part = pq.read_table(TYPES)
    for i in range(3):
        pq.write_table(part, tmp_path / f"part{i}.parquet", compression="zstd")
    ctx = SessionContext()
    ctx.register_table("f", table_provider(tmp_path, backend=cpu))
    assert sql(ctx, "SELECT count(*) AS n FROM f")["n"][0].as_py() == 3 * part.num_rows


def test_errors(tmp_path, cpu):
    with pytest.raises(warpread.WarpreadError, match="nothing_here"):
        table_provider(tmp_path / "nothing_here.parquet", backend=cpu)
    with pytest.raises(ValueError, match="format"):
        table_provider(TYPES, format="csv", backend=cpu)
    with pytest.raises(NotImplementedError, match="host memory"):
        table_provider(TYPES, device=True)
    p = table_provider(TYPES, backend=cpu)
    assert pa.schema(p.schema) == pq.read_schema(TYPES).remove_metadata() or pa.schema(p.schema).names == pq.read_schema(TYPES).names
    with pytest.raises(TypeError, match="session"):
        p.__datafusion_table_provider__(object())
