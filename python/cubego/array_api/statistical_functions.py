"""Statistical functions: tree reductions, variances and cumulative scans in the library.

All reductions accept Cubed's ``split_every`` (how many blocks one task folds).
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

from cubego.core import dtypes as _dtypes
from cubego.core.array import Array, apply


def _axis(axis: Any) -> list[int] | None:
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return [operator.index(a) for a in axis]
    return [operator.index(axis)]


def _split_every(split_every: Any) -> Any:
    if split_every is None:
        return None
    if isinstance(split_every, dict):
        return {str(operator.index(k)): operator.index(v) for k, v in split_every.items()}
    return operator.index(split_every)


def _reduce(func: str, x: Array, axis: Any, keepdims: bool, dtype: Any, split_every: Any) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{func}: expected a cubego Array, got {type(x).__name__}")
    args = {
        "func": func,
        "axis": _axis(axis),
        "keepdims": builtins.bool(keepdims),
        "dtype": None if dtype is None else _dtypes.name(dtype),
        "split_every": _split_every(split_every),
    }
    return apply("reduce", args, [x])


#: The Array API reductions: name -> docstring. Each is ``f(x, /, *, axis=None,
#: dtype=None, keepdims=False, split_every=None)``, the library's ``reduce`` op.
REDUCTIONS: dict[str, str] = {
    "sum": "Sum over *axis* (all axes by default); integer sums use the default integer dtype.",
    "prod": "Product over *axis* (all axes by default).",
    "mean": "Arithmetic mean over *axis* of a floating-point array.",
    "min": "Minimum over *axis*; an empty reduction is an error.",
    "max": "Maximum over *axis*; an empty reduction is an error.",
}


def _make_reduction(func: str, doc: str):
    def reduction(
        x: Array,
        /,
        *,
        axis: Any = None,
        dtype: Any = None,
        keepdims: bool = False,
        split_every: Any = None,
    ) -> Array:
        return _reduce(func, x, axis, keepdims, dtype, split_every)

    reduction.__name__ = reduction.__qualname__ = func
    reduction.__doc__ = doc
    return reduction


for _name, _doc in REDUCTIONS.items():
    globals()[_name] = _make_reduction(_name, _doc)
del _name, _doc


def _variance(
    func: str, x: Array, axis: Any, correction: Any, keepdims: bool, split_every: Any
) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{func}: expected a cubego Array, got {type(x).__name__}")
    if isinstance(correction, builtins.bool) or not isinstance(correction, (int, float)):
        raise TypeError(f"{func}: correction must be an int or a float, got {correction!r}")
    args = {
        "func": func,
        "axis": _axis(axis),
        "keepdims": builtins.bool(keepdims),
        "correction": float(correction),
        "dtype": None,
        "split_every": _split_every(split_every),
    }
    return apply("var", args, [x])


#: Variance and standard deviation: one pass of (count, total, M2) records
#: merged with Chan et al.'s update (full precision for data far from zero;
#: complex data carries records of its real and imaginary parts).
VARIANCES: dict[str, str] = {
    "var": "Variance over *axis* with *correction* degrees of freedom removed.",
    "std": "Standard deviation over *axis* (the square root of :func:`var`).",
}


def _make_variance(func: str, doc: str):
    def variance(
        x: Array,
        /,
        *,
        axis: Any = None,
        correction: int | float = 0.0,
        keepdims: bool = False,
        split_every: Any = None,
        ddof: int | float | None = None,
    ) -> Array:
        correction = correction if ddof is None else ddof
        return _variance(func, x, axis, correction, keepdims, split_every)

    variance.__name__ = variance.__qualname__ = func
    variance.__doc__ = doc + " *ddof* is numpy's name for *correction* (xarray passes it)."
    return variance


for _name, _doc in VARIANCES.items():
    globals()[_name] = _make_variance(_name, _doc)
del _name, _doc


def _cumulative(func: str, x: Array, axis: Any, dtype: Any, include_initial: bool) -> Array:
    name = next(n for n, (f, _) in CUMULATIVE.items() if f == func)
    if not isinstance(x, Array):
        raise TypeError(f"{name}: expected a cubego Array, got {type(x).__name__}")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(
                f"{name}: axis is required for an array of dimension {x.ndim} (only 1-d arrays "
                "may omit it)"
            )
        axis = 0
    args = {
        "func": func,
        "axis": operator.index(axis),
        "dtype": None if dtype is None else _dtypes.name(dtype),
        "include_initial": builtins.bool(include_initial),
    }
    return apply("cumulative", args, [x])


#: Cumulative functions: name -> (the library's function, the identity it prepends).
CUMULATIVE: dict[str, tuple[str, int]] = {
    "cumulative_sum": ("cumsum", 0),
    "cumulative_prod": ("cumprod", 1),
}


def _make_cumulative(name: str, func: str, identity: int):
    def cumulative(
        x: Array, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
    ) -> Array:
        return _cumulative(func, x, axis, dtype, include_initial)

    cumulative.__name__ = cumulative.__qualname__ = name
    what = "sum" if func == "cumsum" else "product"
    cumulative.__doc__ = (
        f"Cumulative {what} along *axis* (optional for 1-d arrays); "
        f"*include_initial* prepends {identity}."
    )
    return cumulative


for _name, (_func, _identity) in CUMULATIVE.items():
    globals()[_name] = _make_cumulative(_name, _func, _identity)
del _name, _func, _identity

__all__ = sorted([*REDUCTIONS, *VARIANCES, *CUMULATIVE])
