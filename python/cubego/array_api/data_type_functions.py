"""Data type functions: ``can_cast, finfo, iinfo, isdtype, result_type``.

The promotion table is the one the library applies (``ops/dtype.go``
``ResultType`` and ``ScalarResultType``): the Array API standard's table,
extended as numpy does for mixed kinds (bool with numbers, integers with
floats, ``int64`` with ``uint64`` giving ``float64``); Python scalars are
weak (NEP 50). :func:`result_type` here and the library always agree.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

import numpy as np

from cubego.core import dtypes as _dtypes
from cubego.core.array import Array

__all__ = ["can_cast", "finfo", "finfo_object", "iinfo", "iinfo_object", "isdtype", "result_type"]

_SIGNED = (_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64)
_UNSIGNED = (_dtypes.uint8, _dtypes.uint16, _dtypes.uint32, _dtypes.uint64)
_REAL_FLOATING = (_dtypes.float32, _dtypes.float64)
_COMPLEX = (_dtypes.complex64, _dtypes.complex128)

# Array API dtype kinds (``isdtype`` and ``__array_namespace_info__().dtypes``).
KINDS: dict[str, tuple[np.dtype, ...]] = {
    "bool": (_dtypes.bool,),
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _SIGNED + _UNSIGNED,
    "real floating": _REAL_FLOATING,
    "complex floating": _COMPLEX,
    "numeric": _SIGNED + _UNSIGNED + _REAL_FLOATING + _COMPLEX,
}

_SIGNED_BY_SIZE = {1: _dtypes.int8, 2: _dtypes.int16, 4: _dtypes.int32, 8: _dtypes.int64}


def _kind(dt: np.dtype) -> str:
    return dt.kind  # "b", "i", "u", "f", "c"


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """The result dtype of two array dtypes (mirrors Go's ``ops.ResultType``)."""
    if a == b:
        return a
    order = {"b": 0, "i": 1, "u": 2, "f": 3, "c": 4}
    # Go orders dtypes bool < signed < unsigned < float < complex, by size within a kind.
    if (order[_kind(a)], a.itemsize) > (order[_kind(b)], b.itemsize):
        a, b = b, a
    ka, kb = _kind(a), _kind(b)
    if ka == "b":
        return b
    if ka == kb and ka in "iu":
        return b if b.itemsize >= a.itemsize else a
    if ka == "i" and kb == "u":
        need = builtins.max(a.itemsize, 2 * b.itemsize)
        return _dtypes.float64 if need > 8 else _SIGNED_BY_SIZE[need]
    if ka in "iu" and kb == "f":
        return _dtypes.float32 if b == _dtypes.float32 and a.itemsize <= 2 else _dtypes.float64
    if ka in "iu" and kb == "c":
        return (
            _dtypes.complex64 if b == _dtypes.complex64 and a.itemsize <= 2 else _dtypes.complex128
        )
    if ka == "f" and kb == "f":
        return _dtypes.float64
    if ka == "f" and kb == "c":
        if a == _dtypes.float64 or b == _dtypes.complex128:
            return _dtypes.complex128
        return _dtypes.complex64
    return _dtypes.complex128  # complex with complex


def promote_scalar(dt: np.dtype, value: Any) -> np.dtype:
    """The result dtype of an array of *dt* with a Python scalar (mirrors ``ScalarResultType``)."""
    if isinstance(value, (builtins.bool, np.bool_)):
        return dt
    if isinstance(value, (int, np.integer)):
        return _dtypes.int64 if dt.kind == "b" else dt
    if isinstance(value, (float, np.floating)):
        return _dtypes.float64 if dt.kind in "biu" else dt
    if isinstance(value, (complex, np.complexfloating)):
        if dt in (_dtypes.float32, _dtypes.complex64):
            return _dtypes.complex64
        return dt if dt.kind == "c" else _dtypes.complex128
    raise TypeError(f"result_type: expected an array, a dtype or a Python scalar, got {value!r}")


def _as_dtype(x: Any, what: str) -> np.dtype:
    if isinstance(x, (Array, np.ndarray, np.generic)):
        return _dtypes.normalize_any(x.dtype)
    if isinstance(x, (np.dtype, str)) or (isinstance(x, type) and issubclass(x, np.generic)):
        return _dtypes.normalize_any(x)
    raise TypeError(f"{what}: expected a cubego dtype or Array, got {x!r}")


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype that results from applying the type promotion rules to the arguments.

    Arguments are arrays, dtypes or Python scalars (weak: they promote only by
    kind); at least one must be an array or a dtype.
    """
    dtypes: list[np.dtype] = []
    scalars: list[Any] = []
    for x in arrays_and_dtypes:
        if isinstance(x, (builtins.bool, int, float, complex)) and not isinstance(x, np.generic):
            scalars.append(x)
        else:
            dtypes.append(_as_dtype(x, "result_type"))
    if not dtypes:
        raise ValueError("result_type needs at least one array or dtype")
    if builtins.any(dt.kind in "mM" for dt in dtypes):  # datetimes: numpy's rules
        try:
            return np.result_type(*dtypes, *scalars)
        except TypeError as e:
            raise TypeError(f"result_type: {e}") from None
    out = dtypes[0]
    for dt in dtypes[1:]:
        out = promote(out, dt)
    for s in scalars:
        out = promote_scalar(out, s)
    return out


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether *from_* (a dtype or array) casts to *to* by the type promotion rules."""
    f = _as_dtype(from_, "can_cast")
    t = _as_dtype(to, "can_cast")
    return f == t or promote(f, t) == t


@dataclass(frozen=True)
class finfo_object:  # noqa: N801 - the Array API name
    """Machine limits of a floating-point dtype (Array API ``finfo``)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801 - the Array API name
    """Machine limits of an integer dtype (Array API ``iinfo``)."""

    bits: int
    max: int
    min: int
    dtype: np.dtype


def finfo(type: Any, /) -> finfo_object:  # noqa: A002 - the Array API name
    """Machine limits of a floating-point dtype; for complex dtypes, of their real part."""
    dt = _as_dtype(type, "finfo")
    if dt.kind not in "fc":
        raise TypeError(f"finfo needs a floating-point dtype, got {dt}")
    info = np.finfo(dt)
    real = _dtypes.float32 if dt in (_dtypes.float32, _dtypes.complex64) else _dtypes.float64
    return finfo_object(
        bits=int(info.bits),
        eps=float(info.eps),
        max=float(info.max),
        min=float(info.min),
        smallest_normal=float(info.smallest_normal),
        dtype=real,
    )


def iinfo(type: Any, /) -> iinfo_object:  # noqa: A002 - the Array API name
    """Machine limits of an integer dtype."""
    dt = _as_dtype(type, "iinfo")
    if dt.kind not in "iu":
        raise TypeError(f"iinfo needs an integer dtype, got {dt}")
    info = np.iinfo(dt)
    return iinfo_object(bits=int(info.bits), max=int(info.max), min=int(info.min), dtype=dt)


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether *dtype* is of *kind*: a dtype, a kind name ("integral", ...) or a tuple of them."""
    dt = _as_dtype(dtype, "isdtype")
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dt, k) for k in kind)
    if isinstance(kind, str):
        if kind not in KINDS:
            raise ValueError(
                f"isdtype: unknown kind {kind!r}; expected one of {', '.join(map(repr, KINDS))}"
            )
        return dt in KINDS[kind]
    return dt == _as_dtype(kind, "isdtype")
