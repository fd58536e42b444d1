"""Searching functions: ``argmax, argmin, count_nonzero, nonzero, searchsorted, where``."""

from __future__ import annotations

import builtins
import operator
from typing import Any

from cubego.array_api.creation_functions import asarray
from cubego.array_api.indexing_functions import take
from cubego.array_api.statistical_functions import _split_every
from cubego.array_api.statistical_functions import sum as sum_
from cubego.core.array import Array, apply, elemwise, is_scalar, select

__all__ = ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where"]


def _check(x: Any, what: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a cubego Array, got {type(x).__name__}")
    return x


def _argreduce(func: str, x: Array, axis: Any, keepdims: bool, split_every: Any) -> Array:
    _check(x, func)
    args = {
        "func": func,
        "axis": None if axis is None else operator.index(axis),
        "keepdims": builtins.bool(keepdims),
        "split_every": _split_every(split_every),
    }
    return apply("argreduce", args, [x])


def argmax(
    x: Array, /, *, axis: int | None = None, keepdims: bool = False, split_every: Any = None
) -> Array:
    """Index of the first maximum along *axis* (of the flattened array if None); NaN is largest.

    One tree reduction of (index, value) records; *split_every* is the fan-in as for
    :func:`sum`.
    """
    return _argreduce("argmax", x, axis, keepdims, split_every)


def argmin(
    x: Array, /, *, axis: int | None = None, keepdims: bool = False, split_every: Any = None
) -> Array:
    """Index of the first minimum along *axis* (of the flattened array if None); NaN is smallest."""
    return _argreduce("argmin", x, axis, keepdims, split_every)


def count_nonzero(
    x: Array, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False
) -> Array:
    """Number of non-zero elements along *axis* (default integer dtype)."""
    _check(x, "count_nonzero")
    nonzero_ = x if x.dtype.kind == "b" else elemwise("not_equal", x, 0)
    return sum_(nonzero_, axis=axis, keepdims=keepdims, dtype="int64")


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """Not supported: the number of non-zero elements is data-dependent."""
    _check(x, "nonzero")
    raise NotImplementedError(
        "nonzero returns arrays whose length depends on the data, which cubego's lazy plans "
        "cannot size; use count_nonzero or where instead"
    )


def searchsorted(
    x1: Array,
    x2: Array | int | float,
    /,
    *,
    side: str = "left",
    sorter: Array | None = None,
) -> Array:
    """Indices where the elements of *x2* would be inserted into the sorted 1-d *x1*.

    With *sorter* (indices that sort *x1*), *x1* is sorted through it first.
    """
    _check(x1, "searchsorted")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        x1 = take(x1, _check(sorter, "searchsorted"), axis=0)
    if is_scalar(x2):
        x2 = asarray(x2, dtype=x1.dtype, spec=x1.spec)
    _check(x2, "searchsorted")
    return apply("searchsorted", {"side": side}, [x1, x2])


def where(condition: Array, x1: Any, x2: Any, /) -> Array:
    """Elements of *x1* where *condition* is true, else of *x2* (broadcast; scalars allowed)."""
    _check(condition, "where")
    for x in (x1, x2):
        if not (isinstance(x, Array) or is_scalar(x)):
            raise TypeError(f"where: x1 and x2 must be arrays or scalars, got {type(x).__name__}")
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        # The standard: "at least one of x1 and x2 must be an array" (Cubed refuses too);
        # two scalars would leave the result dtype undefined.
        raise TypeError(
            "where: At least one of x1 and x2 must be an array, got two scalars "
            f"({type(x1).__name__} and {type(x2).__name__})"
        )
    return select(condition, x1, x2)
