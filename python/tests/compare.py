"""Comparing warpread's tables with pyarrow's: by value, dictionaries
decoded, NaN equal to NaN."""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

import pyarrow as pa
import pytest

import warpread


def _plain(a: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(a.type):
        return a.cast(a.type.value_type)
    return a


def _storage(a: pa.ChunkedArray) -> pa.ChunkedArray:
    """Timestamps and durations as their integers, so that values Python's
    datetime cannot hold still compare."""
    if pa.types.is_timestamp(a.type) or pa.types.is_duration(a.type):
        return a.cast(pa.int64())
    return a


def _same(x: Any, y: Any) -> bool:
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
        return len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y))
    return x == y


def difference(got: pa.Table, want: pa.Table) -> Optional[str]:
    """The first difference between two tables, or None: the same column
    names, row counts and values (a column whose type differs is cast to
    the expected type first, when it casts)."""
    if got.column_names != want.column_names:
        return f"columns {got.column_names}, expected {want.column_names}"
    if got.num_rows != want.num_rows:
        return f"{got.num_rows} rows, expected {want.num_rows}"
    for name in want.column_names:
        g, w = _plain(got.column(name)), _plain(want.column(name))
        if g.type != w.type:
            try:
                g = g.cast(w.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                return f"column {name}: type {g.type}, expected {w.type} ({e})"
        if g.equals(w):
            continue
        gl, wl = _storage(g).to_pylist(), _storage(w).to_pylist()
        for i, (a, b) in enumerate(zip(gl, wl)):
            if not _same(a, b):
                return f"column {name} row {i}: {a!r}, expected {b!r}"
    return None


def _key(v: Any) -> tuple:
    if isinstance(v, float) and math.isnan(v):
        return (0, "nan")
    if v is None:
        return (1, "")
    return (2, repr(v))


def same_rows(got: pa.Table, want: pa.Table) -> bool:
    """Whether two query results hold the same rows, in any order (a query
    may leave ties unordered)."""
    if got.equals(want):
        return True

    def rows(t: pa.Table) -> list:
        return sorted(tuple(_key(v) for v in r.values()) for r in t.to_pylist())

    return rows(got) == rows(want)


def check_remote_read(read: Callable[..., pa.Table], path: Any, url: str, backend: Any) -> None:
    """``read(url)`` equals ``read(path)``, the same file read locally; a
    file warpread refuses is refused from ``url`` with the same error
    class."""
    try:
        want = read(path, backend=backend)
    except warpread.errors.WarpreadError as e:
        with pytest.raises(type(e)):
            read(url, backend=backend)
        return
    got = read(url, backend=backend)
    assert difference(got, want) is None, difference(got, want)
