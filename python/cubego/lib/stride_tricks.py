"""``sliding_window_view``, which xarray's ``rolling`` calls on the array's namespace."""

from __future__ import annotations

import operator

from cubego.array_api.manipulation_functions import stack
from cubego.core.array import Array

__all__ = ["sliding_window_view"]


def sliding_window_view(
    x: Array,
    window_shape: int | tuple[int, ...],
    axis: int | tuple[int, ...] | None = None,
    *,
    subok: bool = False,
    writeable: bool = False,
) -> Array:
    """Windows of *x*, as ``numpy.lib.stride_tricks.sliding_window_view``.

    For each window length ``w`` along an axis of length ``n``, that axis
    becomes ``n - w + 1`` long and a new last axis of length ``w`` holds the
    window (several axes append their window axes in order). Nothing is
    copied up front: the result is the stack of the ``w`` shifted slices of
    *x*, so a task reads only the blocks its windows overlap; the window axis
    is one chunk. *subok* and *writeable* are numpy's and ignored (cubego
    arrays are read-only views of a plan).
    """
    if not isinstance(x, Array):
        raise TypeError(f"sliding_window_view: expected a cubego Array, got {type(x).__name__}")
    windows = (
        (operator.index(window_shape),)
        if not isinstance(window_shape, (tuple, list))
        else tuple(operator.index(w) for w in window_shape)
    )
    if axis is None:
        if len(windows) != x.ndim:
            raise ValueError(
                f"sliding_window_view: window_shape {windows} must have one entry per axis of "
                f"the {x.ndim}-dimensional array when axis is None"
            )
        axes = tuple(range(x.ndim))
    else:
        axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
        axes = tuple(operator.index(a) for a in axes)
        if len(axes) != len(windows):
            raise ValueError(
                f"sliding_window_view: {len(windows)} window lengths for {len(axes)} axes"
            )
    ndim = x.ndim
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(
                f"sliding_window_view: axis {a} is out of bounds for {ndim} dimensions"
            )
    out = x
    for a, w in zip(axes, windows, strict=True):
        a %= ndim
        n = x.shape[a]
        if w < 0:
            raise ValueError("sliding_window_view: window_shape cannot contain negative values")
        if w > n:
            raise ValueError(
                f"sliding_window_view: window length {w} is larger than axis {a} (length {n})"
            )
        if w == 0:
            raise NotImplementedError("sliding_window_view: windows of length 0 are not supported")
        lead = (slice(None),) * a
        length = out.shape[a] - w + 1
        parts = [out[lead + (slice(k, k + length),)] for k in range(w)]
        stacked = stack(parts, axis=-1)
        out = stacked.rechunk({stacked.ndim - 1: w})
    return out
