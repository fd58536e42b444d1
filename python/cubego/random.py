"""Random arrays: ``cubego.random.random``."""

from __future__ import annotations

from typing import Any

from . import _dtypes
from ._creation import _create
from .array import Array, encode_chunks, encode_shape
from .spec import Spec

__all__ = ["random"]


def random(
    size: Any, *, dtype: Any = _dtypes.float64, chunks: Any = "auto", spec: Spec | None = None
) -> Array:
    """Uniform random numbers in ``[0, 1)`` of shape *size*.

    The values are fixed when the array is created: computing it twice gives the
    same numbers, and each block is generated independently of the others.

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
        "seed": None,
    }
    return _create("random", args, spec)
