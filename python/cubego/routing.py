"""Where flox and xarray would load cubego arrays into memory, send them down lazy paths.

**flox** (which xarray uses for ``groupby(...).mean()`` and friends whenever it
is installed) recognises Cubed arrays by ``isinstance(x, cubed.Array)`` and
then runs ``flox.cubed.cubed_groupby_agg``, which calls ``cubed.from_array``,
``cubed.core.unify_chunks`` and ``cubed.core.groupby.groupby_reduction`` /
``groupby_blockwise``. A cubego array is no ``cubed.Array``, so flox would take
its in-memory numpy path and load the whole array. :func:`route_flox` teaches
flox, inside flox's own modules only, that cubego arrays take its Cubed path,
and runs that path with the name ``cubed`` meaning cubego's equivalents
(:mod:`cubego.primitive.groupby`, :func:`cubego.primitive.unify.unify_chunks`,
:func:`cubego.from_array`). Nothing named ``cubed`` is added to ``sys.modules``:
if Cubed itself is installed, it and its arrays are untouched.

**xarray** (:func:`route_xarray`):

* its rolling reductions on anything but numpy materialise every window
  (``pad`` + ``sliding_window_view``, then a reduction over the window axis):
  ``window`` times the data in memory and time. One-dimensional
  ``rolling(...).sum/mean/max/min/prod/std/var/count()`` of cubego data go to
  :func:`cubego.primitive.window.moving_reduce` instead, which costs about
  what the data costs; other rolling operations keep xarray's path;
* vectorized indexing of a one-dimensional cubego array by integer arrays
  (what ``idxmin``/``idxmax`` do to the coordinate), which xarray's array API
  adapter refuses, becomes a lazy blockwise lookup;
* ``isnull`` of datetime data calls ``numpy.isnat``, which cubego arrays (being
  lazy) refuse; it becomes cubego's ``isnan``, which is NaT for datetimes;
* groupby ``std``/``var`` would reach flox's Cubed path with intermediates it
  cannot store (flox's ``MultiArray``), and ``cumsum``/``cumprod`` flox's
  numpy path (flox has no Cubed path for scans); on cubego data they take
  xarray's own (lazy) groupby path.

``import cubego`` calls :func:`install`, which routes each library as soon as
it is imported (at once if it already is); the xarray chunk manager routes
xarray too when xarray creates it.
"""

from __future__ import annotations

import builtins
import dataclasses
import importlib.abc
import importlib.machinery
import inspect
import sys
import types
from typing import Any

__all__ = ["install", "route_flox", "route_xarray"]

_ROUTED: set[str] = set()


# ---------------------------------------------------------------------- flox


def _cubed_names() -> types.SimpleNamespace:
    """What flox's Cubed path finds under the name ``cubed``: cubego's equivalents."""
    from cubego.core.array import Array
    from cubego.primitive import groupby
    from cubego.primitive.blockwise import from_array
    from cubego.primitive.unify import unify_chunks

    core = types.SimpleNamespace(groupby=groupby, unify_chunks=unify_chunks)
    return types.SimpleNamespace(Array=Array, from_array=from_array, core=core)


def _importer(names: types.SimpleNamespace) -> Any:
    """``__import__`` giving *names* for ``cubed`` and its submodules, all else as usual."""
    real = builtins.__import__

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A001, A002
        if level == 0 and (name == "cubed" or name.startswith("cubed.")):
            if not fromlist:
                return names  # `import cubed.core.groupby` binds the top name, `cubed`
            found: Any = names
            for part in name.split(".")[1:]:
                found = getattr(found, part)
            return found
        return real(name, globals, locals, fromlist, level)

    return __import__


def _with_cubego_as_cubed(func: types.FunctionType) -> types.FunctionType:
    """A copy of *func* whose ``import cubed...`` statements get cubego's equivalents."""
    scope = dict(func.__globals__)
    scope["__builtins__"] = dict(vars(builtins), __import__=_importer(_cubed_names()))
    copy = types.FunctionType(
        func.__code__, scope, func.__name__, func.__defaults__, func.__closure__
    )
    copy.__kwdefaults__ = func.__kwdefaults__
    copy.__qualname__ = func.__qualname__
    return copy


def route_flox() -> None:
    """Send cubego arrays down flox's Cubed path (once; nothing happens without flox)."""
    if "flox" in _ROUTED:
        return
    try:
        import flox.core
        import flox.cubed
        import flox.xrutils
    except ImportError:
        return
    _ROUTED.add("flox")
    from cubego.core.array import Array

    original_check = flox.xrutils.is_duck_cubed_array

    def is_duck_cubed_array(x: Any) -> bool:
        return isinstance(x, Array) or original_check(x)

    is_duck_cubed_array.__doc__ = original_check.__doc__
    for module in (flox.xrutils, flox.core):
        if getattr(module, "is_duck_cubed_array", None) is original_check:
            module.is_duck_cubed_array = is_duck_cubed_array

    original_agg = flox.cubed.cubed_groupby_agg
    on_cubego = _with_cubego_as_cubed(original_agg)

    def cubed_groupby_agg(*args: Any, **kwargs: Any) -> Any:
        array = kwargs.get("array", args[0] if args else None)
        by = kwargs.get("by", args[1] if len(args) > 1 else None)
        if isinstance(array, Array) or isinstance(by, Array):
            reindex = kwargs.get("reindex")
            if kwargs.get("method") == "map-reduce" and getattr(reindex, "blockwise", 0) is None:
                # Called without a method (as xarray does), flox decides the reindexing
                # before it picks "map-reduce" for Cubed arrays and leaves it undecided,
                # which its Cubed path refuses; decide it as flox does for "map-reduce"
                # on arrays that are not Dask arrays.
                kwargs["reindex"] = dataclasses.replace(reindex, blockwise=True)
            return on_cubego(*args, **kwargs)
        return original_agg(*args, **kwargs)

    cubed_groupby_agg.__doc__ = original_agg.__doc__
    flox.cubed.cubed_groupby_agg = cubed_groupby_agg


# ---------------------------------------------------------------------- xarray rolling

# xarray's rolling reductions that moving_reduce computes (the name of xarray's
# array function, or "_mean" for the mean it builds from sum and count)
_MOVING = {"sum", "max", "min", "prod", "std", "var", "_mean"}


def _rolling_module() -> Any:
    try:
        from xarray.computation import rolling
    except ImportError:
        from xarray.core import rolling  # xarray before 2025.03
    return rolling


def _moving(rolling: Any, func: str, keep_attrs: Any, ddof: int = 0, count: bool = False) -> Any:
    """*rolling*'s object with each window reduced by :func:`moving_reduce`."""
    from cubego.primitive.window import moving_reduce

    obj = rolling.obj
    dim = rolling.dim[0]
    data = moving_reduce(
        obj.data,
        func,
        int(rolling.window[0]),
        axis=obj.get_axis_num(dim),
        center=bool(rolling.center[0]),
        min_count=0 if count else int(rolling.min_periods),
        ddof=ddof,
    )
    result = obj.copy(data=data)
    result.attrs = dict(obj.attrs) if rolling._get_keep_attrs(keep_attrs) else {}
    return result


def _movable(rolling: Any) -> bool:
    from cubego.core.array import Array

    data = rolling.obj.data
    return isinstance(data, Array) and rolling.ndim == 1 and data.dtype.kind in "biuf"


def _pick(indices: Any, values: Any) -> Any:
    """One block of ``values[indices]`` (values: the whole indexed array)."""
    return values[indices]


def _lookup(x: Any, indices: Any) -> Any:
    """``x[indices]`` for a 1-D cubego array and an integer array: one task per index block."""
    import numpy as np

    from cubego.array_api.creation_functions import asarray
    from cubego.core.array import Array
    from cubego.primitive.blockwise import blockwise

    if not isinstance(indices, Array):
        indices = asarray(np.asarray(indices), spec=x.spec)
    if indices.dtype.kind not in "iu":
        raise IndexError(f"vectorized indexing needs integer indices, got {indices.dtype}")
    ind = tuple(range(indices.ndim))
    return blockwise(_pick, ind, indices, ind, x, ("_indexed",), dtype=x.dtype, concatenate=True)


def _route_indexing() -> None:
    from xarray.core import indexing

    from cubego.core.array import Array

    cls = indexing.ArrayApiIndexingAdapter
    original = cls._vindex_get

    def _vindex_get(self: Any, indexer: Any) -> Any:
        key = indexer.tuple
        if (
            isinstance(self.array, Array)
            and self.array.ndim == 1
            and len(key) == 1
            and not isinstance(key[0], slice)
        ):
            return _lookup(self.array, key[0])
        return original(self, indexer)

    _vindex_get.__doc__ = original.__doc__
    cls._vindex_get = _vindex_get


def _route_isnat() -> None:
    from xarray.core import duck_array_ops

    from cubego.core.array import Array, elemwise

    original = getattr(duck_array_ops, "isnat", None)
    if original is None:
        return

    def isnat(x: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(x, Array) and not args and not kwargs:
            return elemwise("isnan", x)
        return original(x, *args, **kwargs)

    duck_array_ops.isnat = isnat


def _has_cubego_data(obj: Any) -> bool:
    from cubego.core.array import Array

    variables = getattr(obj, "variables", None)
    values = variables.values() if variables is not None else [getattr(obj, "variable", obj)]
    return any(isinstance(getattr(v, "data", None), Array) for v in values)


def _route_groupby_moments() -> None:
    """``std``/``var`` of groupby on cubego data: xarray's own path instead of flox.

    flox carries their intermediates as its ``MultiArray`` (three arrays in
    one), which its Cubed path cannot store; xarray's path without flox is
    lazy on cubego arrays too.
    """
    from xarray.core import duck_array_ops
    from xarray.core.groupby import GroupBy

    original = GroupBy._flox_reduce

    def _flox_reduce(self: Any, dim: Any, keep_attrs: Any = None, **kwargs: Any) -> Any:
        func = kwargs.get("func")
        if func in ("std", "var") and _has_cubego_data(self._obj):
            kwargs.pop("func")
            return self.reduce(
                getattr(duck_array_ops, func), dim=dim, keep_attrs=keep_attrs, **kwargs
            )
        return original(self, dim, keep_attrs=keep_attrs, **kwargs)

    _flox_reduce.__doc__ = original.__doc__
    GroupBy._flox_reduce = _flox_reduce

    original_scan = getattr(GroupBy, "_flox_scan", None)
    if original_scan is None:
        return

    def _flox_scan(self: Any, dim: Any, *, func: str, **kwargs: Any) -> Any:
        # flox has no Cubed path for scans (cumsum, cumprod): its numpy path
        # would refuse or load cubego data; xarray's own path is lazy
        if _has_cubego_data(self._obj):
            out = self.reduce(getattr(duck_array_ops, func), dim=dim, **kwargs)
            return out.assign_coords(self._obj.coords)
        return original_scan(self, dim, func=func, **kwargs)

    _flox_scan.__doc__ = original_scan.__doc__
    GroupBy._flox_scan = _flox_scan


def route_xarray() -> None:
    """Route xarray's rolling reductions, vectorized lookups and ``isnat`` (once)."""
    if "xarray" in _ROUTED:
        return
    try:
        rolling = _rolling_module()
    except ImportError:
        return
    _ROUTED.add("xarray")
    for route in (_route_indexing, _route_isnat, _route_groupby_moments):
        try:
            route()
        except (ImportError, AttributeError):  # an xarray without these internals
            pass
    cls = getattr(rolling, "DataArrayRolling", None)
    if cls is None or not hasattr(cls, "_array_reduce") or not hasattr(cls, "_counts"):
        return
    original_reduce = cls._array_reduce
    signature = inspect.signature(original_reduce)

    def _array_reduce(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _movable(self):
            bound = signature.bind(self, *args, **kwargs).arguments
            agg = bound.get("rolling_agg_func") or bound.get("array_agg_func")
            name = getattr(agg, "__name__", None)
            extra = dict(bound.get("kwargs", {}))
            extra.pop("sliding_window_view_kwargs", None)
            ddof = extra.pop("ddof", 0)
            extra.pop("dim", None)  # xarray warns and ignores it
            if name in _MOVING and not extra:
                func = "mean" if name == "_mean" else name
                return _moving(self, func, bound.get("keep_attrs"), ddof=int(ddof))
        return original_reduce(self, *args, **kwargs)

    _array_reduce.__doc__ = original_reduce.__doc__
    cls._array_reduce = _array_reduce

    original_counts = cls._counts

    def _counts(self: Any, keep_attrs: Any) -> Any:
        if _movable(self):
            return _moving(self, "count", keep_attrs, count=True)
        return original_counts(self, keep_attrs)

    _counts.__doc__ = original_counts.__doc__
    cls._counts = _counts


# ---------------------------------------------------------------------- import hook

_ROUTES = {"flox": route_flox, "xarray": route_xarray}


class _RouteAfterExec(importlib.abc.Loader):
    """A package's own loader, then its route once the package has run."""

    def __init__(self, loader: Any, name: str):
        self._loader = loader
        self._name = name

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        try:
            self._loader.exec_module(module)
        finally:  # the package keeps its own loader
            module.__loader__ = self._loader
            if module.__spec__ is not None:
                module.__spec__.loader = self._loader
        _ROUTES[self._name]()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds flox and xarray as the path finder does, with loaders that route them."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in _ROUTES or name in _ROUTED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _RouteAfterExec(spec.loader, name)
        return spec


def install() -> None:
    """Route flox and xarray now if imported, otherwise once they are (imports nothing)."""
    for name, route in _ROUTES.items():
        if name in sys.modules:
            route()
    if not all(name in _ROUTED or name in sys.modules for name in _ROUTES) and not any(
        isinstance(f, _Finder) for f in sys.meta_path
    ):
        sys.meta_path.insert(0, _Finder())
