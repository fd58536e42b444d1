"""``quantile``, ``nanquantile`` and ``median`` (numpy's), on sorted lanes.

The reduced axes are moved to the end and merged into one lane per output
element, gathered into one chunk (refused with ``ValueError`` when such a
block would not fit ``allowed_mem``) and sorted with NaNs last; the order
statistics each method needs are then picked per lane with
``take_along_axis``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cubego.array_api.creation_functions import full
from cubego.array_api.indexing_functions import take_along_axis
from cubego.array_api.manipulation_functions import (
    _axes,
    expand_dims,
    moveaxis,
    reshape,
    squeeze,
    stack,
)
from cubego.array_api.searching_functions import where
from cubego.array_api.sorting_functions import sort
from cubego.array_api.utility_functions import any as any_
from cubego.core import dtypes as _dtypes
from cubego.core.array import Array, elemwise
from cubego.extras.nan_functions import _count

__all__ = ["median", "nanquantile", "quantile"]

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _lanes(x: Array, axis: Any, what: str) -> tuple[Array, tuple[int, ...], int]:
    axes = tuple(range(x.ndim)) if axis is None else _axes(axis, x.ndim, what)
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = moveaxis(x, axes, tuple(range(len(kept), x.ndim))) if axes else x
    lane = math.prod(x.shape[d] for d in axes)
    return reshape(moved, tuple(x.shape[d] for d in kept) + (lane,)), axes, lane


def _pick(ordered: Array, index: Array) -> Array:
    return take_along_axis(ordered, index, axis=-1)


def _quantile(
    x: Array, q: Any, axis: Any, method: str, keepdims: bool, skip_nan: bool, what: str
) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a cubego Array, got {type(x).__name__}")
    if method not in _METHODS:
        raise ValueError(f"{what}: method must be one of {', '.join(_METHODS)}, got {method!r}")
    if x.dtype.kind == "c":
        raise TypeError(f"{what} is not defined for complex dtypes")
    qs = np.asarray(q, dtype=np.float64)
    if qs.ndim > 1:
        raise ValueError(f"{what}: q must be a scalar or 1-dimensional, got shape {qs.shape}")
    if np.any(np.isnan(qs)) or np.any((qs < 0) | (qs > 1)):
        raise ValueError(f"{what}: quantiles must be in the range [0, 1], got {q!r}")
    if x.dtype.kind in "biu":
        x = x.astype(_dtypes.float64)
    lanes, axes, lane = _lanes(x, axis, what)
    if lane == 0:
        empty = full(lanes.shape[:-1], float("nan"), dtype=x.dtype, spec=x.spec)
        results = [empty for _ in np.atleast_1d(qs)]
    else:
        ordered = sort(lanes, axis=-1)
        if skip_nan:
            count = _count(lanes, -1, True, None)
        else:
            count = full(lanes.shape[:-1] + (1,), lane, dtype="int64", spec=x.spec)
        last = elemwise("maximum", elemwise("subtract", count, 1), 0)
        results = []
        for value in np.atleast_1d(qs):
            # the virtual index q * (n - 1) of numpy's methods
            v = elemwise("multiply", last.astype(_dtypes.float64), float(value))
            lo = elemwise("floor", v).astype("int64")
            hi = elemwise("minimum", elemwise("ceil", v).astype("int64"), last)
            if method == "lower":
                out = _pick(ordered, lo)
            elif method == "higher":
                out = _pick(ordered, hi)
            elif method == "nearest":
                out = _pick(ordered, elemwise("round", v).astype("int64"))
            elif method == "midpoint":
                out = elemwise("divide", elemwise("add", _pick(ordered, lo), _pick(ordered, hi)), 2)
            else:
                low, high = _pick(ordered, lo), _pick(ordered, hi)
                frac = elemwise("subtract", v, elemwise("floor", v))
                out = elemwise(
                    "add", low, elemwise("multiply", elemwise("subtract", high, low), frac)
                )
            if out.dtype != x.dtype:
                out = out.astype(x.dtype)
            if skip_nan:
                out = where(elemwise("equal", count, 0), float("nan"), out)
            else:
                nan = any_(elemwise("isnan", lanes), axis=-1, keepdims=True)
                out = where(nan, float("nan"), out)
            results.append(squeeze(out, -1))
    if keepdims:
        for i, result in enumerate(results):
            for d in sorted(axes):
                result = expand_dims(result, axis=d)
            results[i] = result
    if qs.ndim == 0:
        return results[0]
    return stack(results, axis=0)


def quantile(
    x: Array,
    /,
    q: Any,
    *,
    axis: int | tuple[int, ...] | None = None,
    method: str = "linear",
    keepdims: bool = False,
) -> Array:
    """The *q*-th quantiles of *x* over *axis* (numpy's ``quantile``).

    *q* is a number in [0, 1] or a 1-d sequence of them (the result then has
    a leading axis over *q*). *method* is ``"linear"`` (numpy's default),
    ``"lower"``, ``"higher"``, ``"nearest"`` or ``"midpoint"``. A lane with a
    NaN gives NaN. The reduced axes are gathered into one chunk per lane
    (``ValueError`` when that does not fit ``allowed_mem``).
    """
    return _quantile(x, q, axis, method, keepdims, False, "quantile")


def nanquantile(
    x: Array,
    /,
    q: Any,
    *,
    axis: int | tuple[int, ...] | None = None,
    method: str = "linear",
    keepdims: bool = False,
) -> Array:
    """:func:`quantile` of the non-NaN elements (NaN where a lane has none)."""
    return _quantile(x, q, axis, method, keepdims, True, "nanquantile")


def median(
    x: Array, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False
) -> Array:
    """The median over *axis* (numpy's ``median``; NaN where a lane has a NaN)."""
    return _quantile(x, 0.5, axis, "linear", keepdims, False, "median")
