"""flox's Cubed path for cubego arrays: xarray's groupby and resample with flox installed.

flox (which xarray uses for ``groupby(...).mean()`` and friends whenever it is
installed) recognises Cubed arrays by ``isinstance(x, cubed.Array)`` and then
runs ``flox.cubed.cubed_groupby_agg``, which calls ``cubed.from_array``,
``cubed.core.unify_chunks`` and ``cubed.core.groupby.groupby_reduction`` /
``groupby_blockwise``. A cubego array is no ``cubed.Array``, so flox would take
its in-memory numpy path instead and load the whole array.

:func:`route` teaches flox, inside flox's own modules only, that cubego arrays
take its Cubed path, and runs that path with the name ``cubed`` meaning
cubego's equivalents (:mod:`cubego.primitive.groupby`,
:func:`cubego.primitive.unify.unify_chunks`, :func:`cubego.from_array`). Nothing
named ``cubed`` is added to ``sys.modules``: if Cubed itself is installed, it
and its arrays are untouched. ``import cubego`` calls :func:`install`, which
routes flox as soon as it is imported (at once if it already is).
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

__all__ = ["install", "route"]

_ROUTED = False


def _cubed_names() -> types.SimpleNamespace:
    """What flox's Cubed path finds under the name ``cubed``: cubego's equivalents."""
    from cubego.core.array import Array
    from cubego.primitive import groupby
    from cubego.primitive.blockwise import from_array
    from cubego.primitive.unify import unify_chunks

    core = types.SimpleNamespace(groupby=groupby, unify_chunks=unify_chunks)
    return types.SimpleNamespace(Array=Array, from_array=from_array, core=core)


def _importer(names: types.SimpleNamespace) -> Any:
    """``__import__`` resolving ``cubed`` and its submodules to *names*, everything else as usual."""
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


def route() -> None:
    """Send cubego arrays down flox's Cubed path (once; needs flox imported or importable)."""
    global _ROUTED
    if _ROUTED:
        return
    try:
        import flox.core
        import flox.cubed
        import flox.xrutils
    except ImportError:
        return
    _ROUTED = True
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
            return on_cubego(*args, **kwargs)
        return original_agg(*args, **kwargs)

    cubed_groupby_agg.__doc__ = original_agg.__doc__
    flox.cubed.cubed_groupby_agg = cubed_groupby_agg


class _RouteAfterExec(importlib.abc.Loader):
    """flox's own loader, then :func:`route` once the package has run."""

    def __init__(self, loader: Any):
        self._loader = loader

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        _FloxFinder.remove()
        route()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _FloxFinder(importlib.abc.MetaPathFinder):
    """Finds the ``flox`` package as the path finder does, with a loader that routes it."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "flox":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _RouteAfterExec(spec.loader)
        return spec

    @staticmethod
    def remove() -> None:
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _FloxFinder)]


def install() -> None:
    """Route flox now if it is imported, otherwise as soon as it is (cheap: imports nothing)."""
    if "flox" in sys.modules:
        route()
    elif not any(isinstance(f, _FloxFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _FloxFinder())
