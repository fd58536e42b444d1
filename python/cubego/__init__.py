"""cubego: bounded-memory chunked arrays, computed by a Go engine.

``import cubego as cubed`` runs typical Cubed code: arrays are lazy, chunked and
immutable; ``compute()`` runs their plan with every task's memory projected and
checked against ``Spec.allowed_mem`` before anything starts.

>>> import cubego as cg
>>> spec = cg.Spec(allowed_mem="200MB")
>>> a = cg.asarray([[1.0, 2.0], [3.0, 4.0]], chunks=1, spec=spec)
>>> cg.sum(a * 2).compute()
array(20.)

The namespace is the Array API standard's (also as ``cubego.array_api``) plus
Cubed's extras (``Spec``, ``from_array``, ``from_zarr``, ``to_zarr``, ``store``,
``rechunk``, ``compute``, ``random``). The Go library is loaded on first use.
"""

from math import e, inf, nan, pi

from . import random
from ._compute import compute
from ._compute import last_stats as _last_stats  # noqa: F401 - documented private helper
from ._creation import (
    arange,
    asarray,
    empty,
    empty_like,
    from_array,
    full,
    full_like,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from ._dtypes import (
    bool,
    complex64,
    complex128,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._elementwise import (  # type: ignore[attr-defined]
    abs,
    add,
    divide,
    equal,
    floor_divide,
    greater,
    greater_equal,
    less,
    less_equal,
    multiply,
    negative,
    not_equal,
    positive,
    pow,
    remainder,
    subtract,
)
from ._io import from_zarr, store, to_zarr
from ._lib import set_max_procs, set_memory_limit
from ._linalg import matmul
from ._manipulation import astype, rechunk
from ._statistical import max, mean, min, prod, sum
from .array import Array
from .spec import Spec

__version__ = "0.1.0"
__array_api_version__ = "2025.12"

newaxis = None

__all__ = [
    "__array_api_version__",
    "__version__",
    # classes
    "Array",
    "Spec",
    # data types
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
    # constants
    "e",
    "inf",
    "nan",
    "newaxis",
    "pi",
    # creation
    "arange",
    "asarray",
    "empty",
    "empty_like",
    "from_array",
    "full",
    "full_like",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
    # elementwise
    "abs",
    "add",
    "divide",
    "equal",
    "floor_divide",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "multiply",
    "negative",
    "not_equal",
    "positive",
    "pow",
    "remainder",
    "subtract",
    # statistical
    "max",
    "mean",
    "min",
    "prod",
    "sum",
    # linear algebra
    "matmul",
    # data type and chunk manipulation
    "astype",
    "rechunk",
    # storage
    "from_zarr",
    "store",
    "to_zarr",
    # execution and runtime
    "compute",
    "random",
    "set_max_procs",
    "set_memory_limit",
]

from . import array_api  # noqa: E402, F401 - the namespace re-exports the names above
