"""The Array API standard namespace (version 2025.12), one module per chapter.

The modules follow the chapters of the standard (as Cubed's ``array_api/`` and
array-api-strict do): ``creation_functions``, ``data_type_functions``,
``elementwise_functions``, ``indexing_functions``, ``inspection``,
``linear_algebra_functions``, ``manipulation_functions``, ``searching_functions``,
``set_functions``, ``sorting_functions``, ``statistical_functions``,
``utility_functions``, and the extensions ``linalg`` and ``fft``. Each builds its
arrays with the core's op entry points (:mod:`cubego.core.array`); the Go library
does the work.

The top-level ``cubego`` namespace is this one plus Cubed's extras; it is what
``Array.__array_namespace__()`` returns. ``rechunk`` is Cubed's, kept beside the
manipulation functions it belongs with.
"""

from math import e, inf, nan, pi

from cubego.array_api import fft, linalg
from cubego.array_api.creation_functions import (
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
from cubego.array_api.data_type_functions import (
    can_cast,
    finfo,
    iinfo,
    isdtype,
    result_type,
)
from cubego.array_api.elementwise_functions import *  # noqa: F403 - generated from its table
from cubego.array_api.elementwise_functions import __all__ as _elementwise
from cubego.array_api.indexing_functions import (
    take,
    take_along_axis,
)
from cubego.array_api.inspection import (
    __array_namespace_info__,
)
from cubego.array_api.linear_algebra_functions import (
    matmul,
    matrix_transpose,
    tensordot,
    vecdot,
)
from cubego.array_api.manipulation_functions import (
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
from cubego.array_api.searching_functions import (
    argmax,
    argmin,
    count_nonzero,
    nonzero,
    searchsorted,
    where,
)
from cubego.array_api.set_functions import (
    isin,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from cubego.array_api.sorting_functions import (
    argsort,
    sort,
)
from cubego.array_api.statistical_functions import (
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
from cubego.array_api.utility_functions import (
    all,
    any,
    diff,
)
from cubego.core.dtypes import (
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

__array_api_version__ = "2025.12"

newaxis = None

__all__ = [
    "__array_api_version__",
    # constants
    "e",
    "inf",
    "nan",
    "newaxis",
    "pi",
    # data types
    "bool",
    "complex64",
    "complex128",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    # creation functions
    "arange",
    "asarray",
    "empty",
    "empty_like",
    "eye",
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
    # data type functions
    "can_cast",
    "finfo",
    "iinfo",
    "isdtype",
    "result_type",
    # indexing functions
    "take",
    "take_along_axis",
    # inspection
    "__array_namespace_info__",
    # linear algebra functions
    "matmul",
    "matrix_transpose",
    "tensordot",
    "vecdot",
    # manipulation functions
    "astype",
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
    # searching functions
    "argmax",
    "argmin",
    "count_nonzero",
    "nonzero",
    "searchsorted",
    "where",
    # set functions
    "isin",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    # sorting functions
    "argsort",
    "sort",
    # statistical functions
    "cumulative_prod",
    "cumulative_sum",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
    # utility functions
    "all",
    "any",
    "diff",
    # extensions
    "fft",
    "linalg",
    *_elementwise,
]
