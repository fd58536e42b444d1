"""Dask's chunk-normalisation semantics in Python, for xarray's chunk manager.

xarray hands a chunk manager chunk specifications in Dask's language: per-axis
mixes of ints, ``-1``/``None`` (the whole axis), explicit block tuples,
``"auto"`` and byte sizes (``"16MB"``), dicts keyed by axis, and the backend's
on-disk chunks as ``previous_chunks``. :func:`normalize_chunks` turns them into
explicit block sizes, tuple of tuples, with the same results as
``dask.array.normalize_chunks`` for explicit specifications and for ``"auto"``
without previous chunks; with previous chunks, ``"auto"`` blocks grow in whole
previous blocks (so no new block splits a stored chunk) and shrink evenly,
like Dask's.
"""

from __future__ import annotations

import math
import numbers
import statistics
from typing import Any

import numpy as np

from cubego.core.spec import parse_size

#: The block size ``"auto"`` aims for when no limit is given (Dask's and Cubed's default).
DEFAULT_AUTO_BYTES = 128 * 2**20

#: The most blocks an array may have along its axes together (the library's
#: ``plan.MaxBlocks``): a chunking is a tuple of block sizes per axis, so
#: shape ``(2**35,)`` with chunks ``(1,)`` is refused before it is built.
MAX_BLOCKS = 2**22


def _regular(n: int, size: int) -> tuple[int, ...]:
    """Blocks of *size* covering *n* elements, the last possibly smaller."""
    if n == 0:
        return (0,)
    full, rest = divmod(n, size)
    if full + bool(rest) > MAX_BLOCKS:
        raise ValueError(
            f"chunks of {size} along an axis of length {n} make {full + bool(rest)} blocks, "
            f"more than the {MAX_BLOCKS} an array may have; choose larger chunks"
        )
    return (size,) * full + ((rest,) if rest else ())


def _is_int(c: Any) -> bool:
    return isinstance(c, numbers.Integral) and not isinstance(c, (bool, np.bool_))


def _explicit(shape: tuple[int, ...], c: Any, axis: int) -> tuple[int, ...]:
    """One axis's blocks from an int or an explicit block tuple."""
    n = shape[axis]
    if _is_int(c):
        c = int(c)
        if c <= 0:
            if n == 0 and c == 0:
                return (0,)
            raise ValueError(
                f"chunk size must be positive (or -1 for the whole axis), got {c} for axis {axis}"
            )
        return _regular(n, c)
    if isinstance(c, (tuple, list, np.ndarray)):
        blocks = tuple(int(b) for b in c)
        if not blocks:
            raise ValueError(f"empty chunks for axis {axis}: express a zero-length axis with (0,)")
        if any(b < 0 or (b == 0 and n != 0) for b in blocks):
            raise ValueError(f"chunk sizes must be positive, got {blocks} for axis {axis}")
        if sum(blocks) != n:
            raise ValueError(
                f"chunks {blocks} for axis {axis} sum to {sum(blocks)}, not the axis length {n}"
            )
        return blocks
    raise TypeError(
        f"invalid chunks {c!r} for axis {axis}: expected an int, -1, None, 'auto', "
        "a byte size such as '16MB', or a tuple of block sizes"
    )


def _per_axis(chunks: Any, ndim: int) -> tuple:
    if isinstance(chunks, np.ndarray):
        chunks = chunks.tolist()
    if isinstance(chunks, list):
        chunks = tuple(chunks)
    if isinstance(chunks, dict):
        for key in chunks:
            if not _is_int(key) or not -ndim <= key < ndim:
                raise ValueError(
                    f"chunks dict key {key!r} is not an axis of a {ndim}-dimensional array"
                )
        chunks = {int(k) % ndim: v for k, v in chunks.items()} if ndim else {}
        return tuple(chunks.get(axis) for axis in range(ndim))
    if isinstance(chunks, (numbers.Number, str)) and not isinstance(chunks, bool):
        return (chunks,) * ndim
    if isinstance(chunks, tuple):
        if ndim == 1 and len(chunks) > 1 and all(isinstance(c, numbers.Number) for c in chunks):
            return (chunks,)
        if len(chunks) != ndim:
            raise ValueError(
                f"chunks {chunks!r} have {len(chunks)} entries but the array has {ndim} dimensions"
            )
        return chunks
    raise TypeError(
        f"invalid chunks {chunks!r}: expected an int, 'auto', a byte size, a tuple or a dict"
    )


def normalize_chunks(
    chunks: Any,
    shape: tuple[int, ...] | None = None,
    limit: int | str | None = None,
    dtype: Any = None,
    previous_chunks: Any = None,
    *,
    auto_bytes: int = DEFAULT_AUTO_BYTES,
) -> tuple[tuple[int, ...], ...]:
    """Explicit block sizes per axis from a Dask-style chunk specification.

    Parameters
    ----------
    chunks : int, str, tuple, list or dict
        An int (every axis), ``-1`` or ``None`` (the whole axis), ``"auto"`` or
        a byte size such as ``"16MB"`` (blocks of about that many bytes), a
        tuple with one entry per axis (each one of those, or explicit block
        sizes), or a dict ``{axis: entry}`` (missing axes: the whole axis).
    shape : tuple of int
        The array's shape; optional only when *chunks* is fully explicit.
    limit : int or str, optional
        The bytes an ``"auto"`` block aims for; default *auto_bytes*. A
        byte-size entry in *chunks* sets it (all of them must agree with it).
    dtype : dtype, optional
        Required for ``"auto"`` and byte sizes.
    previous_chunks : tuple, optional
        Existing chunks (e.g. on disk), one entry per axis (an int, a block
        tuple, or None when unknown): ``"auto"`` blocks are built from whole
        previous blocks when they grow.
    auto_bytes : int
        The default of *limit* (128 MiB, as in Dask and Cubed).

    Returns
    -------
    tuple of tuple of int
    """
    if chunks is None:
        raise ValueError(
            "chunks=None is not a chunk specification; use -1 (or None per axis) for whole "
            "axes, 'auto', an int, a tuple or a dict"
        )
    if shape is None:
        if isinstance(chunks, (tuple, list)) and all(isinstance(c, (tuple, list)) for c in chunks):
            shape = tuple(sum(int(b) for b in c) for c in chunks)
        else:
            raise ValueError("normalize_chunks needs the array's shape unless chunks are explicit")
    shape = tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"shape {shape} has a negative length")
    ndim = len(shape)
    entries = list(_per_axis(chunks, ndim))
    for axis, c in enumerate(entries):
        if c is None or (_is_int(c) and c == -1):
            entries[axis] = shape[axis]
    if isinstance(limit, str):
        limit = parse_size(limit, "limit")
    for c in entries:
        if isinstance(c, str) and c != "auto":
            parsed = parse_size(c, "chunks")
            if limit is not None and parsed != limit:
                raise ValueError(
                    f"chunks ask for blocks of {parsed} bytes and {limit} bytes; give one size"
                )
            limit = parsed
    autos = [axis for axis, c in enumerate(entries) if isinstance(c, str)]
    if autos:
        _resolve_auto(
            entries, autos, shape, auto_bytes if limit is None else limit, dtype, previous_chunks
        )
    return tuple(_explicit(shape, c, axis) for axis, c in enumerate(entries))


def _previous(previous_chunks: Any, shape: tuple[int, ...]) -> list[tuple[int, ...] | None]:
    """The previous blocks per axis, None where unknown or inconsistent with *shape*."""
    if previous_chunks is None:
        return [None] * len(shape)
    previous_chunks = tuple(previous_chunks)
    if len(previous_chunks) != len(shape):
        raise ValueError(
            f"previous_chunks {previous_chunks!r} have {len(previous_chunks)} entries but the "
            f"array has {len(shape)} dimensions"
        )
    out: list[tuple[int, ...] | None] = []
    for n, p in zip(shape, previous_chunks, strict=True):
        if isinstance(p, (tuple, list)) and len(p) == 1:
            p = p[0]
        if _is_int(p) and p > 0:
            out.append(_regular(n, int(p)))
        elif isinstance(p, (tuple, list)) and all(_is_int(b) and b > 0 for b in p) and sum(p) == n:
            out.append(tuple(int(b) for b in p))
        else:
            out.append(None)
    return out


def _typical(blocks: tuple[int, ...]) -> float:
    """The block size an axis is built from: the median of its blocks."""
    return float(statistics.median(blocks))


def _merge(blocks: tuple[int, ...], proposed: float) -> tuple[int, ...]:
    """Consecutive *blocks* merged into runs of at most *proposed* elements (one block at least)."""
    out: list[int] = []
    run = 0
    for b in blocks:
        if run and run + b > proposed:
            out.append(run)
            run = 0
        run += b
    out.append(run)
    return tuple(out)


def _resolve_auto(
    entries: list,
    autos: list[int],
    shape: tuple[int, ...],
    limit: int,
    dtype: Any,
    previous_chunks: Any,
) -> None:
    if dtype is None:
        raise TypeError("dtype must be known for 'auto' or byte-size chunks")
    dtype = np.dtype(dtype)
    if dtype.hasobject:
        raise NotImplementedError(
            "'auto' chunks are not supported for object dtypes: their size in bytes is unknown"
        )
    if dtype.itemsize == 0:
        raise ValueError("'auto' chunks need a dtype with a nonzero itemsize; give chunks")
    limit = max(1, int(limit))
    fixed = dtype.itemsize
    for axis, c in enumerate(entries):
        if axis not in autos:
            fixed *= max(_explicit(shape, c, axis))
    previous = _previous(previous_chunks, shape)
    base = {a: (_typical(previous[a]) if previous[a] else 1.0) for a in autos}
    # Elements per block left for the auto axes; axes whose share reaches
    # their length take the whole axis and leave the rest to the others.
    budget = limit / fixed
    active = list(autos)
    while active:
        scale = (budget / math.prod(base[a] for a in active)) ** (1 / len(active))
        whole = [a for a in active if base[a] * scale >= shape[a]]
        if not whole:
            break
        for a in whole:
            entries[a] = shape[a]
            budget /= max(shape[a], 1)
            active.remove(a)
    for a in active:
        proposed = base[a] * scale
        blocks = previous[a]
        if blocks is not None and proposed >= max(blocks):
            entries[a] = _merge(blocks, proposed)
        else:
            entries[a] = max(1, int(proposed))


def common_blocks(*chunkss: tuple[int, ...]) -> tuple[int, ...]:
    """The blocks that several blockings of one axis are unified to (Dask's rule).

    A blocking with a single block imposes nothing; if only one blocking has
    several blocks, it wins; otherwise the result has every boundary of every
    blocking, so each can be rechunked to it without a block spanning two of
    its own blocks.
    """
    lengths = {sum(c) for c in chunkss}
    if len(lengths) > 1:
        raise ValueError(f"chunks {chunkss} cover different lengths {sorted(lengths)}")
    several = {tuple(c) for c in chunkss if len(c) > 1}
    if not several:
        return max((tuple(c) for c in chunkss), key=lambda c: c[0])
    if len(several) == 1:
        return several.pop()
    bounds: set[int] = set()
    for c in several:
        bounds.update(np.cumsum(c).tolist())
    out, start = [], 0
    for edge in sorted(bounds):
        if edge > start:
            out.append(edge - start)
            start = edge
    return tuple(out)
