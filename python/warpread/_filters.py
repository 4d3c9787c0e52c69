"""The ``filter=`` argument of warpread's reads, checked and classified for
the native module."""

from __future__ import annotations

import datetime
import numbers
from typing import Any, List, Sequence, Tuple, Union

#: One comparison: ``(column, op, value)`` with ``op`` one of ``=``, ``==``,
#: ``<``, ``<=``, ``>``, ``>=``.
Term = Tuple[str, str, Any]
#: A conjunction of comparisons (a single one may be given bare; a list
#: holding one list, pyarrow's disjunctive form with one conjunction, is
#: taken too).
Filter = Union[Term, Sequence[Term], Sequence[Sequence[Term]]]

_EPOCH = datetime.date(1970, 1, 1)


def _classify(column: str, value: Any) -> Tuple[str, Any]:
    if isinstance(value, bool):
        return "bool", value
    if isinstance(value, numbers.Integral):
        return "int", int(value)
    if isinstance(value, numbers.Real):
        return "float", float(value)
    if isinstance(value, str):
        return "str", value
    if isinstance(value, datetime.datetime):
        raise TypeError(
            f"filter on {column!r}: timestamp values are not supported "
            "(warpread filters integer, floating point, string, boolean and date columns)"
        )
    if isinstance(value, datetime.date):
        return "date", (value - _EPOCH).days
    raise TypeError(
        f"filter on {column!r}: value {value!r} of type {type(value).__name__} "
        "(expected bool, int, float, str or datetime.date)"
    )


def normalize(filter: Any) -> List[Tuple[str, str, str, Any]]:
    """``filter`` as ``(column, op, kind, value)`` tuples for the native
    module, whose ``kind`` says how to read ``value``."""
    if filter is None:
        return []
    if isinstance(filter, tuple):
        filter = [filter]
    terms = list(filter)
    if terms and all(isinstance(t, list) for t in terms):
        if len(terms) > 1:
            raise ValueError(
                "filter: an OR of conjunctions (a list of lists) is not supported; "
                "give one conjunction: [(column, op, value), ...]"
            )
        terms = list(terms[0])
    out = []
    for t in terms:
        if not (isinstance(t, (tuple, list)) and len(t) == 3):
            raise TypeError(f"filter term {t!r}: expected (column, op, value)")
        column, op, value = t
        if not isinstance(column, str) or not isinstance(op, str):
            raise TypeError(f"filter term {t!r}: column and op are strings")
        kind, v = _classify(column, value)
        out.append((column, op, kind, v))
    return out
