"""``map_overlap``: functions of blocks extended by their neighbours' elements (Dask's semantics).

Each task reads its block extended by ``depth`` elements on each side: a
``ranges`` map per dimension gives the engine the extended element range,
which it assembles from the neighbouring chunks, so no overlapped copy of the
array is ever written. At the array's edges the ``boundary`` decides what lies
beyond: nothing (``"none"``: the edge blocks are smaller), the elements
mirrored (``"reflect"``), the edge element repeated (``"nearest"``) or a
constant, all padded in Python on the task's block; or the other end of the
array (``"periodic"``), for which the engine first concatenates the array's
last and first ``depth`` elements around it. After the call the result is
trimmed back to the block (``trim=True``).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from cubego.array_api.manipulation_functions import concat
from cubego.binding import pyfunc
from cubego.core import dtypes as _dtypes
from cubego.core.array import Array
from cubego.primitive.blockwise import (
    _as_array,
    _common_chunks,
    _first_spec,
    _infer_dtype,
    _ranges,
    _ranges_map,
    has_keyword,
    python_op,
)

__all__ = ["map_overlap"]

_PAD_MODES = {"reflect": "symmetric", "nearest": "edge"}


def _depth_per_axis(depth: Any, ndim: int) -> list[tuple[int, int]]:
    """``depth`` as (before, after) per axis: an int, a tuple per axis or a dict by axis."""
    if depth is None:
        depth = 0
    if isinstance(depth, numbers.Integral):
        values: dict[int, Any] = dict.fromkeys(range(ndim), depth)
    elif isinstance(depth, tuple):
        if len(depth) != ndim:
            raise ValueError(f"map_overlap: depth {depth} needs one entry per axis ({ndim})")
        values = dict(enumerate(depth))
    elif isinstance(depth, dict):
        values = {}
        for a, v in depth.items():
            if not -ndim <= a < ndim:
                raise ValueError(
                    f"map_overlap: depth axis {a} is out of range for {ndim} dimensions"
                )
            values[a % ndim] = v
    else:
        raise TypeError(f"map_overlap: depth must be an int, a tuple or a dict, got {depth!r}")
    out = []
    for a in range(ndim):
        v = values.get(a, 0)
        pair = (v, v) if isinstance(v, numbers.Integral) else tuple(v)
        if len(pair) != 2 or any(not isinstance(p, numbers.Integral) or p < 0 for p in pair):
            raise ValueError(f"map_overlap: invalid depth {v!r} for axis {a}")
        out.append((int(pair[0]), int(pair[1])))
    return out


def _boundary_per_axis(boundary: Any, ndim: int) -> list[Any]:
    if boundary is None:
        boundary = "none"
    if isinstance(boundary, dict):
        values = [boundary.get(a, boundary.get(a - ndim, "none")) for a in range(ndim)]
    elif isinstance(boundary, tuple):
        if len(boundary) != ndim:
            raise ValueError(f"map_overlap: boundary {boundary} needs one entry per axis ({ndim})")
        values = list(boundary)
    else:
        values = [boundary] * ndim
    for b in values:
        if isinstance(b, str):
            if b not in ("none", "reflect", "periodic", "nearest"):
                raise ValueError(
                    f"map_overlap: unknown boundary {b!r}; use 'none', 'reflect', 'periodic', "
                    "'nearest' or a constant"
                )
        elif not isinstance(b, (numbers.Number, np.generic)):
            raise TypeError(f"map_overlap: boundary must be a string or a number, got {b!r}")
    return values


def _minimum_chunks(chunks: tuple[int, ...], size: int) -> tuple[int, ...]:
    """Merge blocks smaller than *size* into their neighbours so every block has at least *size*."""
    if sum(chunks) < size:
        raise ValueError(f"The overlapping depth {size} is larger than your array {sum(chunks)}.")
    out: list[int] = []
    acc = 0
    for c in chunks:
        acc += c
        if acc >= size:
            out.append(acc)
            acc = 0
    if acc:
        out[-1] += acc
    return tuple(out)


class _Overlap:
    """The task function of ``map_overlap``: pad the edges, call, trim."""

    def __init__(
        self,
        func: Callable,
        kwargs: dict,
        pads: list[list],
        trims: list,
        numblocks: tuple,
        block_id: bool,
    ):
        self.func = func
        self.kwargs = kwargs
        self.pads = pads  # per array: (axis, before, after, mode, value) for edges padded here
        self.trims = trims  # per axis: (before, after, boundary is "none")
        self.numblocks = numblocks
        self.block_id = block_id
        self.name = pyfunc.describe(func)

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        block = task.block
        args = []
        for x, pads in zip(inputs, self.pads, strict=True):
            for axis, before, after, mode, value in pads:
                width = [(0, 0)] * x.ndim
                width[axis] = (
                    before if block[axis] == 0 else 0,
                    after if block[axis] == self.numblocks[axis] - 1 else 0,
                )
                if width[axis] != (0, 0):
                    if mode == "constant":
                        x = np.pad(x, width, mode="constant", constant_values=value)
                    else:
                        x = np.pad(x, width, mode=mode)
            args.append(x)
        kwargs = self.kwargs
        if self.block_id:
            kwargs = dict(kwargs, block_id=block)
        result = self.func(*args, **kwargs)
        if self.trims is not None:
            result = np.asarray(result)
            index = []
            for axis, (before, after, none) in enumerate(self.trims):
                lo = 0 if none and block[axis] == 0 else before
                hi = 0 if none and block[axis] == self.numblocks[axis] - 1 else after
                if result.ndim > axis:
                    index.append(slice(lo, result.shape[axis] - hi))
            result = result[tuple(index)]
        pyfunc.write_block(out, result, task, self.name)


def _wrap(x: Array, axis: int, before: int, after: int) -> Array:
    """*x* with its last *before* and first *after* elements along *axis* around it."""
    n = x.shape[axis]
    head = (slice(None),) * axis
    parts = []
    if before:
        parts.append(x[head + (slice(n - before, n),)])
    parts.append(x)
    if after:
        parts.append(x[head + (slice(0, after),)])
    return concat(parts, axis=axis) if len(parts) > 1 else x


def map_overlap(
    func: Callable,
    *args: Any,
    depth: Any = None,
    boundary: Any = None,
    trim: bool = True,
    align_arrays: bool = True,
    allow_rechunk: bool = True,
    dtype: Any = None,
    chunks: Any = None,
    drop_axis: Any = None,
    new_axis: Any = None,
    extra_projected_mem: int = 0,
    **kwargs: Any,
) -> Array:
    """Apply *func* to blocks extended by their neighbours' elements (Dask's ``map_overlap``).

    Parameters
    ----------
    func : callable
        Called once per block with the extended block of each array argument.
    *args : Array
        Arrays of the same shape (their blocks aligned if they differ).
    depth : int, tuple or dict
        Elements shared with the neighbours per axis; an axis may have a
        ``(before, after)`` pair (only with ``boundary="none"``).
    boundary : str, number, tuple or dict, default "none"
        Beyond the array's edges: ``"none"`` (no extension), ``"reflect"``
        (mirrored, edge included), ``"periodic"`` (the other end), ``"nearest"``
        (the edge element repeated) or a constant; one for all axes or per axis.
    trim : bool, default True
        Trim *depth* from each side of the result (where the block was extended).
        With False, the output blocks are the extended blocks.
    align_arrays : bool, default True
    allow_rechunk : bool, default True
        Merge blocks smaller than *depth* with their neighbours (otherwise such
        blocks are an error).
    dtype : dtype, optional
        Inferred from one-element blocks if omitted.
    extra_projected_mem : int, optional
        Bytes *func* allocates per call beyond its result.
    **kwargs
        Passed to every call; ``block_id`` too if *func* takes it.
    """
    if chunks is not None or drop_axis is not None or new_axis is not None:
        raise NotImplementedError("map_overlap does not support chunks, drop_axis or new_axis")
    if not args:
        raise ValueError("map_overlap needs at least one array")
    spec = _first_spec(args)
    arrays = [_as_array(a, spec) for a in args]
    ndim = arrays[0].ndim
    shape = arrays[0].shape
    for a in arrays[1:]:
        if a.shape != shape:
            raise ValueError(f"map_overlap: arrays have different shapes {shape} and {a.shape}")
    depths = depth if isinstance(depth, list) else [depth] * len(arrays)
    boundaries = boundary if isinstance(boundary, list) else [boundary] * len(arrays)
    if len(depths) != len(arrays) or len(boundaries) != len(arrays):
        raise ValueError("map_overlap: depth and boundary lists need one entry per array")
    depths = [_depth_per_axis(d, ndim) for d in depths]
    boundaries = [_boundary_per_axis(b, ndim) for b in boundaries]
    for dep, bnd in zip(depths, boundaries, strict=True):
        for axis, ((before, after), b) in enumerate(zip(dep, bnd, strict=True)):
            if before != after and b != "none":
                raise NotImplementedError(
                    "Asymmetric overlap is only implemented for boundary='none', but the boundary "
                    f"for axis {axis} is {b!r}"
                )

    if align_arrays:
        blocks = [_common_chunks([a.chunks[d] for a in arrays]) for d in range(ndim)]
    else:
        blocks = list(arrays[0].chunks)
        if any(a.chunks != arrays[0].chunks for a in arrays):
            raise ValueError("map_overlap: arrays have different chunks; use align_arrays=True")
    for axis in range(ndim):
        need = max(max(d[axis]) for d in depths)
        if need and shape[axis] and need > min(blocks[axis]):
            if not allow_rechunk:
                raise ValueError(
                    f"The overlap depth {need} of axis {axis} is larger than its smallest block "
                    f"({min(blocks[axis])}); use larger blocks or allow_rechunk=True"
                )
            blocks[axis] = _minimum_chunks(blocks[axis], need)
    numblocks = tuple(len(c) for c in blocks)

    inputs, pads = [], []
    extra = int(extra_projected_mem)
    for a, dep, bnd in zip(arrays, depths, boundaries, strict=True):
        dims, mine = [], []
        padded_elems = 1
        for axis in range(ndim):
            (before, after), b, n = dep[axis], bnd[axis], shape[axis]
            rs = _ranges(blocks[axis])
            if before or after:
                if b == "periodic":
                    a = _wrap(a, axis, before, after)
                    rs = [[lo, hi + before + after] for lo, hi in rs]
                else:
                    rs = [[max(lo - before, 0), min(hi + after, n)] for lo, hi in rs]
                    if b != "none":
                        mode = _PAD_MODES.get(b, "constant") if isinstance(b, str) else "constant"
                        mine.append((axis, before, after, mode, None if isinstance(b, str) else b))
            dims.append(_ranges_map(axis, rs))
            padded_elems *= max(blocks[axis]) + before + after
        inputs.append((a, dims))
        pads.append(mine)
        if mine:  # np.pad makes a padded copy of the extended block
            extra += padded_elems * a.dtype.itemsize

    first_depth, first_boundary = depths[0], boundaries[0]
    if trim:
        out_chunks = blocks
        trims = [
            (b, a, bnd == "none") for (b, a), bnd in zip(first_depth, first_boundary, strict=True)
        ]
    else:
        out_chunks, trims = [], None
        for axis in range(ndim):
            (before, after), bnd = first_depth[axis], first_boundary[axis]
            none = bnd == "none"
            sizes = []
            for i, c in enumerate(blocks[axis]):
                lo = 0 if none and i == 0 else before
                hi = 0 if none and i == len(blocks[axis]) - 1 else after
                sizes.append(c + lo + hi)
            out_chunks.append(tuple(sizes))
    if dtype is None:
        dtype = _infer_dtype(func, arrays, kwargs, "map_overlap", ndim)
    dtype = _dtypes.normalize_any(dtype)
    fn = _Overlap(func, kwargs, pads, trims, numblocks, has_keyword(func, "block_id"))
    out_shape = tuple(sum(c) for c in out_chunks)
    return python_op(
        fn,
        "map_overlap",
        inputs,
        out_shape,
        dtype,
        out_chunks,
        extra_mem=extra,
        label=pyfunc.describe(func),
    )


def _array_map_overlap(
    self: Array, func: Callable, depth: Any, boundary: Any = None, trim: bool = True, **kwargs: Any
) -> Array:
    """``map_overlap(func, self, depth=depth, boundary=boundary, trim=trim, **kwargs)``."""
    return map_overlap(func, self, depth=depth, boundary=boundary, trim=trim, **kwargs)


Array.map_overlap = _array_map_overlap  # type: ignore[attr-defined]
