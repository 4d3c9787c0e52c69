"""warpread: ORC and Parquet files read into Arrow, decoded on the GPU when
one is usable (CUDA kernels compiled at run time) or by the CPU reference
decoders, which give identical results.

Reads return :class:`pyarrow.Table` (or stream :class:`pyarrow.RecordBatch`)
in host memory, or with ``device=True`` a :class:`DeviceTable` left in GPU
memory (Arrow C Device Data Interface, DLPack columns)::

    import warpread
    table = warpread.read_parquet("lineitem.parquet",
                                  columns=["l_orderkey", "l_quantity"],
                                  filter=[("l_quantity", "<", 5)])

:class:`ParquetFile` and :class:`OrcFile` give a file's metadata and stream
its batches; :mod:`warpread.datafusion` exposes tables to DataFusion. Paths
may be local, ``file://``, or object store URLs (``s3://``, ``gs://``,
``az://``, ``http(s)://``) whose credentials come from the environment as
datafusion-cli takes them.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import _cuda, _filters
from ._warpread import Backend as Backend
from ._warpread import DeviceColumn as DeviceColumn
from ._warpread import NativeDeviceBatch as DeviceBatch
from ._warpread import __version__ as __version__
from ._warpread import open_file as _open_file
from . import errors as _errors
from .errors import (
    ArrowConversionError,
    CorruptDataError,
    CudaError,
    FileFormatError,
    HostMemoryError,
    MismatchError,
    QueryError,
    UnsupportedError,
    WarpreadError,
    WarpreadIOError,
)

__all__ = [
    "Backend",
    "DeviceBatch",
    "DeviceColumn",
    "DeviceTable",
    "ParquetFile",
    "OrcFile",
    "read_parquet",
    "read_orc",
    "backend",
    *_errors.__all__,
]

#: A path, a ``file://`` or object store URL.
Source = Union[str, "os.PathLike[str]"]
#: ``"auto"``, ``"cpu"``, ``"cuda"`` or a :class:`Backend`.
BackendLike = Union[str, Backend]

#: Rows per batch of a host read unless it asks otherwise (a device read's
#: batches are whole read groups unless it asks).
DEFAULT_BATCH_SIZE = 65536


def backend(kind: BackendLike = "auto") -> Backend:
    """The :class:`Backend` that ``kind`` names. A string creates one
    (``"cuda"`` and ``"auto"`` load NVRTC from the ``nvidia-cuda-nvrtc``
    wheel first when it is installed); a :class:`Backend` is returned as
    is. Create one and pass it to every read to share its CUDA context and
    compiled kernels."""
    if isinstance(kind, Backend):
        return kind
    if not isinstance(kind, str):
        raise TypeError(f"backend {kind!r}: expected 'auto', 'cpu', 'cuda' or a warpread.Backend")
    if kind != "cpu":
        _cuda.preload_nvrtc()
    return Backend(kind)


_resolve_backend = backend


def _source(source: Source) -> str:
    return os.fspath(source)


class _File:
    """What :class:`ParquetFile` and :class:`OrcFile` share."""

    _format = ""

    def __init__(self, source: Source, *, backend: BackendLike = "auto") -> None:
        self._native = _open_file(self._format, _source(source))
        self._backend = backend
        self._description: Optional[Dict[str, Any]] = None

    def _describe(self) -> Dict[str, Any]:
        if self._description is None:
            self._description = self._native.describe()
        return self._description

    @property
    def path(self) -> str:
        """The path or URL the file was opened by."""
        return self._native.name

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema a read of every column gives."""
        return _import(pa.schema, self._native.schema, self.path)

    @property
    def num_rows(self) -> int:
        """Rows in the file."""
        return self._native.num_rows

    def _reader(self, columns, filter, batch_size, limit, backend, device=False, group_bytes=None):
        b = _resolve_backend(self._backend if backend is None else backend)
        read = self._native.read_device if device else self._native.read
        return read(
            b,
            columns=None if columns is None else list(columns),
            filters=_filters.normalize(filter),
            batch_size=batch_size,
            limit=limit,
            group_bytes=group_bytes,
        )

    def iter_batches(
        self,
        batch_size: Optional[int] = None,
        columns: Optional[Sequence[str]] = None,
        filter: Optional[_filters.Filter] = None,
        *,
        limit: Optional[int] = None,
        backend: Optional[BackendLike] = None,
        device: bool = False,
        group_bytes: Optional[int] = None,
    ) -> Iterator[Any]:
        """Streams the file's batches of at most ``batch_size`` rows, in file
        order, reading one group of stripes or row groups at a time (never
        the whole file): ``columns`` (top-level, in this order; default
        all), rows matching ``filter`` (see :func:`read_parquet`), at most
        ``limit`` rows. ``backend`` overrides the file's. With
        ``device=True`` (CUDA backend only) the batches stay in GPU memory:
        :class:`DeviceBatch` objects exposing ``__arrow_c_device_array__``."""
        reader = self._reader(columns, filter, batch_size, limit, backend, device, group_bytes)
        if device:
            return iter(reader)
        return _batches(reader, self.path)

    def reader(
        self,
        batch_size: Optional[int] = None,
        columns: Optional[Sequence[str]] = None,
        filter: Optional[_filters.Filter] = None,
        *,
        limit: Optional[int] = None,
        backend: Optional[BackendLike] = None,
        device: bool = False,
        group_bytes: Optional[int] = None,
    ) -> Any:
        """The same read as :meth:`iter_batches`, as a
        :class:`pyarrow.RecordBatchReader` over the Arrow C stream interface
        (errors then surface as pyarrow's exceptions carrying warpread's
        message). With ``device=True``: a reader of device batches exposing
        ``__arrow_c_device_stream__`` (consumed by the first export)."""
        reader = self._reader(columns, filter, batch_size, limit, backend, device, group_bytes)
        if device:
            return reader
        return pa.RecordBatchReader.from_stream(reader)

    def read(
        self,
        columns: Optional[Sequence[str]] = None,
        filter: Optional[_filters.Filter] = None,
        *,
        limit: Optional[int] = None,
        batch_size: Optional[int] = None,
        backend: Optional[BackendLike] = None,
        device: bool = False,
        group_bytes: Optional[int] = None,
    ) -> Any:
        """Reads the file (``columns``, ``filter``, ``limit`` as for
        :meth:`iter_batches`) into a :class:`pyarrow.Table`, or with
        ``device=True`` (CUDA backend only) into a :class:`DeviceTable`
        left in GPU memory."""
        reader = self._reader(columns, filter, batch_size, limit, backend, device, group_bytes)
        if device:
            return DeviceTable(reader.read_all(), self.path)
        schema = _import(pa.schema, reader.schema, self.path)
        return pa.Table.from_batches(list(_batches(reader, self.path, schema)), schema=schema)

    def __repr__(self) -> str:
        return f"<warpread.{type(self).__name__} {self.path} ({self.num_rows} rows)>"


def _import(make: Any, native: Any, path: str) -> Any:
    """``make(native)``: pyarrow importing what warpread exports, its
    refusal (a type pyarrow does not take, such as a decimal wider than
    76 digits) raised as :class:`ArrowConversionError` naming the file."""
    try:
        return make(native)
    except pa.ArrowException as e:
        err = ArrowConversionError(f"{path}: pyarrow does not take what warpread read: {e}")
        err.file, err.cause = path, str(e)
        raise err from e


def _batches(reader: Any, path: str, schema: Optional[pa.Schema] = None) -> Iterator[pa.RecordBatch]:
    """The batches of a native reader as pyarrow batches, under the read's
    schema (the batch export carries no schema-level metadata)."""
    schema = _import(pa.schema, reader.schema, path) if schema is None else schema
    for native in reader:
        batch = _import(pa.record_batch, native, path)
        if schema.metadata:
            batch = batch.replace_schema_metadata(schema.metadata)
        yield batch


class DeviceTable:
    """A read whose columns stay in GPU memory (``device=True``).

    Consumers on the GPU take it without a copy: the whole table through
    the Arrow PyCapsule interface's device stream
    (``__arrow_c_device_stream__``), one batch through
    ``batch(i).__arrow_c_device_array__()``, and a fixed-width or boolean
    column through DLPack: ``torch.from_dlpack(t.column("x"))``,
    ``cupy.from_dlpack(t.column("x"))``. DLPack has no validity bitmap, so
    a column's nulls come separately as ``t.column("x").validity``, one
    byte per row (booleans are one byte per row too); values at null rows
    are unspecified.
    """

    def __init__(self, native: Any, path: str) -> None:
        self._native = native
        self._path = path

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the table."""
        return _import(pa.schema, self._native.schema, self._path)

    @property
    def num_rows(self) -> int:
        """Rows in the table."""
        return self._native.num_rows

    @property
    def num_batches(self) -> int:
        """Batches (read groups cut to the batch size) in the table."""
        return self._native.num_batches

    @property
    def device_id(self) -> int:
        """The CUDA device ordinal holding the table."""
        return self._native.device_id

    def batch(self, i: int) -> DeviceBatch:
        """The ``i``-th batch, exposing ``__arrow_c_device_array__``."""
        return self._native.batch(i)

    def column(self, column: Union[int, str]) -> DeviceColumn:
        """A fixed-width or boolean column (by index or name) as a DLPack
        tensor over device memory, its batches' chunks joined; its
        ``validity`` is a tensor of one byte per row (1 valid), or ``None``
        when no row is null."""
        return self._native.column(column)

    def device_bytes(self) -> Dict[str, int]:
        """Device bytes of the table's buffers by where they came from:
        ``decoded`` (left where the GPU decoders wrote them), ``uploaded``
        (built on the host: validity from levels, offsets, decoders without
        a kernel), ``derived`` (made on the device from other buffers)."""
        return dict(self._native.device_bytes())

    def to_arrow(self) -> pa.Table:
        """A copy of the table in host memory."""
        schema = self.schema
        batches = [_import(pa.record_batch, b, self._path) for b in self._native.to_host()]
        if schema.metadata:
            batches = [b.replace_schema_metadata(schema.metadata) for b in batches]
        return pa.Table.from_batches(batches, schema=schema)

    def __arrow_c_schema__(self) -> object:
        return self._native.__arrow_c_schema__()

    def __arrow_c_device_stream__(self, requested_schema: Optional[object] = None, **kwargs: Any) -> object:
        return self._native.__arrow_c_device_stream__(requested_schema, **kwargs)

    def __len__(self) -> int:
        return self.num_rows

    def __repr__(self) -> str:
        return (
            f"<warpread.DeviceTable {self._path}: {self.num_rows} rows, "
            f"{len(self.schema)} columns, cuda:{self.device_id}>"
        )


class ParquetFile(_File):
    """A Parquet file with its footer parsed: metadata, and reads of it.

    ``source`` is a path or URL; ``backend`` is where its reads decode
    unless a read names another.
    """

    _format = "parquet"

    @property
    def num_row_groups(self) -> int:
        """Row groups in the file."""
        return len(self._describe()["row_groups"])

    @property
    def row_groups(self) -> List[Dict[str, Any]]:
        """Per row group: ``index``, ``num_rows``, ``total_byte_size``,
        ``compressed_size``, ``file_offset`` and ``columns`` (per column
        chunk: ``path``, ``physical_type``, ``compression``,
        ``compressed_size``, ``uncompressed_size``, ``null_count``)."""
        return self._describe()["row_groups"]

    @property
    def compression(self) -> Tuple[str, ...]:
        """The codecs of the file's column chunks (``"SNAPPY"``, ``"GZIP"``,
        ``"ZSTD"``, ...), sorted."""
        return tuple(self._describe()["compression"])

    @property
    def created_by(self) -> Optional[str]:
        """The writer the footer names."""
        return self._describe()["created_by"]

    @property
    def format_version(self) -> int:
        """The footer's format version."""
        return self._describe()["format_version"]

    @property
    def metadata(self) -> Dict[str, Optional[str]]:
        """The footer's key-value metadata."""
        return dict(self._describe()["metadata"])


class OrcFile(_File):
    """An ORC file with its tail parsed: metadata, and reads of it.

    ``source`` is a path or URL; ``backend`` is where its reads decode
    unless a read names another.
    """

    _format = "orc"

    @property
    def num_stripes(self) -> int:
        """Stripes in the file."""
        return len(self._describe()["stripes"])

    @property
    def stripes(self) -> List[Dict[str, Any]]:
        """Per stripe: ``index``, ``offset``, ``index_length``,
        ``data_length``, ``footer_length``, ``num_rows``, ``first_row``."""
        return self._describe()["stripes"]

    @property
    def compression(self) -> str:
        """The file's codec (``"NONE"``, ``"ZLIB"``, ``"SNAPPY"``, ``"LZO"``,
        ``"LZ4"``, ``"ZSTD"``)."""
        return self._describe()["compression"]

    @property
    def compression_block_size(self) -> int:
        """Most bytes a compressed chunk holds once decompressed."""
        return self._describe()["compression_block_size"]

    @property
    def file_version(self) -> str:
        """The format version, e.g. ``"0.12"``."""
        return self._describe()["file_version"]

    @property
    def writer(self) -> Optional[str]:
        """The writer implementation the footer names (``"ORC Java"``,
        ``"ORC C++"``, ...)."""
        return self._describe()["writer"]

    @property
    def writer_version(self) -> Optional[int]:
        """The writer's version number from the postscript."""
        return self._describe()["writer_version"]

    @property
    def software_version(self) -> Optional[str]:
        """The writing software's version as the footer gives it (``"2.3.1"``;
        pyarrow prefixes the writer's name), when it has one."""
        return self._describe()["software_version"]

    @property
    def row_index_stride(self) -> Optional[int]:
        """Rows per row-index entry."""
        return self._describe()["row_index_stride"]

    @property
    def metadata(self) -> Dict[str, Optional[bytes]]:
        """The footer's user metadata."""
        return dict(self._describe()["metadata"])


def read_parquet(
    source: Source,
    columns: Optional[Sequence[str]] = None,
    filter: Optional[_filters.Filter] = None,
    backend: BackendLike = "auto",
    *,
    limit: Optional[int] = None,
    batch_size: Optional[int] = None,
    device: bool = False,
    group_bytes: Optional[int] = None,
) -> Any:
    """Reads a Parquet file into a :class:`pyarrow.Table`.

    ``columns``: top-level columns, in this order (default all).
    ``filter``: rows to keep, a conjunction of ``(column, op, value)``
    comparisons as pyarrow's ``filters=`` writes one (``op`` one of ``=``,
    ``==``, ``<``, ``<=``, ``>``, ``>=``; values ``bool``, ``int``,
    ``float``, ``str`` or ``datetime.date`` against integer, floating
    point, string, boolean and date columns); row groups and pages that
    statistics rule out are not read, and every other row failing it is
    dropped. Rows whose column is null fail every comparison.
    ``backend``: ``"auto"`` (CUDA when usable, else the CPU), ``"cpu"``,
    ``"cuda"``, or a :class:`Backend`. ``limit``: at most this many rows.
    ``batch_size``: most rows per batch (default 65,536; a device read's
    batches default to whole read groups). ``group_bytes``: compressed
    bytes of the row groups or stripes decoded together, what a read holds
    in host memory at once (default: the backend's streaming group, 32 MiB
    on CUDA and 48 MiB on the CPU; a device read's default is the backend's
    whole-read group, 1 GiB on CUDA).
    ``device=True``: the result stays in GPU memory as a
    :class:`DeviceTable` (Arrow C Device Data Interface, DLPack columns);
    it needs the CUDA backend and raises :class:`UnsupportedError`
    otherwise.
    """
    return ParquetFile(source, backend=backend).read(
        columns, filter, limit=limit, batch_size=batch_size, device=device, group_bytes=group_bytes
    )


def read_orc(
    source: Source,
    columns: Optional[Sequence[str]] = None,
    filter: Optional[_filters.Filter] = None,
    backend: BackendLike = "auto",
    *,
    limit: Optional[int] = None,
    batch_size: Optional[int] = None,
    device: bool = False,
    group_bytes: Optional[int] = None,
) -> Any:
    """Reads an ORC file into a :class:`pyarrow.Table`; the arguments are
    :func:`read_parquet`'s (stripes and row-index groups are what
    statistics prune)."""
    return OrcFile(source, backend=backend).read(
        columns, filter, limit=limit, batch_size=batch_size, device=device, group_bytes=group_bytes
    )
