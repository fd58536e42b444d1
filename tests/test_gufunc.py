"""apply_gufunc against dask.array.apply_gufunc: core dimensions, axes, several outputs."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest

import cubego

RNG = np.random.default_rng(3)
A = RNG.standard_normal((6, 5, 4))
V = RNG.standard_normal((4,))


@pytest.fixture
def x(spec):
    return cubego.asarray(A, chunks=(2, 3, 4), spec=spec)


@pytest.fixture
def dx():
    return da.from_array(A, chunks=(2, 3, 4))


def both(ours, theirs):
    np.testing.assert_allclose(ours.compute(), theirs.compute())
    assert ours.shape == theirs.shape and ours.chunks == theirs.chunks


def test_reduce_core_dimension(x, dx):
    f = lambda a: a.mean(axis=-1)  # noqa: E731
    both(
        cubego.apply_gufunc(f, "(i)->()", x, output_dtypes=float),
        da.apply_gufunc(f, "(i)->()", dx, output_dtypes=float),
    )


def test_two_core_dimensions_and_two_inputs(spec, x, dx):
    v = cubego.asarray(V, spec=spec)
    both(
        cubego.apply_gufunc(
            np.matmul, "(i,j),(j)->(i)", x.rechunk((2, 5, 4)), v, output_dtypes=float
        ),
        da.apply_gufunc(
            np.matmul,
            "(i,j),(j)->(i)",
            dx.rechunk((2, 5, 4)),
            da.from_array(V),
            output_dtypes=float,
        ),
    )


def test_core_output_dimensions(x, dx):
    f = lambda a: np.swapaxes(a, -1, -2)  # noqa: E731
    y, z = x.rechunk((2, 5, 4)), dx.rechunk((2, 5, 4))
    both(
        cubego.apply_gufunc(f, "(i,j)->(j,i)", y, output_dtypes=float),
        da.apply_gufunc(f, "(i,j)->(j,i)", z, output_dtypes=float),
    )
    g = lambda a: a[..., None] * np.arange(3)  # noqa: E731
    both(
        cubego.apply_gufunc(g, "(i)->(i,k)", x, output_dtypes=float, output_sizes={"k": 3}),
        da.apply_gufunc(g, "(i)->(i,k)", dx, output_dtypes=float, output_sizes={"k": 3}),
    )


def test_several_outputs(x, dx):
    def stats(a):
        return a.mean(axis=-1), a - a.mean(axis=-1, keepdims=True), (a > 0).sum(axis=-1)

    ours = cubego.apply_gufunc(stats, "(i)->(),(i),()", x, output_dtypes=(float, float, np.int64))
    theirs = da.apply_gufunc(stats, "(i)->(),(i),()", dx, output_dtypes=(float, float, np.int64))
    assert len(ours) == 3
    for o, t in zip(ours, theirs, strict=True):
        both(o, t)
        assert o.dtype == t.dtype
    # the function runs once per block for all outputs
    assert [op.func for op in cubego.plan(*ours).ops].count("apply_gufunc") == 1


def test_axes_axis_keepdims(x, dx):
    f = lambda a: a.max(axis=-1)  # noqa: E731
    y = x.rechunk((6, 3, 2))
    z = dx.rechunk((6, 3, 2))
    both(
        cubego.apply_gufunc(f, "(i)->()", y, axis=0, output_dtypes=float),
        da.apply_gufunc(f, "(i)->()", z, axis=0, output_dtypes=float),
    )
    both(
        cubego.apply_gufunc(f, "(i)->()", y, axes=[(0,)], output_dtypes=float, keepdims=True),
        da.apply_gufunc(f, "(i)->()", z, axes=[(0,)], output_dtypes=float, keepdims=True),
    )
    g = lambda a: np.cumsum(a, axis=-1)  # noqa: E731
    both(
        cubego.apply_gufunc(g, "(i)->(i)", y, axes=[(0,), (0,)], output_dtypes=float),
        da.apply_gufunc(g, "(i)->(i)", z, axes=[(0,), (0,)], output_dtypes=float),
    )


def test_vectorize(x, dx):
    def scalar(a):
        return float(a) ** 2 if a > 0 else 0.0

    both(
        cubego.apply_gufunc(scalar, "()->()", x, vectorize=True, output_dtypes=float),
        da.apply_gufunc(scalar, "()->()", dx, vectorize=True, output_dtypes=float),
    )


def test_core_dimension_chunks(spec):
    x = cubego.asarray(A, chunks=(2, 3, 2), spec=spec)
    with pytest.raises(ValueError, match="consists of multiple chunks"):
        cubego.apply_gufunc(lambda a: a.sum(-1), "(i)->()", x, output_dtypes=float)
    y = cubego.apply_gufunc(
        lambda a: a.sum(-1), "(i)->()", x, output_dtypes=float, allow_rechunk=True
    )
    np.testing.assert_allclose(y.compute(), A.sum(-1))


def test_broadcast_loop_dimensions(spec):
    a = RNG.standard_normal((3, 1, 4))
    b = RNG.standard_normal((5, 4))
    f = lambda p, q: (p * q).sum(-1)  # noqa: E731
    ours = cubego.apply_gufunc(
        f,
        "(i),(i)->()",
        cubego.asarray(a, chunks=(1, 1, 4), spec=spec),
        cubego.asarray(b, chunks=(2, 4), spec=spec),
        output_dtypes=float,
    )
    theirs = da.apply_gufunc(
        f,
        "(i),(i)->()",
        da.from_array(a, chunks=(1, 1, 4)),
        da.from_array(b, chunks=(2, 4)),
        output_dtypes=float,
    )
    both(ours, theirs)


def test_bad_signatures(x):
    with pytest.raises(ValueError, match="Not a valid gufunc signature"):
        cubego.apply_gufunc(np.sum, "(i->()", x)
    with pytest.raises(ValueError, match="requires 2 arguments"):
        cubego.apply_gufunc(np.add, "(),()->()", x)
