"""Linear algebra: ``matmul``."""

from __future__ import annotations

from .array import Array, apply

__all__ = ["matmul"]


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product of two arrays (Array API ``matmul`` semantics)."""
    for x in (x1, x2):
        if not isinstance(x, Array):
            raise TypeError(f"matmul: expected cubego arrays, got {type(x).__name__}")
    return apply("matmul", {}, [x1, x2])
