"""Statistical functions: tree reductions, variances and cumulative scans in the library.

All reductions accept Cubed's ``split_every`` (how many blocks one task folds).
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

from cubego.core import dtypes as _dtypes
from cubego.core.array import Array, apply

__all__ = [
    "cumulative_prod",
    "cumulative_sum",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
]


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


def _variance(
    func: str, x: Array, axis: Any, correction: Any, keepdims: bool, split_every: Any
) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{func}: expected a cubego Array, got {type(x).__name__}")
    if isinstance(correction, builtins.bool) or not isinstance(correction, (int, float)):
        raise TypeError(f"{func}: correction must be an int or a float, got {correction!r}")
    args = {
        "func": func,
        "axis": _axis(axis),
        "keepdims": builtins.bool(keepdims),
        "correction": float(correction),
        "dtype": None,
        "split_every": _split_every(split_every),
    }
    return apply("var", args, [x])


def var(
    x: Array,
    /,
    *,
    axis: Any = None,
    correction: int | float = 0.0,
    keepdims: bool = False,
    split_every: Any = None,
    ddof: int | float | None = None,
) -> Array:
    """Variance over *axis* with *correction* degrees of freedom removed.

    One pass of (count, total, M2) records (the total about a shift, the block's
    mean) merged with Chan et al.'s update, which keeps full precision for data far
    from zero; complex data carries records of its real and imaginary parts. *ddof*
    is numpy's name for *correction* (xarray passes it).
    """
    correction = correction if ddof is None else ddof
    return _variance("var", x, axis, correction, keepdims, split_every)


def std(
    x: Array,
    /,
    *,
    axis: Any = None,
    correction: int | float = 0.0,
    keepdims: bool = False,
    split_every: Any = None,
    ddof: int | float | None = None,
) -> Array:
    """Standard deviation over *axis* (the square root of :func:`var`); *ddof* is numpy's name
    for *correction*."""
    correction = correction if ddof is None else ddof
    return _variance("std", x, axis, correction, keepdims, split_every)


def _cumulative(func: str, x: Array, axis: Any, dtype: Any, include_initial: bool) -> Array:
    name = "cumulative_sum" if func == "cumsum" else "cumulative_prod"
    if not isinstance(x, Array):
        raise TypeError(f"{name}: expected a cubego Array, got {type(x).__name__}")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(
                f"{name}: axis is required for an array of dimension {x.ndim} (only 1-d arrays "
                "may omit it)"
            )
        axis = 0
    args = {
        "func": func,
        "axis": operator.index(axis),
        "dtype": None if dtype is None else _dtypes.name(dtype),
        "include_initial": builtins.bool(include_initial),
    }
    return apply("cumulative", args, [x])


def cumulative_sum(
    x: Array, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Array:
    """Cumulative sum along *axis* (optional for 1-d arrays); *include_initial* prepends 0."""
    return _cumulative("cumsum", x, axis, dtype, include_initial)


def cumulative_prod(
    x: Array, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Array:
    """Cumulative product along *axis* (optional for 1-d arrays); *include_initial* prepends 1."""
    return _cumulative("cumprod", x, axis, dtype, include_initial)
