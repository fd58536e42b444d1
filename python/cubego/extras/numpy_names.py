"""numpy's names for standard functions, which xarray calls on an array's namespace.

xarray reaches cubego through ``Array.__array_namespace__()`` and, for some
operations, uses numpy's names there (``transpose``, ``cumsum``,
``concatenate``, ``cross`` with numpy's default axis). They are thin aliases
of the standard functions with numpy's signatures.
"""

from __future__ import annotations

from typing import Any

from cubego.array_api.linalg import cross as linalg_cross
from cubego.array_api.manipulation_functions import concat, permute_dims, reshape
from cubego.array_api.statistical_functions import cumulative_prod, cumulative_sum
from cubego.core.array import Array

__all__ = ["concatenate", "cross", "cumprod", "cumsum", "transpose"]


def transpose(x: Array, /, axes: Any = None) -> Array:
    """``numpy.transpose``: *axes* permuted (reversed when None); see :func:`permute_dims`."""
    if axes is None:
        axes = tuple(range(x.ndim))[::-1]
    return permute_dims(x, tuple(axes))


def cumsum(x: Array, /, axis: int | None = None, dtype: Any = None) -> Array:
    """``numpy.cumsum``: the flattened array when *axis* is None; see :func:`cumulative_sum`."""
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return cumulative_sum(x, axis=axis, dtype=dtype)


def cumprod(x: Array, /, axis: int | None = None, dtype: Any = None) -> Array:
    """``numpy.cumprod``: the flattened array when *axis* is None; see :func:`cumulative_prod`."""
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return cumulative_prod(x, axis=axis, dtype=dtype)


def concatenate(arrays: Any, /, axis: int | None = 0) -> Array:
    """``numpy.concatenate``: see :func:`concat`."""
    return concat(arrays, axis=axis)


def cross(a: Array, b: Array, /, *, axis: int = -1) -> Array:
    """``numpy.cross`` of 3-element vectors along *axis*: see :func:`cubego.linalg.cross`."""
    return linalg_cross(a, b, axis=axis)
