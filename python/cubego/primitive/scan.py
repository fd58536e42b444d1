"""Scans with Python functions: ``scan`` and Dask's ``cumreduction``.

A scan is three ops: the scan of each block, the scan of the blocks' last
elements (the carries), and the carry added to every block with *binop* —
so a task holds one block, whatever the length of the scanned axis.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from cubego.binding import pyfunc
from cubego.core import dtypes as _dtypes
from cubego.core.array import Array, apply
from cubego.primitive.blockwise import _identity, _own, _ranges_map, has_keyword, python_op
from cubego.primitive.reduction import _normalize_axis

__all__ = ["cumreduction", "scan"]


class _ScanBlock:
    """A block's own scan: ``func(block, axis=axis, **kwargs)``."""

    def __init__(self, func: Callable, axis: int, kwargs: dict):
        self.func = func
        self.axis = axis
        self.kwargs = kwargs
        self.name = pyfunc.describe(func)

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        pyfunc.write_block(
            out, self.func(inputs[0], axis=self.axis, **self.kwargs), task, self.name
        )


class _Last:
    """A block's last element along axis (kept as a length-1 axis)."""

    def __init__(self, axis: int):
        self.axis = axis

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        block = inputs[0]
        index = (slice(None),) * self.axis + (slice(block.shape[self.axis] - 1, None),)
        pyfunc.write_block(out, block[index], task, "scan")


class _Accumulate:
    """An inclusive scan with a binary operator, element by element along axis."""

    def __init__(self, binop: Callable):
        self.binop = binop

    def __call__(self, a: np.ndarray, axis: int) -> np.ndarray:
        out = np.array(a, copy=True)
        n = a.shape[axis]
        previous = None
        for k in range(n):
            index = (slice(None),) * axis + (slice(k, k + 1),)
            if previous is not None:
                out[index] = self.binop(previous, out[index])
            previous = out[index]
        return out


class _AddCarry:
    """``binop(carry, block)``: the carry is the scan of all earlier blocks (none for block 0)."""

    def __init__(self, binop: Callable, axis: int):
        self.binop = binop
        self.axis = axis
        self.name = pyfunc.describe(binop)

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        block, carry = inputs
        if task.block[self.axis] == 0:
            result = block
        else:
            result = self.binop(carry, block)
        pyfunc.write_block(out, result, task, self.name)


def _scan(
    x: Array, func: Callable, kwargs: dict, binop: Callable, axis: int, dtype: np.dtype, label: str
) -> Array:
    """Scan *x* along *axis*: each block's own scan, then each block combined with
    the scan of the last elements of all the blocks before it (computed by the
    same algorithm, recursively, on an array with one element per block)."""
    # Blocks read where the output has the same blocks are identity maps (issue #19).
    same = [_identity(d) for d in range(x.ndim)]
    scanned = python_op(
        _ScanBlock(func, axis, kwargs), "scan", [(x, same)], x.shape, dtype, x.chunks, label=label
    )
    nb = len(x.chunks[axis])
    if nb <= 1:
        return scanned
    last_chunks = tuple((1,) * nb if d == axis else c for d, c in enumerate(x.chunks))
    own = [_own(d, c) if d == axis else _identity(d) for d, c in enumerate(x.chunks)]
    lasts = python_op(
        _Last(axis),
        "scan",
        [(scanned, own)],
        tuple(sum(c) for c in last_chunks),
        dtype,
        last_chunks,
        label=label,
    )
    step = max(max(x.chunks[axis]), 2)
    lasts = lasts.rechunk({axis: step})
    totals = _scan(lasts, _Accumulate(binop), {}, binop, axis, dtype, label)
    # Block b adds the total of blocks < b: element b-1 of totals.
    carry_dims = [_identity(d) for d in range(totals.ndim)]
    carry_dims[axis] = _ranges_map(axis, [[max(b - 1, 0), max(b - 1, 0) + 1] for b in range(nb)])
    return python_op(
        _AddCarry(binop, axis),
        "scan",
        [(scanned, same), (totals, carry_dims)],
        x.shape,
        dtype,
        x.chunks,
        extra_mem=2 * math.prod(max(c) for c in x.chunks) * dtype.itemsize,
        label=label,
    )


def scan(
    array: Array,
    func: Callable,
    *,
    preop: Callable | None = None,
    binop: Callable,
    axis: int | None,
    dtype: Any = None,
    include_initial: bool = False,
    split_every: int | None = None,
) -> Array:
    """A cumulative operation along *axis* from a block scan and its operator (Cubed's ``scan``).

    *func* scans one block, called as ``func(block, axis=axis,
    include_initial=False)`` (like ``numpy.cumsum`` with that keyword); *binop*
    combines the running result of the earlier blocks (a length-1 slice along
    *axis*) with a block's own scan (``numpy.add`` for a cumulative sum).
    *preop* and *split_every* are accepted for compatibility: the carries are
    computed from the last element of each block's scan. *axis* None flattens.
    """
    if include_initial:
        raise NotImplementedError("scan with include_initial=True is not supported")
    kwargs = {"include_initial": False} if has_keyword(func, "include_initial") else {}
    return _scan_entry(array, func, kwargs, binop, axis, dtype)


def cumreduction(
    func: Callable,
    binop: Callable,
    ident: Any,
    x: Array,
    axis: int | None = None,
    dtype: Any = None,
    out: Any = None,
    method: str = "sequential",
    preop: Callable | None = None,
) -> Array:
    """Dask's ``cumreduction``: *func* (``np.cumsum``) per block, *binop* to carry across blocks.

    This is what xarray's ``ffill``/``bfill`` (``push``) run. *ident*, *method*
    and *preop* are accepted for compatibility; the result is the same whatever
    *method* is (carries are the scan of each block's last element).
    """
    if out is not None:
        raise NotImplementedError("cumreduction with out= is not supported")
    return _scan_entry(x, func, {}, binop, axis, dtype)


def _scan_entry(
    x: Array, func: Callable, kwargs: dict, binop: Callable, axis: int | None, dtype: Any
) -> Array:
    if axis is None:
        x = apply("reshape", {"shape": [-1]}, [x])
        axis = 0
    axis = _normalize_axis(axis, x.ndim, "scan")[0]
    dtype = x.dtype if dtype is None else _dtypes.normalize(dtype)
    return _scan(x, func, kwargs, binop, axis, dtype, pyfunc.describe(func))
