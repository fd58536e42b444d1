"""Reductions with Python functions: ``reduction`` and ``arg_reduction`` (Dask's semantics).

A reduction is a tree: the *chunk* function on every block (a blockwise op),
then rounds of ``partial_reduce`` folding ``split_every`` blocks into one with
*combine*, then *aggregate* on the last block (Cubed's algorithm). Each round
is an op whose task reads its group of blocks one at a time, so a task holds
one input block and two reduced blocks, whatever the number of blocks. Fields
of record intermediates (``mean``'s count and total) travel as structured
dtypes (:class:`cubego.primitive.blockwise._Fields`).
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from cubego.binding import pyfunc
from cubego.core import dtypes as _dtypes
from cubego.core.array import Array, apply
from cubego.primitive.blockwise import (
    _blockwise,
    _Fields,
    _fields_of,
    _identity,
    _store,
    has_keyword,
    map_blocks,
    python_op,
)

__all__ = ["arg_reduction", "reduction"]


def _concat(a: Any, b: Any, axis: int) -> Any:
    if isinstance(a, dict):
        return {k: np.concatenate([a[k], b[k]], axis=axis) for k in a}
    return np.concatenate([a, b], axis=axis)


class _PartialReduce:
    """One reduction round: fold a group of blocks, one block per step.

    At each step the block is reduced (after *initial* in the first round) and
    combined with the result of the previous steps, which the output block
    holds, by concatenating the two along the first reduced axis and reducing
    again (Cubed's ``partial_reduce``).
    """

    def __init__(
        self,
        func: Callable,
        initial: Callable | None,
        axis: tuple[int, ...],
        in_struct: np.dtype | None,
        out_struct: np.dtype | None,
    ):
        self.func = func
        self.initial = initial
        self.axis = axis
        self.in_struct = in_struct
        self.out_struct = out_struct
        self.name = pyfunc.describe(func)

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        block = inputs[0]
        if self.in_struct is not None:
            block = _fields_of(block, self.in_struct)
        if self.initial is not None:
            block = self.initial(block)
        result = self.func(block, axis=self.axis, keepdims=True)
        if not task.first:
            if self.out_struct is not None:
                previous = {k: v.copy() for k, v in _fields_of(out, self.out_struct).items()}
            else:
                previous = out.copy()
            result = self.func(
                _concat(previous, result, self.axis[0]), axis=self.axis, keepdims=True
            )
        _store(out, result, task, self.out_struct, self.name)


def _partial_reduce(
    x: Any, func: Callable, initial: Callable | None, split_every: dict, dtype: np.dtype, label: str
) -> Any:
    """Fold groups of ``split_every[axis]`` blocks along each reduced axis into one element."""
    axis = tuple(sorted(split_every))
    dims, chunks = [], []
    for d in range(x.ndim):
        if d in split_every:
            groups = math.ceil(len(x.chunks[d]) / split_every[d])
            dims.append(
                {
                    "kind": "blocks",
                    "out_dim": d,
                    "factor": split_every[d],
                    "iter_axis": axis.index(d),
                }
            )
            chunks.append((1,) * groups)
        else:
            dims.append(_identity(d))  # the output keeps this axis's blocks
            chunks.append(x.chunks[d])
    shape = tuple(sum(c) for c in chunks)
    in_struct = x.dtype if isinstance(x, _Fields) else None
    out_struct = dtype if dtype.names else None
    itemsize = x.dtype.itemsize
    chunk_bytes = math.prod(max(c) if c else 0 for c in x.chunks) * itemsize
    out_bytes = math.prod(max(c) if c else 0 for c in chunks) * dtype.itemsize
    fn = _PartialReduce(func, initial, axis, in_struct, out_struct)
    return python_op(
        fn,
        "partial_reduce",
        [(x, dims)],
        shape,
        dtype,
        chunks,
        # Cubed's projection: a block being read, and two reduced blocks concatenated
        extra_mem=chunk_bytes + 2 * out_bytes,
        label=label,
    )


def _normalize_split_every(split_every: Any, axis: tuple[int, ...]) -> dict[int, int]:
    split_every = split_every or 4
    if isinstance(split_every, dict):
        return {k: int(split_every.get(k, 2)) for k in axis}
    if isinstance(split_every, numbers.Integral):
        n = max(int(split_every ** (1 / (len(axis) or 1))), 2)
        return dict.fromkeys(axis, n)
    raise ValueError("split_every must be an int or a dict")


def _normalize_axis(axis: Any, ndim: int, what: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, numbers.Integral):
        axis = (axis,)
    out = []
    for a in axis:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{what}: axis {a} is out of bounds for an array of dimension {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: repeated axis in {axis}")
    return tuple(sorted(out))


def _squeeze(x: Array, axis: tuple[int, ...]) -> Array:
    return apply("squeeze", {"axis": list(axis)}, [x]) if axis else x


def reduction(
    x: Any,
    func: Callable | None,
    combine_func: Callable | None = None,
    aggregate_func: Callable | None = None,
    axis: Any = None,
    intermediate_dtype: Any = None,
    dtype: Any = None,
    keepdims: bool = False,
    split_every: Any = None,
    extra_func_kwargs: dict | None = None,
) -> Array:
    """Reduce *x* along *axis* with Python functions, as a tree of rounds (Cubed's ``reduction``).

    Parameters
    ----------
    x : Array
    func : callable
        Applied to each block as ``func(block, axis=axis, keepdims=True)``.
    combine_func : callable, optional
        Combines results ``combine_func(x, axis=axis, keepdims=True)``, where *x* is
        partial results concatenated along the first reduced axis; default *func*.
        Each round folds ``split_every`` blocks per reduced axis, streaming one block
        at a time, so a task holds at most two partial results.
    aggregate_func : callable, optional
        Applied to the final partial result (with ``axis=``/``keepdims=True`` if it
        takes them) to produce the output.
    axis : int or tuple of ints, optional
        Default: all axes.
    intermediate_dtype : dtype, optional
        The dtype of partial results; a structured dtype (e.g.
        ``[("n", np.int64), ("total", np.float64)]``) makes them dicts of arrays.
        Default: *dtype*.
    dtype : dtype
        The output dtype (default: the input's).
    keepdims : bool, default False
    split_every : int or dict, optional
        Blocks combined per round (default 4, spread over the reduced axes).
    extra_func_kwargs : dict, optional
        More keyword arguments for *func*, *combine_func* and *aggregate_func*.
    """
    if combine_func is None:
        if func is None:
            raise ValueError(
                "At least one of `func` and `combine_func` must be specified in reduction"
            )
        combine_func = func
    axis = _normalize_axis(axis, x.ndim, "reduction")
    if dtype is None:
        dtype = x.dtype if not isinstance(x, _Fields) else None
        if dtype is None:
            raise ValueError("reduction of a structured array needs a dtype")
    dtype = _dtypes.normalize(dtype)
    intermediate = np.dtype(dtype if intermediate_dtype is None else intermediate_dtype)
    extra = dict(extra_func_kwargs or {})
    split = _normalize_split_every(split_every, axis)
    label = pyfunc.describe(func if func is not None else combine_func)
    initial = None if func is None else partial(func, axis=axis, keepdims=True, **extra)
    combine = partial(combine_func, **extra) if extra else combine_func
    result = _partial_reduce(x, combine, initial, split, intermediate, label)
    while any(result.numblocks[a] > 1 for a in axis):
        result = _partial_reduce(result, combine, None, split, intermediate, label)
    if aggregate_func is not None:
        agg_kwargs = dict(extra)
        if has_keyword(aggregate_func, "axis"):
            agg_kwargs["axis"] = axis
        if has_keyword(aggregate_func, "keepdims"):
            agg_kwargs["keepdims"] = True
        agg = partial(aggregate_func, **agg_kwargs) if agg_kwargs else aggregate_func
        ind = tuple(range(result.ndim))
        result = _blockwise(
            agg,
            ind,
            [(result, ind)],
            dtype=dtype,
            adjust_chunks=None,
            new_axes=None,
            align_arrays=False,
            concatenate=True,
            kwargs={},
            extra_mem=0,
            func_name="aggregate",
        )
    elif isinstance(result, _Fields):
        raise ValueError("reduction with a structured intermediate_dtype needs an aggregate_func")
    if not keepdims:
        result = _squeeze(result, tuple(a for a in axis if result.shape[a] == 1))
    if result.dtype != dtype:
        result = result.astype(dtype)
    return result


def _arg_block(
    a: np.ndarray, axis: int = 0, arg_func: Callable = np.argmax, block_info: dict | None = None
) -> dict:
    """Per block: the position (in the whole array) and value of the arg-extremum along axis."""
    i = arg_func(a, axis=axis, keepdims=True)
    v = np.take_along_axis(a, i, axis=axis)
    offset = block_info[0]["array-location"][axis][0]
    return {"i": i + offset, "v": v}


def _arg_combine(
    a: dict, axis: tuple[int, ...] = (0,), arg_func: Callable = np.argmax, keepdims: bool = True
) -> dict:
    ax = axis[0]
    vi = arg_func(a["v"], axis=ax, keepdims=True)
    return {
        "i": np.take_along_axis(a["i"], vi, axis=ax),
        "v": np.take_along_axis(a["v"], vi, axis=ax),
    }


def _arg_aggregate(a: dict) -> np.ndarray:
    return a["i"]


def arg_reduction(
    x: Array,
    /,
    arg_func: Callable,
    axis: int | None = None,
    *,
    keepdims: bool = False,
    split_every: Any = None,
) -> Array:
    """Indices of the extremum along *axis* chosen by *arg_func* (e.g. ``np.argmax``).

    Each block yields ``(index, value)`` records, which reduction rounds combine
    with *arg_func*; ties go to the first occurrence. *axis* None flattens first.
    """
    ndim = x.ndim
    if axis is None:
        x = apply("reshape", {"shape": [-1]}, [x])
        axis = 0
    else:
        axis = _normalize_axis(axis, ndim, "arg_reduction")[0]
    if x.shape[axis] == 0:
        raise ValueError("attempt to get the arg-extremum of an empty sequence")
    index = np.dtype(np.int64)
    intermediate = np.dtype([("i", index), ("v", x.dtype)])
    chunks = tuple((1,) * len(c) if d == axis else c for d, c in enumerate(x.chunks))
    blocks = map_blocks(
        partial(_arg_block, axis=axis, arg_func=arg_func), x, dtype=intermediate, chunks=chunks
    )
    result = reduction(
        blocks,
        None,
        partial(_arg_combine, arg_func=arg_func),
        _arg_aggregate,
        axis=axis,
        intermediate_dtype=intermediate,
        dtype=index,
        keepdims=keepdims,
        split_every=split_every,
    )
    if keepdims and ndim != 1 and result.ndim != ndim:
        result = apply("reshape", {"shape": [1] * ndim}, [result])
    return result
