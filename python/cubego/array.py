"""``Array``: a lazy chunked array whose plan and data live in the Go library."""

from __future__ import annotations

import math
import operator
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import _dtypes, _lib
from .spec import Spec

__all__ = ["Array", "apply", "elemwise", "encode_chunks", "is_scalar"]

_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


class Array:
    """A chunked N-dimensional array, computed on demand within bounded memory.

    Arrays are made by cubego functions (``asarray``, ``zeros``, ``random.random``,
    arithmetic, ...), never directly. They are immutable and lazy: nothing runs
    until ``compute()``, ``numpy.asarray(x)`` or a conversion such as ``float(x)``.
    """

    __slots__ = (
        "_handle",
        "_name",
        "_shape",
        "_dtype",
        "_chunks",
        "_spec",
        "_finalizer",
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
        self._chunks = tuple(tuple(int(c) for c in axis) for axis in info["chunks"])
        self._spec = spec
        self._finalizer = weakref.finalize(self, _lib.array_release, handle)
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
        return self._dtype

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
        return self._chunks

    @property
    def chunksize(self) -> tuple[int, ...]:
        """The largest block size along each axis."""
        return tuple(max(axis) if axis else 0 for axis in self._chunks)

    @property
    def numblocks(self) -> tuple[int, ...]:
        return tuple(len(axis) for axis in self._chunks)

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
        from ._compute import compute

        return compute(self, executor=executor, **kwargs)[0]

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
        if self._dtype.kind not in "iu":
            raise TypeError(f"only integer arrays can be used as an index, not {self._dtype}")
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
        return (
            f"cubego.Array<{self._name}, shape={self._shape}, dtype={self._dtype}, "
            f"chunks={self._chunks}>"
        )

    __hash__ = object.__hash__

    def __reduce__(self) -> Any:
        # Pickles the graph that computes the array (not its values): the
        # unpickled array computes the same values in any process.
        return (_restore_array, (_lib.arrays_to_json([self._handle]), self.spec))

    def __copy__(self) -> Array:
        return self  # arrays are immutable

    def __deepcopy__(self, memo: dict) -> Array:
        return self

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        if api_version is not None and api_version not in _API_VERSIONS:
            raise ValueError(
                f"unsupported Array API version {api_version!r}; cubego supports "
                f"{', '.join(_API_VERSIONS)}"
            )
        import cubego

        return cubego

    # ------------------------------------------------------------------ operations

    def __getitem__(self, key: Any) -> Array:
        return apply("getitem", {"key": _encode_key(key)}, [self])

    def astype(self, dtype: Any, /, *, copy: bool = True) -> Array:
        dtype = _dtypes.normalize(dtype)
        if dtype == self._dtype and not copy:
            return self
        return apply("astype", {"dtype": dtype.name}, [self])

    def rechunk(self, chunks: Any) -> Array:
        """The same data with new chunks (see :func:`cubego.rechunk`).

        As in dask, an axis missing from a dict, or given as None in a tuple,
        keeps its current chunks.
        """
        if isinstance(chunks, dict):
            chunks = [
                chunks.get(axis, chunks.get(axis - self.ndim, self._chunks[axis]))
                for axis in range(self.ndim)
            ]
        if isinstance(chunks, (tuple, list)) and len(chunks) == self.ndim:
            chunks = [self._chunks[axis] if c is None else c for axis, c in enumerate(chunks)]
        return apply("rechunk", {"chunks": encode_chunks(chunks)}, [self])

    def _binary(func: str, reflected: bool = False):  # noqa: N805 - builds methods below
        def method(self: Array, other: Any) -> Array:
            if not (isinstance(other, Array) or is_scalar(other)):
                return NotImplemented
            return elemwise(func, other, self) if reflected else elemwise(func, self, other)

        method.__name__ = f"__{'r' if reflected else ''}{func}__"
        return method

    __add__ = _binary("add")
    __radd__ = _binary("add", True)
    __sub__ = _binary("subtract")
    __rsub__ = _binary("subtract", True)
    __mul__ = _binary("multiply")
    __rmul__ = _binary("multiply", True)
    __truediv__ = _binary("divide")
    __rtruediv__ = _binary("divide", True)
    __floordiv__ = _binary("floor_divide")
    __rfloordiv__ = _binary("floor_divide", True)
    __mod__ = _binary("remainder")
    __rmod__ = _binary("remainder", True)
    __pow__ = _binary("pow")
    __rpow__ = _binary("pow", True)
    __eq__ = _binary("equal")  # type: ignore[assignment]
    __ne__ = _binary("not_equal")  # type: ignore[assignment]
    __lt__ = _binary("less")
    __le__ = _binary("less_equal")
    __gt__ = _binary("greater")
    __ge__ = _binary("greater_equal")
    del _binary

    def __matmul__(self, other: Any) -> Array:
        if not isinstance(other, Array):
            return NotImplemented
        return apply("matmul", {}, [self, other])

    def __rmatmul__(self, other: Any) -> Array:
        if not isinstance(other, Array):
            return NotImplemented
        return apply("matmul", {}, [other, self])

    def __neg__(self) -> Array:
        return elemwise("negative", self)

    def __pos__(self) -> Array:
        return elemwise("positive", self)

    def __abs__(self) -> Array:
        return elemwise("abs", self)


# ---------------------------------------------------------------------- building arrays


def is_scalar(x: Any) -> bool:
    """Python and numpy scalars: operands combined with arrays as weak scalars."""
    return isinstance(x, (bool, int, float, complex, np.bool_, np.number))


def apply(name: str, args: dict, inputs: list[Array], spec: Spec | None = None) -> Array:
    """Run library op *name* on *inputs*; the result inherits the first input's spec."""
    if spec is None:
        spec = inputs[0].spec
    infos = _lib.op(name, args, [x._handle for x in inputs])
    return Array._new(infos[0], spec)


def elemwise(func: str, *operands: Any) -> Array:
    """The elementwise library function *func* over arrays and scalars."""
    inputs: list[Array] = []
    encoded: list[dict] = []
    for x in operands:
        if isinstance(x, Array):
            index = next((i for i, seen in enumerate(inputs) if seen is x), len(inputs))
            if index == len(inputs):
                inputs.append(x)
            encoded.append({"input": index})
        elif is_scalar(x):
            encoded.append(_lib.encode_scalar(x))
        else:
            raise TypeError(
                f"{func}: expected cubego arrays or Python/numpy scalars, got {type(x).__name__}"
            )
    if not inputs:
        raise TypeError(f"{func}: at least one operand must be a cubego Array")
    return apply("elemwise", {"func": func, "operands": encoded}, inputs)


def permute_dims(x: Array, axes: tuple[int, ...]) -> Array:
    return apply("permute_dims", {"axes": [operator.index(a) for a in axes]}, [x])


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
            raise IndexError("indexing with arrays is not supported by cubego")
        else:
            try:
                encoded.append({"int": operator.index(k)})
            except TypeError:
                raise IndexError(
                    "only integers, slices (`:`), ellipsis (`...`) and None (`newaxis`) are "
                    f"valid indices, got {type(k).__name__}"
                ) from None
    return encoded


def _restore_array(graph: str, spec: Any) -> Array:
    """Unpickle an array: rebuild its graph in this process's library."""
    (info,) = _lib.arrays_from_json(graph)
    return Array._new(info, spec)
