"""Elementwise functions, generated from one table.

Each entry maps an Array API function name to its number of operands; the
library's ``elemwise`` op implements it (type promotion, broadcasting and the
kernels are all in Go). Operands are cubego arrays or Python/numpy scalars;
dtype combinations the library does not support raise its ``TypeError``.
"""

from __future__ import annotations

from typing import Any

from .array import Array, elemwise

ELEMENTWISE: dict[str, int] = {
    "abs": 1,
    "add": 2,
    "divide": 2,
    "equal": 2,
    "floor_divide": 2,
    "greater": 2,
    "greater_equal": 2,
    "less": 2,
    "less_equal": 2,
    "multiply": 2,
    "negative": 1,
    "not_equal": 2,
    "positive": 1,
    "pow": 2,
    "remainder": 2,
    "subtract": 2,
}

__all__ = sorted(ELEMENTWISE)


def _unary(name: str):
    def function(x: Array, /) -> Array:
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
