"""Set functions: ``isin``; the ``unique_*`` functions have data-dependent shapes."""

from __future__ import annotations

from typing import Any

import numpy as np

from cubego.array_api.creation_functions import asarray
from cubego.core.array import Array, apply, is_scalar

__all__ = ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values"]

_DATA_DEPENDENT = (
    "{name} returns arrays whose length is the number of distinct values, which depends on "
    "the data; cubego's lazy plans cannot size it. Compute the array and use numpy.{np_name}"
)


def isin(x1: Array | int, x2: Array | int, /, *, invert: bool = False) -> Array:
    """Whether each element of *x1* equals any element of *x2* (negated with *invert*).

    Each task streams the blocks of *x2* past one block of *x1*, so *x2* may be
    as large as *x1*. Either argument may be a Python scalar (the other an array);
    *x2* may also be a list or numpy array of test elements.
    """
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        raise TypeError("isin: at least one of x1 and x2 must be a cubego Array")
    spec = (x1 if isinstance(x1, Array) else x2).spec
    arrays = []
    for x in (x1, x2):
        if isinstance(x, Array):
            arrays.append(x)
        elif is_scalar(x) and not isinstance(x, complex):
            other = x2 if x is x1 else x1
            arrays.append(asarray(x, dtype=other.dtype, spec=spec))
        elif isinstance(x, (list, tuple, np.ndarray)):
            # test elements given as data (xarray passes lists and numpy arrays)
            arrays.append(asarray(np.asarray(x).ravel(), spec=spec))
        else:
            raise TypeError(f"isin: expected an array, a list or a scalar, got {type(x).__name__}")
    return apply("isin", {"invert": bool(invert)}, arrays)


def _refuse(name: str, np_name: str) -> Any:
    def function(x: Array, /) -> Any:
        raise NotImplementedError(_DATA_DEPENDENT.format(name=name, np_name=np_name))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Not supported: {name} has a data-dependent output shape."
    return function


unique_all = _refuse("unique_all", "unique_all")
unique_counts = _refuse("unique_counts", "unique_counts")
unique_inverse = _refuse("unique_inverse", "unique_inverse")
unique_values = _refuse("unique_values", "unique_values")
