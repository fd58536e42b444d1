"""Elementwise functions, generated from one table, plus ``clip``.

Each entry maps an Array API function name to its number of operands; the
library's ``elemwise`` op implements it (the dtype categories, type promotion,
broadcasting, special cases and the kernels are all in Go: ``ops/elementwise.go``).
Operands are cubego arrays or Python/numpy scalars; dtype combinations the
library does not support raise its ``TypeError``.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from cubego.core.array import Array, elemwise, is_scalar, round_decimals

ELEMENTWISE: dict[str, int] = {
    "abs": 1,
    "acos": 1,
    "acosh": 1,
    "add": 2,
    "asin": 1,
    "asinh": 1,
    "atan": 1,
    "atan2": 2,
    "atanh": 1,
    "bitwise_and": 2,
    "bitwise_invert": 1,
    "bitwise_left_shift": 2,
    "bitwise_or": 2,
    "bitwise_right_shift": 2,
    "bitwise_xor": 2,
    "ceil": 1,
    "conj": 1,
    "copysign": 2,
    "cos": 1,
    "cosh": 1,
    "divide": 2,
    "equal": 2,
    "exp": 1,
    "expm1": 1,
    "floor": 1,
    "floor_divide": 2,
    "greater": 2,
    "greater_equal": 2,
    "hypot": 2,
    "imag": 1,
    "isfinite": 1,
    "isinf": 1,
    "isnan": 1,
    "less": 2,
    "less_equal": 2,
    "log": 1,
    "log10": 1,
    "log1p": 1,
    "log2": 1,
    "logaddexp": 2,
    "logical_and": 2,
    "logical_not": 1,
    "logical_or": 2,
    "logical_xor": 2,
    "maximum": 2,
    "minimum": 2,
    "multiply": 2,
    "negative": 1,
    "nextafter": 2,
    "not_equal": 2,
    "positive": 1,
    "pow": 2,
    "real": 1,
    "reciprocal": 1,
    "remainder": 2,
    "round": 1,
    "sign": 1,
    "signbit": 1,
    "sin": 1,
    "sinh": 1,
    "sqrt": 1,
    "square": 1,
    "subtract": 2,
    "tan": 1,
    "tanh": 1,
    "trunc": 1,
}

__all__ = sorted([*ELEMENTWISE, "clip"])


def _unary(name: str):
    def function(x: Array, /) -> Array:
        if not isinstance(x, Array):
            raise TypeError(f"{name}: expected a cubego Array, got {type(x).__name__}")
        return elemwise(name, x)

    return function


def _binary(name: str):
    def function(x1: Any, x2: Any, /) -> Array:
        return elemwise(name, x1, x2)

    return function


def _make(name: str, nin: int):
    function = _unary(name) if nin == 1 else _binary(name)
    function.__name__ = function.__qualname__ = name
    function.__module__ = "cubego"
    operands = "x" if nin == 1 else "x1, x2"
    function.__doc__ = (
        f"``{name}({operands})`` elementwise, as in the Array API standard.\n\n"
        "Operands are cubego arrays or Python/numpy scalars (at least one array);\n"
        "arrays are broadcast together and dtypes promoted by the Array API rules."
    )
    return function


for _name, _nin in ELEMENTWISE.items():
    globals()[_name] = _make(_name, _nin)
del _name, _nin


def round(x: Array, /, decimals: int = 0) -> Array:  # noqa: A001
    """*x* rounded half to even, to *decimals* decimal places (numpy's ``around``).

    ``decimals=0`` is the standard's ``round``; see :func:`cubego.core.array.round_decimals`.
    """
    if not isinstance(x, Array):
        raise TypeError(f"round: expected a cubego Array, got {type(x).__name__}")
    return round_decimals(x, decimals)


def clip(x: Array, /, min: Any = None, max: Any = None) -> Array:  # noqa: A002
    """*x* with its values limited to ``[min, max]`` (either may be None: no bound).

    The bounds are scalars or arrays broadcasting with *x*; the result has *x*'s
    dtype and the broadcast shape. A NaN bound or element gives NaN.
    """
    if not isinstance(x, Array):
        raise TypeError(f"clip: expected a cubego Array, got {type(x).__name__}")
    if x.dtype.kind in "bc":
        raise TypeError(f"clip is not defined for dtype {x.dtype}")
    out = x
    for bound, func in ((min, "maximum"), (max, "minimum")):
        if bound is None:
            continue
        if not (isinstance(bound, Array) or is_scalar(bound)):
            raise TypeError(f"clip: bounds must be arrays or scalars, got {type(bound).__name__}")
        if x.dtype.kind in "iu" and isinstance(bound, (int, np.integer)):
            # A bound beyond the dtype's range clips nothing on its side.
            info = np.iinfo(x.dtype)
            bound = builtins.min(builtins.max(int(bound), int(info.min)), int(info.max))
        out = elemwise(func, out, bound)
    return out if out.dtype == x.dtype else out.astype(x.dtype)
