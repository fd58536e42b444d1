"""Random arrays: ``cubego.random.random`` and ``cubego.random.integers``."""

from __future__ import annotations

import random as _pyrandom
from typing import Any

import numpy as np

from cubego.array_api.creation_functions import _create
from cubego.core import dtypes as _dtypes
from cubego.core.array import Array, elemwise, encode_chunks, encode_shape
from cubego.core.spec import Spec

__all__ = ["integers", "random"]


def random(
    size: Any, *, dtype: Any = _dtypes.float64, chunks: Any = "auto", spec: Spec | None = None
) -> Array:
    """Uniform random numbers in ``[0, 1)`` of shape *size*.

    The values are fixed when the array is created: computing it twice gives the
    same numbers, and each block is generated independently of the others. As in
    Cubed, the array's seed is drawn from Python's :mod:`random` module, so
    ``random.seed(n)`` before creating arrays makes them reproducible.

    Parameters
    ----------
    size : int or tuple of int
    dtype : float32 or float64, default float64
    chunks : optional
    spec : Spec, optional
    """
    args = {
        "shape": encode_shape(size),
        "dtype": _dtypes.name(dtype),
        "chunks": encode_chunks(chunks),
        "seed": _pyrandom.getrandbits(64),
    }
    return _create("random", args, spec)


def integers(
    shape: Any,
    *,
    dtype: Any = _dtypes.int32,
    low: int | None = None,
    high: int | None = None,
    chunks: Any = "auto",
    spec: Spec | None = None,
) -> Array:
    """Uniform random integers in ``[low, high)`` of *shape* (Cubed's ``integers``).

    By default *low* and *high* span the dtype's range (for 64-bit dtypes the
    ``2**53`` values centred on zero, or from zero if unsigned: the numbers come
    from double-precision uniforms). Like :func:`random`, values are fixed when
    the array is created, independent of the chunking, and reproducible after
    Python's ``random.seed(n)``.
    """
    dtype = _dtypes.normalize(dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"integers: dtype must be an integer dtype, got {dtype}")
    info = np.iinfo(dtype)
    span = min(int(info.max) - int(info.min) + 1, 2**53)
    if low is None:
        low = (
            int(info.min)
            if span == int(info.max) - int(info.min) + 1
            else (0 if dtype.kind == "u" else -(span // 2))
        )
    if high is None:
        high = low + span
    low, high = int(low), int(high)
    if not low < high:
        raise ValueError(f"integers: low ({low}) must be below high ({high})")
    if low < int(info.min) or high - 1 > int(info.max):
        raise ValueError(f"integers: [{low}, {high}) does not fit {dtype}")
    if high - low > 2**53:
        raise ValueError("integers: high - low must be at most 2**53")
    uniform = random(shape, dtype=_dtypes.float64, chunks=chunks, spec=spec)
    scaled = elemwise("floor", elemwise("multiply", uniform, float(high - low)))
    return elemwise("add", scaled, float(low)).astype(dtype)
