"""Zarr input and output: ``from_zarr``, ``to_zarr``, ``store``."""

from __future__ import annotations

import os
from typing import Any

from . import _lib
from ._compute import run
from .array import Array, encode_chunks
from .spec import Spec, resolve

__all__ = ["from_zarr", "store", "to_zarr"]


def _store_url(store: Any, what: str) -> str:
    if isinstance(store, (str, os.PathLike)):
        return os.fspath(store)
    raise TypeError(
        f"{what}: store must be a path or URL (str or os.PathLike), got {type(store).__name__}"
    )


def from_zarr(
    store: Any, path: str | None = None, chunks: Any = None, spec: Spec | None = None
) -> Array:
    """An Array reading the Zarr array at *store* (and *path* inside it).

    Parameters
    ----------
    store : str or os.PathLike
        A local path or a URL (``file://``, ``mem://``).
    path : str, optional
        Path of the array inside the store.
    chunks : optional
        Chunks of the result; default: the Zarr array's chunks.
    spec : Spec, optional

    Raises
    ------
    FileNotFoundError
        If there is no Zarr array there.
    """
    spec = resolve(spec)
    args = {
        "store": _store_url(store, "from_zarr"),
        "path": path,
        "chunks": encode_chunks(chunks),
        "spec": spec._to_json(),
    }
    infos = _lib.op("from_zarr", args, [])
    return Array._new(infos[0], spec)


def _stored(x: Array, store: Any, path: str | None, overwrite: bool) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"to_zarr: expected a cubego Array, got {type(x).__name__}")
    args = {
        "store": _store_url(store, "to_zarr"),
        "path": path,
        "zarr_format": 3,
        "overwrite": bool(overwrite),
    }
    infos = _lib.op("to_zarr", args, [x._handle])
    return Array._new(infos[0], x.spec)


def to_zarr(
    x: Array,
    store: Any,
    path: str | None = None,
    compute: bool = True,
    *,
    overwrite: bool = False,
    executor: Any = None,
    **kwargs: Any,
) -> Array | None:
    """Write *x* to a Zarr v3 array at *store* (and *path* inside it).

    The data is written chunk by chunk and never held in memory as a whole.

    Parameters
    ----------
    x : Array
    store : str or os.PathLike
    path : str, optional
    compute : bool, default True
        Write now. If False, return the stored array; computing it writes.
    overwrite : bool, default False
        Replace an existing array at the target.
    executor, **kwargs
        As for :func:`cubego.compute`.
    """
    stored = _stored(x, store, path, overwrite)
    if not compute:
        return stored
    run((stored,), executor, True, kwargs).release()
    return None


def store(
    sources: Array | list[Array] | tuple[Array, ...],
    targets: Any,
    regions: Any = None,
    compute: bool = True,
    *,
    overwrite: bool = False,
    executor: Any = None,
    **kwargs: Any,
) -> list[Array] | None:
    """Write each source array to its target Zarr path, all in one computation.

    Parameters
    ----------
    sources : Array or sequence of Array
    targets : path or sequence of paths
        One per source.
    regions : None
        Writing into regions of existing arrays is not supported yet.
    compute : bool, default True
        Write now; if False, return the stored arrays (computing them writes).
    """
    if regions is not None:
        raise NotImplementedError("cubego.store: regions are not supported yet")
    if isinstance(sources, Array):
        sources = [sources]
    if isinstance(targets, (str, os.PathLike)):
        targets = [targets]
    sources, targets = list(sources), list(targets)
    if len(sources) != len(targets):
        raise ValueError(
            f"store: {len(sources)} sources but {len(targets)} targets; give one target per source"
        )
    stored = [
        _stored(x, target, None, overwrite) for x, target in zip(sources, targets, strict=True)
    ]
    if not compute:
        return stored
    if stored:
        run(tuple(stored), executor, True, kwargs).release()
    return None
