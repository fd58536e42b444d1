"""``Array``: a lazy chunked array whose plan and data live in the Go library.

This module is the top of the core: operators and methods call the core's own
op entry points (:func:`apply`, :func:`elemwise`, :func:`round_decimals`) and
:mod:`cubego.core.compute` / :mod:`cubego.core.plan`, so nothing here imports
from a higher layer. Indexing with integer arrays or masks is written with the
Array API functions, above the core: :mod:`cubego.array_api.indexing_functions`
installs it with :func:`install_indexing` when cubego is imported.
"""

from __future__ import annotations

import html
import math
import operator
import sys
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

from cubego.binding import libcubego
from cubego.core import datetimes as _datetimes
from cubego.core import dtypes as _dtypes
from cubego.core.compute import compute
from cubego.core.plan import FinalizedPlan, plan, plan_info, visualize
from cubego.core.spec import Spec, common, parse_size
from cubego.core.svg import chunks_svg

__all__ = [
    "Array",
    "BlockView",
    "apply",
    "elemwise",
    "encode_chunks",
    "encode_shape",
    "install_indexing",
    "is_scalar",
    "memory_repr",
    "round_decimals",
    "select",
]

_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")

#: The longest side of the chunk picture in ``Array._repr_html_``, in pixels.
_SVG_SIZE = 120


def memory_repr(n: int) -> str:
    """A byte count as Cubed shows it: decimal units, ``8.0 MB``."""
    if n < 1000:
        return f"{n} bytes"
    value = n / 1000.0
    for unit in ("KB", "MB", "GB", "TB", "PB"):
        if value < 1000.0:
            return f"{value:3.1f} {unit}"
        value /= 1000.0
    return f"{n:.1e} bytes"


class Array:
    """A chunked N-dimensional array, computed on demand within bounded memory.

    Arrays are made by cubego functions (``asarray``, ``zeros``, ``random.random``,
    arithmetic, ...), never directly. They are lazy: nothing runs until
    ``compute()``, ``numpy.asarray(x)`` or a conversion such as ``float(x)``.
    Their data is immutable; in-place operators (``x += 1``) and ``x[key] = v``
    rebind the ``Array`` object to a new lazy expression, leaving arrays computed
    from the old value unchanged.
    """

    __slots__ = (
        "_handle",
        "_name",
        "_shape",
        "_dtype",
        "_logical",
        "_runs",
        "_chunks",
        "_spec",
        "_finalizer",
        "_fancy",
        "_repr",
        "_html",
        "__weakref__",
    )

    # numpy defers to Array: ``ndarray + x`` reaches Array's reflected method (which
    # refuses ndarrays) and ufuncs raise TypeError, instead of silently computing x
    # through __array__. numpy scalars combine with Arrays through the same methods.
    __array_ufunc__ = None

    def __new__(cls, *args: Any, **kwargs: Any) -> Array:
        raise TypeError(
            "cubego.Array cannot be constructed directly; use cubego.asarray, "
            "cubego.from_array, cubego.zeros, ... to create arrays"
        )

    @classmethod
    def _new(cls, info: dict, spec: Spec) -> Array:
        """An Array for one ``info`` of a library result (docs/capi.md "Array results")."""
        self = object.__new__(cls)
        handle = int(info["handle"])
        self._handle = handle
        self._name = info["name"]
        self._shape = tuple(int(n) for n in info["shape"])
        self._dtype = _dtypes.from_name(info["dtype"])
        self._logical = None  # a datetime64/timedelta64 dtype stored as int64 (core/datetimes.py)
        # Block sizes arrive run-length encoded (docs/capi.md "Array results"):
        # decoding a million block sizes per op took most of the time to build
        # an array of a million blocks (issue #19), so ``chunks`` is expanded
        # from the runs only when it is read.
        runs = info.get("chunk_runs")
        if runs is not None:
            self._runs = tuple(tuple((size, count) for size, count in axis) for axis in runs)
            self._chunks = None
        else:  # cg_arrays_from_json describes chunks in full
            self._chunks = tuple(tuple(axis) for axis in info["chunks"])
            self._runs = tuple(chunk_runs(axis) for axis in self._chunks)
        self._spec = spec
        self._finalizer = weakref.finalize(self, libcubego.array_release, handle)
        # How an integer-array index made this array (indexing_functions.Fancy),
        # so that a basic index of it reads only what it selects; None otherwise.
        self._fancy = None
        # The texts of repr() and _repr_html_(), made once (the array is immutable;
        # _rebind forgets them).
        self._repr = None
        self._html = None
        return self

    # ------------------------------------------------------------------ attributes

    @property
    def name(self) -> str:
        """The array's name in the plan, e.g. ``array-003``."""
        return self._name

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype if self._logical is None else self._logical

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return math.prod(self._shape)

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def chunks(self) -> tuple[tuple[int, ...], ...]:
        """Block sizes along each axis, e.g. ``((2, 2, 1), (3,))``."""
        chunks = self._chunks
        if chunks is None:
            chunks = self._chunks = tuple(expand_runs(axis) for axis in self._runs)
        return chunks

    @property
    def chunksize(self) -> tuple[int, ...]:
        """The largest block size along each axis."""
        return tuple(max((size for size, _ in axis), default=0) for axis in self._runs)

    @property
    def chunkmem(self) -> int:
        """Bytes of the largest chunk: ``itemsize`` times the product of ``chunksize``."""
        return self.itemsize * math.prod(self.chunksize)

    @property
    def blocks(self) -> BlockView:
        """The array indexed by block: ``x.blocks[i, j]`` is an Array of those blocks.

        Keys are integers (negative count from the end), slices (any step) and
        ``...``, and at most one list or 1-d integer array; an integer keeps its
        axis (as in Dask and Cubed), so ``x.blocks[0]`` is the first row of
        blocks. The result's chunks are the selected blocks.
        """
        return BlockView(self)

    @property
    def numblocks(self) -> tuple[int, ...]:
        return tuple(sum(count for _, count in axis) for axis in self._runs)

    @property
    def npartitions(self) -> int:
        return math.prod(self.numblocks)

    @property
    def nchunks(self) -> int:
        return self.npartitions

    @property
    def spec(self) -> Spec:
        return self._spec

    @property
    def device(self) -> str:
        return "cpu"

    @property
    def T(self) -> Array:
        """The transpose of a 2-D array."""
        if self.ndim != 2:
            raise ValueError(f"x.T requires a 2-dimensional array, got {self.ndim} dimensions")
        return permute_dims(self, (1, 0))

    @property
    def mT(self) -> Array:
        """The transpose of the last two axes (a stack of matrices)."""
        if self.ndim < 2:
            raise ValueError(f"x.mT requires at least 2 dimensions, got {self.ndim}")
        axes = list(range(self.ndim))
        axes[-1], axes[-2] = axes[-2], axes[-1]
        return permute_dims(self, tuple(axes))

    # ------------------------------------------------------------------ computing

    def compute(self, executor: Any = None, **kwargs: Any) -> np.ndarray:
        """Compute the array and return it as a numpy array.

        Keyword arguments are those of :func:`cubego.compute`.
        """
        return compute(self, executor=executor, **kwargs)[0]

    def plan(self, optimize_graph: bool = True) -> FinalizedPlan:
        """The finalised plan that computing this array would run (see :func:`cubego.plan`)."""
        return plan(self, optimize_graph=optimize_graph)

    def visualize(self, filename: str = "cubego", format: str | None = None, **kwargs: Any) -> Any:
        """Write this array's plan as a graph (see :func:`cubego.visualize`)."""
        return visualize(self, filename=filename, format=format, **kwargs)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        result = self.compute()
        if dtype is not None and np.dtype(dtype) != result.dtype:
            result = result.astype(dtype)
        return result

    def _scalar(self, kind: str) -> Any:
        if self.ndim != 0:
            raise TypeError(
                f"only 0-dimensional arrays can be converted to Python scalars ({kind}); "
                f"this array has shape {self._shape}"
            )
        return self.compute()

    def __bool__(self) -> bool:
        if self.ndim != 0:
            raise ValueError(
                f"the truth value of an array with shape {self._shape} is ambiguous; "
                "only 0-dimensional arrays convert to bool"
            )
        return bool(self.compute())

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer arrays can be used as an index, not {self.dtype}")
        return operator.index(self._scalar("index")[()])

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-dimensional array")
        return self._shape[0]

    def __iter__(self) -> Iterator[Array]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-dimensional array")
        return (self[i] for i in range(self._shape[0]))

    # ------------------------------------------------------------------ presentation

    def __repr__(self) -> str:
        cached = self._repr
        if cached is not None and cached[0] is self._logical:
            return cached[1]
        text = (
            f"cubego.Array<{self._name}, shape={self._shape}, dtype={self.dtype}, "
            f"chunks={self.chunks}>"
        )
        self._repr = (self._logical, text)  # datetimes set _logical after _new
        return text

    def to_svg(self, size: int = 500) -> str:
        """An SVG picture of the array's chunk grid, the longest side about *size* pixels.

        Raises ``NotImplementedError`` for 0-d and empty arrays and arrays of more
        than 3 dimensions (they have no picture).
        """
        return chunks_svg(self.chunks, size=size)

    def _repr_html_(self) -> str:
        """The notebook view: sizes of the array and of one chunk, counts, and the chunk picture."""
        if self._html is None:
            self._html = self._make_html()
        return self._html

    def _make_html(self) -> str:
        try:
            grid = self.to_svg(size=_SVG_SIZE)
        except NotImplementedError:
            grid = ""
        try:
            info = plan_info(self, counts=True)  # the counts only: no FinalizedPlan
            arrays = f"{info['num_arrays']} arrays in plan"
            tasks = f"{info['num_tasks']} tasks"
        except Exception:  # a plan that cannot be built still has a summary
            arrays = tasks = "unknown"
        rows = [
            ("Bytes", memory_repr(self.nbytes), memory_repr(self.chunkmem)),
            ("Shape", str(self._shape), str(self.chunksize)),
            ("Count", arrays, f"{self.npartitions} chunks"),
            ("Tasks", tasks, ""),
            ("Type", html.escape(str(self._dtype)), "numpy.ndarray"),
        ]
        body = "\n".join(
            f"<tr><th>{name}</th><td>{whole}</td><td>{chunk}</td></tr>"
            for name, whole, chunk in rows
        )
        table = (
            "<table><thead><tr><td></td><th>Array</th><th>Chunk</th></tr></thead>"
            f"<tbody>\n{body}\n</tbody></table>"
        )
        return f"<table><tr><td>{table}</td><td>{grid}</td></tr></table>"

    def round(self, decimals: int = 0) -> Array:
        """*x* rounded half to even to *decimals* places (numpy's ``ndarray.round``)."""
        return round_decimals(self, decimals)

    def _repr_inline_(self, max_width: int) -> str:
        """xarray's one-line summary of a lazy variable: ``cubego.Array<chunksize=(...)>``."""
        text = f"cubego.Array<chunksize={self.chunksize}>"
        return text if len(text) <= max_width else text[: max(max_width - 3, 0)] + "..."

    __hash__ = object.__hash__

    def __reduce__(self) -> Any:
        # Pickles the graph that computes the array (not its values): the
        # unpickled array computes the same values in any process.
        return (
            _restore_array,
            (libcubego.arrays_to_json([self._handle]), self.spec, self._logical),
        )

    def __copy__(self) -> Array:
        """A new Array object for the same (immutable) data: no data is copied.

        In-place updates of either object leave the other unchanged.
        """
        return apply("permute_dims", {"axes": list(range(self.ndim))}, [self])

    def __deepcopy__(self, memo: dict) -> Array:
        return self.__copy__()

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        if api_version is not None and api_version not in _API_VERSIONS:
            raise ValueError(
                f"unsupported Array API version {api_version!r}; cubego supports "
                f"{', '.join(_API_VERSIONS)}"
            )
        # The namespace is the package itself, which Python initialised before any
        # of its modules (so before any Array existed): a lookup, not an import.
        return sys.modules["cubego"]

    # ------------------------------------------------------------------ operations

    def __getitem__(self, key: Any) -> Array:
        if _has_array(key):
            return _indexing["getitem_arrays"](self, key)
        if self._fancy is not None:
            # A basic index of an integer-array index result: one integer-array
            # index of the source that reads only the elements selected.
            composed = self._fancy.compose(self, key)
            if composed is not None:
                return composed
        return self._same_or(apply("getitem", {"key": _encode_key(key)}, [self]))

    def _axis_chunks(self, axis: int) -> int | tuple[int, ...]:
        """The chunks of *axis* as the library's ``chunks`` argument: the block
        size of a regular axis (every block that size but a shorter last one),
        which the library expands to the same blocks, else the block sizes."""
        runs = self._runs[axis]
        if len(runs) == 1 and runs[0][0] > 0:
            return runs[0][0]
        if len(runs) == 2 and runs[1][1] == 1 and 0 < runs[1][0] < runs[0][0]:
            return runs[0][0]
        return expand_runs(runs)

    def _same_or(self, result: Array) -> Array:
        """*self* when the library returned this very array (a no-op), else *result*.

        As in Cubed, ``x[...]``, ``x[:, :]`` and ``x.rechunk(x.chunks)`` return ``x``.
        """
        return self if result._name == self._name else result

    def __setitem__(self, key: Any, value: Any) -> None:
        """Rebind this array to a lazy expression equal to it with ``self[key] = value``.

        Nothing is computed: the array's plan becomes "the old array where the
        key does not select, *value* where it does". Keys are basic indices
        (integers, slices with any step, ``...``) or a boolean mask with a
        scalar or 0-d value.
        """
        self._rebind(_indexing["setitem"](self, key, value))

    def _rebind(self, new: Array) -> None:
        """Make this Array object stand for *new* (in-place operators, ``__setitem__``).

        The library array *new* names gets a handle of its own, owned by
        ``self``; arrays computed from the old value keep it.
        """
        if new.shape != self._shape:
            raise ValueError(
                f"in-place operation would change the shape of the array from {self._shape} "
                f"to {new.shape}"
            )
        if new.dtype != self.dtype:
            raise TypeError(
                f"in-place operation would change the dtype of the array from {self.dtype} "
                f"to {new.dtype}"
            )
        fresh = apply("permute_dims", {"axes": list(range(self.ndim))}, [new])
        self._logical = fresh._logical
        self._fancy = None
        self._repr = None
        self._html = None
        fresh._finalizer.detach()
        self._finalizer()
        self._handle = fresh._handle
        self._name = fresh._name
        self._runs = fresh._runs
        self._chunks = fresh._chunks
        self._spec = fresh._spec
        self._finalizer = weakref.finalize(self, libcubego.array_release, fresh._handle)

    def to_device(self, device: Any, /, *, stream: Any = None) -> Array:
        """The array on *device*; cubego arrays live on ``"cpu"`` only."""
        if device != "cpu":
            raise ValueError(f"unsupported device {device!r}; cubego arrays live on 'cpu'")
        return self

    def __dlpack__(
        self,
        /,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: Any = None,
        copy: bool | None = None,
    ) -> Any:
        """Compute the array and export it through numpy's DLPack capsule."""
        if stream is not None:
            raise BufferError("cubego arrays live on the CPU; DLPack streams are not supported")
        kwargs: dict[str, Any] = {}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        return self.compute().__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU, device 0

    def astype(self, dtype: Any, /, *, copy: bool = True) -> Array:
        dtype = _dtypes.normalize_any(dtype)
        if dtype == self.dtype and not copy:
            return self
        if self._logical is not None or dtype.kind in "mM":
            return _datetimes.astype(self, dtype, _engine_apply)
        return apply("astype", {"dtype": dtype.name}, [self])

    def rechunk(
        self, chunks: Any, *, min_mem: int | str | None = None, allow_irregular: bool = True
    ) -> Array:
        """The same data with new chunks (see :func:`cubego.rechunk`).

        As in dask, an axis missing from a dict, or given as None in a tuple,
        keeps its current chunks. *min_mem* is the smallest intermediate chunk
        (bytes or a size string) a multi-stage rechunk accepts before it adds
        stages (default 256 KiB with a local work_dir, 8 MiB on object stores;
        Cubed's and Rechunker's ``min_mem``). Rechunking to the array's own
        chunks returns the array itself.

        *allow_irregular* is Cubed's switch between its two planners (irregular
        intermediate chunks or only regular ones). cubego's planner always uses
        regular intermediates, so both values give the same plan; the target
        *chunks* may be irregular either way.
        """
        if not isinstance(allow_irregular, (bool, np.bool_)):
            raise TypeError(
                f"rechunk: allow_irregular must be True or False, got {allow_irregular!r}"
            )
        if isinstance(chunks, dict):
            chunks = [
                chunks.get(axis, chunks.get(axis - self.ndim, self._axis_chunks(axis)))
                for axis in range(self.ndim)
            ]
        if isinstance(chunks, (tuple, list)) and len(chunks) == self.ndim:
            chunks = [self._axis_chunks(axis) if c is None else c for axis, c in enumerate(chunks)]
        args: dict[str, Any] = {"chunks": encode_chunks(chunks)}
        if min_mem is not None:
            args["min_mem"] = parse_size(min_mem, "min_mem")
        return self._same_or(apply("rechunk", args, [self]))

    def __matmul__(self, other: Any) -> Array:
        if not isinstance(other, Array):
            return NotImplemented
        return apply("matmul", {}, [self, other])

    def __rmatmul__(self, other: Any) -> Array:
        if not isinstance(other, Array):
            return NotImplemented
        return apply("matmul", {}, [other, self])

    def __imatmul__(self, other: Any) -> Array:
        if not isinstance(other, Array):
            return NotImplemented
        self._rebind(apply("matmul", {}, [self, other]))
        return self

    def __neg__(self) -> Array:
        return elemwise("negative", self)

    def __pos__(self) -> Array:
        return elemwise("positive", self)

    def __abs__(self) -> Array:
        return elemwise("abs", self)

    def __invert__(self) -> Array:
        return elemwise("bitwise_invert", self)


def _operator(func: str, form: str) -> Any:
    """An operator method of Array for elementwise *func*: *form* is "", "r" or "i"."""

    def method(self: Array, other: Any) -> Array:
        if not (isinstance(other, Array) or is_scalar(other)):
            return NotImplemented
        if form == "r":
            return elemwise(func, other, self)
        result = elemwise(func, self, other)
        if form == "i":
            self._rebind(result)
            return self
        return result

    return method


# Arithmetic and bitwise operators, each with its reflected and in-place form.
_OPERATORS = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "truediv": "divide",
    "floordiv": "floor_divide",
    "mod": "remainder",
    "pow": "pow",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "lshift": "bitwise_left_shift",
    "rshift": "bitwise_right_shift",
}
# Comparisons have no reflected form: Python swaps them (x < y is y > x).
_COMPARISONS = {
    "eq": "equal",
    "ne": "not_equal",
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
}
for _name, _func in _OPERATORS.items():
    for _form in ("", "r", "i"):
        _method = _operator(_func, _form)
        _method.__name__ = _method.__qualname__ = f"__{_form}{_name}__"
        setattr(Array, _method.__name__, _method)
for _name, _func in _COMPARISONS.items():
    _method = _operator(_func, "")
    _method.__name__ = _method.__qualname__ = f"__{_name}__"
    setattr(Array, _method.__name__, _method)
del _name, _func, _form, _method


# ---------------------------------------------------------------------- blocks


class BlockView:
    """``x.blocks``: the array indexed by block instead of by element (Dask's and Cubed's).

    ``x.blocks[key]`` is an Array of the blocks *key* selects, in order, with
    those blocks as its chunks. An integer keeps its axis (``x.blocks[0]`` of a
    2-D array is 2-D); slices may have any step; at most one list or 1-d array
    of block numbers. ``None`` (newaxis) is refused, as in Cubed.
    """

    __slots__ = ("_array",)

    def __init__(self, array: Array):
        self._array = array

    @property
    def shape(self) -> tuple[int, ...]:
        """The number of blocks along each axis (``x.numblocks``)."""
        return self._array.numblocks

    @property
    def size(self) -> int:
        """The number of blocks."""
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of the blocks of a 0-dimensional array")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"BlockView<{self._array.name}, numblocks={self.shape}>"

    def __getitem__(self, key: Any) -> Array:
        x = self._array
        selections = _block_selections(key, x.numblocks)
        for axis, chosen in enumerate(selections):
            if chosen != list(range(x.numblocks[axis])):
                x = _take_blocks(x, axis, chosen)
        return x


def _block_selections(key: Any, numblocks: tuple[int, ...]) -> list[list[int]]:
    """The block numbers *key* selects along each axis (ints keep their axis)."""
    key = key if isinstance(key, tuple) else (key,)
    if any(k is None for k in key):
        raise ValueError("blocks: Slicing with newaxis is not supported (None in a block index)")
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("blocks: an index can only have a single ellipsis ('...')")
    arrays = [k for k in key if isinstance(k, (list, np.ndarray, Array))]
    if len(arrays) > 1:
        raise NotImplementedError("blocks: Only one integer array index is allowed.")
    ndim = len(numblocks)
    n_items = sum(k is not Ellipsis for k in key)
    if n_items > ndim:
        raise IndexError(
            f"blocks: too many indices: the array has {ndim} dimensions, {n_items} were given"
        )
    full: list[Any] = []
    for k in key:
        if k is Ellipsis:
            full += [slice(None)] * (ndim - n_items)
        else:
            full.append(k)
    full += [slice(None)] * (ndim - len(full))
    out = []
    for axis, (k, n) in enumerate(zip(full, numblocks, strict=True)):
        if isinstance(k, slice):
            out.append(list(range(*k.indices(n))))
            continue
        if isinstance(k, (list, np.ndarray, Array)):
            values = np.asarray(k.compute() if isinstance(k, Array) else k)
            if values.size == 0:
                values = values.astype(np.intp)
            if values.ndim != 1 or values.dtype.kind not in "iu":
                raise IndexError(
                    f"blocks: an array index must be a 1-d list or array of integers, got "
                    f"{values.dtype} values of shape {values.shape}"
                )
            numbers = [int(v) for v in values]
        elif isinstance(k, (bool, np.bool_)):
            raise IndexError("blocks: boolean indices are not supported")
        else:
            try:
                numbers = [operator.index(k)]
            except TypeError:
                raise IndexError(
                    "blocks: only integers, slices, ... and one integer list or array are "
                    f"valid block indices, got {type(k).__name__}"
                ) from None
        chosen = []
        for i in numbers:
            if not -n <= i < n:
                raise IndexError(
                    f"blocks: block {i} is out of bounds for axis {axis} with {n} blocks"
                )
            chosen.append(i % n)
        out.append(chosen)
    return out


def _take_blocks(x: Array, axis: int, chosen: list[int]) -> Array:
    """The blocks *chosen* (in order) of *x* along *axis*: slices on block boundaries
    (which keep the blocks as chunks), concatenated when they are not one run."""
    offsets = [0]
    for c in x.chunks[axis]:
        offsets.append(offsets[-1] + c)
    runs: list[list[int]] = []
    for i in chosen:
        if runs and runs[-1][1] == i:
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    lead = (slice(None),) * axis
    if not runs:  # no blocks: an empty axis
        return x[lead + (slice(0, 0),)]
    pieces = [x[lead + (slice(offsets[a], offsets[b]),)] for a, b in runs]
    if len(pieces) == 1:
        return pieces[0]
    return apply("concat", {"axis": axis}, pieces)


# ---------------------------------------------------------------------- building arrays


def round_decimals(x: Array, decimals: int) -> Array:
    """*x* rounded half to even to *decimals* places (numpy's ``around``).

    ``decimals=0`` is the standard's ``round``. Otherwise floats are scaled by
    ``10**decimals``, rounded and scaled back, as numpy does; integers are
    unchanged for ``decimals >= 0`` and rounded to tens, hundreds, ... below.
    """
    decimals = operator.index(decimals)
    if decimals == 0:
        return elemwise("round", x)
    if x.dtype.kind in "iub":
        if decimals > 0 or x.dtype.kind == "b":
            return x
        scale = 10 ** (-decimals)
        scaled = elemwise("divide", x.astype("float64"), scale)
        return elemwise("multiply", elemwise("round", scaled), scale).astype(x.dtype)
    scale = 10.0**decimals
    return elemwise("divide", elemwise("round", elemwise("multiply", x, scale)), scale)


#: Indexing with integer arrays and masks, and ``x[key] = value``: written with the
#: Array API functions, so installed from above by :func:`install_indexing`.
_indexing: dict[str, Any] = {}


def install_indexing(getitem_arrays: Any, setitem: Any) -> None:
    """Install the implementations of ``x[arrays]`` and ``x[key] = value``.

    Called once, by :mod:`cubego.array_api.indexing_functions` at import: the core
    stays below the Array API layer that these are written in.
    """
    _indexing.update(getitem_arrays=getitem_arrays, setitem=setitem)


def is_scalar(x: Any) -> bool:
    """Python and numpy scalars: operands combined with arrays as weak scalars."""
    return isinstance(
        x, (bool, int, float, complex, np.bool_, np.number, np.datetime64, np.timedelta64)
    )


def apply(name: str, args: dict, inputs: list[Array], spec: Spec | None = None) -> Array:
    """Run library op *name* on *inputs*; the result inherits the first input's spec.

    Inputs holding datetimes or timedeltas go through :mod:`cubego.core.datetimes`.
    """
    if any(x._logical is not None for x in inputs):
        return _datetimes.apply(
            name, args, inputs, lambda n, a, i: _engine_apply(n, a, i, spec)
        )
    return _engine_apply(name, args, inputs, spec)


def _engine_apply(
    name: str, args: dict, inputs: list[Array], spec: Spec | None = None
) -> Array:
    """Library op *name* on the arrays' storage (datetimes as int64)."""
    if spec is None:
        spec = common(x.spec for x in inputs)
    infos = libcubego.op(name, args, [x._handle for x in inputs])
    return Array._new(infos[0], spec)


def _operands(func: str, operands: tuple[Any, ...]) -> tuple[list[Array], list[dict]]:
    """The distinct arrays among *operands*, and every operand as ``{"input": i}`` or a scalar."""
    inputs: list[Array] = []
    encoded: list[dict] = []
    for x in operands:
        if isinstance(x, Array):
            index = next((i for i, seen in enumerate(inputs) if seen is x), len(inputs))
            if index == len(inputs):
                inputs.append(x)
            encoded.append({"input": index})
        elif is_scalar(x):
            encoded.append(libcubego.encode_scalar(x))
        else:
            raise TypeError(
                f"{func}: expected cubego arrays or Python/numpy scalars, got {type(x).__name__}"
            )
    if not inputs:
        raise TypeError(f"{func}: at least one operand must be a cubego Array")
    return inputs, encoded


def elemwise(func: str, *operands: Any) -> Array:
    """The elementwise library function *func* over arrays and scalars."""
    if any(_datetimes.is_datetime_operand(x) for x in operands):
        if not any(isinstance(x, Array) for x in operands):
            raise TypeError(f"{func}: at least one operand must be a cubego Array")
        return _datetimes.elemwise(func, operands, _engine_apply)
    inputs, encoded = _operands(func, operands)
    out = apply("elemwise", {"func": func, "operands": encoded}, inputs)
    if any(x._fancy is not None for x in inputs) and all(x._shape == out._shape for x in inputs):
        out._fancy = _Elementwise(func, operands)
    return out


class _Elementwise:
    """``f(y, ...)`` of an array *y* made by an integer-array index (see
    ``indexing_functions.Fancy``): a basic index of the result indexes the
    operands, ``f(y, z)[k] = f(y[k], z[k])`` (none of them broadcast), so that
    ``y[k]`` reads only what *k* selects."""

    __slots__ = ("func", "operands")

    def __init__(self, func: str, operands: tuple[Any, ...]):
        self.func = func
        self.operands = operands

    def compose(self, y: Array, key: Any) -> Array | None:
        items = key if isinstance(key, tuple) else (key,)
        if all(k is Ellipsis or k == slice(None) for k in items):
            return None  # everything: y itself
        indexed: dict[int, Array] = {}  # x * x indexes x once
        try:
            for x in self.operands:
                if isinstance(x, Array) and id(x) not in indexed:
                    indexed[id(x)] = x[key]
        except (IndexError, TypeError):
            return None  # the usual path raises the error
        return elemwise(self.func, *(indexed.get(id(x), x) for x in self.operands))


def select(condition: Array, x1: Any, x2: Any) -> Array:
    """The library's ``where``: *x1* where *condition* is true, else *x2* (broadcast).

    *condition* is an Array; *x1* and *x2* are arrays or scalars (not both scalars).
    """
    if _datetimes.is_datetime_operand(x1) or _datetimes.is_datetime_operand(x2):
        if not isinstance(condition, Array):
            raise TypeError(
                f"where: condition must be a cubego Array, got {type(condition).__name__}"
            )
        return _datetimes.select(condition, x1, x2, _engine_apply)
    inputs, encoded = _operands("where", (condition, x1, x2))
    if encoded[0] != {"input": 0}:
        raise TypeError(f"where: condition must be a cubego Array, got {type(condition).__name__}")
    return apply("where", {"operands": encoded[1:]}, inputs)


def permute_dims(x: Array, axes: tuple[int, ...]) -> Array:
    return apply("permute_dims", {"axes": [operator.index(a) for a in axes]}, [x])


def expand_runs(runs: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """An axis's block sizes from its ``(size, count)`` runs (docs/capi.md)."""
    if len(runs) == 1:
        size, count = runs[0]
        return (size,) * count
    out: list[int] = []
    for size, count in runs:
        out += [size] * count
    return tuple(out)


def chunk_runs(sizes: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """The ``(size, count)`` runs of an axis's block sizes (:func:`expand_runs` undone)."""
    runs: list[list[int]] = []
    for size in sizes:
        if runs and runs[-1][0] == size:
            runs[-1][1] += 1
        else:
            runs.append([size, 1])
    return tuple((size, count) for size, count in runs)


def encode_chunks(chunks: Any) -> Any:
    """User chunks as JSON (docs/capi.md "Chunks"); normalisation is the library's."""
    if chunks is None or isinstance(chunks, str):
        return chunks
    if isinstance(chunks, (bool, np.bool_)):
        raise TypeError(f"invalid chunks {chunks!r}")
    if isinstance(chunks, (list, tuple)):
        return [encode_chunks(c) for c in chunks]
    try:
        return operator.index(chunks)
    except TypeError:
        raise TypeError(
            f"invalid chunks {chunks!r}: expected an int, 'auto', a size string, None "
            "or a tuple with one entry per axis"
        ) from None


def encode_shape(shape: Any) -> list[int]:
    if isinstance(shape, (list, tuple)):
        return [operator.index(n) for n in shape]
    return [operator.index(shape)]


def _slice_part(value: Any) -> int | None:
    if value is None:
        return None
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"slice indices must be integers or None, got {type(value).__name__}"
        ) from None


def _has_array(key: Any) -> bool:
    """Whether an index key holds an index array: a cubego Array, a numpy array or a list."""
    kinds = (Array, np.ndarray, list)
    if isinstance(key, tuple):
        return any(isinstance(k, kinds) for k in key)
    return isinstance(key, kinds)


def _encode_key(key: Any) -> list[dict]:
    if not isinstance(key, tuple):
        key = (key,)
    encoded: list[dict] = []
    for k in key:
        if k is Ellipsis:
            encoded.append({"ellipsis": True})
        elif k is None:
            encoded.append({"newaxis": True})
        elif isinstance(k, slice):
            encoded.append(
                {"slice": [_slice_part(k.start), _slice_part(k.stop), _slice_part(k.step)]}
            )
        elif isinstance(k, (bool, np.bool_)):
            raise IndexError("boolean indices are not supported by cubego")
        elif isinstance(k, Array):
            raise IndexError("cubego arrays in an index take the array-indexing path")
        else:
            try:
                encoded.append({"int": operator.index(k)})
            except TypeError:
                raise IndexError(
                    "only integers, slices (`:`), ellipsis (`...`) and None (`newaxis`) are "
                    f"valid indices, got {type(k).__name__}"
                ) from None
    return encoded


def _restore_array(graph: str, spec: Any, logical: Any = None) -> Array:
    """Unpickle an array: rebuild its graph in this process's library.

    In a forked child the library cannot be used, but unpickling must not fail:
    a fork-context ``multiprocessing.Pool`` worker that fails to unpickle its task
    dies without a word and the pool waits forever. The child gets a stand-in
    whose every use raises the fork error, which the pool sends back at once.
    """
    if libcubego.in_forked_child():
        stand_in = object.__new__(_ForkedChildArray)
        stand_in._pickled = (graph, spec, logical)
        return stand_in
    (info,) = libcubego.arrays_from_json(graph)
    array = Array._new(info, spec)
    array._logical = logical
    return array


class _ForkedChildArray(Array):
    """A cubego array unpickled in a forked child: any use raises ``RuntimeError``
    (its slots are never set, so every method reaches ``__getattr__``)."""

    _pickled: tuple[str, Any]

    def __repr__(self) -> str:
        return "<cubego array, unusable in a forked child process>"

    def __reduce__(self) -> Any:
        # Sent back to the parent (a pool task returning it): usable there.
        return (_restore_array, self._pickled)

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(libcubego.FORK_MESSAGE)
