"""Window operations along one axis: moving-window reductions and ``sliding_window_view``.

:func:`moving_reduce` is what xarray's ``rolling(...).mean()`` (and ``sum``,
``max``, ``min``, ``prod``, ``std``, ``var``, ``count``) runs on cubego data:
one task per block reads the block and the ``window - 1`` elements its
windows reach into the neighbouring blocks (a halo, assembled by the engine
from those chunks, never a copy of the array), and reduces every window in
one pass over the block: running sums for ``sum``/``mean``/``count``, the van
Herk-Gil-Werman prefix and suffix extrema for ``max``/``min``, one pass per
window offset for ``prod``, ``var`` and ``std``. Memory and time follow the
data, not the window: a task holds its block, the halo and a few
block-sized work arrays.

:func:`sliding_window_view` materialises the windows (xarray's
``rolling(...).construct()`` and its other reductions): a copy ``window``
times the data, so by default its blocks along the axis are split so that
each output block is about the size of an input block (Dask's
``automatic_rechunk``). Its op is named after the window, so a memory error
caused by the window says so.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from cubego.binding import pyfunc
from cubego.core.array import Array
from cubego.primitive.blockwise import _own, _ranges_map, python_op

__all__ = ["MOVING_REDUCTIONS", "moving_reduce", "sliding_window_view"]

#: The reductions :func:`moving_reduce` computes.
MOVING_REDUCTIONS = ("sum", "mean", "count", "max", "min", "prod", "var", "std")


def _axis(axis: Any, ndim: int, what: str) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim


def _take(a: np.ndarray, axis: int, start: int, stop: int) -> np.ndarray:
    return a[(slice(None),) * axis + (slice(start, stop),)]


# ---------------------------------------------------------------------- moving reductions


def _running_sum(values: np.ndarray, axis: int, window: int, m: int) -> np.ndarray:
    """Sums of the *m* windows of *window* elements along *axis* (running-sum differences)."""
    shape = list(values.shape)
    shape[axis] = 1
    total = np.concatenate([np.zeros(shape, values.dtype), np.cumsum(values, axis=axis)], axis)
    return _take(total, axis, window, window + m) - _take(total, axis, 0, m)


def _running_extreme(
    values: np.ndarray, axis: int, window: int, m: int, ufunc: np.ufunc, fill: Any
) -> np.ndarray:
    """Max (or min) of the *m* windows along *axis*: van Herk-Gil-Werman, O(n) for any window.

    Cut the axis into segments of *window* elements; the extreme of a window
    is that of the suffix of the segment it starts in and of the prefix of the
    next segment it ends in.
    """
    moved = np.moveaxis(values, axis, -1)
    n = moved.shape[-1]
    segments = math.ceil(n / window)
    padded = np.full(moved.shape[:-1] + (segments * window,), fill, dtype=moved.dtype)
    padded[..., :n] = moved
    grid = padded.reshape(moved.shape[:-1] + (segments, window))
    prefix = ufunc.accumulate(grid, axis=-1).reshape(padded.shape)
    suffix = ufunc.accumulate(grid[..., ::-1], axis=-1)[..., ::-1].reshape(padded.shape)
    result = ufunc(suffix[..., :m], prefix[..., window - 1 : window - 1 + m])
    return np.moveaxis(result, -1, axis)


def _window_loop(values: np.ndarray, axis: int, window: int, m: int, ufunc: np.ufunc) -> Any:
    acc = _take(values, axis, 0, m).copy()
    for k in range(1, window):
        ufunc(acc, _take(values, axis, k, k + m), out=acc)
    return acc


class _Moving:
    """The task function of :func:`moving_reduce`: one block and its halo."""

    def __init__(
        self,
        func: str,
        window: int,
        before: int,
        axis: int,
        length: int,
        min_count: int,
        ddof: int,
        work: np.dtype,
    ):
        self.func = func
        self.window = window
        self.before = before  # window elements before the output element
        self.axis = axis
        self.length = length  # the array's length along axis
        self.min_count = min_count
        self.ddof = ddof
        self.work = work

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        (block,) = inputs
        axis, window = self.axis, self.window
        lo = task.out_start[axis]
        m = out.shape[axis]
        read_lo = task.in_starts[0][axis]
        # Pad the region to [lo - before, lo + m + after): elements beyond the
        # array's edges are missing, as are NaNs.
        pad_before = read_lo - (lo - self.before)
        pad_after = (m + window - 1) - pad_before - block.shape[axis]
        width = [(0, 0)] * block.ndim
        width[axis] = (pad_before, pad_after)
        if block.dtype.kind in "fc":
            valid = ~np.isnan(block)
            values = np.where(valid, block, 0).astype(self.work, copy=False)
        else:
            valid = np.ones(block.shape, dtype=bool)
            values = block.astype(self.work)
        if pad_before or pad_after:
            valid = np.pad(valid, width, constant_values=False)
            values = np.pad(values, width, constant_values=0)
        count = _running_sum(valid.astype(np.int64), axis, window, m)
        func = self.func
        if func == "count":
            pyfunc.write_block(out, count.astype(out.dtype, copy=False), task, "moving count")
            return
        if func in ("sum", "mean"):
            result = _running_sum(values, axis, window, m)
            if func == "mean":
                with np.errstate(invalid="ignore", divide="ignore"):
                    result = result / count
        elif func in ("max", "min"):
            ufunc = np.maximum if func == "max" else np.minimum
            fill = -np.inf if func == "max" else np.inf
            values = np.where(valid, values, fill)
            result = _running_extreme(values, axis, window, m, ufunc, fill)
        elif func == "prod":
            result = _window_loop(np.where(valid, values, 1), axis, window, m, np.multiply)
        else:  # var, std: two passes per window offset, exact as numpy's nanvar
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = _running_sum(values, axis, window, m) / count
                squares = np.zeros(mean.shape, self.work)
                for k in range(window):
                    deviation = _take(values, axis, k, k + m) - mean
                    squares += np.where(_take(valid, axis, k, k + m), deviation * deviation, 0)
                result = squares / (count - self.ddof)
                result = np.where(count - self.ddof > 0, result, np.nan)
            if func == "std":
                result = np.sqrt(result)
        result = np.where(count >= max(self.min_count, 1), result, np.nan)
        pyfunc.write_block(out, result.astype(out.dtype, copy=False), task, f"moving {func}")


def moving_reduce(
    x: Array,
    func: str,
    window: int,
    axis: int = -1,
    *,
    center: bool = False,
    min_count: int | None = None,
    ddof: int = 0,
) -> Array:
    """Reduce every window of *window* consecutive elements along *axis* (same shape as *x*).

    The window of element ``i`` ends at ``i`` (``center=False``) or is centred
    on it (``center=True``: ``window // 2`` elements before it), as in
    xarray's ``rolling`` and bottleneck's ``move_*`` functions. Elements
    beyond the array's edges and NaNs are missing: a window with fewer than
    *min_count* present elements (default: the window) gives NaN.

    Parameters
    ----------
    x : Array
    func : str
        One of ``sum``, ``mean``, ``count`` (present elements, int64, never
        masked), ``max``, ``min``, ``prod``, ``var``, ``std`` (with *ddof*).
    window : int
        The window's length, at least 1 and at most the axis's length.
    axis : int, default -1
    center : bool, default False
    min_count : int, optional
        Present elements a window needs for a value; default *window*.
    ddof : int, default 0
        Delta degrees of freedom of ``var`` and ``std``.

    Returns
    -------
    Array
        *x*'s shape and chunks; int64 for ``count``, otherwise *x*'s floating
        dtype (float64 for integers and bools).
    """
    if not isinstance(x, Array):
        raise TypeError(f"moving_reduce: expected a cubego Array, got {type(x).__name__}")
    if func not in MOVING_REDUCTIONS:
        raise ValueError(
            f"moving_reduce: unknown reduction {func!r}; use one of {', '.join(MOVING_REDUCTIONS)}"
        )
    if x.dtype.kind == "c":
        raise TypeError("moving_reduce: complex arrays are not supported")
    axis = _axis(axis, x.ndim, "moving_reduce")
    window = operator.index(window)
    n = x.shape[axis]
    if window < 1:
        raise ValueError(f"moving_reduce: window must be at least 1, got {window}")
    if window > max(n, 1):
        raise ValueError(f"moving_reduce: window {window} is longer than axis {axis} (length {n})")
    min_count = window if min_count is None else operator.index(min_count)
    if min_count < 0:
        raise ValueError(f"moving_reduce: min_count must be non-negative, got {min_count}")
    before = window // 2 if center else window - 1
    after = window - 1 - before
    if func == "count":
        dtype = np.dtype(np.int64)
    elif x.dtype.kind == "f":
        dtype = x.dtype
    else:
        dtype = np.dtype(np.float64)
    work = np.dtype(np.float64)
    ranges, start = [], 0
    for c in x.chunks[axis]:
        ranges.append([max(start - before, 0), min(start + c + after, n)])
        start += c
    maps = [_ranges_map(d, ranges) if d == axis else _own(d, c) for d, c in enumerate(x.chunks)]
    # a padded copy of the region in the work dtype, its mask, and two block-sized
    # work arrays (counts and the result)
    block = math.prod(max(c) if c else 0 for c in x.chunks)
    region = (
        block
        // max(max(x.chunks[axis], default=1), 1)
        * (max(x.chunks[axis], default=0) + window - 1)
    )
    extra = region * (work.itemsize + 1) + block * (8 + 2 * work.itemsize)
    fn = _Moving(func, window, before, axis, n, min_count, int(ddof), work)
    return python_op(
        fn,
        f"rolling {func} (window={window} along axis {axis})",
        [(x, maps)],
        x.shape,
        dtype,
        x.chunks,
        extra_mem=extra,
    )


# ---------------------------------------------------------------------- sliding windows


class _Windows:
    """The task function of :func:`sliding_window_view`: the windows of one region."""

    def __init__(self, window: int, axis: int):
        self.window = window
        self.axis = axis

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        view = np.lib.stride_tricks.sliding_window_view(inputs[0], self.window, axis=self.axis)
        pyfunc.write_block(out, view, task, "sliding_window_view")


def _split(chunks: tuple[int, ...], parts: int) -> tuple[int, ...]:
    """Each block cut into *parts* nearly equal pieces (at least one element each)."""
    out = []
    for c in chunks:
        k = max(1, min(parts, c))
        size, rest = divmod(c, k)
        out.extend(size + (i < rest) for i in range(k))
    return tuple(out)


def _one_window(x: Array, window: int, axis: int, automatic_rechunk: bool) -> Array:
    n = x.shape[axis]
    length = n - window + 1
    # the input's blocks, cut at the output's end
    base, start = [], 0
    for c in x.chunks[axis]:
        if start >= length:
            break
        base.append(min(c, length - start))
        start += c
    chunks_axis = _split(tuple(base), window) if automatic_rechunk else tuple(base)
    ranges, start = [], 0
    for c in chunks_axis:
        ranges.append([start, start + c + window - 1])
        start += c
    maps = [_ranges_map(d, ranges) if d == axis else _own(d, c) for d, c in enumerate(x.chunks)]
    chunks = tuple(chunks_axis if d == axis else c for d, c in enumerate(x.chunks)) + ((window,),)
    shape = tuple(sum(c) for c in chunks)
    return python_op(
        _Windows(window, axis),
        f"sliding_window_view (window={window} along axis {axis})",
        [(x, maps)],
        shape,
        x.dtype,
        chunks,
    )


def sliding_window_view(
    x: Array,
    window_shape: int | tuple[int, ...],
    axis: int | tuple[int, ...] | None = None,
    *,
    automatic_rechunk: bool = True,
    subok: bool = False,
    writeable: bool = False,
) -> Array:
    """Windows of *x*, as ``numpy.lib.stride_tricks.sliding_window_view``.

    For each window length ``w`` along an axis of length ``n``, that axis
    becomes ``n - w + 1`` long and a new last axis of length ``w`` holds the
    window (several axes append their window axes in order). Unlike numpy's
    view, the result is a copy ``w`` times the data: with
    ``automatic_rechunk=True`` (the default, as in Dask) each block along the
    axis is cut into up to ``w`` pieces, so that an output block is about the
    size of an input block; with False the output blocks follow the input's,
    ``w`` times larger. A task reads only the elements its windows cover.
    *subok* and *writeable* are numpy's and ignored.
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
        out = _one_window(out, w, a, automatic_rechunk)
    return out
