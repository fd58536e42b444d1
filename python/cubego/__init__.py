"""cubego: bounded-memory chunked arrays, computed by a Go engine.

``import cubego as cubed`` runs typical Cubed code: arrays are lazy, chunked and
immutable; ``compute()`` runs their plan with every task's memory projected and
checked against ``Spec.allowed_mem`` before anything starts.

>>> import cubego as cg
>>> spec = cg.Spec(allowed_mem="200MB")
>>> a = cg.asarray([[1.0, 2.0], [3.0, 4.0]], chunks=1, spec=spec)
>>> cg.sum(a * 2).compute()
array(20.)

The namespace is the Array API standard's (:mod:`cubego.array_api`) plus
Cubed's extras (``Spec``, ``config``, ``from_array``, ``from_zarr``, ``to_zarr``,
``store``, ``rechunk``, ``compute``, ``plan``, ``visualize``, ``measure_reserved_mem``,
``Callback``, ``diagnostics``, ``random``, the chunk functions, the NaN functions,
``pad``). The Go library is loaded on first use.

The package is layered, lowest first (``ARCHITECTURE.md``; checked by
import-linter): ``binding`` (the one seam with libcubego), ``runtime``
(callbacks, events, executors), ``core`` (Array, Spec, plans, compute, Zarr I/O),
``array_api`` (the standard), ``primitive`` (chunk functions), ``extras``
(beyond the standard), then this namespace with ``random``, ``linalg``, ``fft``,
``lib``, ``diagnostics`` and the xarray chunk manager.
"""

from cubego import diagnostics, fft, lib, linalg, random  # noqa: F401 - fft, linalg: also `import cubego.fft`
from cubego.array_api import *  # noqa: F403 - the standard namespace
from cubego.array_api import __all__ as _array_api_all
from cubego.binding.libcubego import blas_info, set_max_procs, set_memory_limit
from cubego.core.array import Array
from cubego.core.compute import compute, raise_if_computes
from cubego.core.compute import last_stats as _last_stats  # noqa: F401 - documented private helper
from cubego.core.config import config
from cubego.core.io import from_zarr, store, to_zarr
from cubego.core.measure import measure_reserved_mem
from cubego.core.plan import FinalizedPlan, plan, visualize
from cubego.core.spec import Spec
from cubego.extras.einsum import einsum
from cubego.extras.nan_functions import (
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
from cubego.extras.numpy_names import concatenate, cross, cumprod, cumsum, transpose
from cubego.extras.pad import pad
from cubego.extras.quantile import median, nanquantile, quantile
from cubego.primitive.blockwise import blockwise, from_array, map_blocks
from cubego.primitive.gufunc import apply_gufunc
from cubego.primitive.overlap import map_overlap
from cubego.primitive.reduction import arg_reduction, reduction
from cubego.primitive.scan import cumreduction, scan
from cubego.runtime.types import Callback, TaskEndEvent

__version__ = "0.1.0"

__all__ = [
    *_array_api_all,
    "__version__",
    # classes
    "Array",
    "Callback",
    "FinalizedPlan",
    "Spec",
    "TaskEndEvent",
    # creation from array-likes (Cubed)
    "from_array",
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
    "pad",
    # numpy's names that xarray calls on the namespace
    "concatenate",
    "cross",
    "cumprod",
    "cumsum",
    "einsum",
    "transpose",
    # numpy's order statistics (xarray's quantile and median)
    "median",
    "nanquantile",
    "quantile",
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
    "blas_info",
    "compute",
    "config",
    "diagnostics",
    "lib",
    "measure_reserved_mem",
    "plan",
    "raise_if_computes",
    "random",
    "set_max_procs",
    "set_memory_limit",
    "visualize",
]

# Cubed's module path for its groupby operations, ``cubed.core.groupby``: they are
# chunk functions (cubego.primitive.groupby), above the core, so the path is an alias.
import sys as _sys  # noqa: E402

from cubego import core as _core  # noqa: E402
from cubego import routing as _routing  # noqa: E402
from cubego.primitive import groupby as _groupby  # noqa: E402

_core.groupby = _groupby
_sys.modules["cubego.core.groupby"] = _groupby
# flox and xarray paths for cubego arrays (groupby with flox, rolling), once they are imported
_routing.install()
