"""Manipulation functions (Array API), plus ``astype`` and Cubed's ``rechunk``.

``broadcast_to, concat, permute_dims, reshape, squeeze, stack`` are library
ops; the others compose them with basic indexing: ``flip`` is a negative-step
slice, ``roll`` a concatenation of two slices, ``repeat`` and ``tile`` insert a
broadcast dimension and merge it with ``reshape`` (bounded by the chunks,
whatever the repetition count).
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from cubego.core.array import Array, apply, encode_chunks, encode_shape

__all__ = [
    "astype",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "concat",
    "expand_dims",
    "flip",
    "moveaxis",
    "permute_dims",
    "rechunk",
    "repeat",
    "reshape",
    "roll",
    "squeeze",
    "stack",
    "tile",
    "unstack",
]


def _check(x: Any, what: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a cubego Array, got {type(x).__name__}")
    return x


def _axes(axis: Any, ndim: int, what: str) -> tuple[int, ...]:
    """Normalized, checked axes: None means all of them."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{what}: axis {a} is out of bounds for an array of dimension {ndim}")
        a %= builtins.max(ndim, 1)
        if a in out:
            raise ValueError(f"{what}: repeated axis {a}")
        out.append(a)
    return tuple(out)


def astype(x: Array, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Array:
    """*x* converted to *dtype* (numpy casting rules, applied by the library)."""
    _check(x, "astype")
    if device not in (None, "cpu"):
        raise ValueError(f"unsupported device {device!r}; cubego arrays live on 'cpu'")
    return x.astype(dtype, copy=copy)


def rechunk(
    x: Array, chunks: Any, *, min_mem: int | str | None = None, allow_irregular: bool = True
) -> Array:
    """*x* with new chunks: an int, a tuple per axis, a dict ``{axis: chunks}``, or "auto".

    An axis missing from the dict, or None in the tuple, keeps its chunks. The
    copy runs in one stage when it fits ``allowed_mem``, else in several
    (Rechunker's algorithm); *min_mem* is the smallest intermediate chunk a
    multi-stage plan accepts before adding stages (default 256 KiB with a local
    ``work_dir``, 8 MiB on object stores). *allow_irregular* is accepted as in
    Cubed (see ``Array.rechunk``). Rechunking to *x*'s own chunks returns *x*.
    """
    _check(x, "rechunk")
    return x.rechunk(chunks, min_mem=min_mem, allow_irregular=allow_irregular)


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape that *shapes* broadcast to; ValueError if they are incompatible."""
    ndim = builtins.max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, n in enumerate(shape):
            j = ndim - len(shape) + i
            if n == out[j] or n == 1:
                continue
            if out[j] == 1:
                out[j] = n
            else:
                raise ValueError(
                    "shapes " + ", ".join(str(tuple(s)) for s in shapes) + " cannot be broadcast"
                )
    return tuple(out)


def broadcast_to(x: Array, /, shape: tuple[int, ...], *, chunks: Any = None) -> Array:
    """*x* broadcast to *shape*, with *chunks* if given.

    By default the result's chunks follow Cubed: dimensions *x* lacks, and those
    where it has length 1, get blocks of 1 element (e.g. ``(5, 1, 6) -> (5, 4, 6)``
    gives ``(1, 1, 1, 1)`` on axis 1); the others keep *x*'s chunks. Broadcasting
    to *x*'s own shape returns *x*. Unlike Cubed, *chunks* may also change the
    chunks of the dimensions *x* has (each output block reads the blocks it overlaps).
    """
    _check(x, "broadcast_to")
    shape = tuple(encode_shape(shape))
    if shape == x.shape and chunks is None:
        return x
    lead = len(shape) - x.ndim
    if chunks is None and lead >= 0:
        # 1: blocks of one element (the library spells out the sizes)
        chunks = [
            1 if d < lead or x.shape[d - lead] == 1 else x.chunks[d - lead]
            for d in range(len(shape))
        ]
    args = {"shape": list(shape), "chunks": encode_chunks(chunks)}
    return x._same_or(apply("broadcast_to", args, [x]))


def broadcast_view(x: Array, shape: tuple[int, ...]) -> Array:
    """*x* broadcast to *shape* with the library's chunks (blocks of about *x*'s chunk
    size on the new dimensions): for functions that reshape the result next."""
    return apply("broadcast_to", {"shape": encode_shape(shape)}, [x])


def broadcast_arrays(*arrays: Array) -> tuple[Array, ...]:
    """The arrays broadcast against one another."""
    for x in arrays:
        _check(x, "broadcast_arrays")
    shape = broadcast_shapes(*(x.shape for x in arrays))
    return tuple(broadcast_to(x, shape) for x in arrays)


def concat(
    arrays: tuple[Array, ...] | list[Array], /, *, axis: int | None = 0, chunks: Any = None
) -> Array:
    """Join arrays along an existing *axis* (None: flatten them first); dtypes promote."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("concat needs at least one array")
    for x in arrays:
        _check(x, "concat")
    if axis is None:
        arrays = [reshape(x, (-1,)) for x in arrays]
        axis = 0
    args = {"axis": operator.index(axis), "chunks": encode_chunks(chunks)}
    return apply("concat", args, arrays)


def stack(arrays: tuple[Array, ...] | list[Array], /, *, axis: int = 0) -> Array:
    """Join arrays of one shape along a new *axis*."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("stack needs at least one array")
    for x in arrays:
        _check(x, "stack")
    return apply("stack", {"axis": operator.index(axis)}, arrays)


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of *x* along *axis*, as a tuple."""
    _check(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack needs an array with at least one dimension")
    (axis,) = _axes(axis, x.ndim, "unstack")
    lead = (slice(None),) * axis
    return tuple(x[lead + (i,)] for i in range(x.shape[axis]))


def expand_dims(x: Array, /, axis: int | tuple[int, ...] = 0) -> Array:
    """*x* with new dimensions of length one at *axis* (positions in the result)."""
    _check(x, "expand_dims")
    ndim = x.ndim + (len(axis) if isinstance(axis, (tuple, list)) else 1)
    try:
        axes = _axes(axis, ndim, "expand_dims")
    except ValueError as e:
        raise IndexError(str(e)) from None
    key = tuple(None if d in axes else slice(None) for d in range(ndim))
    return x[key]


def squeeze(x: Array, /, axis: int | tuple[int, ...]) -> Array:
    """*x* without the dimensions *axis*, each of length one."""
    _check(x, "squeeze")
    axes = _axes(axis, x.ndim, "squeeze")
    return apply("squeeze", {"axis": list(axes)}, [x])


def permute_dims(x: Array, /, axes: tuple[int, ...]) -> Array:
    """*x* with its dimensions reordered: result dimension i is dimension ``axes[i]``."""
    _check(x, "permute_dims")
    return apply("permute_dims", {"axes": [operator.index(a) for a in axes]}, [x])


def moveaxis(
    x: Array, source: int | tuple[int, ...], destination: int | tuple[int, ...], /
) -> Array:
    """*x* with dimensions *source* moved to positions *destination*."""
    _check(x, "moveaxis")
    src = _axes(source, x.ndim, "moveaxis")
    dst = _axes(destination, x.ndim, "moveaxis")
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of elements")
    order = [d for d in range(x.ndim) if d not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


def reshape(x: Array, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Array:
    """*x* with a new shape (one entry may be -1), in C order; data moves by rechunking.

    Arrays are immutable, so *copy* makes no difference.
    """
    _check(x, "reshape")
    return apply("reshape", {"shape": encode_shape(shape)}, [x])


def flip(x: Array, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """*x* with the order of elements reversed along *axis* (all axes by default)."""
    _check(x, "flip")
    axes = _axes(axis, x.ndim, "flip")
    if x.ndim == 0:
        return x
    return x[tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(x.ndim))]


def roll(
    x: Array, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None
) -> Array:
    """*x* with elements shifted cyclically by *shift* along *axis* (flattened if None)."""
    _check(x, "roll")
    if axis is None:
        if isinstance(shift, (tuple, list)):
            raise TypeError(
                "roll: shift must be an int when axis is None (the array is flattened), "
                f"got {shift!r}"
            )
        return reshape(roll(reshape(x, (-1,)), shift, axis=0), x.shape)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if isinstance(shift, (tuple, list)):
        # The standard: a tuple shift needs a tuple axis of the same size (numpy would
        # broadcast them; Cubed refuses, and so does cubego).
        shifts = tuple(shift)
        if not isinstance(axis, (tuple, list)) or len(shifts) != len(axes):
            raise ValueError(
                f"roll: Must have the same number of shifts as axes, got shift={shift!r} and "
                f"axis={axis!r}"
            )
    else:
        shifts = (shift,) * len(axes)  # the standard: one int shift applies to every axis
    for s, a in zip(shifts, axes, strict=True):
        (a,) = _axes(a, x.ndim, "roll")
        n = x.shape[a]
        if n == 0:
            continue
        s = operator.index(s) % n
        if s == 0:
            continue
        lead = (slice(None),) * a
        x = concat([x[lead + (slice(n - s, None),)], x[lead + (slice(0, n - s),)]], axis=a)
    return x


def repeat(x: Array, repeats: int | Array, /, *, axis: int | None = None) -> Array:
    """Each element of *x* repeated *repeats* times along *axis* (flattened if None).

    An integer count inserts a broadcast dimension and merges it (lazy, bounded).
    A *repeats* array gives a count per element: it is computed, since it decides
    the result's shape, and the elements are gathered with ``take``.
    """
    _check(x, "repeat")
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    if x.ndim == 0:
        raise ValueError("repeat needs an array with at least one dimension")
    (axis,) = _axes(axis, x.ndim, "repeat")
    n = x.shape[axis]
    if isinstance(repeats, Array):
        if repeats.dtype.kind not in "iu":
            raise TypeError(f"repeat: repeats must have an integer dtype, got {repeats.dtype}")
        counts = np.asarray(repeats.compute())
        if counts.ndim > 1 or counts.size not in (1, n):
            raise ValueError(
                f"repeat: repeats of shape {counts.shape} do not match axis {axis} of length {n}"
            )
        if counts.size == 1 and n != 1:
            return repeat(x, int(counts.reshape(())), axis=axis)
        if (counts < 0).any():
            raise ValueError("repeat: repeats must be non-negative")
        indices = np.repeat(np.arange(n), counts)
        return apply("take", {"indices": [int(i) for i in indices], "axis": axis}, [x])
    if isinstance(repeats, (bool, np.bool_)):
        raise TypeError("repeat: repeats must be an integer or an integer array, not a bool")
    r = operator.index(repeats)
    if r < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {r}")
    if r == 1:
        return x
    shape = list(x.shape)
    wide = shape[: axis + 1] + [r] + shape[axis + 1 :]
    shape[axis] *= r
    return reshape(broadcast_view(expand_dims(x, axis=axis + 1), tuple(wide)), tuple(shape))


def tile(x: Array, repetitions: tuple[int, ...], /) -> Array:
    """*x* repeated *repetitions* times along each dimension (lazy, bounded)."""
    _check(x, "tile")
    reps = tuple(operator.index(r) for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    ndim = builtins.max(len(reps), x.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    if x.ndim < ndim:
        x = reshape(x, (1,) * (ndim - x.ndim) + x.shape)
    if all(r == 1 for r in reps):
        return x
    key = tuple(k for d in range(ndim) for k in (None, slice(None)))
    wide = tuple(n for r, s in zip(reps, x.shape, strict=True) for n in (r, s))
    shape = tuple(r * s for r, s in zip(reps, x.shape, strict=True))
    return reshape(broadcast_view(x[key], wide), shape)
