"""Sorting functions: ``sort`` and ``argsort`` along an axis (stable, NaNs last).

Each lane is sorted within one task, so the library first gathers the axis into
one chunk and refuses, with a ``ValueError`` naming the sizes, when a block
spanning the axis would not fit ``allowed_mem``.
"""

from __future__ import annotations

import operator
from typing import Any

from cubego.core.array import Array, apply

__all__ = ["argsort", "sort"]


def _sort(func: str, x: Any, axis: int, descending: bool) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{func}: expected a cubego Array, got {type(x).__name__}")
    return apply(func, {"axis": operator.index(axis), "descending": bool(descending)}, [x])


def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """*x* sorted along *axis*; the sort is always stable, whatever *stable* says."""
    return _sort("sort", x, axis, descending)


def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Indices (int64) that sort *x* along *axis*; stable: ties keep their order."""
    return _sort("argsort", x, axis, descending)
