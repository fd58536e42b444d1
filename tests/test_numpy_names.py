"""Functions beyond the standard that xarray calls on the namespace, against numpy:
einsum, quantile/nanquantile/median, lib.stride_tricks.sliding_window_view,
round with decimals, isin with lists, numpy's names (transpose, cumsum, ...),
ddof, the inline repr, and pickling with dill."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view as np_sliding_window_view

import cubego

SPEC = cubego.Spec(allowed_mem="100MB")
RNG = np.random.default_rng(7)
A = RNG.random((4, 5, 6))
B = RNG.random((6, 3))
C = RNG.random((4, 5, 6))
D = RNG.random(5)
E = RNG.random((1, 5, 6))


def arr(data, chunks=2):
    return cubego.asarray(data, chunks=chunks, spec=SPEC)


@pytest.mark.parametrize(
    "subscripts, operands",
    [
        ("ijk,kl->ijl", (A, B)),
        ("ijk,ijk->ij", (A, C)),
        ("ijk,ijk->", (A, C)),
        ("ijk,ijk", (A, C)),
        ("ijk,kl", (A, B)),
        ("...k,...k->...", (A, C)),
        ("...jk,...jk->...j", (E, A)),
        ("ijk->kji", (A,)),
        ("ijk->", (A,)),
        ("ijk", (A,)),
        ("ijk,j->ik", (A, D)),
        ("ijk,ijk,j->i", (A, C, D)),
        ("i,j->ij", (D, D[:3])),
    ],
)
@pytest.mark.parametrize("chunks", [1, 2, 3, -1])
def test_einsum(subscripts, operands, chunks):
    got = cubego.einsum(subscripts, *(arr(x, chunks) for x in operands)).compute()
    expected = np.einsum(subscripts, *operands)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize(
    "subscripts, operands, error",
    [
        ("ii->i", (np.eye(3),), NotImplementedError),
        ("ij,jk->ik", (A[0], A[0]), ValueError),  # j is 6 in one operand and 4 in the other
        ("ij->k", (A[0],), ValueError),
        ("ij,jk", (A[0],), ValueError),
        ("i1", (D,), ValueError),
        ("ijk->ii", (A,), ValueError),
    ],
)
def test_einsum_errors(subscripts, operands, error):
    with pytest.raises(error):
        cubego.einsum(subscripts, *(arr(x) for x in operands))


DATA = RNG.random((7, 9, 5))
DATA_NAN = DATA.copy()
DATA_NAN[DATA_NAN < 0.15] = np.nan
DATA_NAN[:, 0, 0] = np.nan  # an all-NaN lane


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("axis", [0, -1, (1, 2), None])
@pytest.mark.parametrize("q", [0.0, 0.3, 1.0, [0.1, 0.5, 0.9]])
def test_quantile(method, axis, q):
    x = arr(DATA, (3, 4, 2))
    got = cubego.quantile(x, q, axis=axis, method=method).compute()
    np.testing.assert_allclose(got, np.quantile(DATA, q, axis=axis, method=method))
    got = cubego.quantile(x, q, axis=axis, method=method, keepdims=True).compute()
    np.testing.assert_allclose(got, np.quantile(DATA, q, axis=axis, method=method, keepdims=True))


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("axis", [0, (0, 2), None])
def test_nanquantile_and_nan_lanes(method, axis):
    x = arr(DATA_NAN, (3, 4, 2))
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning) if axis == 0 else _nothing():
        expected = np.nanquantile(DATA_NAN, [0.25, 0.5], axis=axis, method=method)
    got = cubego.nanquantile(x, [0.25, 0.5], axis=axis, method=method).compute()
    np.testing.assert_allclose(got, expected, equal_nan=True)
    # quantile itself gives NaN for any lane holding a NaN, as numpy does
    got = cubego.quantile(x, 0.5, axis=axis, method=method).compute()
    np.testing.assert_allclose(
        got, np.quantile(DATA_NAN, 0.5, axis=axis, method=method), equal_nan=True
    )


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_median_and_integers():
    ints = RNG.integers(0, 100, (6, 8))
    np.testing.assert_allclose(
        cubego.median(arr(ints, 3), axis=0).compute(), np.median(ints, axis=0)
    )
    np.testing.assert_allclose(cubego.median(arr(DATA)).compute(), np.median(DATA))


@pytest.mark.parametrize(
    "q, kwargs, error",
    [
        (1.5, {}, ValueError),
        (-0.1, {}, ValueError),
        ([[0.5]], {}, ValueError),
        (0.5, {"method": "hazen"}, ValueError),
        (0.5, {"axis": 3}, ValueError),
    ],
)
def test_quantile_errors(q, kwargs, error):
    with pytest.raises(error):
        cubego.quantile(arr(DATA), q, **kwargs)


def test_quantile_refuses_lanes_over_budget():
    big = cubego.ones((4000, 4000), chunks=(1000, 1000), spec=cubego.Spec(allowed_mem="50MB"))
    with pytest.raises(ValueError):
        cubego.quantile(big, 0.5, axis=0).compute()


@pytest.mark.parametrize(
    "window, axis",
    [(3, 1), (6, 0), ((2, 3), (0, 1)), (4, -1), ((2, 2), None), (1, 0), (10, 1)],
)
@pytest.mark.parametrize("chunks", [(4, 3), (1, 1), (6, 10)])
def test_sliding_window_view(window, axis, chunks):
    data = np.arange(60.0).reshape(6, 10)
    got = cubego.lib.stride_tricks.sliding_window_view(arr(data, chunks), window, axis)
    np.testing.assert_array_equal(got.compute(), np_sliding_window_view(data, window, axis))


def test_rolling_mean_as_xarray_computes_it():
    # xarray: pad with NaN on the left, take windows, then a NaN-aware mean
    data = RNG.random((12, 4))
    x = cubego.pad(arr(data, (5, 2)), ((2, 0), (0, 0)), mode="constant", constant_values=np.nan)
    windows = cubego.lib.stride_tricks.sliding_window_view(x, 3, axis=0)
    got = cubego.nanmean(windows, axis=-1).compute()
    padded = np.pad(data, ((2, 0), (0, 0)), constant_values=np.nan)
    with np.errstate(all="ignore"):
        expected = np.nanmean(np_sliding_window_view(padded, 3, axis=0), axis=-1)
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("window, axis", [(11, 1), (-1, 0), ((2, 2), 0), (2, 5)])
def test_sliding_window_view_errors(window, axis):
    with pytest.raises(ValueError):
        cubego.lib.stride_tricks.sliding_window_view(arr(np.ones((6, 10))), window, axis)


@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 3])
def test_round_decimals(decimals):
    floats = np.array([1.2345, -5.6789, 2.5, -3.5, 1234.5678, 0.125])
    ints = np.array([15, 25, -35, 1234, 0])
    np.testing.assert_array_equal(
        cubego.round(arr(floats), decimals).compute(), np.round(floats, decimals)
    )
    np.testing.assert_array_equal(arr(floats).round(decimals).compute(), floats.round(decimals))
    np.testing.assert_array_equal(
        cubego.round(arr(ints), decimals).compute(), np.round(ints, decimals)
    )


def test_isin_with_lists_and_numpy_arrays():
    data = np.arange(12).reshape(3, 4)
    for test in ([1, 5, 11], np.array([0, 3]), (2,), []):
        np.testing.assert_array_equal(cubego.isin(arr(data), test).compute(), np.isin(data, test))
    with pytest.raises(TypeError):
        cubego.isin(arr(data), {1, 2})


def test_numpy_names():
    x = arr(A)
    np.testing.assert_array_equal(cubego.transpose(x).compute(), np.transpose(A))
    np.testing.assert_array_equal(cubego.transpose(x, (1, 0, 2)).compute(), A.transpose(1, 0, 2))
    np.testing.assert_allclose(cubego.cumsum(x, axis=1).compute(), np.cumsum(A, axis=1))
    np.testing.assert_allclose(cubego.cumsum(x).compute(), np.cumsum(A))
    np.testing.assert_allclose(cubego.cumprod(x, axis=0).compute(), np.cumprod(A, axis=0))
    np.testing.assert_array_equal(
        cubego.concatenate([x, x], axis=2).compute(), np.concatenate([A, A], axis=2)
    )
    v, w = RNG.random((4, 3)), RNG.random((4, 3))
    np.testing.assert_allclose(cubego.cross(arr(v), arr(w)).compute(), np.cross(v, w))
    np.testing.assert_allclose(cubego.std(x, axis=0, ddof=1).compute(), np.std(A, axis=0, ddof=1))
    np.testing.assert_allclose(cubego.var(x, ddof=2).compute(), np.var(A, ddof=2))


def test_inline_repr():
    x = arr(np.ones((10, 4)), (3, 4))
    assert x._repr_inline_(100) == "cubego.Array<chunksize=(3, 4)>"
    assert x._repr_inline_(12) == "cubego.Ar..."
    assert len(x._repr_inline_(12)) == 12


@pytest.mark.parametrize("module", ["pickle", "dill"])
def test_pickles_without_computing(module, monkeypatch):
    dumps = pytest.importorskip(module)
    x = cubego.einsum("ij,jk->ik", arr(A[0]), arr(B))

    def refuse(*args, **kwargs):
        raise AssertionError("pickling computed the array")

    monkeypatch.setattr("cubego.core.compute.run", refuse)
    restored = dumps.loads(dumps.dumps(x))
    monkeypatch.undo()
    np.testing.assert_allclose(restored.compute(), A[0] @ B)
    assert pickle.loads(pickle.dumps(restored)).shape == (5, 3)
