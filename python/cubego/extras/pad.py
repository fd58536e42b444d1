"""``pad``: Cubed's extra, with numpy's modes ``constant, edge, reflect, symmetric, wrap``.

``constant`` with a scalar value is the library's ``pad_constant`` op. The other
modes pad one axis at a time, as numpy does: the padding on each side is read
from *x* by a slice (a negative step for mirrored modes) when the positions it
copies are consecutive, else gathered with ``take``, and joined by one
``concat`` op that writes the padded axis in regular blocks of *x*'s chunk size,
as Cubed's ``pad`` does.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from cubego.array_api.creation_functions import full
from cubego.array_api.manipulation_functions import concat
from cubego.binding import libcubego
from cubego.core import datetimes as _datetimes
from cubego.core.array import Array, apply

__all__ = ["pad"]

MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pairs(value: Any, ndim: int, what: str) -> list[tuple[Any, Any]]:
    """numpy's broadcasting of pad widths (or values): scalar, (b, a), or one pair per axis."""
    arr = np.asarray(value, dtype=object)
    if arr.ndim == 0:
        return [(value, value)] * ndim
    if arr.ndim == 1 and arr.shape[0] in (1, 2):
        pair = (arr[0], arr[-1])
        return [pair] * ndim
    if arr.ndim == 2 and arr.shape[1] in (1, 2) and arr.shape[0] in (1, ndim):
        rows = [(row[0], row[-1]) for row in arr]
        return rows * ndim if len(rows) == 1 else rows
    raise ValueError(f"pad: {what} {value!r} does not fit an array of dimension {ndim}")


def _piece(x: Array, axis: int, positions: np.ndarray) -> Array:
    """Elements of *x* at *positions* along *axis* (a slice when they are consecutive)."""
    lead = (slice(None),) * axis
    if len(positions) == 1 or (
        len(positions) > 1
        and abs(positions[1] - positions[0]) == 1
        and (np.diff(positions) == positions[1] - positions[0]).all()
    ):
        first, last = int(positions[0]), int(positions[-1])
        step = 1 if last >= first else -1
        stop = last + step
        return x[lead + (slice(first, None if stop < 0 else stop, step),)]
    return apply("take", {"indices": [int(i) for i in positions], "axis": axis}, [x])


def _regular(n: int, size: int) -> tuple[int, ...]:
    """*n* elements in blocks of *size* (the last may be smaller)."""
    size = max(size, 1)
    return (size,) * (n // size) + ((n % size,) if n % size else ())


def pad(
    x: Array,
    pad_width: Any,
    mode: str = "constant",
    constant_values: Any = 0,
    chunks: Any = None,
) -> Array:
    """*x* padded by *pad_width* along each axis (numpy's ``pad``).

    Parameters
    ----------
    x : Array
    pad_width : int, (before, after), or ((before, after), ...) per axis
    mode : {"constant", "edge", "reflect", "symmetric", "wrap"}
    constant_values : scalar, or pairs per axis like *pad_width* (mode "constant")
    chunks : optional
        Rechunk the result to these chunks. By default, in the modes other than
        ``"constant"``, each padded axis is in regular blocks of *x*'s chunk size
        (Cubed's chunks for its ``"symmetric"``); ``"constant"`` keeps *x*'s blocks
        and puts the padding in blocks of its own.
    """
    if not isinstance(x, Array):
        raise TypeError(f"pad: expected a cubego Array, got {type(x).__name__}")
    if mode is None:
        mode = "constant"
    if mode not in MODES:
        raise ValueError(f"pad: mode must be one of {', '.join(MODES)}, got {mode!r}")
    widths = []
    for before, after in _pairs(pad_width, x.ndim, "pad_width"):
        before, after = operator.index(before), operator.index(after)
        if before < 0 or after < 0:
            raise ValueError(f"pad: pad widths must be non-negative, got {pad_width!r}")
        widths.append((before, after))
    if mode == "constant":
        values = _pairs(constant_values, x.ndim, "constant_values")
        stored = x.dtype.kind in "mM"  # datetime values, as their int64 storage
        if stored:
            values = [
                tuple(_datetimes.storage_scalar(v, x.dtype) for v in pair) for pair in values
            ]
        if all(v == values[0][0] for pair in values for v in pair):
            value = values[0][0]
            args = {
                "pad_width": [list(w) for w in widths],
                "constant_value": libcubego.encode_scalar(value),
            }
            out = apply("pad_constant", args, [x])
        else:
            out = x
            for axis, ((before, after), (vb, va)) in enumerate(zip(widths, values, strict=True)):
                parts = []
                for width, value in ((before, vb), (after, va)):
                    shape = list(out.shape)
                    shape[axis] = width
                    if stored:
                        part = full(tuple(shape), value, dtype="int64", spec=x.spec)
                        parts.append(_datetimes.tag(part, x.dtype))
                    else:
                        parts.append(full(tuple(shape), value, dtype=x.dtype, spec=x.spec))
                out = concat([parts[0], out, parts[1]], axis=axis)
    else:
        out = x
        for axis, (before, after) in enumerate(widths):
            if before == 0 and after == 0:
                continue
            n = out.shape[axis]
            if n == 0:
                raise ValueError(f"pad: cannot pad the empty axis {axis} in mode {mode!r}")
            positions = np.pad(np.arange(n), (before, after), mode=mode)
            parts = []
            if before:
                parts.append(_piece(out, axis, positions[:before]))
            parts.append(out)
            if after:
                parts.append(_piece(out, axis, positions[before + n :]))
            # Cubed's chunks: the padded axis in regular blocks of x's chunk size.
            target = list(out.chunks)
            target[axis] = _regular(before + n + after, x.chunksize[axis])
            out = concat(parts, axis=axis, chunks=target)
    return out if chunks is None else out.rechunk(chunks)
