"""Reads through the Python package on the CPU backend, against pyarrow's
own readers on the repository's fixtures: whole files, projections,
filters, limits, streamed batches, metadata and errors."""

from __future__ import annotations

import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

import warpread
from compare import difference
from conftest import TESTDATA

PARQUET = sorted((TESTDATA / "parquet").glob("*.parquet"))
ORC = sorted((TESTDATA / "orc").glob("*.orc"))
TYPES = TESTDATA / "parquet" / "types_snappy_v1.parquet"


def test_fixtures_are_there():
    assert len(PARQUET) >= 20 and len(ORC) >= 40


@pytest.mark.parametrize("path", PARQUET, ids=lambda p: p.name)
def test_parquet_fixture_equals_pyarrow(path: Path, cpu):
    got = warpread.read_parquet(path, backend=cpu)
    want = pq.read_table(path)
    assert difference(got, want) is None, difference(got, want)


@pytest.mark.parametrize("path", ORC, ids=lambda p: p.name)
def test_orc_fixture_equals_pyarrow(path: Path, cpu):
    got = warpread.read_orc(path, backend=cpu)
    want = po.ORCFile(path).read()
    # warpread's ORC reader gives Arrow as pyarrow presents it.
    assert got.schema.remove_metadata() == want.schema.remove_metadata()
    assert difference(got, want) is None, difference(got, want)


def test_read_parquet_smoke_with_the_default_backend():
    # "auto": CUDA where usable, else the CPU; both give the same table.
    t = warpread.read_parquet(str(TYPES))
    assert t.num_rows == pq.ParquetFile(TYPES).metadata.num_rows > 0


def test_projection_keeps_the_order_asked_for(cpu):
    got = warpread.read_parquet(TYPES, columns=["str", "i32"], backend=cpu)
    assert got.column_names == ["str", "i32"]
    assert difference(got, pq.read_table(TYPES, columns=["str", "i32"])) is None


def test_unknown_column_is_an_error_naming_it(cpu):
    with pytest.raises(warpread.WarpreadError, match="no_such_column"):
        warpread.read_parquet(TYPES, columns=["no_such_column"], backend=cpu)


@pytest.mark.parametrize(
    "flt, expr",
    [
        ([("i32", ">=", 100)], lambda t: pc.greater_equal(t["i32"], 100)),
        ([("i32", "<", 50), ("i64", ">", 10)], lambda t: pc.and_(pc.less(t["i32"], 50), pc.greater(t["i64"], 10))),
        (("i32", "==", 7), lambda t: pc.equal(t["i32"], 7)),
        ([[("f64", "<=", 0.5)]], lambda t: pc.less_equal(t["f64"], 0.5)),
        ([("str", ">", "m")], lambda t: pc.greater(t["str"], "m")),
    ],
)
def test_filter_keeps_exactly_the_matching_rows(flt, expr, cpu):
    full = pq.read_table(TYPES)
    want = full.filter(expr(full))
    got = warpread.read_parquet(TYPES, filter=flt, backend=cpu)
    assert 0 < got.num_rows < full.num_rows or want.num_rows in (0, full.num_rows)
    assert difference(got, want) is None, difference(got, want)


def test_filter_matches_pyarrow_filters_on_orc(cpu):
    path = TESTDATA / "orc" / "types_v12_zlib.orc"
    full = po.ORCFile(path).read()
    col = next(f.name for f in full.schema if pa.types.is_int64(f.type))
    mid = sorted(v for v in full[col].to_pylist() if v is not None)[full.num_rows // 3]
    want = full.filter(pc.less_equal(full[col], mid))
    got = warpread.read_orc(path, filter=[(col, "<=", mid)], backend=cpu)
    assert 0 < got.num_rows < full.num_rows
    assert difference(got, want) is None, difference(got, want)


def test_filter_on_dates(cpu):
    full = pq.read_table(TYPES)
    date_col = next((f.name for f in full.schema if pa.types.is_date32(f.type)), None)
    if date_col is None:
        pytest.fail("types_snappy_v1.parquet has no date32 column to filter")
    days = sorted(v for v in full[date_col].to_pylist() if v is not None)
    cut = days[len(days) // 2]
    assert isinstance(cut, datetime.date)
    want = full.filter(pc.less(full[date_col], pa.scalar(cut, pa.date32())))
    got = warpread.read_parquet(TYPES, filter=[(date_col, "<", cut)], backend=cpu)
    assert difference(got, want) is None, difference(got, want)


@pytest.mark.parametrize(
    "flt, err, match",
    [
        ([("i32", "!=", 1)], warpread.UnsupportedError, "operator"),
        ([("i32", "in", 1)], warpread.UnsupportedError, "operator"),
        ([("nope", "=", 1)], warpread.UnsupportedError, "nope"),
        ([("i32", "<", 1.5)], warpread.UnsupportedError, "not an integer"),
        ([("str", "=", 3)], warpread.UnsupportedError, "does not compare"),
        ([[("i32", "=", 1)], [("i32", "=", 2)]], ValueError, "OR of conjunctions"),
        ([("i32", "=")], TypeError, "expected"),
        ([("i32", "=", object())], TypeError, "object"),
    ],
)
def test_bad_filters_are_refused(flt, err, match, cpu):
    with pytest.raises(err, match=match):
        warpread.read_parquet(TYPES, filter=flt, backend=cpu)


def test_limit(cpu):
    got = warpread.read_parquet(TYPES, limit=10, backend=cpu)
    assert difference(got, pq.read_table(TYPES).slice(0, 10)) is None


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_iter_batches_streams_in_bounded_batches(fmt, cpu):
    if fmt == "parquet":
        path, f, want = TYPES, warpread.ParquetFile(TYPES, backend=cpu), pq.read_table(TYPES)
    else:
        path = TESTDATA / "orc" / "many_stripes_v12_none.orc"
        f, want = warpread.OrcFile(path, backend=cpu), po.ORCFile(path).read()
    batches = list(f.iter_batches(batch_size=100))
    assert len(batches) >= want.num_rows // 100
    assert all(0 < b.num_rows <= 100 for b in batches)
    got = pa.Table.from_batches(batches)
    assert difference(got, want) is None, difference(got, want)
    # Columns and filters stream too.
    cols = want.column_names[:2][::-1]
    got = pa.Table.from_batches(list(f.iter_batches(batch_size=64, columns=cols)))
    assert difference(got, want.select(cols)) is None


def test_reader_exports_an_arrow_c_stream(cpu):
    f = warpread.ParquetFile(TYPES, backend=cpu)
    reader = f.reader(batch_size=128, columns=["i32"])
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.schema.names == ["i32"]
    assert difference(reader.read_all(), pq.read_table(TYPES, columns=["i32"])) is None
    # The native reader speaks the PyCapsule interface to any consumer.
    native = f._reader(None, None, 1000, None, cpu)
    assert difference(pa.table(native), pq.read_table(TYPES)) is None
    with pytest.raises(ValueError, match="already exported"):
        native.__arrow_c_stream__()


def test_parquet_metadata_matches_pyarrow():
    f = warpread.ParquetFile(TYPES)
    m = pq.ParquetFile(TYPES).metadata
    assert f.num_rows == m.num_rows
    assert f.num_row_groups == m.num_row_groups > 1
    assert f.created_by == m.created_by
    assert f.format_version in (1, 2)
    # The schema a read gives; its types are the parquet crate's Arrow
    # reader's, which keeps a Date64 column of the embedded Arrow schema
    # where pyarrow reads Date32.
    assert f.schema == f.read(limit=1).schema
    want = pq.read_schema(TYPES)
    assert f.schema.names == want.names
    for got_t, want_t in zip(f.schema.types, want.types):
        assert got_t == want_t or (got_t, want_t) == (pa.date64(), pa.date32())
    for g, rg in zip(f.row_groups, (m.row_group(i) for i in range(m.num_row_groups))):
        assert g["num_rows"] == rg.num_rows
        assert g["total_byte_size"] == rg.total_byte_size
        assert [c["path"] for c in g["columns"]] == [rg.column(i).path_in_schema for i in range(rg.num_columns)]
        assert [c["compression"] for c in g["columns"]] == [rg.column(i).compression for i in range(rg.num_columns)]
        assert [c["compressed_size"] for c in g["columns"]] == [rg.column(i).total_compressed_size for i in range(rg.num_columns)]
    assert f.compression == ("SNAPPY",)
    want_kv = {k.decode(): v.decode() for k, v in (m.metadata or {}).items()}
    assert f.metadata == want_kv


def test_orc_metadata_matches_pyarrow():
    path = TESTDATA / "orc" / "pyorc_many_stripes_v12_zstd_block1k.orc"
    f = warpread.OrcFile(path)
    o = po.ORCFile(path)
    assert f.num_rows == o.nrows
    assert f.num_stripes == o.nstripes > 1
    assert f.compression == o.compression == "ZSTD"
    assert f.compression_block_size == o.compression_size
    assert f.file_version == o.file_version
    assert f.writer == "ORC C++"
    # pyarrow prefixes the writer's name to the footer's version.
    assert f.software_version and o.software_version.endswith(f.software_version)
    assert f.row_index_stride == o.row_index_stride
    assert sum(s["num_rows"] for s in f.stripes) == o.nrows
    assert [s["first_row"] for s in f.stripes][0] == 0
    assert f.schema.remove_metadata() == o.schema.remove_metadata()
    assert isinstance(f.metadata, dict)


def test_paths_file_urls_and_pathlike(cpu):
    a = warpread.read_orc(TESTDATA / "orc" / "ints_v12_zlib.orc", backend=cpu)
    b = warpread.read_orc((TESTDATA / "orc" / "ints_v12_zlib.orc").as_uri(), backend=cpu)
    assert a.equals(b) and a.num_rows > 0


def test_missing_file_is_an_io_error_naming_it(tmp_path):
    missing = tmp_path / "missing.parquet"
    with pytest.raises(warpread.WarpreadIOError) as e:
        warpread.ParquetFile(missing)
    assert isinstance(e.value, OSError)
    assert e.value.file == str(missing)
    assert "missing.parquet" in str(e.value)


def test_unknown_url_scheme_is_refused():
    with pytest.raises(warpread.UnsupportedError, match="ftp://"):
        warpread.read_parquet("ftp://example.invalid/a.parquet")


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_damaged_files_raise_warpread_errors_with_their_place(fmt, tmp_path, cpu):
    src = TYPES if fmt == "parquet" else TESTDATA / "orc" / "types_v12_zlib.orc"
    data = bytearray(src.read_bytes())
    # Truncated: the footer is gone.
    cut = tmp_path / f"cut.{fmt}"
    cut.write_bytes(bytes(data[: len(data) // 2]))
    read = warpread.read_parquet if fmt == "parquet" else warpread.read_orc
    with pytest.raises(warpread.WarpreadError) as e:
        read(cut, backend=cpu)
    assert e.value.file == str(cut)
    # Body bytes overwritten: the footer parses, a stream or page does not
    # decode (or its metadata no longer adds up).
    bad = tmp_path / f"bad.{fmt}"
    smashed = bytearray(data)
    for i in range(64, len(data) // 2, 97):
        smashed[i] ^= 0x5A
    bad.write_bytes(bytes(smashed))
    with pytest.raises(warpread.WarpreadError) as e:
        read(bad, backend=cpu)
    assert e.value.file == str(bad) or str(bad) in str(e.value)
    assert e.value.cause


def test_device_output_needs_the_cuda_backend(cpu):
    with pytest.raises(warpread.UnsupportedError, match="device output needs the CUDA backend"):
        warpread.read_parquet(TYPES, backend=cpu, device=True)
    with pytest.raises(warpread.UnsupportedError, match="cpu"):
        next(warpread.OrcFile(ORC[0], backend=cpu).iter_batches(device=True))


def test_backends():
    assert warpread.Backend("cpu").name == "cpu"
    assert warpread.backend("auto").name in ("cpu", "cuda")
    with pytest.raises(warpread.UnsupportedError, match="tpu"):
        warpread.Backend("tpu")
    with pytest.raises(TypeError):
        warpread.backend(3)  # type: ignore[arg-type]
    if warpread.backend("auto").name == "cpu":
        # No usable device here: asking for CUDA says why.
        with pytest.raises(warpread.CudaError):
            warpread.Backend("cuda")
