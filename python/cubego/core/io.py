"""Zarr input and output: ``from_zarr``, ``to_zarr``, ``store``.

Stores are named by a local path or a URL (``file://``, ``mem://``, ``s3://``;
``gs://`` and ``azblob://`` in builds with those tags), or given as a
zarr-python array or group whose store is on local disk or an fsspec object
store. ``storage_options`` (fsspec style: ``endpoint_url``, ``region``,
``key``, ``secret``, ``anon``, ...) configure object stores; they are passed
to the engine with the call, since the Go runtime cannot see environment
variables set after the process started.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from typing import Any

from cubego.binding import libcubego
from cubego.core.array import Array, encode_chunks
from cubego.core.compute import run
from cubego.core.config import resolve
from cubego.core.spec import Spec

__all__ = ["from_zarr", "store", "to_zarr"]


def _zarr_location(obj: Any) -> tuple[str, str, dict] | None:
    """(store URL, path, storage options) of a zarr-python array or group."""
    store = getattr(obj, "store", None)
    path = getattr(obj, "path", None)
    if store is None or path is None or not hasattr(obj, "metadata"):
        return None
    root = getattr(store, "root", None)  # LocalStore
    if root is not None:
        return os.fspath(root), path, {}
    fs = getattr(store, "fs", None)  # FsspecStore
    if fs is not None:
        protocol = fs.protocol[0] if isinstance(fs.protocol, (tuple, list)) else fs.protocol
        options = dict(getattr(fs, "storage_options", {}) or {})
        return f"{protocol}://{store.path}", path, options
    raise TypeError(
        f"cubego cannot share a {type(store).__name__} with its engine; write the data to a "
        "local or object store, or use cubego.from_array for in-memory arrays"
    )


def _location(
    store: Any, path: str | None, storage_options: dict | None, what: str
) -> tuple[str, str | None, dict | None, bool]:
    """Resolve a store argument to (URL, path, options, is_existing_zarr_array)."""
    if isinstance(store, (str, os.PathLike)):
        return os.fspath(store), path, storage_options, False
    loc = _zarr_location(store)
    if loc is None:
        raise TypeError(
            f"{what}: store must be a path, a URL, or a zarr-python array or group,"
            f" got {type(store).__name__}"
        )
    url, inner, options = loc
    if not hasattr(store, "shape") and not path and what != "from_zarr":
        raise ValueError(f"{what}: writing into a zarr group needs a path for the array")
    if path:
        inner = f"{inner}/{path}" if inner else path
    is_array = hasattr(store, "shape") and not path
    return url, inner or None, {**options, **(storage_options or {})} or None, is_array


def from_zarr(
    store: Any,
    path: str | None = None,
    chunks: Any = None,
    spec: Spec | None = None,
    storage_options: dict | None = None,
) -> Array:
    """An Array reading the Zarr array (v2 or v3) at *store* (and *path* inside it).

    Parameters
    ----------
    store : str, os.PathLike, zarr.Array or zarr.Group
        A local path, a URL, or a zarr-python array or group.
    path : str, optional
        Path of the array inside the store (or group).
    chunks : optional
        Chunks of the result; default: the Zarr array's chunks (other chunks
        are read across the stored chunk boundaries).
    spec : Spec, optional
    storage_options : dict, optional
        Options of an object store, fsspec-style: credentials, ``endpoint_url``, and
        ``timeout``, ``connect_timeout`` (seconds) and ``retries`` (see docs/zarr.md,
        "Timeouts and retries").

    Raises
    ------
    FileNotFoundError
        If there is no Zarr array there.
    TimeoutError, ConnectionError, PermissionError, OSError
        If the store does not answer within its timeout, cannot be reached (or keeps
        failing after its retries), refuses access, or fails otherwise.
    KeyboardInterrupt
        On Ctrl-C while it waits for the store.
    """
    spec = resolve(spec)
    url, inner, options, _ = _location(store, path, storage_options, "from_zarr")
    args = {
        "store": url,
        "path": inner,
        "chunks": encode_chunks(chunks),
        "spec": spec._to_json(),
        "storage_options": options,
    }
    infos = libcubego.op("from_zarr", args, [])
    return Array._new(infos[0], spec)


def _temporary_store() -> str:
    """A fresh Zarr store under the system's temporary directory, removed when the
    process ends (``to_zarr(x, None)``: compute and write, keep nothing)."""
    directory = tempfile.mkdtemp(prefix="cubego-to-zarr-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return os.path.join(directory, "array.zarr")


def _compressors(compressors: Any) -> Any:
    if compressors == "auto":
        return "zstd"  # zarr-python's default for Zarr v3
    if compressors is None or isinstance(compressors, str):
        return compressors
    if isinstance(compressors, dict):
        compressors = [compressors]
    out = []
    for c in compressors:
        if isinstance(c, dict) and "name" in c:
            out.append({"name": c["name"], "configuration": dict(c.get("configuration", {}))})
            continue
        to_dict = getattr(c, "to_dict", None)  # zarr-python codec objects
        if to_dict is None:
            raise TypeError(f"compressors: cannot use {c!r}; give a name or a codec dict")
        d = to_dict()
        out.append({"name": d["name"], "configuration": dict(d.get("configuration", {}))})
    return out


def _region(region: Any, ndim: int, target_shape: Any) -> list[list[int]] | None:
    """A tuple of slices (step 1) as [[start, stop], ...].

    As in zarr-python, a start of None is 0, a stop of None the target's
    extent, and negative bounds count from it: ``target_shape()`` gives the
    target's shape, and is called only for such slices.
    """
    if region is None:
        return None
    if isinstance(region, slice):
        region = (region,)
    region = tuple(region)
    if len(region) != ndim:
        raise ValueError(f"region {region!r} must have one slice per dimension ({ndim})")
    out, shape = [], None
    for d, s in enumerate(region):
        if not isinstance(s, slice) or s.step not in (None, 1):
            raise ValueError(f"region entries must be slices with step 1, got {s!r}")
        if s.start is None or s.stop is None or s.start < 0 or s.stop < 0:
            shape = target_shape() if shape is None else shape
            out.append(list(s.indices(shape[d])[:2]))
        else:
            out.append([int(s.start), int(s.stop)])
    return out


def _stored(
    x: Array,
    store: Any,
    path: str | None,
    *,
    region: Any = None,
    overwrite: bool = False,
    zarr_format: int = 3,
    compressors: Any = "auto",
    shards: Any = None,
    storage_options: dict | None = None,
    what: str = "to_zarr",
) -> Array:
    """The array that, when computed, writes x to its target."""
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a cubego Array, got {type(x).__name__}")
    if store is None:
        if region is not None:
            raise ValueError(f"{what}: Target store must be specified when setting a region")
        store = _temporary_store()
    url, inner, options, existing = _location(store, path, storage_options, what)
    if existing or region is not None:

        def target_shape() -> tuple[int, ...]:
            if existing:
                return store.shape
            try:
                return from_zarr(url, inner, storage_options=options).shape
            except FileNotFoundError as e:  # say which call failed
                raise FileNotFoundError(str(e).replace("from_zarr", what, 1)) from None

        args = {
            "store": url,
            "path": inner,
            "region": _region(region, x.ndim, target_shape),
            "storage_options": options,
        }
        infos = libcubego.op("store_into", args, [x._handle])
    else:
        if zarr_format not in (2, 3):
            raise ValueError(f"{what}: zarr_format must be 2 or 3, got {zarr_format!r}")
        args = {
            "store": url,
            "path": inner,
            "zarr_format": zarr_format,
            "overwrite": bool(overwrite),
            "compressors": _compressors(compressors),
            "shards": None if shards is None else [int(s) for s in shards],
            "storage_options": options,
        }
        infos = libcubego.op("to_zarr", args, [x._handle])
    return Array._new(infos[0], x.spec)


def to_zarr(
    x: Array,
    store: Any,
    path: str | None = None,
    region: Any = None,
    compute: bool = True,
    *,
    zarr_format: int = 3,
    compressors: Any = "auto",
    shards: Any = None,
    storage_options: dict | None = None,
    overwrite: bool = False,
    executor: Any = None,
    **kwargs: Any,
) -> Array | None:
    """Write *x* to a Zarr array at *store* (and *path* inside it).

    The data is written chunk by chunk and never held in memory as a whole;
    each chunk is written atomically.

    Parameters
    ----------
    x : Array
    store : str, os.PathLike, zarr.Array, zarr.Group or None
        Where to write. A zarr-python array (or *region*) writes into an
        existing array; otherwise a new array is created. None (as in Cubed's
        examples) writes to a temporary store removed when the process ends:
        the computation runs, and nothing is kept.
    path : str, optional
    region : tuple of slice, optional
        Write into this part of the existing array at *store*: slices with a
        start and stop on the target's chunk boundaries (or at its end).
    compute : bool, default True
        Write now. If False, return the stored array; computing it writes.
    zarr_format : {3, 2}
    compressors : "auto", None, str, dict or list
        ``"auto"`` is zstd (zarr-python's default); ``None`` writes
        uncompressed chunks; also ``"zstd"``, ``"blosc"``, ``"gzip"`` or Zarr
        v3 codec dicts ``{"name": ..., "configuration": {...}}``.
    shards : tuple of int, optional
        Write a sharded array (v3): shards of this shape, each a multiple of
        x's chunks, which become the inner chunks.
    storage_options : dict, optional
        Options of an object store.
    overwrite : bool, default False
        Replace an existing array at the target.
    executor, **kwargs
        As for :func:`cubego.compute`.
    """
    stored = _stored(
        x,
        store,
        path,
        region=region,
        overwrite=overwrite,
        zarr_format=zarr_format,
        compressors=compressors,
        shards=shards,
        storage_options=storage_options,
    )
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
    storage_options: dict | None = None,
    executor: Any = None,
    **kwargs: Any,
) -> list[Array] | None:
    """Write each source array to its target, all in one computation.

    Parameters
    ----------
    sources : Array or sequence of Array
    targets : zarr.Array, path, or a sequence of them
        One per source. A zarr-python array is written into (it must
        exist); a path creates a new Zarr v3 array.
    regions : tuple of slice, or a sequence of them, optional
        For each target, the part to write (see :func:`to_zarr`).
    compute : bool, default True
        Write now; if False, return the stored arrays (computing them writes).
    """
    if isinstance(sources, Array):
        sources = [sources]
    if not isinstance(targets, (list, tuple)):
        targets = [targets]
    sources, targets = list(sources), list(targets)
    if len(sources) != len(targets):
        raise ValueError(
            f"store: Different number of sources ({len(sources)}) and targets ({len(targets)}); "
            "give one target per source"
        )
    if (
        regions is None
        or isinstance(regions, slice)
        or (isinstance(regions, tuple) and all(isinstance(r, slice) for r in regions))
    ):
        regions = [regions] * len(sources)
    regions = list(regions)
    if len(regions) != len(sources):
        raise ValueError(
            f"store: Different number of sources [{len(sources)}] and targets [{len(targets)}] "
            f"than regions [{len(regions)}]"
        )
    stored = [
        _stored(
            x,
            target,
            None,
            region=region,
            overwrite=overwrite,
            storage_options=storage_options,
            what="store",
        )
        for x, target, region in zip(sources, targets, regions, strict=True)
    ]
    if not compute:
        return stored
    if stored:
        run(tuple(stored), executor, True, kwargs).release()
    return None
