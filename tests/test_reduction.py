"""Reductions (sum, prod, mean, min, max) against numpy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import cubego

from helpers import FLOATING, NUMERIC, REAL, SHAPES_CHUNKS, assert_matches, make_data

# name: (numpy function, dtypes)
REDUCTIONS = {
    "sum": (np.sum, NUMERIC),
    "prod": (np.prod, NUMERIC),
    "mean": (np.mean, FLOATING),
    "min": (np.min, REAL),
    "max": (np.max, REAL),
}


def _axes(ndim):
    """None, every single axis (positive and negative) and every pair of axes."""
    axes = [None]
    axes += list(range(ndim))
    if ndim:
        axes.append(-1)
    axes += [(i, j) for i in range(ndim) for j in range(i + 1, ndim)]
    return axes


def _cases():
    for name, (_, dtypes) in REDUCTIONS.items():
        for dtype in dtypes:
            yield pytest.param(name, dtype, id=f"{name}-{dtype}")


def _rtol(dtype):
    """Tree reductions add in a different order than numpy."""
    if np.dtype(dtype).kind not in "fc":
        return None
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


@pytest.mark.parametrize(("name", "dtype"), list(_cases()))
@pytest.mark.parametrize(("shape", "chunks"), SHAPES_CHUNKS)
def test_reduction(spec, name, dtype, shape, chunks):
    np_func, _ = REDUCTIONS[name]
    # prod: values near 1 keep products of many elements finite
    opts = {"low": 1, "high": 2} if name == "prod" else {}
    a = make_data(shape, dtype, seed=1, **opts)
    x = cubego.asarray(a, chunks=chunks, spec=spec)
    for axis in _axes(len(shape)):
        for keepdims in (False, True):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # mean of an empty slice
                try:
                    expected = np_func(a, axis=axis, keepdims=keepdims)
                except ValueError:  # min/max of empty lanes: no identity
                    with pytest.raises(ValueError):
                        getattr(cubego, name)(x, axis=axis, keepdims=keepdims).compute()
                    continue
            actual = getattr(cubego, name)(x, axis=axis, keepdims=keepdims)
            assert_matches(actual, expected, rtol=_rtol(dtype))


@pytest.mark.parametrize("name", ["sum", "mean", "min", "max", "prod"])
@pytest.mark.parametrize("split_every", [None, 2, 3, 8])
def test_split_every(spec, name, split_every):
    a = make_data((40, 30), "float64", seed=2, low=0.9, high=1.1)
    x = cubego.asarray(a, chunks=(3, 4), spec=spec)
    np_func = REDUCTIONS[name][0]
    for axis in (None, 0, 1):
        actual = getattr(cubego, name)(x, axis=axis, split_every=split_every)
        assert_matches(actual, np_func(a, axis=axis), rtol=1e-10)


@pytest.mark.parametrize(
    ("name", "dtype", "result_dtype"),
    [
        ("sum", "int8", "int64"),
        ("sum", "int32", "int64"),
        ("sum", "uint8", "uint64"),
        ("sum", "float32", "float32"),
        ("prod", "int16", "int64"),
        ("prod", "uint32", "uint64"),
        ("mean", "float32", "float32"),
        ("min", "int8", "int8"),
        ("max", "uint16", "uint16"),
    ],
)
def test_default_result_dtypes(spec, name, dtype, result_dtype):
    a = make_data((6, 5), dtype, seed=3, low=1, high=3)
    x = cubego.asarray(a, chunks=2, spec=spec)
    result = getattr(cubego, name)(x)
    assert result.dtype == np.dtype(result_dtype)
    assert_matches(result, REDUCTIONS[name][0](a), rtol=1e-5)


@pytest.mark.parametrize(
    ("name", "dtype", "result_dtype"),
    [
        ("sum", "int8", "int8"),
        ("sum", "int32", "float64"),
        ("sum", "float32", "float64"),
        ("prod", "int64", "int32"),
        ("mean", "float32", "float64"),
    ],
)
def test_dtype_argument(spec, name, dtype, result_dtype):
    a = make_data((6, 5), dtype, seed=4, low=1, high=2)
    x = cubego.asarray(a, chunks=(4, 2), spec=spec)
    result = getattr(cubego, name)(x, axis=1, dtype=result_dtype)
    expected = REDUCTIONS[name][0](a, axis=1, dtype=result_dtype)
    assert_matches(result, expected, rtol=1e-5)


@pytest.mark.parametrize("name", ["sum", "mean", "min", "max", "prod"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_and_inf(spec, name, dtype):
    a = make_data((6, 4), dtype, seed=5, low=1, high=2)
    a[1, 2] = np.nan
    a[4, 0] = np.inf
    a[3, 3] = -np.inf
    x = cubego.asarray(a, chunks=(2, 3), spec=spec)
    np_func = REDUCTIONS[name][0]
    for axis in (None, 0, 1):
        with np.errstate(all="ignore"):
            expected = np_func(a, axis=axis)
        assert_matches(getattr(cubego, name)(x, axis=axis), expected, rtol=1e-5)


def test_mean_of_empty_is_nan(spec):
    x = cubego.zeros((0, 3), chunks=2, spec=spec)
    assert_matches(cubego.mean(x, axis=0), np.full(3, np.nan))
    assert_matches(cubego.sum(x), np.float64(0).reshape(()))


def test_integer_sums_are_exact(spec):
    a = np.arange(1000, dtype=np.int64) * 1_000_003
    x = cubego.asarray(a, chunks=7, spec=spec)
    assert_matches(cubego.sum(x), np.sum(a))
    assert int(cubego.max(x)) == 999 * 1_000_003


def test_mean_is_accurate(spec):
    a = np.full(10_000, 0.1) + np.linspace(0, 1e-6, 10_000)
    x = cubego.asarray(a, chunks=33, spec=spec)
    np.testing.assert_allclose(float(cubego.mean(x)), np.mean(a), rtol=1e-14)


@pytest.mark.parametrize("axis", [2, -3, (0, 0)])
def test_invalid_axis(spec, axis):
    x = cubego.ones((3, 4), chunks=2, spec=spec)
    with pytest.raises((ValueError, IndexError)):
        cubego.sum(x, axis=axis)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64"])
def test_mean_of_integers_is_numpy_like(spec, dtype):
    a = make_data((5, 4), dtype, seed=6)
    x = cubego.asarray(a, chunks=3, spec=spec)
    assert_matches(cubego.mean(x), np.mean(a))
    assert_matches(cubego.mean(x, axis=1), np.mean(a, axis=1))
