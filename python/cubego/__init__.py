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
Cubed's extras (``Spec``, ``config``, ``from_array``, ``from_zarr``, ``to_zarr``,
``store``, ``rechunk``, ``compute``, ``plan``, ``visualize``, ``measure_reserved_mem``,
``Callback``, ``diagnostics``, ``random``). The Go library is loaded on first use.
"""

from math import e, inf, nan, pi

from . import diagnostics, fft, lib, linalg, random
from ._chunk_functions import (
    arg_reduction,
    blockwise,
    cumreduction,
    from_array,
    map_blocks,
    reduction,
    scan,
)
from ._compute import FinalizedPlan, compute, measure_reserved_mem, plan
from ._compute import last_stats as _last_stats  # noqa: F401 - documented private helper
from ._creation import (
    arange,
    asarray,
    empty,
    empty_like,
    eye,
    from_dlpack,
    full,
    full_like,
    linspace,
    meshgrid,
    ones,
    ones_like,
    tril,
    triu,
    zeros,
    zeros_like,
)
from ._data_type_functions import can_cast, finfo, iinfo, isdtype, result_type
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
from ._einsum import einsum
from ._elementwise import (  # type: ignore[attr-defined]
    abs,
    acos,
    acosh,
    add,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    ceil,
    clip,
    conj,
    copysign,
    cos,
    cosh,
    divide,
    equal,
    exp,
    expm1,
    floor,
    floor_divide,
    greater,
    greater_equal,
    hypot,
    imag,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    nextafter,
    not_equal,
    positive,
    pow,
    real,
    reciprocal,
    remainder,
    round,
    sign,
    signbit,
    sin,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    trunc,
)
from ._gufunc import apply_gufunc
from ._indexing import take, take_along_axis
from ._info import __array_namespace_info__
from ._io import from_zarr, store, to_zarr
from ._lib import set_max_procs, set_memory_limit
from ._linalg import matmul, matrix_transpose, tensordot, vecdot
from ._manipulation import (
    astype,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    concat,
    expand_dims,
    flip,
    moveaxis,
    permute_dims,
    rechunk,
    repeat,
    reshape,
    roll,
    squeeze,
    stack,
    tile,
    unstack,
)
from ._nan_functions import (
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanmax,
    nanmean,
    nanmedian,
    nanmin,
    nanprod,
    nanstd,
    nansum,
    nanvar,
)
from ._numpy_names import concatenate, cross, cumprod, cumsum, transpose
from ._overlap import map_overlap
from ._pad import pad
from ._quantile import median, nanquantile, quantile
from ._searching import argmax, argmin, count_nonzero, nonzero, searchsorted, where
from ._set import isin, unique_all, unique_counts, unique_inverse, unique_values
from ._sorting import argsort, sort
from ._statistical import (
    cumulative_prod,
    cumulative_sum,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from ._utility import all, any, diff
from .array import Array
from .callbacks import Callback, TaskEndEvent
from .config import config
from .spec import Spec
from .visualize import visualize

__version__ = "0.1.0"
__array_api_version__ = "2025.12"

newaxis = None

__all__ = [
    "__array_api_version__",
    "__version__",
    # classes
    "Array",
    "Callback",
    "FinalizedPlan",
    "Spec",
    "TaskEndEvent",
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
    "eye",
    "from_array",
    "from_dlpack",
    "full",
    "full_like",
    "linspace",
    "meshgrid",
    "ones",
    "ones_like",
    "tril",
    "triu",
    "zeros",
    "zeros_like",
    # elementwise
    "abs",
    "acos",
    "acosh",
    "add",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "ceil",
    "clip",
    "conj",
    "copysign",
    "cos",
    "cosh",
    "divide",
    "equal",
    "exp",
    "expm1",
    "floor",
    "floor_divide",
    "greater",
    "greater_equal",
    "hypot",
    "imag",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "nextafter",
    "not_equal",
    "positive",
    "pow",
    "real",
    "reciprocal",
    "remainder",
    "round",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "subtract",
    "tan",
    "tanh",
    "trunc",
    # statistical
    "cumulative_prod",
    "cumulative_sum",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
    # extensions
    "fft",
    # linear algebra
    "lib",
    "linalg",
    "matmul",
    "matrix_transpose",
    "tensordot",
    "vecdot",
    # data types
    "astype",
    "can_cast",
    "finfo",
    "iinfo",
    "isdtype",
    "result_type",
    # inspection
    "__array_namespace_info__",
    # manipulation (and Cubed's rechunk)
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "concat",
    "expand_dims",
    "flip",
    "moveaxis",
    "permute_dims",
    "rechunk",
    "repeat",
    "reshape",
    "roll",
    "squeeze",
    "stack",
    "tile",
    "unstack",
    # indexing
    "take",
    "take_along_axis",
    # searching
    "argmax",
    "argmin",
    "count_nonzero",
    "nonzero",
    "searchsorted",
    "where",
    # set
    "isin",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    # sorting
    "argsort",
    "sort",
    # utility
    "all",
    "any",
    "diff",
    # Cubed's extras: NaN functions and pad
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmedian",
    "nanmin",
    "nanprod",
    "nanstd",
    "nansum",
    "nanvar",
    # numpy's names that xarray calls on the namespace
    "concatenate",
    "cross",
    "cumprod",
    "cumsum",
    "transpose",
    "einsum",
    # numpy's order statistics (xarray's quantile and median)
    "median",
    "nanquantile",
    "quantile",
    "pad",
    # chunk functions (Python callables per block)
    "apply_gufunc",
    "arg_reduction",
    "blockwise",
    "cumreduction",
    "map_blocks",
    "map_overlap",
    "reduction",
    "scan",
    # storage
    "from_zarr",
    "store",
    "to_zarr",
    # execution and runtime
    "compute",
    "config",
    "diagnostics",
    "measure_reserved_mem",
    "plan",
    "random",
    "set_max_procs",
    "set_memory_limit",
    "visualize",
]

from . import array_api  # noqa: E402, F401 - the namespace re-exports the names above
