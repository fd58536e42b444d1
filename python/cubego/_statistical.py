"""Reductions: ``sum, prod, mean, min, max`` (tree reductions in the library)."""

from __future__ import annotations

import builtins
import operator
from typing import Any

from . import _dtypes
from .array import Array, apply

__all__ = ["max", "mean", "min", "prod", "sum"]


def _axis(axis: Any) -> list[int] | None:
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return [operator.index(a) for a in axis]
    return [operator.index(axis)]


def _split_every(split_every: Any) -> Any:
    if split_every is None:
        return None
    if isinstance(split_every, dict):
        return {str(operator.index(k)): operator.index(v) for k, v in split_every.items()}
    return operator.index(split_every)


def _reduce(func: str, x: Array, axis: Any, keepdims: bool, dtype: Any, split_every: Any) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{func}: expected a cubego Array, got {type(x).__name__}")
    args = {
        "func": func,
        "axis": _axis(axis),
        "keepdims": builtins.bool(keepdims),
        "dtype": None if dtype is None else _dtypes.name(dtype),
        "split_every": _split_every(split_every),
    }
    return apply("reduce", args, [x])


def sum(
    x: Array,
    /,
    *,
    axis: Any = None,
    dtype: Any = None,
    keepdims: bool = False,
    split_every: Any = None,
) -> Array:
    """Sum over *axis* (all axes by default); integer sums use the default integer dtype."""
    return _reduce("sum", x, axis, keepdims, dtype, split_every)


def prod(
    x: Array,
    /,
    *,
    axis: Any = None,
    dtype: Any = None,
    keepdims: bool = False,
    split_every: Any = None,
) -> Array:
    """Product over *axis* (all axes by default)."""
    return _reduce("prod", x, axis, keepdims, dtype, split_every)


def mean(
    x: Array,
    /,
    *,
    axis: Any = None,
    dtype: Any = None,
    keepdims: bool = False,
    split_every: Any = None,
) -> Array:
    """Arithmetic mean over *axis* of a floating-point array."""
    return _reduce("mean", x, axis, keepdims, dtype, split_every)


def min(
    x: Array,
    /,
    *,
    axis: Any = None,
    dtype: Any = None,
    keepdims: bool = False,
    split_every: Any = None,
) -> Array:
    """Minimum over *axis*; an empty reduction is an error."""
    return _reduce("min", x, axis, keepdims, dtype, split_every)


def max(
    x: Array,
    /,
    *,
    axis: Any = None,
    dtype: Any = None,
    keepdims: bool = False,
    split_every: Any = None,
) -> Array:
    """Maximum over *axis*; an empty reduction is an error."""
    return _reduce("max", x, axis, keepdims, dtype, split_every)
