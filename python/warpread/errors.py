"""The exceptions warpread raises.

Every error from reading carries, besides its message, the file it
concerns (``file``), the place in it (``location``: a dict with some of
``file``, ``stripe``, ``row_group``, ``stream``, ``column``, ``page_index``,
``chunk`` and ``offset``) and what went wrong there (``cause``).
"""

from __future__ import annotations

from typing import Any, Dict, Optional

__all__ = [
    "WarpreadError",
    "CorruptDataError",
    "FileFormatError",
    "ArrowConversionError",
    "CudaError",
    "HostMemoryError",
    "MismatchError",
    "UnsupportedError",
    "WarpreadIOError",
    "QueryError",
]


class WarpreadError(Exception):
    """Base class of warpread's errors."""

    #: The file or object the error concerns, if any.
    file: Optional[str]
    #: Where in the file: the fields of the location that are known.
    location: Dict[str, Any]
    #: What went wrong, without the place.
    cause: Optional[str]

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.file = None
        self.location = {}
        self.cause = None


class CorruptDataError(WarpreadError):
    """The data of a file does not follow its format (a stream or page
    fails to decode, or the metadata lies about sizes)."""


class FileFormatError(WarpreadError):
    """A file's metadata (footer, stripe footer, page header) does not follow
    its format."""


class ArrowConversionError(WarpreadError):
    """Building Arrow arrays from decoded data failed."""


class CudaError(WarpreadError):
    """The CUDA backend was asked for but cannot run, or a driver call or
    kernel compilation failed."""


class HostMemoryError(WarpreadError, MemoryError):
    """A read would hold more host memory than its limit allows (sizes a
    file claims, checked before they are allocated)."""


class MismatchError(WarpreadError):
    """Two backends disagreed where a read was verified."""


class UnsupportedError(WarpreadError):
    """A request warpread does not serve: an unknown column, a filter it
    cannot apply, a feature of a file it does not read (yet)."""


class WarpreadIOError(WarpreadError, OSError):
    """Reading a local file or an object store failed."""


class QueryError(WarpreadError):
    """DataFusion failed while warpread registered or planned a table."""
