"""Cubed's NaN-ignoring functions: ``nansum, nanmean, nanmax, nanmedian, ...``.

``nanmean``, ``nanvar`` and ``nanstd`` of real data are one tree reduction of
(count, total, M2) records (the total about a shift) that leave NaNs out;
``nanargmax`` and ``nanargmin`` one of (index, value) records. The others compose
library ops: NaNs are replaced by the reduction's identity
(``where(isnan(x), identity, x)``) inside the same fused task, and counts of non-NaN
elements come from a sum of ``~isnan(x)``. As in numpy, a
slice of only NaNs gives NaN (``nanmax``, ``nanmin``, ``nanmean``, ``nanvar``,
``nanstd``, ``nanmedian``), 0 (``nansum``) or 1 (``nanprod``), and makes
``nanargmax`` and ``nanargmin`` raise ``ValueError`` when computed. Integer and
boolean arrays have no NaNs: the plain reduction applies.
"""

from __future__ import annotations

from typing import Any

from cubego.array_api import statistical_functions as _statistical
from cubego.array_api.creation_functions import full
from cubego.array_api.indexing_functions import take_along_axis
from cubego.array_api.manipulation_functions import reshape
from cubego.array_api.searching_functions import _argreduce, where
from cubego.array_api.sorting_functions import sort
from cubego.array_api.statistical_functions import _axis, _split_every, mean, var
from cubego.array_api.statistical_functions import sum as sum_
from cubego.array_api.utility_functions import all as all_
from cubego.core import dtypes as _dtypes
from cubego.core.array import Array, apply, elemwise


def _check(x: Any, what: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a cubego Array, got {type(x).__name__}")
    return x


def _floating(x: Array) -> bool:
    return x.dtype.kind in "fc"


def _fill_nan(x: Array, value: Any) -> Array:
    return where(elemwise("isnan", x), value, x) if _floating(x) else x


def _count(x: Array, axis: Any, keepdims: bool, split_every: Any) -> Array:
    """Number of non-NaN elements along *axis* (int64)."""
    present = elemwise("logical_not", elemwise("isnan", x))
    return sum_(present, axis=axis, keepdims=keepdims, dtype="int64", split_every=split_every)


#: NaN-ignoring folds: name -> (the Array API reduction, the value NaNs count as).
NAN_FOLDS: dict[str, tuple[str, int]] = {"nansum": ("sum", 0), "nanprod": ("prod", 1)}


def _fold(
    func: str, identity: int, x: Array, axis: Any, dtype: Any, keepdims: bool, split_every: Any
) -> Array:
    reduce = getattr(_statistical, func)
    filled = _fill_nan(x, identity)
    return reduce(filled, axis=axis, dtype=dtype, keepdims=keepdims, split_every=split_every)


def _make_fold(name: str, func: str, identity: int):
    def fold(
        x: Array,
        /,
        *,
        axis: Any = None,
        dtype: Any = None,
        keepdims: bool = False,
        split_every: Any = None,
    ) -> Array:
        _check(x, name)
        return _fold(func, identity, x, axis, dtype, keepdims, split_every)

    fold.__name__ = fold.__qualname__ = name
    what = "Sum" if func == "sum" else "Product"
    fold.__doc__ = f"{what} over *axis* treating NaNs as {('zero', 'one')[identity]}."
    return fold


def _nan_extreme(func: str, x: Array, axis: Any, keepdims: bool, split_every: Any) -> Array:
    _check(x, f"nan{func}")
    reduce = getattr(_statistical, func)
    if x.dtype.kind in "mM":  # NaT skipped (cubego.core.datetimes)
        return _statistical._reduce(f"nan{func}", x, axis, keepdims, None, split_every)
    if not _floating(x):
        return reduce(x, axis=axis, keepdims=keepdims, split_every=split_every)
    if x.dtype.kind == "c":
        raise TypeError(f"nan{func} is not defined for complex dtypes")
    fill = float("-inf") if func == "max" else float("inf")
    out = reduce(_fill_nan(x, fill), axis=axis, keepdims=keepdims, split_every=split_every)
    all_nan = all_(elemwise("isnan", x), axis=axis, keepdims=keepdims, split_every=split_every)
    return where(all_nan, float("nan"), out)


#: NaN-ignoring extremes: name -> the Array API reduction (NaN where a slice is all NaN).
NAN_EXTREMES: dict[str, str] = {"nanmax": "max", "nanmin": "min"}


def _make_extreme(name: str, func: str):
    def extreme(
        x: Array, /, *, axis: Any = None, keepdims: bool = False, split_every: Any = None
    ) -> Array:
        return _nan_extreme(func, x, axis, keepdims, split_every)

    extreme.__name__ = extreme.__qualname__ = name
    what = "Maximum" if func == "max" else "Minimum"
    extreme.__doc__ = f"{what} over *axis* ignoring NaNs (NaN where a slice is all NaN)."
    return extreme


def nanmean(
    x: Array,
    /,
    *,
    axis: Any = None,
    dtype: Any = None,
    keepdims: bool = False,
    split_every: Any = None,
) -> Array:
    """Mean over *axis* of the non-NaN elements (NaN where there are none)."""
    _check(x, "nanmean")
    if not _floating(x):
        return mean(x, axis=axis, dtype=dtype, keepdims=keepdims, split_every=split_every)
    if x.dtype.kind == "f" and (dtype is None or _dtypes.name(dtype) in ("float32", "float64")):
        return _moments("nanmean", x, axis, dtype, 0.0, keepdims, split_every)
    total = _fold("sum", 0, x, axis, dtype, keepdims, split_every)
    out = elemwise("divide", total, _count(x, axis, keepdims, split_every))
    return out if out.dtype == total.dtype else out.astype(total.dtype)


def _moments(
    func: str, x: Array, axis: Any, dtype: Any, correction: Any, keepdims: bool, split_every: Any
) -> Array:
    """One tree reduction of (count, total, M2) records leaving NaNs out (real data)."""
    import builtins

    if isinstance(correction, builtins.bool) or not isinstance(correction, (int, float)):
        raise TypeError(f"{func}: correction must be an int or a float, got {correction!r}")
    args = {
        "func": func,
        "axis": _axis(axis),
        "keepdims": builtins.bool(keepdims),
        "correction": float(correction),
        "dtype": None if dtype is None else _dtypes.name(dtype),
        "split_every": _split_every(split_every),
    }
    return apply("var", args, [x])


def nanvar(
    x: Array,
    /,
    *,
    axis: Any = None,
    dtype: Any = None,
    correction: int | float = 0.0,
    keepdims: bool = False,
    ddof: int | float | None = None,
    split_every: Any = None,
) -> Array:
    """Variance over *axis* of the non-NaN elements; *ddof* is numpy's name for *correction*."""
    _check(x, "nanvar")
    if ddof is not None:
        correction = ddof
    if not _floating(x):
        out = var(x, axis=axis, correction=correction, keepdims=keepdims)
        return out if dtype is None else out.astype(dtype)
    if x.dtype.kind == "f" and (dtype is None or _dtypes.name(dtype) in ("float32", "float64")):
        return _moments("nanvar", x, axis, dtype, correction, keepdims, split_every)
    if dtype is not None:
        x = x.astype(dtype)
    count = _count(x, axis, True, split_every)
    mean = elemwise("divide", _fold("sum", 0, x, axis, None, True, split_every), count)
    if mean.dtype != x.dtype:
        mean = mean.astype(x.dtype)
    deviation = _fill_nan(elemwise("subtract", x, mean), 0)
    if x.dtype.kind == "c":
        magnitude = elemwise("abs", deviation)
        squares = elemwise("multiply", magnitude, magnitude)
    else:
        squares = elemwise("multiply", deviation, deviation)

    total = sum_(squares, axis=axis, keepdims=keepdims, split_every=split_every)
    count = _count(x, axis, keepdims, split_every)
    denominator = elemwise("maximum", elemwise("subtract", count, float(correction)), 0.0)
    out = elemwise("divide", total, denominator)
    return out if out.dtype == total.dtype else out.astype(total.dtype)


def nanstd(
    x: Array,
    /,
    *,
    axis: Any = None,
    dtype: Any = None,
    correction: int | float = 0.0,
    keepdims: bool = False,
    ddof: int | float | None = None,
    split_every: Any = None,
) -> Array:
    """Standard deviation over *axis* of the non-NaN elements."""
    _check(x, "nanstd")
    if ddof is not None:
        correction = ddof
    if x.dtype.kind == "f" and (dtype is None or _dtypes.name(dtype) in ("float32", "float64")):
        return _moments("nanstd", x, axis, dtype, correction, keepdims, split_every)
    out = nanvar(
        x,
        axis=axis,
        dtype=dtype,
        correction=correction,
        keepdims=keepdims,
        ddof=ddof,
        split_every=split_every,
    )
    return elemwise("sqrt", out)


def _nan_arg(func: str, x: Array, axis: Any, keepdims: bool, split_every: Any) -> Array:
    _check(x, f"nan{func}")
    return _argreduce(f"nan{func}" if _floating(x) else func, x, axis, keepdims, split_every)


#: NaN-ignoring arg-reductions: name -> the Array API function.
NAN_ARGS: dict[str, str] = {"nanargmax": "argmax", "nanargmin": "argmin"}


def _make_arg(name: str, func: str):
    def arg(
        x: Array, /, *, axis: int | None = None, keepdims: bool = False, split_every: Any = None
    ) -> Array:
        return _nan_arg(func, x, axis, keepdims, split_every)

    arg.__name__ = arg.__qualname__ = name
    what = "maximum" if func == "argmax" else "minimum"
    arg.__doc__ = (
        f"Index of the first {what} ignoring NaNs.\n\n"
        "A slice of only NaNs raises ``ValueError`` when computed, as in numpy."
    )
    return arg


def _nan_cumulative(func: str, x: Array, axis: Any, dtype: Any, identity: int) -> Array:
    _check(x, f"nan{func}")
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    return getattr(_statistical, func)(_fill_nan(x, identity), axis=axis, dtype=dtype)


#: NaN-ignoring cumulative functions: name -> (the Array API function, the value NaNs count as).
NAN_CUMULATIVE: dict[str, tuple[str, int]] = {
    "nancumsum": ("cumulative_sum", 0),
    "nancumprod": ("cumulative_prod", 1),
}


def _make_cumulative(name: str, func: str, identity: int):
    def cumulative(x: Array, /, *, axis: int | None = None, dtype: Any = None) -> Array:
        return _nan_cumulative(func, x, axis, dtype, identity)

    cumulative.__name__ = cumulative.__qualname__ = name
    what = "sum" if identity == 0 else "product"
    cumulative.__doc__ = (
        f"Cumulative {what} along *axis* (the flattened array if None) treating NaNs as "
        f"{('zero', 'one')[identity]}."
    )
    return cumulative


for _name, (_func, _identity) in NAN_FOLDS.items():
    globals()[_name] = _make_fold(_name, _func, _identity)
for _name, _func in NAN_EXTREMES.items():
    globals()[_name] = _make_extreme(_name, _func)
for _name, _func in NAN_ARGS.items():
    globals()[_name] = _make_arg(_name, _func)
for _name, (_func, _identity) in NAN_CUMULATIVE.items():
    globals()[_name] = _make_cumulative(_name, _func, _identity)
del _name, _func, _identity


def nanmedian(x: Array, /, *, axis: int | tuple[int, ...], keepdims: bool = False) -> Array:
    """Median over *axis* (required) of the non-NaN elements.

    The reduced axes are merged and gathered into one chunk per lane (refused with
    a ``ValueError`` when such a block would not fit ``allowed_mem``), sorted with
    NaNs last, and the middle non-NaN elements picked per lane.
    """
    from cubego.array_api.manipulation_functions import (
        _axes,
        expand_dims,
        moveaxis,
        reshape,
        squeeze,
    )

    _check(x, "nanmedian")
    if axis is None:
        raise TypeError("nanmedian: axis is required (an int or a tuple of ints)")
    axes = _axes(axis, x.ndim, "nanmedian")
    if x.dtype.kind == "c":
        raise TypeError("nanmedian is not defined for complex dtypes")
    if x.dtype.kind in "biu":
        x = x.astype(_dtypes.float64)
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = moveaxis(x, axes, tuple(range(len(kept), x.ndim))) if axes else x
    lane = 1
    for d in axes:
        lane *= x.shape[d]
    lanes = reshape(moved, tuple(x.shape[d] for d in kept) + (lane,))
    if lane == 0:
        out = full(lanes.shape[:-1], float("nan"), dtype=x.dtype, spec=x.spec)
    else:
        ordered = sort(lanes, axis=-1)
        count = _count(lanes, -1, True, None)
        lo = elemwise("maximum", elemwise("floor_divide", elemwise("subtract", count, 1), 2), 0)
        hi = elemwise("minimum", elemwise("floor_divide", count, 2), lane - 1)
        low = take_along_axis(ordered, lo, axis=-1)
        high = take_along_axis(ordered, hi, axis=-1)
        middle = elemwise("divide", elemwise("add", low, high), 2)
        if middle.dtype != x.dtype:
            middle = middle.astype(x.dtype)
        out = squeeze(where(elemwise("equal", count, 0), float("nan"), middle), -1)
    if keepdims:
        for d in sorted(axes):
            out = expand_dims(out, axis=d)
    return out


__all__ = sorted(
    [
        *NAN_FOLDS,
        *NAN_EXTREMES,
        *NAN_ARGS,
        *NAN_CUMULATIVE,
        "nanmean",
        "nanmedian",
        "nanstd",
        "nanvar",
    ]
)
