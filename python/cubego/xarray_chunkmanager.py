"""xarray's chunk manager for cubego: ``chunked_array_type="cubego"``.

xarray discovers this class through the ``xarray.chunkmanagers`` entry point
named ``cubego`` (pyproject.toml) and routes chunked work on cubego arrays
through it: chunk normalisation (Dask's semantics), wrapping lazily loaded
variables, computing, persisting, rechunking, reductions and scans, Dask-style
``map_blocks``/``blockwise``/``apply_gufunc``, chunk unification and writes.

Everything here is imported lazily from the methods, so loading the entry
point costs little; if the Go library cannot be loaded the class says
``available = False`` and xarray leaves it out instead of failing for every
chunk manager.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from xarray.namedarray.parallelcompat import ChunkManagerEntrypoint


def _library_loads() -> bool:
    try:
        from cubego.binding import libcubego

        libcubego.library()
    except (OSError, ImportError):
        return False
    return True


class CubegoManager(ChunkManagerEntrypoint):
    """The ``cubego`` chunk manager of xarray (``chunked_array_type="cubego"``).

    Pass a :class:`cubego.Spec` with ``from_array_kwargs={"spec": spec}`` when
    opening or chunking data; arrays without one use the configured Spec.
    """

    available: bool = _library_loads()

    def __init__(self) -> None:
        from cubego.core.array import Array

        self.array_cls = Array
        _route_push()

    # ------------------------------------------------------------ chunks

    def chunks(self, data: Any) -> tuple[tuple[int, ...], ...]:
        return data.chunks

    def normalize_chunks(
        self,
        chunks: Any,
        shape: tuple[int, ...] | None = None,
        limit: int | None = None,
        dtype: Any = None,
        previous_chunks: Any = None,
    ) -> tuple[tuple[int, ...], ...]:
        """Explicit chunks, Dask's semantics; ``"auto"`` aims for :meth:`get_auto_chunk_size`."""
        from cubego.core.chunks import normalize_chunks

        return normalize_chunks(
            chunks,
            shape=shape,
            limit=limit,
            dtype=dtype,
            previous_chunks=previous_chunks,
            auto_bytes=self.get_auto_chunk_size(),
        )

    def get_auto_chunk_size(self) -> int:
        """Bytes an ``"auto"`` block aims for under the configured Spec.

        As for cubego's own ``chunks="auto"``: a tenth of what the Spec lets a
        task use (``allowed_mem - reserved_mem``), at most 128 MiB, so that an
        operation over a few such blocks fits the memory budget.
        """
        from cubego.core.config import resolve

        return _auto_bytes(resolve(None))

    def from_array(self, data: Any, chunks: Any, **kwargs: Any) -> Any:
        """A cubego array reading *data* block by block (never loaded whole).

        ``spec`` is used; Dask's ``name``, ``lock``, ``inline_array``, ``meta``
        and other keywords are ignored.
        """
        from cubego.primitive.blockwise import from_array

        spec = kwargs.pop("spec", None)
        if not isinstance(chunks, tuple) or not all(isinstance(c, tuple) for c in chunks):
            chunks = self.normalize_chunks(
                chunks,
                shape=tuple(data.shape),
                dtype=data.dtype,
                previous_chunks=getattr(data, "chunks", None),
            )
        return from_array(data, chunks=chunks, spec=spec)

    def rechunk(self, data: Any, chunks: Any, **kwargs: Any) -> Any:
        """*data* with new chunks; axes missing from a dict keep theirs.

        Byte sizes and ``"auto"`` follow Dask: the other axes' blocks count
        towards the size. ``min_mem`` and other keywords are ignored.
        """
        from cubego.core.chunks import normalize_chunks

        if isinstance(chunks, dict):
            chunks = tuple(chunks.get(axis, data.chunks[axis]) for axis in range(data.ndim))
        elif isinstance(chunks, (tuple, list)) and len(chunks) == data.ndim:
            chunks = tuple(data.chunks[axis] if c is None else c for axis, c in enumerate(chunks))
        if 0 in data.shape and chunks == "auto":
            chunks = data.shape
        normal = normalize_chunks(
            chunks,
            shape=data.shape,
            dtype=data.dtype,
            previous_chunks=data.chunks,
            auto_bytes=_auto_bytes(data.spec),
        )
        return data if normal == data.chunks else data.rechunk(normal)

    # ------------------------------------------------------------ computing

    def compute(self, *data: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        """All cubego arrays among *data* computed in one plan; other objects pass through.

        Keyword arguments (``executor``, ``callbacks``, ``optimize_graph``,
        ``resume``, ...) go to :func:`cubego.compute`.
        """
        from cubego.core import compute as _compute
        from cubego.core.array import Array

        lazy = [x for x in data if isinstance(x, Array)]
        results = iter(_compute.compute(*lazy, **kwargs) if lazy else ())
        return tuple(next(results) if isinstance(x, Array) else x for x in data)

    def persist(self, *data: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Arrays backed by their computed values, written once to Zarr intermediates.

        The values are computed in one plan and stored uncompressed under the
        Spec's ``work_dir`` (the system's temporary directory when it has
        none), so later computations read them instead of recomputing, and the
        memory stays bounded. The files are removed when the process exits
        (arrays derived from the persisted ones may still read them until then).
        """
        from cubego.core.array import Array
        from cubego.core.io import from_zarr

        lazy = [x for x in data if isinstance(x, Array)]
        if not lazy:
            return data
        root = _persist_root(lazy[0].spec.work_dir)
        paths = [os.path.join(root, f"{i}.zarr") for i in range(len(lazy))]
        _store_uncompressed(lazy, paths, dict(kwargs))
        persisted = iter(
            [
                from_zarr(path, spec=x.spec).rechunk(x.chunks)
                for x, path in zip(lazy, paths, strict=True)
            ]
        )
        return tuple(next(persisted) if isinstance(x, Array) else x for x in data)

    @property
    def array_api(self) -> Any:
        import cubego

        return cubego

    # ------------------------------------------------------------ chunk functions

    def reduction(
        self,
        arr: Any,
        func: Callable,
        combine_func: Callable | None = None,
        aggregate_func: Callable | None = None,
        axis: int | Sequence[int] | None = None,
        dtype: Any = None,
        keepdims: bool = False,
    ) -> Any:
        from cubego.primitive.reduction import reduction

        return reduction(
            arr,
            func,
            combine_func=combine_func,
            aggregate_func=aggregate_func,
            axis=axis,
            dtype=dtype,
            keepdims=keepdims,
        )

    def scan(
        self,
        func: Callable,
        binop: Callable,
        ident: Any,
        arr: Any,
        axis: int | None = None,
        dtype: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Dask's ``cumreduction`` (what xarray's ``ffill``/``bfill`` run)."""
        from cubego.primitive.scan import cumreduction

        return cumreduction(func, binop, ident, arr, axis=axis, dtype=dtype, **kwargs)

    def map_blocks(
        self,
        func: Callable,
        *args: Any,
        dtype: Any = None,
        chunks: Any = None,
        drop_axis: Any = None,
        new_axis: Any = None,
        **kwargs: Any,
    ) -> Any:
        from cubego.primitive.blockwise import map_blocks

        return map_blocks(
            func,
            *args,
            dtype=dtype,
            chunks=chunks,
            drop_axis=drop_axis,
            new_axis=new_axis,
            **kwargs,
        )

    def blockwise(
        self,
        func: Callable,
        out_ind: Iterable,
        *args: Any,
        adjust_chunks: dict | None = None,
        new_axes: dict | None = None,
        align_arrays: bool = True,
        **kwargs: Any,
    ) -> Any:
        from cubego.primitive.blockwise import blockwise

        return blockwise(
            func,
            out_ind,
            *args,
            adjust_chunks=adjust_chunks,
            new_axes=new_axes,
            align_arrays=align_arrays,
            **kwargs,
        )

    def apply_gufunc(
        self,
        func: Callable,
        signature: str,
        *args: Any,
        axes: Sequence | None = None,
        keepdims: bool = False,
        output_dtypes: Any = None,
        vectorize: bool | None = None,
        **kwargs: Any,
    ) -> Any:
        """:func:`cubego.apply_gufunc`; Dask's ``meta`` is ignored."""
        from cubego.primitive.gufunc import apply_gufunc

        kwargs.pop("meta", None)
        return apply_gufunc(
            func,
            signature,
            *args,
            axes=axes,
            keepdims=keepdims,
            output_dtypes=output_dtypes,
            vectorize=vectorize,
            **kwargs,
        )

    def unify_chunks(self, *args: Any, **kwargs: Any) -> tuple[dict, list]:
        """Rechunk arrays so that dimensions with the same name have the same chunks.

        *args* alternate arrays and their dimension names (Dask's
        ``unify_chunks``); other arguments are converted with
        :func:`cubego.asarray`. Returns ``({name: chunks}, arrays)``.
        """
        from cubego.primitive.unify import unify_chunks

        return unify_chunks(*args, **kwargs)

    def shuffle(self, x: Any, indexer: list[list[int]], axis: int, chunks: Any) -> Any:
        """*x* reordered along *axis* so that each list of positions in *indexer* is contiguous.

        Output blocks never split a group; with ``chunks="auto"`` (or None)
        consecutive groups share a block while it stays within the input's
        largest block along *axis*.
        """
        from cubego.array_api.creation_functions import asarray
        from cubego.array_api.indexing_functions import take

        if chunks not in (None, "auto"):
            raise NotImplementedError(
                f"shuffle supports chunks='auto' or None, got {chunks!r} (as in Dask)"
            )
        axis = int(axis) % x.ndim if x.ndim else 0
        groups = [np.asarray(g, dtype=np.int64).ravel() for g in indexer]
        order = np.concatenate(groups) if groups else np.zeros(0, dtype=np.int64)
        n = x.shape[axis]
        if order.size and (order.min() < -n or order.max() >= n):
            raise IndexError(f"shuffle: an index is out of bounds for axis {axis} of length {n}")
        target = max(x.chunks[axis]) if x.chunks[axis] else 1
        blocks: list[int] = []
        for g in groups:
            if g.size == 0:
                continue
            if blocks and blocks[-1] + g.size <= target:
                blocks[-1] += g.size
            else:
                blocks.append(int(g.size))
        out = take(x, asarray(order, spec=x.spec), axis=axis)
        if not blocks:
            return out
        want = tuple(tuple(blocks) if d == axis else c for d, c in enumerate(out.chunks))
        return out if want == out.chunks else out.rechunk(want)

    # ------------------------------------------------------------ writing

    def store(
        self,
        sources: Any,
        targets: Any,
        **kwargs: Any,
    ) -> Any:
        """Write each source into its target chunk by chunk (xarray's ``to_zarr``/``to_netcdf``).

        Zarr arrays on a local or object store are written by the engine;
        other targets (in-memory Zarr stores, netCDF variables, anything that
        supports ``target[region] = block``) get each block from a task,
        under ``lock`` when one is given. ``regions`` places each source;
        ``flush`` is accepted. ``compute=False`` raises NotImplementedError:
        xarray would wrap the result in a Dask delayed object that never
        writes cubego arrays.
        """
        from cubego.core.array import Array
        from cubego.core.io import store as zarr_store

        compute = kwargs.pop("compute", True)
        lock = kwargs.pop("lock", None)
        kwargs.pop("flush", None)
        regions = kwargs.pop("regions", None)
        if not compute:
            raise NotImplementedError(
                "storing cubego arrays with compute=False is not supported through xarray "
                "(xarray wraps it in a Dask delayed object); write with compute=True, or use "
                "cubego.store(..., compute=False) directly"
            )
        if isinstance(sources, Array):
            sources, targets = [sources], [targets]
        sources, targets = list(sources), list(targets)
        if len(sources) != len(targets):
            raise ValueError(f"store: {len(sources)} sources but {len(targets)} targets")
        if regions is None or isinstance(regions, tuple):
            regions = [regions] * len(sources)
        regions = list(regions)
        if len(regions) != len(sources):
            raise ValueError(f"store: {len(regions)} regions for {len(sources)} sources")
        engine, generic = [], []
        for x, target, region in zip(sources, targets, regions, strict=True):
            if not isinstance(x, Array):
                raise TypeError(f"store: sources must be cubego arrays, got {type(x).__name__}")
            region = _full_region(region, target, x.ndim)
            if _engine_target(target) and _aligned(region, target):
                engine.append((x, target, region))
            else:
                generic.append(_setitem_writer(x, target, region, lock))
        if engine:
            zarr_store(
                [x for x, _, _ in engine],
                [t for _, t, _ in engine],
                regions=[r for _, _, r in engine],
                **kwargs,
            )
        if generic:
            from cubego.core import compute as _compute

            _compute.compute(*generic, **kwargs)
        return None


# ---------------------------------------------------------------- helpers


def _auto_bytes(spec: Any) -> int:
    """The block size "auto" aims for under *spec* (as the engine's own "auto")."""
    from cubego.core.chunks import DEFAULT_AUTO_BYTES

    return int(max(1, min(DEFAULT_AUTO_BYTES, (spec.allowed_mem - spec.reserved_mem) // 10)))


def _full_region(region: Any, target: Any, ndim: int) -> tuple[slice, ...] | None:
    """*region* as slices with explicit starts and stops in *target* (None: all of it)."""
    if region is None:
        return None
    region = tuple(region)
    if len(region) < ndim:
        region = region + (slice(None),) * (ndim - len(region))
    shape = getattr(target, "shape", None)
    if shape is None:
        return region
    out = []
    for s, n in zip(region, shape, strict=False):
        if not isinstance(s, slice):
            raise TypeError(f"store: regions must be tuples of slices, got {s!r}")
        start, stop, step = s.indices(n)
        if step != 1:
            raise ValueError(f"store: region slices must have step 1, got {s!r}")
        out.append(slice(start, stop))
    if all(s.start == 0 and s.stop == n for s, n in zip(out, shape, strict=False)):
        return None
    return tuple(out)


def _engine_target(target: Any) -> bool:
    """Whether *target* is a zarr-python array on a store the engine can write itself."""
    from cubego.core.io import _zarr_location

    try:
        return _zarr_location(target) is not None
    except TypeError:
        return False


def _aligned(region: tuple[slice, ...] | None, target: Any) -> bool:
    """Whether *region* of the zarr array *target* starts on chunk boundaries (an engine write)."""
    if region is None:
        return True
    chunks = getattr(target, "chunks", None)
    shape = getattr(target, "shape", None)
    if chunks is None or shape is None:
        return False
    for s, c, n in zip(region, chunks, shape, strict=False):
        start, stop, step = s.indices(n)
        if step != 1 or start % c or (stop % c and stop != n):
            return False
    return True


class _SetItem:
    """Task function: writes its block into ``target[region]`` and returns one flag per block."""

    def __init__(self, target: Any, offsets: tuple[int, ...], lock: Any):
        self.target = target
        self.offsets = offsets
        self.lock = lock

    def __call__(self, block: np.ndarray, block_info: Any = None) -> np.ndarray:
        location = block_info[0]["array-location"]
        index = tuple(
            slice(o + lo, o + hi) for o, (lo, hi) in zip(self.offsets, location, strict=True)
        )
        if self.lock:
            with self.lock:
                self.target[index] = block
        else:
            self.target[index] = block
        return np.ones((1,) * block.ndim, dtype=bool)


def _setitem_writer(x: Any, target: Any, region: tuple[slice, ...] | None, lock: Any) -> Any:
    from cubego.primitive.blockwise import map_blocks

    shape = tuple(getattr(target, "shape", x.shape))
    offsets = tuple(0 for _ in range(x.ndim))
    if region is not None:
        bounds = [s.indices(n) for s, n in zip(region, shape, strict=False)]
        if any(step != 1 for _, _, step in bounds):
            raise ValueError("store: regions must be slices with step 1")
        if tuple(stop - start for start, stop, _ in bounds) != x.shape:
            raise ValueError(
                f"store: region {region} has shape "
                f"{tuple(stop - start for start, stop, _ in bounds)} but the source has shape "
                f"{x.shape}"
            )
        offsets = tuple(start for start, _, _ in bounds)
    elif shape != x.shape:
        raise ValueError(f"store: target shape {shape} differs from the source shape {x.shape}")
    if lock is True:
        lock = threading.Lock()
    return map_blocks(
        _SetItem(target, offsets, lock),
        x,
        dtype=bool,
        chunks=tuple((1,) * len(c) for c in x.chunks),
    )


def _store_uncompressed(arrays: list, paths: list[str], kwargs: dict) -> None:
    from cubego.core.compute import run
    from cubego.core.io import _stored

    stored = [
        _stored(x, path, None, region=None, overwrite=True, compressors=None)
        for x, path in zip(arrays, paths, strict=True)
    ]
    executor = kwargs.pop("executor", None)
    run(tuple(stored), executor, True, kwargs).release()


_PERSIST_ROOTS: list[str] = []


def _persist_root(work_dir: str | None) -> str:
    base = work_dir if work_dir and "://" not in work_dir else None
    if base:
        os.makedirs(base, exist_ok=True)
    root = tempfile.mkdtemp(prefix="cubego-persist-", dir=base)
    _PERSIST_ROOTS.append(root)
    return root


@atexit.register
def _remove_persisted() -> None:
    for root in _PERSIST_ROOTS:
        shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------- ffill / bfill


def _ffill_block(block: np.ndarray, axis: int) -> np.ndarray:
    """Forward fill of NaNs along *axis* within one block."""
    if block.dtype.kind not in "fc" or block.shape[axis] == 0:
        return block
    shape = [1] * block.ndim
    shape[axis] = block.shape[axis]
    positions = np.arange(block.shape[axis]).reshape(shape)
    last = np.where(np.isnan(block), 0, positions)
    np.maximum.accumulate(last, axis=axis, out=last)
    return np.take_along_axis(block, last, axis=axis)


def _fill_from(carry: np.ndarray, block: np.ndarray) -> np.ndarray:
    """*block* with its NaNs replaced by *carry* (the last valid value before it)."""
    return np.where(np.isnan(block), carry, block)


def push(array: Any, n: int | None, axis: int) -> Any:
    """Lazy forward fill along *axis*, at most *n* steps past a valid value (xarray's ``push``).

    A scan whose blocks fill their own NaNs and take the last valid value of
    the blocks before them; with a limit, positions further than *n* from
    their last valid value stay NaN (the distance comes from the same scan
    over valid positions).
    """
    from cubego.array_api.creation_functions import arange
    from cubego.array_api.manipulation_functions import reshape
    from cubego.array_api.searching_functions import where
    from cubego.core.array import elemwise
    from cubego.primitive.scan import cumreduction

    axis = int(axis) % array.ndim
    if array.dtype.kind not in "fc":
        return array
    filled = cumreduction(_ffill_block, _fill_from, np.nan, array, axis=axis, dtype=array.dtype)
    length = array.shape[axis]
    if n is None or n >= length:
        return filled
    shape = [1] * array.ndim
    shape[axis] = length
    positions = reshape(
        arange(length, dtype=np.float64, chunks=(array.chunks[axis],), spec=array.spec),
        tuple(shape),
    )
    valid_at = where(elemwise("isnan", array), np.nan, positions)
    last_valid = cumreduction(
        _ffill_block, _fill_from, np.nan, valid_at, axis=axis, dtype=valid_at.dtype
    )
    near = elemwise("less_equal", elemwise("subtract", positions, last_valid), float(n))
    return where(near, filled, np.nan)


_ROUTED = False


def _route_push() -> None:
    """Send xarray's ``ffill``/``bfill`` on cubego arrays to the lazy :func:`push`.

    xarray sends them to a chunk manager's ``scan`` only for Dask arrays and
    otherwise calls bottleneck or numbagg, which would load the whole
    variable. The functions xarray calls are wrapped once; other arrays still
    take xarray's own path.
    """
    global _ROUTED
    if _ROUTED:
        return
    _ROUTED = True
    try:
        from xarray.core import duck_array_ops, missing
    except ImportError:
        return
    from cubego.core.array import Array

    for module in (duck_array_ops, missing):
        original = getattr(module, "push", None)
        if original is None or getattr(original, "_cubego", False):
            continue

        def routed(array, n, axis, method="blelloch", _original=original):
            if isinstance(array, Array):
                return push(array, n, axis)
            return _original(array, n, axis, method=method)

        routed._cubego = True
        routed.__doc__ = original.__doc__
        module.push = routed
