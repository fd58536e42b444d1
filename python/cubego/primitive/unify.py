"""``unify_chunks``: rechunk arrays so that dimensions with the same label have the same chunks.

Dask's and Cubed's ``unify_chunks`` (``cubed.core.unify_chunks``), which flox's
Cubed path and xarray's chunk manager call before combining arrays block by
block.
"""

from __future__ import annotations

from typing import Any

from cubego.array_api.creation_functions import asarray
from cubego.core.array import Array
from cubego.core.chunks import common_blocks

__all__ = ["unify_chunks"]


def unify_chunks(*args: Any, **kwargs: Any) -> tuple[dict, list]:
    """Rechunk arrays so that dimensions with the same label have the same chunks.

    *args* alternate arrays and their index labels (one hashable per
    dimension: axis numbers, letters, xarray dimension names), as in Dask;
    an index of None leaves its argument alone, and other arguments are
    converted with :func:`cubego.asarray`. A dimension of length 1 imposes
    nothing; otherwise the chunks of a label get every block boundary of
    every input. Returns ``({label: chunks}, arrays)``.
    """
    if len(args) % 2:
        raise ValueError("unify_chunks: arguments must alternate arrays and their indices")
    pairs = []
    spec = next((a.spec for a in args[::2] if isinstance(a, Array)), None)
    for a, ind in zip(args[::2], args[1::2], strict=True):
        if ind is not None and not isinstance(a, Array):
            a = asarray(a, spec=spec)
        pairs.append((a, ind))
    if all(ind is None for _, ind in pairs):
        return {}, [a for a, _ in pairs]
    found: dict[Any, list[tuple[int, ...]]] = {}
    for a, ind in pairs:
        if ind is None:
            continue
        if len(ind) != a.ndim:
            raise ValueError(
                f"unify_chunks: {len(ind)} indices {tuple(ind)} for an array of dimension {a.ndim}"
            )
        for name, n, c in zip(ind, a.shape, a.chunks, strict=True):
            if n != 1:
                found.setdefault(name, []).append(c)
    for a, ind in pairs:
        for name, c in zip(ind or (), a.chunks, strict=False):
            found.setdefault(name, [c])
    try:
        chunkss = {name: common_blocks(*cs) for name, cs in found.items()}
    except ValueError as e:
        raise ValueError(f"unify_chunks: dimensions of different lengths: {e}") from None
    arrays = []
    for a, ind in pairs:
        if ind is None:
            arrays.append(a)
            continue
        want = tuple(
            chunkss[name] if n != 1 else (1,) for name, n in zip(ind, a.shape, strict=True)
        )
        arrays.append(a if want == a.chunks else a.rechunk(want))
    return chunkss, arrays
