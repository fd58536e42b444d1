"""Array creation functions (Array API "Creation Functions" plus Cubed's ``from_array``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _dtypes, _lib
from .array import Array, encode_chunks, encode_shape
from .spec import Spec, resolve

__all__ = [
    "arange",
    "asarray",
    "empty",
    "empty_like",
    "from_array",
    "full",
    "full_like",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]


def _check_device(device: Any) -> None:
    if device not in (None, "cpu"):
        raise ValueError(f"unsupported device {device!r}; cubego arrays live on 'cpu'")


def _create(name: str, args: dict, spec: Spec | None) -> Array:
    spec = resolve(spec)
    args["spec"] = spec._to_json()
    infos = _lib.op(name, args, [])
    return Array._new(infos[0], spec)


def _from_numpy(x: np.ndarray, chunks: Any, spec: Spec | None) -> Array:
    """Copy a numpy array into the library (``cg_from_buffer``)."""
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
    infos = _lib.from_buffer(args, x)
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
        Accepted for Array API compatibility; arrays are immutable and input data
        is always copied into the library.
    chunks : int, tuple, "auto" or size string, optional
        Chunk shape of the result (dask semantics).
    spec : Spec, optional
    """
    _check_device(device)
    if isinstance(obj, Array):
        if dtype is not None and _dtypes.normalize(dtype) != obj.dtype:
            return obj.astype(dtype)
        return obj
    if dtype is not None:
        dtype = _dtypes.normalize(dtype)
    x = np.asarray(obj, dtype=dtype)
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
        "fill_value": _lib.encode_scalar(fill_value),
        "chunks": encode_chunks(chunks),
    }
    return _create("full", args, spec)


def zeros(
    shape: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
    spec: Spec | None = None,
) -> Array:
    """An array of zeros (default dtype float64)."""
    dtype = _dtype_or(dtype, _dtypes.float64)
    return full(
        shape,
        False if dtype.kind == "b" else 0,
        dtype=dtype,
        device=device,
        chunks=chunks,
        spec=spec,
    )


def ones(
    shape: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
    spec: Spec | None = None,
) -> Array:
    """An array of ones (default dtype float64)."""
    dtype = _dtype_or(dtype, _dtypes.float64)
    return full(
        shape,
        True if dtype.kind == "b" else 1,
        dtype=dtype,
        device=device,
        chunks=chunks,
        spec=spec,
    )


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


def empty_like(
    x: Array,
    /,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = None,
    spec: Spec | None = None,
) -> Array:
    dtype, chunks, spec = _like(x, dtype, chunks, spec)
    return empty(x.shape, dtype=dtype, device=device, chunks=chunks, spec=spec)


def zeros_like(
    x: Array,
    /,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = None,
    spec: Spec | None = None,
) -> Array:
    dtype, chunks, spec = _like(x, dtype, chunks, spec)
    return zeros(x.shape, dtype=dtype, device=device, chunks=chunks, spec=spec)


def ones_like(
    x: Array,
    /,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = None,
    spec: Spec | None = None,
) -> Array:
    dtype, chunks, spec = _like(x, dtype, chunks, spec)
    return ones(x.shape, dtype=dtype, device=device, chunks=chunks, spec=spec)


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
