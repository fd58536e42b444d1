"""argmax, argmin, count_nonzero, searchsorted, where, isin, sort, argsort; refusals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cubego

from helpers import REAL, assert_matches, make_data

SPEC = cubego.Spec(allowed_mem="100MB")

GRID = [
    pytest.param((7, 5), (3, 2), id="7x5-irregular"),
    pytest.param((6,), (1,), id="6-by1"),
    pytest.param((2, 3, 4), (2, 3, 4), id="2x3x4-one"),
]


def _x(shape, chunks, dtype="float64", seed=1, **kw):
    a = make_data(shape, dtype, seed=seed, **kw)
    return a, cubego.asarray(a, chunks=chunks, spec=SPEC)


@pytest.mark.parametrize(("shape", "chunks"), GRID)
@pytest.mark.parametrize("dtype", ["int8", "uint16", "float32", "float64"])
def test_argmax_argmin(shape, chunks, dtype):
    a, x = _x(shape, chunks, dtype, low=0, high=4)  # ties: the first index wins
    results, expected = [], []
    for func in ("argmax", "argmin"):
        for axis in [None, *range(a.ndim)]:
            for keepdims in (False, True):
                results.append(getattr(cubego, func)(x, axis=axis, keepdims=keepdims))
                expected.append(getattr(np, func)(a, axis=axis, keepdims=keepdims))
    for got, want in zip(cubego.compute(*results), expected, strict=True):
        assert_matches(got, np.asarray(want))


def test_argmax_nan_and_empty():
    a = np.array([[1.0, np.nan, 3.0], [2.0, 0.0, -1.0]])
    x = cubego.asarray(a, chunks=1, spec=SPEC)
    assert_matches(cubego.argmax(x, axis=1), np.argmax(a, axis=1))
    assert_matches(cubego.argmin(x), np.argmin(a))
    assert_matches(cubego.argmax(cubego.zeros((0, 3), spec=SPEC), axis=1), np.zeros(0, np.int64))
    with pytest.raises(ValueError):
        cubego.argmax(cubego.zeros((0, 3), spec=SPEC), axis=0)


@pytest.mark.parametrize(("shape", "chunks"), GRID)
def test_count_nonzero(shape, chunks):
    a, x = _x(shape, chunks, "int32", low=0, high=2)
    for axis in [None, 0, -1, tuple(range(a.ndim))]:
        for keepdims in (False, True):
            got = cubego.count_nonzero(x, axis=axis, keepdims=keepdims)
            assert_matches(
                got, np.asarray(np.count_nonzero(a, axis=axis, keepdims=keepdims), np.int64)
            )
    f = np.array([0.0, -0.0, np.nan, 1.0])
    assert int(cubego.count_nonzero(cubego.asarray(f, spec=SPEC))) == 2


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_searchsorted(side, dtype):
    a = np.sort(make_data((11,), dtype, seed=2))
    v = make_data((4, 3), dtype, seed=3)
    x1 = cubego.asarray(a, chunks=3, spec=SPEC)
    x2 = cubego.asarray(v, chunks=2, spec=SPEC)
    assert_matches(cubego.searchsorted(x1, x2, side=side), np.searchsorted(a, v, side=side))
    assert_matches(
        cubego.searchsorted(x1, 0, side=side), np.asarray(np.searchsorted(a, 0, side=side))
    )
    unsorted = make_data((9,), dtype, seed=4)
    sorter = np.argsort(unsorted, kind="stable")
    got = cubego.searchsorted(
        cubego.asarray(unsorted, chunks=4, spec=SPEC),
        x2,
        side=side,
        sorter=cubego.asarray(sorter, spec=SPEC),
    )
    assert_matches(got, np.searchsorted(unsorted, v, side=side, sorter=sorter))
    with pytest.raises(ValueError):
        cubego.searchsorted(x1, x2, side="middle")


def test_where_scalars_and_broadcasting():
    c = np.array([[True, False, True]])
    a = make_data((2, 3), "float32", seed=5)
    cond = cubego.asarray(c, spec=SPEC)
    x = cubego.asarray(a, chunks=1, spec=SPEC)
    assert_matches(cubego.where(cond, x, 0), np.where(c, a, np.float32(0)))
    assert_matches(cubego.where(cond, 1.5, x), np.where(c, np.float32(1.5), a))
    with pytest.raises(TypeError, match="At least one of x1 and x2 must be an array"):
        cubego.where(cond, 1, 2)  # the standard (and Cubed): one of them must be an array
    with pytest.raises(TypeError):
        cubego.where(cubego.asarray(a, spec=SPEC), x, x)


@pytest.mark.parametrize("invert", [False, True])
def test_isin(invert):
    a, x = _x((6, 4), (4, 3), "int16", seed=6)
    t = make_data((5,), "int16", seed=7)
    y = cubego.asarray(t, chunks=2, spec=SPEC)
    assert_matches(cubego.isin(x, y, invert=invert), np.isin(a, t, invert=invert))
    assert_matches(cubego.isin(x, 3, invert=invert), np.isin(a, 3, invert=invert))
    assert_matches(cubego.isin(2, y, invert=invert), np.asarray(np.isin(2, t, invert=invert)))
    f = np.array([np.nan, 0.0, -0.0, 1.0])
    fx = cubego.asarray(f, spec=SPEC)
    assert_matches(cubego.isin(fx, fx), np.isin(f, f))


@pytest.mark.parametrize(("shape", "chunks"), GRID)
@pytest.mark.parametrize("dtype", REAL)
def test_sort_argsort(shape, chunks, dtype):
    a, x = _x(shape, chunks, dtype, low=0, high=3)  # many ties: stability matters
    results, expected = [], []
    for axis in range(-a.ndim, a.ndim):
        results.append(cubego.sort(x, axis=axis))
        expected.append(np.sort(a, axis=axis, kind="stable"))
        results.append(cubego.argsort(x, axis=axis))
        expected.append(np.argsort(a, axis=axis, kind="stable"))
        results.append(cubego.sort(x, axis=axis, descending=True))
        expected.append(np.flip(np.sort(a, axis=axis, kind="stable"), axis=axis))
        # Descending and stable: ties keep their order (numpy's stable sort of -a for ints).
        if np.dtype(dtype).kind == "i":
            results.append(cubego.argsort(x, axis=axis, descending=True))
            expected.append(np.argsort(-a.astype(np.int64), axis=axis, kind="stable"))
    for got, want in zip(cubego.compute(*results), expected, strict=True):
        assert_matches(got, want)


def test_sort_special_values():
    a = np.array([3.0, np.nan, -np.inf, 0.0, -0.0, np.inf, -1.0, np.nan])
    x = cubego.asarray(a, chunks=3, spec=SPEC)
    np.testing.assert_array_equal(cubego.sort(x).compute(), np.sort(a))
    np.testing.assert_array_equal(cubego.argsort(x).compute(), np.argsort(a, kind="stable"))


def test_data_dependent_shapes_are_refused():
    x = cubego.ones((3,), spec=SPEC)
    for func in (
        cubego.nonzero,
        cubego.unique_all,
        cubego.unique_counts,
        cubego.unique_inverse,
        cubego.unique_values,
    ):
        with pytest.raises(NotImplementedError, match="depend"):
            func(x)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_sort_hypothesis(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 7), min_size=1, max_size=3)))
    chunks = tuple(data.draw(st.integers(1, n)) for n in shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = make_data(shape, "float32", seed=data.draw(st.integers(0, 5)))
    a[a > 1] = np.nan
    x = cubego.asarray(a, chunks=chunks, spec=SPEC)
    got_sorted, got_order = cubego.compute(cubego.sort(x, axis=axis), cubego.argsort(x, axis=axis))
    np.testing.assert_array_equal(got_sorted, np.sort(a, axis=axis))
    np.testing.assert_array_equal(got_order, np.argsort(a, axis=axis, kind="stable"))
