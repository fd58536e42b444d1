"""Chunk functions: Python callables applied block by block, with Dask's semantics.

``map_blocks``, ``blockwise``, ``reduction``, ``arg_reduction``, ``scan`` /
``cumreduction`` and lazy ``from_array`` (here), ``map_overlap``
(:mod:`cubego.primitive.overlap`) and ``apply_gufunc`` (:mod:`cubego.primitive.gufunc`) build
ops whose kernel is a Python function (the library's ``"python"`` core, see
docs/chunk_functions.md). Each op is described to the library by
``cg_python_op``: its output shape, dtype and chunks, and for every input
one map per dimension saying which region a task reads:

* ``ranges``: per output block, an element range of the input: the input's
  own block with the same index (blocks that correspond one to one, even
  when the function changes their size), the block of a common chunking that
  several inputs are aligned to (the engine assembles it from the input's
  chunks, so aligning costs no rechunk), or a block extended by its
  neighbours' elements (``map_overlap``);
* ``full``: the whole dimension (broadcast inputs, and dimensions a
  function contracts, which Dask would concatenate);
* ``blocks``: reduction rounds stream a group of blocks one at a time.

The function itself travels as a *task function* (classes below, called as
``fn(inputs, out, task)``) pickled with cloudpickle, so an array pickled by
``Array.__reduce__`` carries it; :mod:`cubego._callback` runs it.

Reductions may carry several fields per element (``mean`` carries a count
and a total): their intermediates have a structured dtype, stored as a
``uint8`` array with one more axis holding each record's bytes
(:class:`_Fields`), and functions see and return dicts of arrays.
"""

from __future__ import annotations

import hashlib
import inspect
import numbers
import operator
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cubego.array_api import creation_functions as _creation
from cubego.array_api.creation_functions import asarray, empty
from cubego.binding import libcubego, pyfunc
from cubego.core import datetimes as _datetimes
from cubego.core import dtypes as _dtypes
from cubego.core.array import Array
from cubego.core.config import resolve
from cubego.core.spec import Spec, common

__all__ = ["blockwise", "from_array", "map_blocks", "python_op"]

# Keyword arguments of Dask's map_blocks/blockwise that are not the function's.
_DASK_ONLY = ("name", "token", "meta", "enforce_ndim")


# ---------------------------------------------------------------------- building ops


class _Fields:
    """An intermediate array with a structured dtype (reduction intermediates).

    The library stores it as a ``uint8`` array with one more axis, the bytes
    of each record; functions see a dict of field arrays.
    """

    def __init__(self, array: Array, dtype: np.dtype):
        self.array = array
        self.dtype = dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape[:-1]

    @property
    def chunks(self) -> tuple[tuple[int, ...], ...]:
        return self.array.chunks[:-1]

    @property
    def ndim(self) -> int:
        return self.array.ndim - 1

    @property
    def numblocks(self) -> tuple[int, ...]:
        return self.array.numblocks[:-1]

    @property
    def spec(self) -> Spec:
        return self.array.spec


_Chunked = (Array, _Fields)


class _Unpicklable:
    """Stands in for a task function that cloudpickle cannot serialise.

    The op still runs in the process that built it (the live function is in
    the callback's cache); anywhere else its tasks fail with this message.
    """

    def __init__(self, what: str, reason: str):
        self.what = what
        self.reason = reason
        self.id = uuid.uuid4().hex  # distinct ops keep distinct keys

    def __call__(self, inputs: list, out: np.ndarray, task: pyfunc.Task) -> None:
        raise TypeError(
            f"cubego: {self.what} could not be pickled ({self.reason}), so it runs only in "
            "the process that created the array"
        )


def _payload(fn: Any, what: str) -> bytes:
    import cloudpickle

    try:
        return cloudpickle.dumps(fn)
    except Exception as e:  # noqa: BLE001 - any pickling failure keeps the op in-process
        return cloudpickle.dumps(_Unpicklable(what, f"{type(e).__name__}: {e}"))


def _encode_axis(sizes: Sequence[int], length: int) -> int | list[int]:
    """One axis of ``cg_python_op``'s chunks: the block size of a regular axis of
    *length* (all blocks that size but a shorter last one), else the list of
    sizes, so a million equal blocks cross the ABI as one number (docs/capi.md)."""
    sizes = tuple(sizes)
    if sizes:
        first, last, n = sizes[0], sizes[-1], len(sizes)
        if (
            all(isinstance(c, numbers.Integral) for c in (first, last))
            and not isinstance(first, (bool, np.bool_))
            and 0 < last <= first
            and first * (n - 1) + last == length
            and sizes[: n - 1] == (first,) * (n - 1)
        ):
            return int(first)
    return [int(c) for c in sizes]


def _identity(out_dim: int) -> dict:
    """Read the elements of the output block along *out_dim* (an affine identity)."""
    return {"kind": "affine", "out_dim": out_dim, "start": 0, "step": 1}


def _ranges(chunks: Sequence[int]) -> list[list[int]]:
    out, start = [], 0
    for c in chunks:
        out.append([start, start + c])
        start += c
    return out


def _ranges_map(out_dim: int, ranges: list[list[int]]) -> dict:
    return {"kind": "ranges", "out_dim": out_dim, "ranges": ranges}


def _own(out_dim: int, chunks: Sequence[int]) -> dict:
    """Read the input's own block with the output block's index."""
    return _ranges_map(out_dim, _ranges(chunks))


_FULL = {"kind": "full"}


def python_op(
    fn: Callable,
    func_name: str,
    inputs: Sequence[tuple[Any, list[dict]]],
    shape: Sequence[int],
    dtype: Any,
    chunks: Sequence[Sequence[int]],
    *,
    spec: Spec | None = None,
    extra_mem: int = 0,
    label: str | None = None,
) -> Any:
    """An array whose blocks the task function *fn* computes (``cg_python_op``).

    *inputs* pairs each input (an Array or a structured intermediate) with its
    dimension maps (docs/capi.md). *spec* is for ops without inputs. Returns
    an Array, or a :class:`_Fields` for a structured *dtype*.
    """
    dtype = np.dtype(dtype)
    shape = tuple(int(n) for n in shape)
    chunks = [_encode_axis(axis, n) for axis, n in zip(chunks, shape, strict=True)]
    struct = dtype if dtype.names else None
    logical = None
    if struct is not None:
        engine_dtype = "uint8"
        engine_shape = list(shape) + [struct.itemsize]
        engine_chunks = chunks + [struct.itemsize]
    else:
        logical = _dtypes.datetime_dtype(dtype)  # stored as int64, seen as datetimes
        engine_dtype = _dtypes.storage(dtype).name
        engine_shape, engine_chunks = list(shape), chunks
    in_logical = [None if isinstance(x, _Fields) else x._logical for x, _ in inputs]
    if logical is not None or any(d is not None for d in in_logical):
        fn = _datetimes.Viewing(fn, in_logical, logical)
    handles, maps = [], []
    for x, dims in inputs:
        if isinstance(x, _Fields):
            handles.append(x.array._handle)
            maps.append(list(dims) + [_FULL])
        else:
            handles.append(x._handle)
            maps.append(list(dims))
    payload = _payload(fn, label or func_name)
    key = hashlib.sha256(payload).hexdigest()
    pyfunc.register(key, fn)
    args: dict[str, Any] = {
        "func": func_name,
        "shape": engine_shape,
        "dtype": engine_dtype,
        "chunks": engine_chunks,
        "maps": maps,
        "meta": {"function": label or func_name},
        "extra_mem": int(extra_mem),
    }
    if inputs:
        out_spec = common(x.spec for x, _ in inputs)
    else:
        out_spec = resolve(spec)
        args["spec"] = out_spec._to_json()
    (info,) = libcubego.python_op(args, payload, handles)
    array = Array._new(info, out_spec)
    if logical is not None:
        _datetimes.tag(array, logical)
    return _Fields(array, struct) if struct is not None else array


# ---------------------------------------------------------------------- task functions


def _fields_of(block: np.ndarray, struct: np.dtype) -> dict[str, np.ndarray]:
    """The field arrays of a structured block stored as bytes (views, not copies)."""
    records = block.view(struct).reshape(block.shape[:-1])
    return {name: records[name] for name in struct.names}


def _store(
    out: np.ndarray, result: Any, task: pyfunc.Task, struct: np.dtype | None, name: str
) -> None:
    """Write a function's result into the output block (a dict of fields if structured)."""
    if struct is None:
        pyfunc.write_block(out, result, task, name)
        return
    target = out.view(struct).reshape(out.shape[:-1])
    if isinstance(result, np.ndarray) and result.dtype.names:
        result = {n: result[n] for n in result.dtype.names}
    if not isinstance(result, dict) or set(result) != set(struct.names):
        got = sorted(result) if isinstance(result, dict) else type(result).__name__
        raise ValueError(
            f"{name} returned {got} for {pyfunc.where(task)}, which needs a dict with the "
            f"fields {list(struct.names)}"
        )
    for field in struct.names:
        value = np.asarray(result[field])
        want = struct.fields[field][0]
        if value.shape != target.shape or not np.can_cast(value.dtype, want, "same_kind"):
            raise ValueError(
                f"{name} returned field {field!r} of shape {value.shape} and dtype {value.dtype} "
                f"for {pyfunc.where(task)}, which needs shape {target.shape} and dtype {want}"
            )
        target[field] = value


def _split(block: np.ndarray, dims: list[tuple[int, tuple[int, ...]]]) -> Any:
    """Nested lists of the blocks of *block* along contracted dims (concatenate=False)."""
    if not dims:
        return block
    (d, sizes), rest = dims[0], dims[1:]
    out, start = [], 0
    for s in sizes:
        index = (slice(None),) * d + (slice(start, start + s),)
        out.append(_split(block[index], rest))
        start += s
    return out


def _block_info(info: dict, block: tuple[int, ...]) -> dict:
    """Dask's ``block_info`` for one output block, from the op's static description."""
    result: dict[Any, dict] = {}
    for pos, (shape, nchunks, starts, where) in info["inputs"].items():
        loc = tuple(
            block[o] if o is not None and n > 1 else 0 for o, n in zip(where, nchunks, strict=True)
        )
        result[pos] = {
            "shape": shape,
            "num-chunks": nchunks,
            "array-location": [(s[i], s[i + 1]) for s, i in zip(starts, loc, strict=True)],
            "chunk-location": loc,
        }
    shape, starts, dtype = info["output"]
    result[None] = {
        "shape": shape,
        "num-chunks": tuple(len(s) - 1 for s in starts),
        "array-location": [(s[i], s[i + 1]) for s, i in zip(starts, block, strict=True)],
        "chunk-location": block,
        "chunk-shape": tuple(s[i + 1] - s[i] for s, i in zip(starts, block, strict=True)),
        "dtype": dtype,
    }
    return result


def _starts(chunks: Sequence[int]) -> tuple[int, ...]:
    return tuple(np.concatenate([[0], np.cumsum(chunks, dtype=np.int64)]).tolist())


class _Blockwise:
    """The task function of ``blockwise`` and ``map_blocks``: one call per block."""

    def __init__(
        self,
        func: Callable,
        args: list[tuple[int | None, Any]],
        kwargs: dict,
        *,
        in_structs: list[np.dtype | None],
        splits: list[list],
        out_struct: np.dtype | None,
        block_id: bool,
        block_info: dict | None,
    ):
        self.func = func
        self.args = args  # (input index, None) for arrays, (None, value) for constants
        self.kwargs = kwargs
        self.in_structs = in_structs
        self.splits = splits
        self.out_struct = out_struct
        self.block_id = block_id
        self.block_info = block_info
        self.name = pyfunc.describe(func)

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        blocks: list[Any] = []
        for b, struct, split in zip(inputs, self.in_structs, self.splits, strict=True):
            if struct is not None:
                b = _fields_of(b, struct)
            elif split:
                b = _split(b, split)
            blocks.append(b)
        args = [blocks[i] if i is not None else value for i, value in self.args]
        kwargs = self.kwargs
        if self.block_id or self.block_info is not None:
            kwargs = dict(kwargs)
            block = task.block
            if self.out_struct is not None:
                block = block[:-1]  # not the axis of the records' bytes
            if self.block_id:
                kwargs["block_id"] = block
            if self.block_info is not None:
                kwargs["block_info"] = _block_info(self.block_info, block)
        result = self.func(*args, **kwargs)
        _store(out, result, task, self.out_struct, self.name)


def has_keyword(func: Any, name: str) -> bool:
    """Whether *func* takes a keyword argument *name* (not just ``**kwargs``), as Dask checks."""
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def _sample(x: Any) -> Any:
    """A one-element block like those of *x*, for dtype inference."""
    if isinstance(x, _Fields):
        return {n: np.ones((1,) * x.ndim, dtype=x.dtype.fields[n][0]) for n in x.dtype.names}
    return np.ones((1,) * x.ndim, dtype=x.dtype)


def _infer_dtype(func: Callable, args: list, kwargs: dict, what: str, out_ndim: int) -> np.dtype:
    """The dtype *func* returns for one-element blocks (Dask's ``apply_infer_dtype``)."""
    sample = [_sample(a) if isinstance(a, _Chunked) else a for a in args]
    kw = dict(kwargs)
    if has_keyword(func, "block_id"):
        kw["block_id"] = (0,) * out_ndim
    try:
        result = func(*sample, **kw)
    except Exception as e:  # noqa: BLE001 - any failure means "tell me the dtype"
        raise ValueError(
            f"`dtype` inference failed in `{what}`. Please specify the dtype explicitly using "
            f"the `dtype` kwarg. ({pyfunc.describe(func)} raised {type(e).__name__}: {e})"
        ) from e
    return np.asarray(result).dtype


def _check_kwargs(kwargs: dict, what: str) -> None:
    for k, v in kwargs.items():
        if isinstance(v, _Chunked):
            raise TypeError(
                f"{what}: keyword argument {k!r} is a cubego Array; pass arrays positionally "
                "(keyword arguments are passed to every call as they are)"
            )


# ---------------------------------------------------------------------- blockwise


def _common_chunks(candidates: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The chunking that several chunkings of one dimension are aligned to (Dask's rule).

    Equal chunkings stay; if only one has several blocks it wins; otherwise the
    common refinement: a block boundary wherever any chunking has one.
    """
    multi = {c for c in candidates if len(c) > 1}
    if not multi:
        return max(candidates, key=lambda c: c[0] if c else 0)
    if len(multi) == 1:
        return next(iter(multi))
    totals = {sum(c) for c in multi}
    if len(totals) > 1:
        raise ValueError(f"chunks do not add up to the same length: {sorted(multi)}")
    bounds: set[int] = set()
    for c in multi:
        bounds.update(np.cumsum(c).tolist())
    edges = [0] + sorted(bounds)
    return tuple(b - a for a, b in zip(edges, edges[1:], strict=False))


def _apply_adjust(chunks: tuple[int, ...], adjust: Any, dim: int) -> tuple[int, ...]:
    if callable(adjust):
        return tuple(int(adjust(c)) for c in chunks)
    if isinstance(adjust, numbers.Integral):
        return (int(adjust),) * len(chunks)
    if isinstance(adjust, (tuple, list)):
        if len(adjust) != len(chunks):
            raise ValueError(
                f"Dimension {dim} has {len(chunks)} blocks, adjust_chunks specified with "
                f"{len(adjust)} blocks"
            )
        return tuple(int(c) for c in adjust)
    raise NotImplementedError("adjust_chunks values must be callable, int, or tuple")


def _blockwise(
    func: Callable,
    out_ind: tuple,
    pairs: list[tuple[Any, tuple | None]],
    *,
    dtype: Any,
    adjust_chunks: dict | None,
    new_axes: dict | None,
    align_arrays: bool,
    concatenate: bool,
    kwargs: dict,
    extra_mem: int,
    func_name: str,
) -> Any:
    """The op of ``blockwise`` in index notation (see :func:`blockwise`)."""
    new_axes = dict(new_axes or {})
    arrays = [(x, ind) for x, ind in pairs if ind is not None]
    for x, ind in arrays:
        if len(ind) != x.ndim:
            raise ValueError(
                f"{func_name}: index {ind!r} has {len(ind)} labels for an array of "
                f"{x.ndim} dimensions"
            )
        if len(set(ind)) != len(ind):
            raise NotImplementedError(f"{func_name}: repeated index labels in {ind!r}")
    if len(set(out_ind)) != len(out_ind):
        raise ValueError(f"{func_name}: repeated labels in the output index {out_ind!r}")
    known = {label for _, ind in arrays for label in ind} | set(new_axes)
    unknown = [label for label in out_ind if label not in known]
    if unknown:
        raise ValueError("Unknown dimension", unknown)

    # The length of each label, broadcasting length-1 dimensions.
    sizes: dict[Any, int] = {}
    for x, ind in arrays:
        for label, n in zip(ind, x.shape, strict=True):
            seen = sizes.get(label)
            if seen is None or seen == 1:
                sizes[label] = n
            elif n not in (1, seen):
                raise ValueError(
                    f"{func_name}: dimension {label!r} has inconsistent lengths {seen} and {n}"
                )
    # The blocks of each label.
    blocks: dict[Any, tuple[int, ...]] = {}
    for label in sizes:
        found = [
            (x.chunks[j], x.shape[j])
            for x, ind in arrays
            for j, lab in enumerate(ind)
            if lab == label
        ]
        if align_arrays:
            blocks[label] = _common_chunks([c for c, n in found if n == sizes[label]])
        else:
            blocks[label] = max((c for c, _ in found), key=len)
    for label, v in new_axes.items():
        if label in sizes:
            raise ValueError(f"{func_name}: new axis {label!r} is also an input dimension")
        blocks[label] = tuple(v) if isinstance(v, (tuple, list)) else (int(v),)

    out_chunks = []
    for o, label in enumerate(out_ind):
        c = blocks[label]
        if adjust_chunks and label in adjust_chunks:
            c = _apply_adjust(c, adjust_chunks[label], o)
        out_chunks.append(c)
    shape = tuple(sum(c) for c in out_chunks)

    inputs, in_structs, splits = [], [], []
    index_of: dict[int, int] = {}
    info_inputs: dict[int, tuple] = {}
    for pos, (x, ind) in enumerate(pairs):
        if ind is None:
            continue
        dims, split, starts, where, nchunks = [], [], [], [], []
        for j, label in enumerate(ind):
            own = x.chunks[j]
            if label in out_ind:
                o = out_ind.index(label)
                uni = blocks[label]
                # Ranges equal to the output's blocks are an identity: O(1) to
                # describe instead of a pair per block (issue #19).
                if align_arrays and x.shape[j] == sizes[label]:
                    same = uni == out_chunks[o]
                    dims.append(_identity(o) if same else _ranges_map(o, _ranges(uni)))
                    seen_chunks = uni
                elif not align_arrays and len(own) == len(uni):
                    dims.append(_identity(o) if own == out_chunks[o] else _own(o, own))
                    seen_chunks = own
                elif len(own) == 1:  # broadcast: the one block goes to every task
                    dims.append(_FULL)
                    seen_chunks = own
                else:
                    raise ValueError(
                        f"{func_name}: dimension {label!r} has {len(own)} blocks in one array and "
                        f"{len(uni)} in another; rechunk them alike or use align_arrays=True"
                    )
                where.append(o)
            else:  # contracted: the whole dimension, concatenated
                dims.append(_FULL)
                if not concatenate:
                    split.append((j, blocks[label] if align_arrays else own))
                seen_chunks = (x.shape[j],)
                where.append(None)
            starts.append(seen_chunks)  # block sizes; offsets only if block_info is asked for
            nchunks.append(len(seen_chunks))
        if split and isinstance(x, _Fields):
            raise NotImplementedError(f"{func_name}: concatenate=False with structured arrays")
        index_of[pos] = len(inputs)
        inputs.append((x, dims))
        in_structs.append(x.dtype if isinstance(x, _Fields) else None)
        splits.append(split)
        info_inputs[pos] = (tuple(x.shape), tuple(nchunks), starts, tuple(where))

    fn_args = [
        (index_of[pos], None) if ind is not None else (None, x)
        for pos, (x, ind) in enumerate(pairs)
    ]
    if dtype is None:
        dtype = _infer_dtype(func, [x for x, _ in pairs], kwargs, func_name, len(out_ind))
    dtype = np.dtype(dtype)
    out_struct = dtype if dtype.names else None
    if out_struct is None:
        dtype = _dtypes.normalize_any(dtype)
    info = None
    if has_keyword(func, "block_info"):
        info = {
            "inputs": {
                pos: (in_shape, n, [_starts(c) for c in sizes], where)
                for pos, (in_shape, n, sizes, where) in info_inputs.items()
            },
            "output": (shape, [_starts(c) for c in out_chunks], dtype),
        }
    fn = _Blockwise(
        func,
        fn_args,
        kwargs,
        in_structs=in_structs,
        splits=splits,
        out_struct=out_struct,
        block_id=has_keyword(func, "block_id"),
        block_info=info,
    )
    return python_op(
        fn,
        func_name,
        inputs,
        shape,
        dtype,
        out_chunks,
        extra_mem=extra_mem,
        label=pyfunc.describe(func),
    )


def _as_array(x: Any, spec: Spec | None) -> Any:
    if isinstance(x, _Chunked):
        return x

    return asarray(x, spec=spec)


def _first_spec(args: Sequence[Any]) -> Spec | None:
    return next((a.spec for a in args if isinstance(a, _Chunked)), None)


def blockwise(
    func: Callable,
    out_ind: Sequence,
    *args: Any,
    dtype: Any = None,
    adjust_chunks: dict | None = None,
    new_axes: dict | None = None,
    align_arrays: bool = True,
    concatenate: bool | None = None,
    extra_projected_mem: int = 0,
    **kwargs: Any,
) -> Array:
    """Apply *func* to the blocks of arrays laid out by index notation (Dask's ``blockwise``).

    Parameters
    ----------
    func : callable
        Called once per output block with one block (or value) per argument.
    out_ind : iterable
        The output's index labels, e.g. ``"ij"``.
    *args
        Pairs ``array, index`` (e.g. ``x, "ij"``); an index of ``None`` passes the
        value to every call unchanged. Labels shared by arrays must have equal
        lengths (or length 1: broadcast). Labels of an input that are not in
        ``out_ind`` are contracted: the function sees the whole dimension, its
        blocks concatenated (Dask's ``concatenate=True``), within the memory
        budget like any read.
    dtype : dtype, optional
        The output dtype (inferred by calling *func* on one-element blocks if omitted).
    adjust_chunks : dict, optional
        Output block sizes per label: a callable of the input block size, an int,
        or a tuple of sizes.
    new_axes : dict, optional
        Output labels that no input has, with their length (or block sizes).
    align_arrays : bool, default True
        Align inputs whose blocks differ along a label to their common refinement
        (the engine reads the aligned blocks; nothing is rechunked). With False,
        blocks correspond by index and single-block dimensions broadcast.
    concatenate : bool, optional
        ``False`` passes contracted dimensions as nested lists of blocks instead.
    extra_projected_mem : int, optional
        Bytes *func* allocates per call beyond its result, for the memory projection.
    **kwargs
        Passed to every call. If *func* takes ``block_id`` or ``block_info`` they are
        passed as in Dask.
    """
    if len(args) % 2:
        raise ValueError("blockwise: arguments must come in pairs (array, index)")
    kwargs = {k: v for k, v in kwargs.items() if k not in _DASK_ONLY}
    _check_kwargs(kwargs, "blockwise")
    spec = _first_spec(args[::2])
    pairs = []
    for x, ind in zip(args[::2], args[1::2], strict=True):
        if ind is None:
            pairs.append((x, None))
        else:
            pairs.append((_as_array(x, spec), tuple(ind)))
    if not any(ind is not None for _, ind in pairs):
        raise ValueError("blockwise needs at least one array argument")
    return _blockwise(
        func,
        tuple(out_ind),
        pairs,
        dtype=dtype,
        adjust_chunks=adjust_chunks,
        new_axes=new_axes,
        align_arrays=align_arrays,
        concatenate=concatenate is not False,
        kwargs=kwargs,
        extra_mem=extra_projected_mem,
        func_name="blockwise",
    )


def map_blocks(
    func: Callable,
    *args: Any,
    dtype: Any = None,
    chunks: Any = None,
    drop_axis: Any = None,
    new_axis: Any = None,
    spec: Spec | None = None,
    extra_projected_mem: int = 0,
    **kwargs: Any,
) -> Array:
    """Apply *func* to corresponding blocks of arrays (Dask's ``map_blocks``).

    Parameters
    ----------
    func : callable
        Called once per output block as ``func(*blocks, **kwargs)``; cubego Array
        arguments become blocks, anything else is passed unchanged. Blocks are
        numpy views of the engine's buffers, valid during the call. It must return
        a numpy array of exactly the output block's shape and *dtype*.
    *args
        Arrays (right-aligned by dimension; a dimension with one block broadcasts to
        every output block, otherwise the number of blocks must match) and
        constants.
    dtype : dtype, optional
        The output dtype (inferred by calling *func* on one-element blocks if omitted).
    chunks : tuple, optional
        The output's block sizes, per dimension an int or a tuple, when *func*
        changes them. Required when there are no array arguments.
    drop_axis : int or sequence of ints, optional
        Dimensions *func* removes (if they have several blocks, *func* receives them
        concatenated).
    new_axis : int or sequence of ints, optional
        Dimensions *func* adds (size from *chunks*, default 1).
    spec : Spec, optional
        For calls without array arguments.
    extra_projected_mem : int, optional
        Bytes *func* allocates per call beyond its result, added to the memory
        projection (engine-measured memory counts engine buffers only).
    **kwargs
        Passed to every call. If *func* takes ``block_id`` (the output block's
        coordinates) or ``block_info`` (Dask's dict of shapes and locations), they are
        passed too.
    """
    meta = kwargs.get("meta")
    if dtype is None and meta is not None and hasattr(meta, "dtype"):
        dtype = meta.dtype
    kwargs = {k: v for k, v in kwargs.items() if k not in _DASK_ONLY}
    _check_kwargs(kwargs, "map_blocks")
    arrays = [a for a in args if isinstance(a, _Chunked)]
    if not arrays:
        return _map_blocks_no_arrays(func, args, dtype, chunks, spec, extra_projected_mem, kwargs)

    out_ind: tuple = tuple(range(max(a.ndim for a in arrays)))[::-1]
    pairs = [
        (a, tuple(range(a.ndim))[::-1]) if isinstance(a, _Chunked) else (a, None) for a in args
    ]
    if isinstance(drop_axis, numbers.Integral):
        drop_axis = [drop_axis]
    if isinstance(new_axis, numbers.Integral):
        new_axis = [new_axis]
    drop_axis = list(drop_axis or [])
    new_axes: dict = {}
    if drop_axis:
        n = len(out_ind)
        if any(not -n <= i < n for i in drop_axis):
            raise ValueError(f"drop_axis out of range (drop_axis={drop_axis}, but output is {n}d).")
        drop_axis = [i % n for i in drop_axis]
        out_ind = tuple(label for i, label in enumerate(out_ind) if i not in drop_axis)
    if new_axis is None and chunks is not None and len(out_ind) < len(chunks):
        new_axis = range(len(chunks) - len(out_ind))
    if new_axis:
        labels = list(out_ind)
        for ax in sorted(new_axis):
            label = len(labels) + len(drop_axis)
            labels.insert(ax, label)
            new_axes[label] = chunks[ax] if chunks is not None else 1
        out_ind = tuple(labels)
        if max(new_axis) > max(out_ind):
            raise ValueError("New_axis values do not fill in all dimensions")
    adjust = None
    if chunks is not None:
        if len(chunks) != len(out_ind):
            raise ValueError(
                f"Provided chunks have {len(chunks)} dims; expected {len(out_ind)} dims"
            )
        adjust = dict(zip(out_ind, chunks, strict=True))
    return _blockwise(
        func,
        out_ind,
        pairs,
        dtype=dtype,
        adjust_chunks=adjust,
        new_axes=new_axes,
        align_arrays=False,
        concatenate=True,
        kwargs=kwargs,
        extra_mem=extra_projected_mem,
        func_name="map_blocks",
    )


def _map_blocks_no_arrays(
    func: Callable,
    args: tuple,
    dtype: Any,
    chunks: Any,
    spec: Spec | None,
    extra: int,
    kwargs: dict,
) -> Array:
    """``map_blocks`` without array arguments: the blocks are those of *chunks*.

    As in Cubed, *func* gets an empty block (``numpy.empty`` of the output block's
    shape and dtype) as its first argument, when its signature has room for one
    beyond the constants in *args*; a function that takes only keywords such as
    ``block_id`` (Dask's convention, ``f(block_id=None)``) is called without it.
    """
    if chunks is None or not all(isinstance(c, (tuple, list)) for c in chunks):
        raise ValueError(
            "map_blocks without array arguments needs chunks: a tuple of block sizes per "
            "dimension, e.g. ((2, 2), (3,))"
        )
    if dtype is None:
        raise ValueError("map_blocks without array arguments needs a dtype")
    chunks = tuple(tuple(int(c) for c in axis) for axis in chunks)
    dtype = _dtypes.normalize_any(dtype)
    shape = tuple(sum(c) for c in chunks)
    info = None
    if has_keyword(func, "block_info"):
        info = {"inputs": {}, "output": (shape, [_starts(c) for c in chunks], dtype)}
    call: Callable = func
    if _takes_block(func, len(args)):
        call = _WithEmptyBlock(func, chunks, dtype)
    fn = _Blockwise(
        call,
        [(None, a) for a in args],
        kwargs,
        in_structs=[],
        splits=[],
        out_struct=None,
        block_id=has_keyword(func, "block_id") or call is not func,
        block_info=info,
    )
    fn.name = pyfunc.describe(func)
    return python_op(
        fn,
        "map_blocks",
        [],
        shape,
        dtype,
        chunks,
        spec=spec,
        extra_mem=extra,
        label=pyfunc.describe(func),
    )


def _takes_block(func: Callable, n_constants: int) -> bool:
    """Whether *func* has a positional parameter for a block beyond *n_constants*
    constants (``block_id`` and ``block_info`` do not count); True when its
    signature cannot be read."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = 0
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            return True
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in (
            "block_id",
            "block_info",
        ):
            positional += 1
    return positional > n_constants


class _WithEmptyBlock:
    """Calls *func* with an empty block of the output block's shape first (Cubed's
    ``map_blocks`` without arrays); passes ``block_id`` on only if *func* takes it."""

    def __init__(self, func: Callable, chunks: tuple, dtype: np.dtype):
        self.func = func
        self.chunks = chunks
        self.dtype = dtype
        self.pass_block_id = has_keyword(func, "block_id")

    def __call__(self, *args: Any, block_id: tuple, **kwargs: Any) -> Any:
        shape = tuple(axis[i] for axis, i in zip(self.chunks, block_id, strict=True))
        if self.pass_block_id:
            kwargs["block_id"] = block_id
        return self.func(np.empty(shape, dtype=self.dtype), *args, **kwargs)


# ---------------------------------------------------------------------- lazy sources


class _GetItem:
    """The task function of a lazy ``from_array``: reads one block with ``source[slices]``."""

    def __init__(self, source: Any):
        self.func = source
        self.name = f"{type(source).__name__}.__getitem__"

    def __call__(self, inputs: list, out: np.ndarray, task: pyfunc.Task) -> None:
        start = task.out_start
        index = tuple(slice(s, s + n) for s, n in zip(start, out.shape, strict=True))
        pyfunc.write_block(out, np.asarray(self.func[index]), task, self.name)


def _is_lazy(x: Any) -> bool:
    """An array-like to read block by block: has shape, dtype and ``__getitem__``."""
    if isinstance(x, (np.ndarray, np.generic, list, tuple)) or not hasattr(x, "__getitem__"):
        return False
    return hasattr(x, "shape") and hasattr(x, "dtype")


def _auto_chunks(
    chunks: Any, shape: tuple[int, ...], dtype: np.dtype, spec: Spec, previous: Any
) -> tuple:
    """Normalised chunks (the library's rules); for "auto", multiples of the source's chunks."""
    normal = empty(shape, dtype=dtype, chunks=chunks, spec=spec).chunks
    if chunks != "auto" or not isinstance(previous, tuple) or len(previous) != len(shape):
        return normal
    if not all(isinstance(p, numbers.Integral) and p > 0 for p in previous):
        return normal
    target = [
        max(p * max(axis[0] // p, 1), 1) if axis and axis[0] else 1
        for axis, p in zip(normal, previous, strict=True)
    ]
    return empty(
        shape,
        dtype=dtype,
        chunks=[min(t, max(n, 1)) for t, n in zip(target, shape, strict=True)],
        spec=spec,
    ).chunks


def from_array(
    x: Any, chunks: Any = "auto", asarray: Any = None, spec: Spec | None = None, **kwargs: Any
) -> Array:
    """An Array with the contents of *x*, which is never loaded whole.

    *x* is a cubego Array (rechunked if *chunks* is given), a numpy array (copied
    into the library), or any array-like with ``shape``, ``dtype`` and
    ``__getitem__`` (h5py datasets, zarr-python arrays, xarray's lazy backend
    arrays): then each task reads its own block with ``x[slices]`` when the array
    is computed. With ``chunks="auto"`` the blocks are whole multiples of
    ``x.chunks`` when it has them. Other keyword arguments (``name``, ``lock``,
    ``inline_array``, ``meta``; Dask's) are accepted and ignored.
    """
    if not _is_lazy(x) or isinstance(x, Array):
        return _creation.from_array(x, chunks=chunks, spec=spec)
    spec = resolve(spec)
    shape = tuple(operator.index(n) for n in x.shape)
    dtype = _dtypes.normalize_any(x.dtype)
    chunks = _auto_chunks(chunks, shape, _dtypes.storage(dtype), spec, getattr(x, "chunks", None))
    return python_op(
        _GetItem(x),
        "from_array",
        [],
        shape,
        dtype,
        chunks,
        spec=spec,
        label=f"{type(x).__name__}.__getitem__",
    )


# ---------------------------------------------------------------------- Array methods


def _array_map_blocks(self: Array, func: Callable, *args: Any, **kwargs: Any) -> Array:
    """``map_blocks(func, self, *args, **kwargs)`` (see :func:`cubego.map_blocks`)."""
    return map_blocks(func, self, *args, **kwargs)


Array.map_blocks = _array_map_blocks  # type: ignore[attr-defined]
