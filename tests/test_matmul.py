"""matmul against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import cubego

from helpers import assert_matches, make_data

CASES = [
    pytest.param((4, 4), (2, 2), (4, 4), (2, 2), id="4x4-by2"),
    pytest.param((5, 7), (2, 3), (7, 3), (3, 2), id="irregular"),
    pytest.param((3, 4), (1, 1), (4, 2), (1, 1), id="one-element-chunks"),
    pytest.param((6, 5), (6, 5), (5, 4), (5, 4), id="one-chunk"),
    pytest.param((7, 9), (3, 4), (9, 2), (2, 1), id="unaligned-inner-chunks"),
    pytest.param((1, 3), (1, 2), (3, 1), (2, 1), id="row-times-column"),
    pytest.param((0, 3), (1, 2), (3, 4), (2, 2), id="zero-rows"),
    pytest.param((3, 0), (2, 1), (0, 4), (1, 2), id="zero-inner"),
    pytest.param((5,), (2,), (5,), (3,), id="vector-vector"),
    pytest.param((5,), (2,), (5, 3), (2, 2), id="vector-matrix"),
    pytest.param((4, 5), (3, 2), (5,), (3,), id="matrix-vector"),
    pytest.param((2, 3, 4), (1, 2, 2), (2, 4, 5), (1, 2, 3), id="stack"),
    pytest.param((2, 3, 4), (1, 2, 2), (4, 5), (2, 3), id="stack-broadcast"),
    pytest.param((3, 1, 2, 4), (1, 1, 2, 2), (2, 4, 3), (1, 3, 2), id="batch-broadcast"),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int64", "uint8", "complex128"])
@pytest.mark.parametrize(("shape1", "chunks1", "shape2", "chunks2"), CASES)
def test_matmul(spec, shape1, chunks1, shape2, chunks2, dtype):
    a = make_data(shape1, dtype, seed=1, low=0, high=3)
    b = make_data(shape2, dtype, seed=2, low=0, high=3)
    x = cubego.asarray(a, chunks=chunks1, spec=spec)
    y = cubego.asarray(b, chunks=chunks2, spec=spec)
    assert_matches(cubego.matmul(x, y), np.matmul(a, b), rtol=1e-4 if dtype == "float32" else 1e-10)
    assert_matches(x @ y, a @ b, rtol=1e-4 if dtype == "float32" else 1e-10)


def test_matmul_promotes(spec):
    a = make_data((3, 4), "float32", seed=3)
    b = make_data((4, 2), "float64", seed=4)
    x = cubego.asarray(a, chunks=2, spec=spec)
    y = cubego.asarray(b, chunks=2, spec=spec)
    assert_matches(x @ y, a @ b)


def test_matmul_of_expressions(spec):
    a = make_data((8, 6), "float64", seed=5)
    b = make_data((6, 5), "float64", seed=6)
    x = cubego.asarray(a, chunks=(3, 4), spec=spec)
    y = cubego.asarray(b, chunks=(4, 2), spec=spec)
    assert_matches(cubego.sum((x + 1) @ (y * 2), axis=0), np.sum((a + 1) @ (b * 2), axis=0))


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize(("shape", "chunks"), [((7, 5), (3, 2)), ((9, 9), (9, 4)), ((10, 3), (4, 3))])
@pytest.mark.parametrize("stored", [False, True])
def test_product_with_own_transpose(spec, tmp_path, shape, chunks, dtype, stored):
    # a @ a.T and a.T @ a compute the blocks above the diagonal once and
    # mirror them: the full product, exactly symmetric as numpy's.
    a = make_data(shape, dtype, seed=7)
    x = cubego.asarray(a, chunks=chunks, spec=spec)
    if stored:
        cubego.to_zarr(x, str(tmp_path / "a.zarr"))
        x = cubego.from_zarr(str(tmp_path / "a.zarr"), spec=spec)
    rtol = 1e-4 if dtype == "float32" else 1e-10
    for got, want in [(x @ x.T, a @ a.T), (x.T @ x, a.T @ a), (cubego.matmul(x, x.mT), a @ a.T)]:
        r = got.compute()
        np.testing.assert_allclose(r, want, rtol=rtol, atol=rtol)
        assert np.array_equal(r, r.T)
    assert_matches(cubego.sum(x @ x.T, axis=1), np.sum(a @ a.T, axis=1), rtol=rtol)


@pytest.mark.parametrize(
    ("shape1", "shape2"),
    [((3, 4), (5, 2)), ((4,), (3,)), ((2, 3, 4), (3, 4, 5)), ((), (3,)), ((3,), ())],
)
def test_matmul_shape_mismatch(spec, shape1, shape2):
    x = cubego.ones(shape1, spec=spec)
    y = cubego.ones(shape2, spec=spec)
    with pytest.raises(ValueError):
        cubego.matmul(x, y)


def test_matmul_needs_arrays(spec):
    with pytest.raises(TypeError):
        cubego.matmul(cubego.ones((2, 2), spec=spec), np.ones((2, 2)))


@pytest.mark.parametrize("axes", [(1, 0), ([1], 0), (1, [0]), ((1,), (0,))])
def test_tensordot_axes_as_a_pair_of_ints(axes):
    # numpy (and Cubed) accept one int per side as well as sequences.
    a = np.arange(12.0).reshape(3, 4)
    b = np.arange(20.0).reshape(4, 5)
    x = cubego.asarray(a, chunks=2)
    y = cubego.asarray(b, chunks=2)
    np.testing.assert_allclose(
        cubego.tensordot(x, y, axes=axes).compute(), np.tensordot(a, b, axes=axes)
    )
