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
    _FULL,
    _as_array,
    _block_info,
    _common_chunks,
    _first_spec,
    _infer_dtype,
    _ranges,
    _ranges_map,
    _starts,
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


def _as_list(axes: Any) -> list:
    if axes is None:
        return []
    return [axes] if isinstance(axes, numbers.Integral) else list(axes)


def _axis_list(axes: Any, ndim: int, what: str) -> list[int]:
    """*axes* (None, an int or a sequence) normalised against *ndim* dimensions."""
    out = []
    for a in _as_list(axes):
        if not isinstance(a, numbers.Integral) or isinstance(a, bool):
            raise TypeError(f"map_overlap: {what} must be ints, got {a!r}")
        if not -ndim <= a < ndim:
            raise ValueError(
                f"map_overlap: {what} {a} is out of range for an output of {ndim} dimensions"
            )
        if a % ndim in out:
            raise ValueError(f"map_overlap: repeated {what} {a}")
        out.append(int(a) % ndim)
    return sorted(out)


def _result_chunks(chunks: Any, blocks: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """The ``chunks=`` of ``map_overlap`` against the output block grid *blocks*."""
    if not isinstance(chunks, (tuple, list)) or len(chunks) != len(blocks):
        raise ValueError(
            f"map_overlap: chunks {chunks!r} needs one entry per output dimension ({len(blocks)})"
        )
    out = []
    for p, (c, grid) in enumerate(zip(chunks, blocks, strict=True)):
        if isinstance(c, numbers.Integral) and not isinstance(c, bool):
            sizes = (int(c),) * len(grid)
        elif isinstance(c, (tuple, list)) and all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in c
        ):
            sizes = tuple(int(v) for v in c)
        else:
            raise TypeError(
                f"map_overlap: chunks for output axis {p} must be an int or ints, got {c!r}"
            )
        if len(sizes) != len(grid):
            raise ValueError(
                f"map_overlap: chunks {sizes} for output axis {p} have {len(sizes)} blocks, but "
                f"the output has {len(grid)} blocks along it"
            )
        if any(v < 0 for v in sizes):
            raise ValueError(f"map_overlap: negative chunk size in {sizes}")
        out.append(sizes)
    return out


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
    """The task function of ``map_overlap``: pad the edges, call, trim.

    Input axis *a* is output axis ``out_pos[a]`` (None when dropped: it is read
    whole, as one block).
    """

    def __init__(
        self,
        func: Callable,
        kwargs: dict,
        pads: list[list],
        trims: list | None,
        numblocks: tuple,
        out_pos: list[int | None],
        block_id: bool,
        block_info: dict | None,
    ):
        self.func = func
        self.kwargs = kwargs
        self.pads = pads  # per array: (axis, before, after, mode, value) for edges padded here
        self.trims = trims  # per input axis: (before, after, boundary is "none")
        self.numblocks = numblocks  # per input axis
        self.out_pos = out_pos
        self.block_id = block_id
        self.block_info = block_info
        self.name = pyfunc.describe(func)

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        out_block = tuple(task.block)
        block = [0 if p is None else out_block[p] for p in self.out_pos]  # per input axis
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
            kwargs = dict(kwargs, block_id=out_block)
        if self.block_info is not None:
            kwargs = dict(kwargs, block_info=_block_info(self.block_info, out_block))
        result = self.func(*args, **kwargs)
        if self.trims is not None:
            result = np.asarray(result)
            index = [slice(None)] * result.ndim
            for axis, (before, after, none) in enumerate(self.trims):
                pos = self.out_pos[axis]
                if pos is None or pos >= result.ndim:
                    continue
                lo = 0 if none and block[axis] == 0 else before
                hi = 0 if none and block[axis] == self.numblocks[axis] - 1 else after
                index[pos] = slice(lo, result.shape[pos] - hi)
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
    chunks : tuple, optional
        The block sizes of *func*'s results when they differ from the (extended)
        input blocks, per output dimension an int (every block) or a tuple (one
        size per block). As in Dask these are the results before trimming: with
        ``trim=True`` the output blocks are *chunks* less the depth trimmed from
        them. Cubed's usage is ``trim=False`` with *chunks* the output's chunks.
    drop_axis : int or sequence of ints, optional
        Input dimensions *func* removes. Each is read whole (its blocks merged
        into one, so the memory of a task grows with it).
    new_axis : int or sequence of ints, optional
        Positions in the output of dimensions *func* adds (their length from
        *chunks*, default 1).
    extra_projected_mem : int, optional
        Bytes *func* allocates per call beyond its result.
    **kwargs
        Passed to every call; ``block_id`` (the output block's coordinates) and
        ``block_info`` (Dask's dict; an input's ``"array-location"`` is its block
        before the overlap extends it) too if *func* takes them.
    """
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
    drops = _axis_list(drop_axis, ndim, "drop_axis")
    for axis in drops:
        blocks[axis] = (shape[axis],) if shape[axis] else blocks[axis]
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
    kept = [axis for axis in range(ndim) if axis not in drops]
    out_ndim = len(kept) + (0 if new_axis is None else len(_as_list(new_axis)))
    if new_axis is None and chunks is not None and len(chunks) > len(kept):
        new_axis = list(range(len(chunks) - len(kept)))  # Dask: new leading axes
        out_ndim = len(chunks)
    news = _axis_list(new_axis, out_ndim, "new_axis")
    out_axes = [p for p in range(out_ndim) if p not in news]  # positions of the kept axes
    out_pos: list[int | None] = [None] * ndim
    for axis, p in zip(kept, out_axes, strict=True):
        out_pos[axis] = p

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
            p = out_pos[axis]
            dims.append(_FULL if p is None else _ranges_map(p, rs))
            padded_elems *= max(blocks[axis]) + before + after
        inputs.append((a, dims))
        pads.append(mine)
        if mine:  # np.pad makes a padded copy of the extended block
            extra += padded_elems * a.dtype.itemsize

    first_depth, first_boundary = depths[0], boundaries[0]
    # Per input axis and block: the elements the overlap adds before and after it.
    added = []
    for axis in range(ndim):
        (before, after), none = first_depth[axis], first_boundary[axis] == "none"
        n = len(blocks[axis])
        added.append(
            [
                (0 if none and i == 0 else before, 0 if none and i == n - 1 else after)
                for i in range(n)
            ]
        )
    trims = None
    if trim:
        trims = [
            (b, a, bnd == "none") for (b, a), bnd in zip(first_depth, first_boundary, strict=True)
        ]
    # The blocks func returns: the extended blocks, or chunks=.
    results: list[tuple[int, ...]] = [()] * out_ndim
    for axis in kept:
        extended = zip(blocks[axis], added[axis], strict=True)
        results[out_pos[axis]] = tuple(c + lo + hi for c, (lo, hi) in extended)
    for p in news:
        results[p] = (1,)
    if chunks is not None:
        results = _result_chunks(chunks, results)
    out_chunks = list(results)
    if trim:
        for axis in kept:
            p = out_pos[axis]
            out_chunks[p] = tuple(c - lo - hi for c, (lo, hi) in zip(results[p], added[axis]))
            if any(c < 0 for c in out_chunks[p]):
                raise ValueError(
                    f"map_overlap: chunks {results[p]} of output axis {p} are smaller than the "
                    f"depth trimmed from them (trim=True)"
                )
    if dtype is None:
        dtype = _infer_dtype(func, arrays, kwargs, "map_overlap", out_ndim)
    dtype = _dtypes.normalize_any(dtype)
    info = None
    if has_keyword(func, "block_info"):
        info = {
            "inputs": {
                i: (a.shape, numblocks, [_starts(c) for c in blocks], out_pos)
                for i, a in enumerate(arrays)
            },
            "output": (
                tuple(sum(c) for c in out_chunks),
                [_starts(c) for c in out_chunks],
                dtype,
            ),
        }
    fn = _Overlap(
        func, kwargs, pads, trims, numblocks, out_pos, has_keyword(func, "block_id"), info
    )
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
