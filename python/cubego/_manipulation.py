"""``astype`` and ``rechunk``."""

from __future__ import annotations

from typing import Any

from .array import Array

__all__ = ["astype", "rechunk"]


def astype(x: Array, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Array:
    """*x* converted to *dtype* (numpy casting rules, applied by the library)."""
    if not isinstance(x, Array):
        raise TypeError(f"astype: expected a cubego Array, got {type(x).__name__}")
    if device not in (None, "cpu"):
        raise ValueError(f"unsupported device {device!r}; cubego arrays live on 'cpu'")
    return x.astype(dtype, copy=copy)


def rechunk(x: Array, chunks: Any) -> Array:
    """*x* with new chunks: an int, a tuple per axis, a dict ``{axis: chunks}``, or "auto".

    An axis missing from the dict, or None in the tuple, keeps its chunks.
    """
    if not isinstance(x, Array):
        raise TypeError(f"rechunk: expected a cubego Array, got {type(x).__name__}")
    return x.rechunk(chunks)
