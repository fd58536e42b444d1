"""Utility functions: ``all, any, diff``."""

from __future__ import annotations

import operator
from typing import Any

from cubego.array_api.manipulation_functions import _axes, concat
from cubego.array_api.statistical_functions import _reduce
from cubego.core.array import Array, elemwise

__all__ = ["all", "any", "diff"]


def _logical(func: str, x: Any, axis: Any, keepdims: bool, split_every: Any) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{func}: expected a cubego Array, got {type(x).__name__}")
    return _reduce(func, x, axis, keepdims, None, split_every)


def all(  # noqa: A001 - the Array API name
    x: Array, /, *, axis: Any = None, keepdims: bool = False, split_every: Any = None
) -> Array:
    """Whether every element along *axis* is true (non-zero; NaN counts as true)."""
    return _logical("all", x, axis, keepdims, split_every)


def any(  # noqa: A001 - the Array API name
    x: Array, /, *, axis: Any = None, keepdims: bool = False, split_every: Any = None
) -> Array:
    """Whether any element along *axis* is true (non-zero; NaN counts as true)."""
    return _logical("any", x, axis, keepdims, split_every)


def diff(
    x: Array,
    /,
    *,
    axis: int = -1,
    n: int = 1,
    prepend: Array | None = None,
    append: Array | None = None,
) -> Array:
    """The *n*-th forward difference along *axis*, after joining *prepend* and *append*.

    Booleans differ by ``not_equal`` (as in numpy); other dtypes by ``subtract``.
    """
    if not isinstance(x, Array):
        raise TypeError(f"diff: expected a cubego Array, got {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError("diff needs an array with at least one dimension")
    (axis,) = _axes(axis, x.ndim, "diff")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        for p in parts:
            if not isinstance(p, Array):
                raise TypeError(f"diff: prepend and append must be cubego arrays, got {p!r}")
        x = concat(parts, axis=axis)
    func = "not_equal" if x.dtype.kind == "b" else "subtract"
    lead = (slice(None),) * axis
    for _ in range(n):
        length = x.shape[axis]
        if length == 0:
            break
        x = elemwise(func, x[lead + (slice(1, None),)], x[lead + (slice(None, length - 1),)])
    return x
