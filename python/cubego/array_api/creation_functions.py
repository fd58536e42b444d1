"""Array creation functions (Array API "Creation Functions" plus Cubed's ``from_array``).

``full, empty, arange`` and in-memory data are the library's virtual arrays
(generated on the fly, never stored); ``eye, linspace, tril, triu, meshgrid``
compose them with elementwise ops, so they cost no more than one pass over the
output's chunks.
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import numpy as np

from cubego.binding import libcubego
from cubego.core import dtypes as _dtypes
from cubego.core.array import Array, apply, elemwise, encode_chunks, encode_shape, memory_repr
from cubego.core.config import resolve
from cubego.core.spec import Spec


def _check_device(device: Any) -> None:
    if device not in (None, "cpu"):
        raise ValueError(f"unsupported device {device!r}; cubego arrays live on 'cpu'")


def _create(name: str, args: dict, spec: Spec | None) -> Array:
    spec = resolve(spec)
    args["spec"] = spec._to_json()
    infos = libcubego.op(name, args, [])
    return Array._new(infos[0], spec)


def _from_numpy(x: np.ndarray, chunks: Any, spec: Spec | None) -> Array:
    """Copy a numpy array into the library (``cg_from_buffer``)."""
    logical = _dtypes.datetime_dtype(x.dtype)
    if logical is not None:  # stored as int64 (cubego.core.datetimes)
        stored = _from_numpy(np.ascontiguousarray(x, dtype=logical).view(np.int64), chunks, spec)
        stored._logical = logical
        return stored
    dtype = _dtypes.normalize(x.dtype)
    if x.dtype.byteorder == ">" or not x.flags.c_contiguous:
        x = np.ascontiguousarray(x, dtype=dtype)
    spec = resolve(spec)
    args = {
        "shape": list(x.shape),
        "dtype": dtype.name,
        "chunks": encode_chunks(chunks),
        "spec": spec._to_json(),
    }
    infos = libcubego.from_buffer(args, x)
    return Array._new(infos[0], spec)


def asarray(
    obj: Any,
    /,
    dtype: Any = None,
    device: Any = None,
    copy: bool | None = None,
    *,
    chunks: Any = "auto",
    spec: Spec | None = None,
) -> Array:
    """Convert *obj* (a cubego Array, numpy array, nested sequence or scalar) to an Array.

    Non-cubego input is converted with ``numpy.asarray`` and copied into the
    library. A cubego Array is returned as it is (cast if *dtype* differs).

    Parameters
    ----------
    obj : array_like
    dtype : dtype, optional
        Data type of the result; default: the one numpy infers.
    device : {None, "cpu"}, optional
    copy : bool, optional
        For a cubego Array: True gives a new Array object (in-place operations on
        one do not change the other), None and False the same object. Other input
        is always copied into the library.
    chunks : int, tuple, "auto" or size string, optional
        Chunk shape of the result (dask semantics).
    spec : Spec, optional
    """
    _check_device(device)
    if isinstance(obj, Array):
        if dtype is not None and _dtypes.normalize_any(dtype) != obj.dtype:
            if copy is False:
                raise ValueError(
                    f"asarray: converting {obj.dtype} to {_dtypes.normalize_any(dtype)} needs a "
                    "copy, but copy=False"
                )
            return obj.astype(dtype)
        if copy:
            # A new Array object: in-place operations on it must not change obj.
            return apply("permute_dims", {"axes": list(range(obj.ndim))}, [obj])
        return obj
    if dtype is not None:
        dtype = _dtypes.normalize_any(dtype)
    x = np.asarray(obj, dtype=dtype)
    spec = resolve(spec)
    if x.nbytes > spec.allowed_mem:
        # As Cubed. The library holds an in-memory array whole while it computes.
        raise ValueError(
            f"asarray: Size of in memory array is {memory_repr(x.nbytes)} which exceeds "
            f"maximum of {memory_repr(spec.allowed_mem)} (the spec's allowed_mem). Store it "
            "in Zarr and open it with cubego.from_zarr, or use a larger allowed_mem"
        )
    return _from_numpy(x, chunks, spec)


def from_array(x: Any, chunks: Any = "auto", spec: Spec | None = None) -> Array:
    """An Array with the contents of *x* (a numpy array or anything ``numpy.asarray`` accepts)."""
    if isinstance(x, Array):
        return x if chunks == "auto" else x.rechunk(chunks)
    return _from_numpy(np.asarray(x), chunks, spec)


def _dtype_or(dtype: Any, default: np.dtype) -> np.dtype:
    return default if dtype is None else _dtypes.normalize(dtype)


def full(
    shape: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
    spec: Spec | None = None,
) -> Array:
    """An array of *shape* filled with *fill_value* (dtype inferred from it by default)."""
    _check_device(device)
    if isinstance(fill_value, Array):
        raise TypeError("full: fill_value must be a Python or numpy scalar, not a cubego Array")
    dtype = _dtypes.scalar_dtype(fill_value) if dtype is None else _dtypes.normalize(dtype)
    args = {
        "shape": encode_shape(shape),
        "dtype": dtype.name,
        "fill_value": libcubego.encode_scalar(fill_value),
        "chunks": encode_chunks(chunks),
    }
    return _create("full", args, spec)


#: Arrays of one value: name -> the value (``True``/``False`` for bool dtypes).
CONSTANTS: dict[str, int] = {"zeros": 0, "ones": 1}


def _make_constant(name: str, value: int):
    def constant(
        shape: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        chunks: Any = "auto",
        spec: Spec | None = None,
    ) -> Array:
        dtype = _dtype_or(dtype, _dtypes.float64)
        fill = builtins.bool(value) if dtype.kind == "b" else value
        return full(shape, fill, dtype=dtype, device=device, chunks=chunks, spec=spec)

    constant.__name__ = constant.__qualname__ = name
    constant.__doc__ = f"An array of {name} (default dtype float64)."
    return constant


for _name, _value in CONSTANTS.items():
    globals()[_name] = _make_constant(_name, _value)
del _name, _value


def empty(
    shape: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
    spec: Spec | None = None,
) -> Array:
    """An uninitialised array (default dtype float64); its values are unspecified."""
    _check_device(device)
    dtype = _dtype_or(dtype, _dtypes.float64)
    args = {"shape": encode_shape(shape), "dtype": dtype.name, "chunks": encode_chunks(chunks)}
    return _create("empty", args, spec)


def _like(x: Array, dtype: Any, chunks: Any, spec: Spec | None) -> tuple[np.dtype, Any, Spec]:
    if not isinstance(x, Array):
        raise TypeError(f"expected a cubego Array, got {type(x).__name__}")
    return (
        x.dtype if dtype is None else _dtypes.normalize(dtype),
        x.chunks if chunks is None else chunks,
        x.spec if spec is None else spec,
    )


def _make_like(name: str, base: str):
    def like(
        x: Array,
        /,
        *,
        dtype: Any = None,
        device: Any = None,
        chunks: Any = None,
        spec: Spec | None = None,
    ) -> Array:
        dtype, chunks, spec = _like(x, dtype, chunks, spec)
        return globals()[base](x.shape, dtype=dtype, device=device, chunks=chunks, spec=spec)

    like.__name__ = like.__qualname__ = name
    like.__doc__ = f"``{base}`` with the shape of *x*, and its dtype, chunks and spec unless given."
    return like


#: ``*_like`` functions: the creation function each calls with *x*'s shape.
LIKES: dict[str, str] = {"empty_like": "empty", "zeros_like": "zeros", "ones_like": "ones"}

for _name, _base in LIKES.items():
    globals()[_name] = _make_like(_name, _base)
del _name, _base


def full_like(
    x: Array,
    /,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = None,
    spec: Spec | None = None,
) -> Array:
    dtype, chunks, spec = _like(x, dtype, chunks, spec)
    return full(x.shape, fill_value, dtype=dtype, device=device, chunks=chunks, spec=spec)


def _number(value: Any, what: str) -> int | float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"arange: {what} must be an int or a float, got {value!r}")
    if isinstance(value, (int, np.integer)):
        return int(value)
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"arange: {what} must be finite, got {value}")
    return value


def arange(
    start: Any,
    /,
    stop: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
    spec: Spec | None = None,
) -> Array:
    """Evenly spaced values in ``[start, stop)`` (``arange(n)`` is ``0 .. n-1``)."""
    _check_device(device)
    if stop is None:
        start, stop = 0, start
    args = {
        "start": _number(start, "start"),
        "stop": _number(stop, "stop"),
        "step": _number(step, "step"),
        "dtype": None if dtype is None else _dtypes.name(dtype),
        "chunks": encode_chunks(chunks),
    }
    return _create("arange", args, spec)


def _grid_chunks(shape: tuple[int, ...], dtype: np.dtype, chunks: Any, spec: Spec | None) -> tuple:
    """The library's normalisation of *chunks* for an array of *shape* and *dtype*."""
    return empty(shape, dtype=dtype, chunks=chunks, spec=spec).chunks


def eye(
    n_rows: int,
    n_cols: int | None = None,
    /,
    *,
    k: int = 0,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
    spec: Spec | None = None,
) -> Array:
    """A 2-d array with ones on the *k*-th diagonal and zeros elsewhere."""
    _check_device(device)
    n_rows = operator.index(n_rows)
    n_cols = n_rows if n_cols is None else operator.index(n_cols)
    k = operator.index(k)
    dtype = _dtype_or(dtype, _dtypes.float64)
    spec = resolve(spec)
    row_chunks, col_chunks = _grid_chunks((n_rows, n_cols), dtype, chunks, spec)
    rows = arange(n_rows, chunks=(row_chunks,), spec=spec)
    cols = arange(n_cols, chunks=(col_chunks,), spec=spec)
    offset = elemwise("subtract", cols[None, :], rows[:, None])
    # a diagonal outside the matrix (k may be any Python int) matches no offset
    k = max(min(k, n_cols), -n_rows)
    return elemwise("equal", offset, k).astype(dtype)


def _triangle(name: str, x: Array, k: int) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}: expected a cubego Array, got {type(x).__name__}")
    if x.ndim < 2:
        raise ValueError(f"{name} needs an array with at least two dimensions, got shape {x.shape}")
    k = operator.index(k)
    m, n = x.shape[-2:]
    rows = arange(m, chunks=(x.chunks[-2],), spec=x.spec)
    cols = arange(n, chunks=(x.chunks[-1],), spec=x.spec)
    offset = elemwise("subtract", cols[None, :], rows[:, None])
    keep = elemwise("less_equal" if name == "tril" else "greater_equal", offset, k)
    zero = False if x.dtype.kind == "b" else 0
    return apply("where", {"operands": [{"input": 1}, libcubego.encode_scalar(zero)]}, [keep, x])


def tril(x: Array, /, *, k: int = 0) -> Array:
    """*x* with the elements above the *k*-th diagonal of its last two dimensions zeroed."""
    return _triangle("tril", x, k)


def triu(x: Array, /, *, k: int = 0) -> Array:
    """*x* with the elements below the *k*-th diagonal of its last two dimensions zeroed."""
    return _triangle("triu", x, k)


def linspace(
    start: int | float | complex,
    stop: int | float | complex,
    /,
    num: int,
    *,
    dtype: Any = None,
    device: Any = None,
    endpoint: bool = True,
    chunks: Any = "auto",
    spec: Spec | None = None,
) -> Array:
    """*num* evenly spaced values from *start* to *stop* (included if *endpoint*).

    Values are ``start + i * step`` computed in double precision (the last one
    exactly *stop* with *endpoint*), then cast to *dtype*.
    """
    _check_device(device)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    for value in (start, stop):
        if isinstance(value, Array) or not isinstance(value, (int, float, complex, np.number)):
            raise TypeError(f"linspace: start and stop must be Python numbers, got {value!r}")
    is_complex = isinstance(start, (complex, np.complexfloating)) or isinstance(
        stop, (complex, np.complexfloating)
    )
    if dtype is None:
        dtype = _dtypes.complex128 if is_complex else _dtypes.float64
    dtype = _dtypes.normalize(dtype)
    if is_complex and dtype.kind != "c":
        raise TypeError(f"linspace: complex start or stop needs a complex dtype, got {dtype}")
    spec = resolve(spec)
    (axis_chunks,) = _grid_chunks((num,), dtype, chunks, spec)
    div = num - 1 if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    i = arange(num, dtype=_dtypes.float64, chunks=(axis_chunks,), spec=spec)
    out = elemwise("add", elemwise("multiply", i, step), start)
    if endpoint and num > 1:
        out = apply(
            "where",
            {"operands": [libcubego.encode_scalar(stop), {"input": 1}]},
            [elemwise("equal", i, num - 1), out],
        )
    return out.astype(dtype) if out.dtype != dtype else out


def meshgrid(*arrays: Array, indexing: str = "xy") -> tuple[Array, ...]:
    """Coordinate arrays from 1-d coordinate vectors (``"xy"``: Cartesian, ``"ij"``: matrix)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    for x in arrays:
        if not isinstance(x, Array):
            raise TypeError(f"meshgrid: expected cubego arrays, got {type(x).__name__}")
        if x.ndim != 1:
            raise ValueError(f"meshgrid: arrays must be one-dimensional, got shape {x.shape}")
    shape = [x.shape[0] for x in arrays]
    positions = list(range(len(arrays)))
    if indexing == "xy" and len(arrays) > 1:
        shape[0], shape[1] = shape[1], shape[0]
        positions[0], positions[1] = 1, 0
    out = []
    for x, axis in zip(arrays, positions, strict=True):
        key = tuple(slice(None) if d == axis else None for d in range(len(arrays)))
        out.append(apply("broadcast_to", {"shape": shape}, [x[key]]))
    return tuple(out)


def from_dlpack(
    x: Any,
    /,
    *,
    device: Any = None,
    copy: bool | None = None,
    chunks: Any = "auto",
    spec: Spec | None = None,
) -> Array:
    """An Array with the data of a DLPack-exporting object (copied into the library)."""
    _check_device(device)
    if isinstance(x, Array):
        return asarray(x, copy=copy)
    if copy is False:
        raise ValueError("from_dlpack: cubego always copies the data into the library; copy=False")
    try:
        data = np.from_dlpack(x)
    except (AttributeError, TypeError) as e:
        raise TypeError(f"from_dlpack: {type(x).__name__} does not support DLPack: {e}") from None
    return _from_numpy(np.asarray(data), chunks, spec)


__all__ = sorted(
    [
        "arange",
        "asarray",
        "empty",
        "eye",
        "from_array",
        "from_dlpack",
        "full",
        "full_like",
        "linspace",
        "meshgrid",
        "tril",
        "triu",
        *CONSTANTS,
        *LIKES,
    ]
)
