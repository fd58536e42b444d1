"""The data types of cubego: numpy dtypes, named as the library names them.

The Array API's dtypes are the only ones the engine knows; every other numpy
dtype (float16, strings, objects, datetimes, structured) is refused with a
``TypeError`` that names it.
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
