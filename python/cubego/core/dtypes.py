"""The data types of cubego: numpy dtypes, named as the library names them.

The Array API's dtypes are the only ones the engine knows; every other numpy
dtype (float16, strings, objects, structured) is refused with a ``TypeError``
that names it. ``datetime64`` and ``timedelta64`` with a unit from weeks to
nanoseconds are stored as int64 (:func:`storage`; :mod:`cubego.core.datetimes`).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

bool = np.dtype("bool")  # noqa: A001 - the Array API name
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
uint16 = np.dtype("uint16")
uint32 = np.dtype("uint32")
uint64 = np.dtype("uint64")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")

_ALL = (
    bool,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    float32,
    float64,
    complex64,
    complex128,
)
# library name -> numpy dtype (docs/capi.md "Array results")
BY_NAME: dict[str, np.dtype] = {dt.name: dt for dt in _ALL}
SUPPORTED = ", ".join(BY_NAME)


def unsupported(dtype: Any) -> TypeError:
    return TypeError(f"cubego: unsupported dtype {dtype} (supported: {SUPPORTED})")


def normalize(dtype: Any) -> np.dtype:
    """The cubego dtype for anything ``numpy.dtype`` accepts; TypeError if unsupported."""
    if isinstance(dtype, str) and dtype in BY_NAME:
        return BY_NAME[dtype]
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"cubego: {dtype!r} is not a data type") from e
    if dt.fields is not None or dt.subdtype is not None:
        raise unsupported(dt)
    result = BY_NAME.get(dt.name)
    if result is None:
        raise unsupported(dt)
    return result


#: The datetime/timedelta units cubego computes with (fixed lengths: no years or months).
DATETIME_UNITS = ("W", "D", "h", "m", "s", "ms", "us", "ns")


def datetime_dtype(dtype: Any) -> np.dtype | None:
    """*dtype* if it is a ``datetime64``/``timedelta64`` cubego supports, None for other kinds.

    TypeError for a datetime without a unit, or in years, months or multiples
    of a unit (``datetime64[10s]``).
    """
    try:
        dt = np.dtype(dtype)
    except TypeError:
        return None
    if dt.kind not in "mM":
        return None
    unit, count = np.datetime_data(dt)
    kind = "datetime64" if dt.kind == "M" else "timedelta64"
    if unit == "generic":
        raise TypeError(f"cubego: unsupported dtype {dt}: no unit; give one, e.g. {kind}[ns]")
    if unit not in DATETIME_UNITS or count != 1:
        raise TypeError(
            f"cubego: unsupported dtype {dt}: {kind} needs a unit of "
            f"{', '.join(DATETIME_UNITS)}"
        )
    return dt.newbyteorder("=")


def storage(dtype: Any) -> np.dtype:
    """The engine's dtype for *dtype*: int64 for datetimes and timedeltas, else normalized."""
    if datetime_dtype(dtype) is not None:
        return int64
    return normalize(dtype)


def normalize_any(dtype: Any) -> np.dtype:
    """:func:`normalize`, also accepting the datetimes and timedeltas of :func:`datetime_dtype`."""
    logical = datetime_dtype(dtype) if not isinstance(dtype, str) or dtype not in BY_NAME else None
    return logical if logical is not None else normalize(dtype)


def name(dtype: Any) -> str:
    """The library's name of *dtype* (``"float64"``, ...)."""
    return normalize(dtype).name


def from_name(name: str) -> np.dtype:
    return BY_NAME[name]


def scalar_dtype(value: Any) -> np.dtype:
    """The default dtype of a Python or numpy scalar (Array API defaults)."""
    if isinstance(value, np.generic):
        return normalize(value.dtype)
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return float64
    if isinstance(value, complex):
        return complex128
    raise TypeError(f"cubego: expected a scalar, got {type(value).__name__}")
