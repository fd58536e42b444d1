"""Groupby reductions with Python functions: Cubed's ``cubed.core.groupby``.

These are the two operations flox's Cubed path calls (``xarray`` groupby and
resample with flox installed), with Cubed's signatures:

* :func:`groupby_reduction` ("map-reduce"): each block of *x* is reduced by
  *func* into one slot per group (``num_groups`` along the grouped axis), then
  rounds of *combine_func* fold the blocks' slots together group by group,
  streaming one block at a time, and *aggregate_func* turns the folded
  intermediate into the result. A task holds one input block and two
  intermediate blocks, whatever the number of blocks or groups.
* :func:`groupby_blockwise` ("blockwise"): for labels sorted along the axis,
  each task reads the elements of a run of whole groups and reduces them at
  once; no combining rounds.

Intermediates may carry several fields (a structured ``intermediate_dtype``):
the functions then see and return dicts of arrays. As in Cubed, the combining
functions see the blocks being folded stacked along a *dummy* last axis
(``dummy_axis=-1``), and reduce over it only.

The module is also importable as ``cubego.core.groupby``, Cubed's path.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from cubego.array_api.creation_functions import asarray
from cubego.array_api.manipulation_functions import expand_dims
from cubego.binding import pyfunc
from cubego.core import dtypes as _dtypes
from cubego.core.array import Array
from cubego.primitive.blockwise import (
    _fields_of,
    _own,
    _ranges_map,
    _store,
    has_keyword,
    python_op,
)
from cubego.primitive.reduction import _concat

__all__ = ["groupby_blockwise", "groupby_reduction"]


def _single_axis(axis: Any, ndim: int, what: str) -> int:
    if isinstance(axis, (tuple, list)):
        if len(axis) != 1:
            raise ValueError(f"Only a single axis is supported for {what}: {axis}")
        axis = axis[0]
    if axis is None:
        raise ValueError(f"{what} needs the axis to group along")
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim


def _num_groups(num_groups: Any, what: str) -> int:
    if num_groups is None:
        raise ValueError(f"{what} needs num_groups, the number of groups")
    n = operator.index(num_groups)
    if n < 1:
        raise ValueError(f"{what}: num_groups must be at least 1, got {n}")
    return n


def _labels_1d(by: Any, length: int, what: str) -> None:
    if by.ndim != 1:
        raise ValueError(f"Array `by` must be 1D, but has {by.ndim} dimensions.")
    if by.shape[0] != length:
        raise ValueError(
            f"{what}: `by` has {by.shape[0]} labels but the grouped axis has {length} elements"
        )
    if np.dtype(by.dtype).kind not in "iu":
        raise TypeError(f"{what}: `by` must hold integer group labels, got dtype {by.dtype}")


# ---------------------------------------------------------------------- helpers on blocks
#
# Between the steps of groupby_reduction each block's slots are stored with the
# grouped axis holding the block (length 1 per block) and the groups on a new
# last axis: reduction rounds then fold whole blocks along the grouped axis, one
# element of it per block. The functions see flox's and Cubed's layout: the
# groups along the grouped axis, and a dummy last axis to fold over.


def _each(value: Any, fn: Callable) -> Any:
    """*fn* applied to an array, or to each field of a dict of arrays."""
    if isinstance(value, dict):
        return {k: fn(v) for k, v in value.items()}
    return fn(np.asarray(value))


def _stored(value: Any, axis: int) -> Any:
    """Slots along *axis* -> block along *axis* (length 1), slots on a new last axis."""
    return _each(value, lambda v: np.expand_dims(np.moveaxis(v, axis, -1), axis))


def _slots(value: Any, axis: int) -> Any:
    """The inverse of :func:`_stored`."""
    return _each(value, lambda v: np.moveaxis(np.squeeze(v, axis), -1, axis))


def _with_dummy(value: Any) -> Any:
    return _each(value, lambda v: v[..., np.newaxis])


def _without_dummy(value: Any, ndim: int) -> Any:
    return _each(value, lambda v: v[..., 0] if v.ndim == ndim + 1 else v)


def _block_bytes(chunks: tuple[tuple[int, ...], ...], itemsize: int) -> int:
    return math.prod(max(c) if c else 0 for c in chunks) * itemsize


# ---------------------------------------------------------------------- task functions


class _GroupChunk:
    """Map step: one block and its labels reduced into ``num_groups`` slots."""

    def __init__(self, func: Callable, kwargs: dict, axis: int, struct: np.dtype | None):
        self.func = func
        self.kwargs = kwargs
        self.axis = axis
        self.struct = struct
        self.name = pyfunc.describe(func)

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        block, labels = inputs
        result = self.func(block, labels, axis=self.axis, **self.kwargs)
        _store(out, _stored(result, self.axis), task, self.struct, self.name)


class _GroupCombine:
    """One combining round: fold a group of blocks, one block per step, slot by slot."""

    def __init__(
        self, combine: Callable, kwargs: dict, axis: int, ndim: int, struct: np.dtype | None
    ):
        self.combine = combine
        self.kwargs = kwargs
        self.axis = axis
        self.ndim = ndim
        self.struct = struct
        self.name = pyfunc.describe(combine)

    def _read(self, block: np.ndarray, copy: bool) -> Any:
        if self.struct is not None:
            fields: Any = _fields_of(block, self.struct)
            if copy:
                fields = {k: v.copy() for k, v in fields.items()}
        else:
            fields = block.copy() if copy else block
        return _with_dummy(_slots(fields, self.axis))

    def _fold(self, stacked: Any) -> Any:
        return self.combine(stacked, keepdims=True, **self.kwargs)

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        result = self._fold(self._read(inputs[0], copy=False))
        if not task.first:
            # The previous and the current intermediate, stacked along the dummy axis.
            result = self._fold(_concat(self._read(out, copy=True), result, -1))
        stored = _stored(_without_dummy(result, self.ndim), self.axis)
        _store(out, stored, task, self.struct, self.name)


class _GroupAggregate:
    """Final step: the folded intermediate (with its dummy axis) turned into the result."""

    def __init__(self, aggregate: Callable | None, kwargs: dict, axis: int, ndim: int, struct: Any):
        self.aggregate = aggregate
        self.kwargs = kwargs
        self.axis = axis
        self.ndim = ndim
        self.struct = struct
        self.name = pyfunc.describe(aggregate) if aggregate is not None else "groupby_reduction"

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        block: Any = inputs[0]
        if self.struct is not None:
            block = _fields_of(block, self.struct)
        slots = _slots(block, self.axis)
        if self.aggregate is None:
            result = slots
        else:
            result = _without_dummy(self.aggregate(_with_dummy(slots), **self.kwargs), self.ndim)
        pyfunc.write_block(out, np.asarray(result).astype(out.dtype, copy=False), task, self.name)


class _GroupBlockwise:
    """Blockwise step: the elements of a run of whole groups, reduced at once."""

    def __init__(
        self,
        func: Callable,
        labels: np.ndarray,
        bounds: list[int],
        axis: int,
        groups_per_block: int,
        kwargs: dict,
    ):
        self.func = func
        self.labels = labels
        self.bounds = bounds
        self.axis = axis
        self.groups_per_block = groups_per_block
        self.kwargs = kwargs
        self.name = pyfunc.describe(func)

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        i = task.block[self.axis]
        labels = self.labels[self.bounds[i] : self.bounds[i + 1]]
        result = self.func(
            inputs[0],
            labels,
            axis=self.axis,
            start_group=i * self.groups_per_block,
            num_groups=out.shape[self.axis],
            **self.kwargs,
        )
        pyfunc.write_block(out, result, task, self.name)


# ---------------------------------------------------------------------- operations


def groupby_reduction(
    x: Array,
    by: Any,
    func: Callable,
    combine_func: Callable | None = None,
    aggregate_func: Callable | None = None,
    axis: Any = None,
    intermediate_dtype: Any = None,
    dtype: Any = None,
    keepdims: bool = False,
    split_every: int | None = None,
    num_groups: int | None = None,
    extra_func_kwargs: dict | None = None,
) -> Array:
    """A reduction of *x* along one axis, group by group (Cubed's ``groupby_reduction``).

    Parameters
    ----------
    x : Array
        The array grouped along *axis*.
    by : Array or numpy array
        1-D non-negative integer group labels, one per element along *axis*
        (negative labels belong to no group, as in flox). Its chunks need not
        match *x*'s: each task reads the labels of its block.
    func : callable
        ``func(block, labels, axis=axis, intermediate_dtype=..., num_groups=...)``
        reduces one block into a block with ``num_groups`` elements along
        *axis* (a dict of arrays for a structured *intermediate_dtype*).
    combine_func : callable, optional
        ``combine_func(a, axis=(dummy, axis), keepdims=True, dtype=intermediate_dtype,
        dummy_axis=-1)`` folds intermediates stacked along a dummy last axis,
        reducing over that axis only. Required unless *x* has one block
        along *axis*.
    aggregate_func : callable, optional
        Turns the folded intermediate (with its dummy axis) into the result;
        receives ``axis``/``keepdims`` if it names them, and ``dtype`` and
        ``dummy_axis``. Required for a structured *intermediate_dtype*.
    axis : int or 1-tuple
        The grouped axis.
    intermediate_dtype : dtype, optional
        The intermediates' dtype (a list of ``(name, dtype)`` for several
        fields); default *dtype*.
    dtype : dtype
        The result's dtype.
    keepdims : bool, default False
        Keep the dummy axis (length 1) at the end of the result.
    split_every : int, optional
        Blocks folded per combining round (default 4).
    num_groups : int
        The number of groups: the result's length along *axis*.
    extra_func_kwargs : dict, optional
        More keyword arguments for *func* and *combine_func*.

    Returns
    -------
    Array
        *x*'s shape with ``num_groups`` along *axis* (one block), in *dtype*.
    """
    what = "groupby_reduction"
    if not isinstance(x, Array):
        raise TypeError(f"{what}: x must be a cubego Array, got {type(x).__name__}")
    axis = _single_axis(axis, x.ndim, what)
    groups = _num_groups(num_groups, what)
    if not isinstance(by, Array):
        by = np.asarray(by)
        _labels_1d(by, x.shape[axis], what)
        by = asarray(by, spec=x.spec)
    else:
        _labels_1d(by, x.shape[axis], what)
    if dtype is None:
        raise ValueError(f"{what} needs the dtype of its result")
    dtype = _dtypes.normalize(dtype)
    intermediate = np.dtype(dtype if intermediate_dtype is None else intermediate_dtype)
    struct = intermediate if intermediate.names else None
    extra = dict(extra_func_kwargs or {})
    split = operator.index(split_every or 4)
    if split < 2:
        raise ValueError(f"{what}: split_every must be at least 2, got {split}")

    # Map: every block reduced into num_groups slots (stored: see _stored).
    nd = x.ndim
    blocks = (1,) * x.numblocks[axis]
    chunks = tuple(blocks if d == axis else c for d, c in enumerate(x.chunks)) + ((groups,),)
    x_maps = [_own(d, c) for d, c in enumerate(x.chunks)]
    by_maps = [_own(axis, x.chunks[axis])]
    chunk_fn = _GroupChunk(
        func, dict(intermediate_dtype=intermediate_dtype, num_groups=groups, **extra), axis, struct
    )
    result: Any = python_op(
        chunk_fn,
        "groupby_reduction",
        [(x, x_maps), (by, by_maps)],
        tuple(sum(c) for c in chunks),
        intermediate,
        chunks,
        label=pyfunc.describe(func),
    )

    # Combine: rounds folding split_every blocks along the axis, slot by slot.
    if result.numblocks[axis] > 1 and combine_func is None:
        raise ValueError(f"{what}: combine_func is needed when x has several blocks along axis")
    combine_kwargs = dict(axis=(nd, axis), dtype=intermediate_dtype, dummy_axis=-1, **extra)
    while result.numblocks[axis] > 1:
        out_chunks = tuple(
            (1,) * math.ceil(len(c) / split) if d == axis else c for d, c in enumerate(chunks)
        )
        maps = [
            {"kind": "blocks", "out_dim": axis, "factor": split, "iter_axis": 0}
            if d == axis
            else _own(d, c)
            for d, c in enumerate(chunks)
        ]
        block_bytes = _block_bytes(out_chunks, intermediate.itemsize)
        fn = _GroupCombine(combine_func, combine_kwargs, axis, nd, struct)
        result = python_op(
            fn,
            "groupby_combine",
            [(result, maps)],
            tuple(sum(c) for c in out_chunks),
            intermediate,
            out_chunks,
            # a block being read, and two intermediates stacked
            extra_mem=3 * block_bytes,
            label=pyfunc.describe(combine_func),
        )
        chunks = out_chunks

    # Aggregate: the folded intermediate turned into the result, groups along the axis.
    if aggregate_func is None and struct is not None:
        raise ValueError(f"{what} with a structured intermediate_dtype needs an aggregate_func")
    kwargs = dict(dtype=intermediate_dtype, dummy_axis=-1)
    if aggregate_func is not None and has_keyword(aggregate_func, "axis"):
        kwargs["axis"] = (nd, axis)
    if aggregate_func is not None and has_keyword(aggregate_func, "keepdims"):
        kwargs["keepdims"] = True
    out_chunks = tuple((groups,) if d == axis else c for d, c in enumerate(x.chunks))
    maps = [{"kind": "full"} if d == axis else _own(d, c) for d, c in enumerate(x.chunks)] + [
        _own(axis, (groups,))
    ]
    fn = _GroupAggregate(aggregate_func, kwargs, axis, nd, struct)
    result = python_op(
        fn,
        "groupby_aggregate",
        [(result, maps)],
        tuple(sum(c) for c in out_chunks),
        dtype,
        out_chunks,
        label=pyfunc.describe(aggregate_func) if aggregate_func is not None else None,
    )
    if keepdims:
        result = expand_dims(result, axis=-1)
    return result


def _blockwise_dtype(func: Callable, x: Array, axis: int, kwargs: dict, what: str) -> np.dtype:
    """The dtype *func* returns for a one-element block of one group (as Dask infers dtypes)."""
    sample = np.ones((1,) * x.ndim, dtype=x.dtype)
    try:
        result = func(
            sample, np.zeros(1, dtype=np.int64), axis=axis, start_group=0, num_groups=1, **kwargs
        )
    except Exception as e:  # noqa: BLE001 - any failure means "tell me the dtype"
        raise ValueError(
            f"{what}: inferring the result's dtype failed ({pyfunc.describe(func)} raised "
            f"{type(e).__name__}: {e}); pass dtype="
        ) from e
    return np.asarray(result).dtype


def groupby_blockwise(
    x: Array,
    by: Any,
    func: Callable,
    axis: Any = None,
    dtype: Any = None,
    num_groups: int | None = None,
    **kwargs: Any,
) -> Array:
    """A groupby reduction of whole groups per task (Cubed's ``groupby_blockwise``).

    Parameters
    ----------
    x : Array
        The array grouped along *axis*.
    by : numpy array
        1-D integer labels, one per element along *axis*, **sorted** (each
        group's elements are contiguous). Read in memory, as in Cubed.
    func : callable
        ``func(block, labels, axis=axis, start_group=s, num_groups=n, **kwargs)``
        reduces the elements of groups ``s .. s+n-1`` (labels minus *s* are
        their slots) into a block with *n* elements along *axis*.
    axis : int or 1-tuple
    dtype : dtype, optional
        The result's dtype; by default what *func* returns for a one-element
        block.
    num_groups : int
        The number of groups: the result's length along *axis*.
    **kwargs
        More keyword arguments for *func*.

    Returns
    -------
    Array
        *x*'s shape with ``num_groups`` along *axis*. Each output block holds
        ``num_groups // x.numblocks[axis]`` groups (at least one; the last
        block the rest), and its task reads the elements of those groups.
    """
    what = "groupby_blockwise"
    if not isinstance(x, Array):
        raise TypeError(f"{what}: x must be a cubego Array, got {type(x).__name__}")
    labels = by.compute() if isinstance(by, Array) else np.asarray(by)
    if labels.ndim != 1:
        raise ValueError(f"Array `by` must be 1D, but has {labels.ndim} dimensions.")
    axis = _single_axis(axis, x.ndim, what)
    groups = _num_groups(num_groups, what)
    _labels_1d(labels, x.shape[axis], what)
    if labels.size > 1 and np.any(labels[1:] < labels[:-1]):
        raise ValueError(f"{what}: `by` must be sorted (each group's elements contiguous)")
    if dtype is None:
        dtype = _blockwise_dtype(func, x, axis, kwargs, what)
    dtype = _dtypes.normalize(dtype)

    per_block = max(groups // max(x.numblocks[axis], 1), 1)
    first = np.searchsorted(labels, np.arange(0, groups, per_block))
    bounds = [int(b) for b in first] + [int(labels.size)]
    bounds[0] = 0  # elements before the first group (negative labels) go to the first block
    nblocks = len(bounds) - 1
    out_axis = tuple(min(per_block, groups - i * per_block) for i in range(nblocks))
    ranges = [[bounds[i], bounds[i + 1]] for i in range(nblocks)]
    maps = [_ranges_map(axis, ranges) if d == axis else _own(d, c) for d, c in enumerate(x.chunks)]
    chunks = tuple(out_axis if d == axis else c for d, c in enumerate(x.chunks))
    fn = _GroupBlockwise(func, labels, bounds, axis, per_block, kwargs)
    return python_op(
        fn,
        "groupby_blockwise",
        [(x, maps)],
        tuple(sum(c) for c in chunks),
        dtype,
        chunks,
        label=pyfunc.describe(func),
    )
