"""warpread tables for DataFusion in Python (the ``datafusion`` package 55).

::

    from datafusion import SessionContext
    from warpread.datafusion import table_provider

    ctx = SessionContext()
    ctx.register_table("lineitem", table_provider("tpch/lineitem.parquet"))
    ctx.sql("SELECT count(*) FROM lineitem WHERE l_quantity < 5").show()

The provider crosses into DataFusion through its FFI: the host session
plans the query and hands each scan its projection, filters and limit;
warpread reads the files. Filters prune stripes, row groups and pages by
their statistics, and DataFusion still applies them to the rows.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, Union

from . import backend as _backend
from ._warpread import TableProvider as TableProvider

__all__ = ["TableProvider", "table_provider"]


def _setting(value: Union[str, bool, int, float]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def table_provider(
    path_or_url: Union[str, "os.PathLike[str]"],
    format: Optional[str] = None,
    *,
    options: Optional[Mapping[str, Union[str, bool, int, float]]] = None,
    backend: Union[str, object] = "auto",
    device: bool = False,
) -> TableProvider:
    """A table of ORC, Parquet or GSST files read by warpread, for
    ``SessionContext.register_table(name, provider)``.

    ``path_or_url``: a file, a folder of files, a glob, or their URL.
    ``format``: ``"parquet"``, ``"orc"`` or ``"gsst"`` (default: from the
    extension, or the files of a local folder). ``options``: ``warpread.*``
    settings of the table's scans (``{"warpread.backend": "cpu"}``; the
    keys of docs/options.md), an unknown key being an error naming it.
    ``backend``: as for :func:`warpread.read_parquet`. ``device=True``
    raises :class:`NotImplementedError`: DataFusion's operators read host
    memory, so a table's scans hand it host Arrow (device output is
    :func:`warpread.read_parquet`'s ``device=True``).
    """
    if device:
        raise NotImplementedError(
            "a DataFusion table reads into host memory, where DataFusion's operators run; "
            "for Arrow left on the GPU use warpread.read_parquet/read_orc(..., device=True)"
        )
    settings = [(str(k), _setting(v)) for k, v in (options or {}).items()]
    return TableProvider(
        os.fspath(path_or_url),
        _backend(backend),  # type: ignore[arg-type]
        format=format,
        options=settings,
    )
