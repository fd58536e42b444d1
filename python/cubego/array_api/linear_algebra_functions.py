"""Linear algebra functions of the main namespace: ``matmul, matrix_transpose, tensordot, vecdot``.

``matmul`` is the library's op (each task streams the contracted dimension one
block pair at a time); ``tensordot`` moves the contracted axes together and
reshapes both operands into matrices for it; ``vecdot`` is a fused multiply and
a tree sum.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any

from cubego.array_api.data_type_functions import result_type
from cubego.array_api.manipulation_functions import broadcast_shapes, permute_dims, reshape
from cubego.array_api.statistical_functions import sum as sum_
from cubego.core.array import Array, apply, elemwise

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]


def _check(x: Any, what: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a cubego Array, got {type(x).__name__}")
    return x


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product of two arrays (Array API ``matmul`` semantics)."""
    _check(x1, "matmul")
    _check(x2, "matmul")
    return apply("matmul", {}, [x1, x2])


def matrix_transpose(x: Array, /) -> Array:
    """*x* with its last two dimensions swapped."""
    _check(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least two dimensions, got shape {x.shape}")
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return apply("permute_dims", {"axes": axes}, [x])


def _contracted(axes: Any, x1: Array, x2: Array) -> tuple[list[int], list[int]]:
    if isinstance(axes, (tuple, list)):
        if len(axes) != 2:
            raise ValueError(
                "tensordot: axes must be an int or a pair (x1's axes, x2's axes), each an int "
                "or a sequence of ints"
            )
        # Each side is one axis or a sequence of axes, as numpy's tensordot takes.
        a1, a2 = (
            [operator.index(part)]
            if isinstance(part, numbers.Integral)
            else [operator.index(a) for a in part]
            for part in axes
        )
        if len(a1) != len(a2):
            raise ValueError("tensordot: the two sequences of axes must have the same length")
    else:
        n = operator.index(axes)
        if n < 0 or n > x1.ndim or n > x2.ndim:
            raise ValueError(
                f"tensordot: cannot contract {n} axes of arrays of shapes {x1.shape} and {x2.shape}"
            )
        a1 = list(range(x1.ndim - n, x1.ndim))
        a2 = list(range(n))
    out = []
    for axes_, x in ((a1, x1), (a2, x2)):
        norm = []
        for a in axes_:
            if not -x.ndim <= a < x.ndim:
                raise ValueError(f"tensordot: axis {a} is out of bounds for shape {x.shape}")
            norm.append(a % x.ndim)
        if len(set(norm)) != len(norm):
            raise ValueError(f"tensordot: repeated axes {axes_}")
        out.append(norm)
    for a, b in zip(*out, strict=True):
        if x1.shape[a] != x2.shape[b]:
            raise ValueError(
                f"tensordot: axis {a} of x1 (length {x1.shape[a]}) does not match axis {b} of x2 "
                f"(length {x2.shape[b]})"
            )
    return out[0], out[1]


def tensordot(x1: Array, x2: Array, /, *, axes: Any = 2) -> Array:
    """Sum of products over *axes* (the last *axes* of x1 with the first of x2, or two lists)."""
    _check(x1, "tensordot")
    _check(x2, "tensordot")
    a1, a2 = _contracted(axes, x1, x2)
    free1 = [d for d in range(x1.ndim) if d not in a1]
    free2 = [d for d in range(x2.ndim) if d not in a2]
    contracted = math.prod(x1.shape[d] for d in a1)
    shape1 = tuple(x1.shape[d] for d in free1)
    shape2 = tuple(x2.shape[d] for d in free2)
    left = reshape(permute_dims(x1, tuple(free1 + a1)), (math.prod(shape1), contracted))
    right = reshape(permute_dims(x2, tuple(a2 + free2)), (contracted, math.prod(shape2)))
    return reshape(matmul(left, right), shape1 + shape2)


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Dot product of vectors along *axis* (the first operand conjugated), broadcasting the rest."""
    _check(x1, "vecdot")
    _check(x2, "vecdot")
    shape = broadcast_shapes(x1.shape, x2.shape)
    ndim = len(shape)
    axis = operator.index(axis)
    if not -ndim <= axis < ndim or ndim == 0:
        raise ValueError(f"vecdot: axis {axis} is out of bounds for the broadcast shape {shape}")
    end = axis - ndim if axis >= 0 else axis  # the axis counted from the end
    n1 = x1.shape[end] if end >= -x1.ndim else 1
    n2 = x2.shape[end] if end >= -x2.ndim else 1
    if n1 != n2:
        raise ValueError(f"vecdot: the vectors along axis {axis} have lengths {n1} and {n2}")
    dtype = result_type(x1, x2)
    left = elemwise("conj", x1) if x1.dtype.kind == "c" else x1
    return sum_(elemwise("multiply", left, x2), axis=axis, dtype=dtype)
