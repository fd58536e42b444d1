"""can_cast, finfo, iinfo, isdtype, result_type and __array_namespace_info__."""

from __future__ import annotations

import numpy as np
import pytest

import cubego

from helpers import ALL

SPEC = cubego.Spec(allowed_mem="100MB")
DTYPES = [np.dtype(d) for d in ALL]


def _library_dtype(*operands) -> np.dtype:
    """The dtype the library gives when it promotes the operands (its where op)."""
    cond = cubego.ones((), dtype=cubego.bool, spec=SPEC)
    return cubego.where(cond, *operands).dtype


@pytest.mark.parametrize("a", DTYPES, ids=str)
def test_result_type_matches_the_library(a):
    x = cubego.ones((1,), dtype=a, spec=SPEC)
    for b in DTYPES:
        y = cubego.ones((1,), dtype=b, spec=SPEC)
        assert cubego.result_type(a, b) == _library_dtype(x, y), (a, b)
        assert cubego.result_type(x, b) == cubego.result_type(b, x)
    for scalar in (True, 3, 2.5, 1j):
        if a.kind == "b" and isinstance(scalar, complex):
            continue
        assert cubego.result_type(x, scalar) == _library_dtype(x, scalar), (a, scalar)


def test_result_type_of_several_and_errors():
    assert cubego.result_type(cubego.int8, cubego.uint8, cubego.float32) == cubego.float32
    assert cubego.result_type(cubego.int64, cubego.uint64) == cubego.float64
    assert cubego.result_type(cubego.float32, 1.0, 2) == cubego.float32
    with pytest.raises(ValueError):
        cubego.result_type(1, 2.0)
    with pytest.raises(TypeError):
        cubego.result_type("float64", np.float16)


@pytest.mark.parametrize("a", DTYPES, ids=str)
def test_can_cast_matches_numpy_safe_casting(a):
    for b in DTYPES:
        assert cubego.can_cast(a, b) == np.can_cast(a, b, "safe"), (a, b)
    assert cubego.can_cast(cubego.ones((1,), dtype=a, spec=SPEC), a)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_finfo(dtype):
    info = cubego.finfo(dtype)
    real = np.finfo(dtype)
    assert (info.bits, info.eps, info.max, info.min, info.smallest_normal) == (
        real.bits,
        float(real.eps),
        float(real.max),
        float(real.min),
        float(real.smallest_normal),
    )
    assert info.dtype == np.dtype("float32" if dtype in ("float32", "complex64") else "float64")
    assert info.dtype.kind == "f"
    assert cubego.finfo(cubego.ones((1,), dtype=dtype, spec=SPEC)) == info
    with pytest.raises(TypeError):
        cubego.finfo(cubego.int8)


@pytest.mark.parametrize(
    "dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
)
def test_iinfo(dtype):
    info = cubego.iinfo(dtype)
    assert (info.bits, info.min, info.max, info.dtype) == (
        np.iinfo(dtype).bits,
        int(np.iinfo(dtype).min),
        int(np.iinfo(dtype).max),
        np.dtype(dtype),
    )
    with pytest.raises(TypeError):
        cubego.iinfo(cubego.float32)


KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_isdtype(dtype):
    for kind, letters in KINDS.items():
        assert cubego.isdtype(dtype, kind) == (dtype.kind in letters)
    assert cubego.isdtype(dtype, dtype)
    assert cubego.isdtype(dtype, ("bool", "numeric"))
    with pytest.raises(ValueError):
        cubego.isdtype(dtype, "floating")


def test_namespace_info():
    info = cubego.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] is False and caps["data-dependent shapes"] is False
    assert info.devices() == ("cpu",)
    defaults = info.default_dtypes()
    assert defaults["real floating"] == cubego.float64 and defaults["indexing"] == cubego.int64
    assert list(info.dtypes()) == [d.name for d in DTYPES]
    assert set(info.dtypes(kind="integral")) == {
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
    }
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {
        "bool",
        "complex64",
        "complex128",
    }
    with pytest.raises(ValueError):
        info.dtypes(kind="float")
    with pytest.raises(ValueError):
        info.dtypes(device="gpu")


def test_namespace_versions_and_constants():
    x = cubego.ones((1,), spec=SPEC)
    assert x.__array_namespace__() is cubego
    assert x.__array_namespace__(api_version="2025.12") is cubego
    assert cubego.array_api.__array_api_version__ == "2025.12"
    assert cubego.e == np.e and cubego.pi == np.pi and cubego.newaxis is None
    assert np.isnan(cubego.nan) and cubego.inf == np.inf
    import cubego.array_api.linalg as linalg

    assert linalg.svd is cubego.linalg.svd
