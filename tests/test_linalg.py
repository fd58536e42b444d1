"""The linear algebra functions and the linalg extension against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cubego
from cubego import linalg

from helpers import assert_matches, make_data

SPEC = cubego.Spec(allowed_mem="100MB")


def _stack(shape, dtype, seed=1, spd=False):
    a = make_data(shape, dtype, seed=seed)
    if spd:  # symmetric (Hermitian) positive definite
        a = a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1], dtype=dtype)
    return a


def _x(a, chunks=2):
    return cubego.asarray(a, chunks=chunks, spec=SPEC)


DTYPES = ["float64", "float32", "complex128", "complex64"]


def _rtol(dtype):
    return 2e-3 if dtype in ("float32", "complex64") else 1e-8


# ---------------------------------------------------------------------- main namespace


@pytest.mark.parametrize(
    ("s1", "s2"),
    [((3, 4), (4, 2)), ((4,), (4, 3)), ((2, 3, 4), (4,)), ((2, 1, 3, 4), (5, 4, 2)), ((5,), (5,))],
)
def test_matmul(s1, s2):
    a, b = make_data(s1, "float64", seed=1), make_data(s2, "float64", seed=2)
    assert_matches(cubego.matmul(_x(a), _x(b, 3)), np.matmul(a, b))
    assert_matches(linalg.matmul(_x(a), _x(b)), np.matmul(a, b))


def test_matrix_transpose():
    a = make_data((2, 3, 4), "int32")
    assert_matches(cubego.matrix_transpose(_x(a)), np.swapaxes(a, -1, -2))
    assert_matches(_x(a).mT, np.swapaxes(a, -1, -2))
    assert_matches(_x(a[0]).T, a[0].T)
    with pytest.raises(ValueError):
        cubego.matrix_transpose(_x(a[0, 0]))


@pytest.mark.parametrize(
    ("s1", "s2", "axes"),
    [
        ((3, 4, 5), (4, 5, 2), 2),
        ((3, 4), (4, 2), 1),
        ((3,), (4,), 0),
        ((3, 4, 5), (5, 3), ([0, 2], [1, 0])),
        ((2, 3), (3, 2), ((1,), (0,))),
    ],
)
def test_tensordot(s1, s2, axes):
    a, b = make_data(s1, "float64", seed=3), make_data(s2, "float64", seed=4)
    assert_matches(cubego.tensordot(_x(a), _x(b), axes=axes), np.tensordot(a, b, axes=axes))
    with pytest.raises(ValueError):
        cubego.tensordot(_x(a), _x(b), axes=([0], [0, 1]))


@pytest.mark.parametrize("dtype", ["int16", "float32", "complex128"])
def test_vecdot(dtype):
    a, b = make_data((3, 4), dtype, seed=5), make_data((2, 1, 4), dtype, seed=6)
    expected = np.sum(np.conj(a) * b, axis=-1)
    assert_matches(cubego.vecdot(_x(a), _x(b)), expected.astype(np.result_type(a, b)), rtol=1e-5)
    assert_matches(
        linalg.vecdot(_x(a.T), _x(a.T), axis=0),
        np.sum(np.conj(a.T) * a.T, axis=0).astype(a.dtype),
        rtol=1e-5,
    )
    with pytest.raises(ValueError):
        cubego.vecdot(_x(a), _x(b[..., :3]))


# ---------------------------------------------------------------------- compositions


def test_outer_cross_diagonal_trace():
    u, v = make_data((4,), "float64", seed=7), make_data((5,), "float64", seed=8)
    assert_matches(linalg.outer(_x(u), _x(v)), np.outer(u, v))
    p, q = make_data((2, 3), "int32", seed=9), make_data((3,), "int32", seed=10)
    assert_matches(linalg.cross(_x(p), _x(q)), np.cross(p, q))
    assert_matches(linalg.cross(_x(p.T), _x(p.T), axis=0), np.cross(p.T, p.T, axis=0))
    with pytest.raises(ValueError):
        linalg.cross(_x(u), _x(u))
    m = make_data((2, 4, 6), "float64", seed=11)
    for offset in (0, 1, 3, -2, 7, -5):
        assert_matches(linalg.diagonal(_x(m, 3), offset=offset), np.diagonal(m, offset, -2, -1))
        assert_matches(
            linalg.trace(_x(m, 3), offset=offset), np.trace(m, offset, axis1=-2, axis2=-1)
        )
    i = make_data((3, 3), "int8", seed=12)
    assert_matches(linalg.trace(_x(i)), np.trace(i).astype(np.int64))
    assert_matches(linalg.trace(_x(i), dtype="int8"), np.trace(i, dtype=np.int8))


@pytest.mark.parametrize("dtype", ["float64", "complex64"])
@pytest.mark.parametrize("ord", [2, 1, 3.5, np.inf, -np.inf, 0, -1])
def test_vector_norm(dtype, ord):
    a = make_data((3, 5, 2), dtype, seed=13)
    for axis in (None, 1, (0, 2)):
        for keepdims in (False, True):
            got = linalg.vector_norm(_x(a), axis=axis, keepdims=keepdims, ord=ord)
            expected = np.linalg.vector_norm(a, axis=axis, keepdims=keepdims, ord=ord)
            assert_matches(got, expected, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm(dtype, ord):
    a = make_data((2, 4, 3), dtype, seed=14)
    for keepdims in (False, True):
        got = linalg.matrix_norm(_x(a), ord=ord, keepdims=keepdims)
        assert_matches(got, np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims), rtol=1e-8)


def test_matrix_power_without_inverse():
    a = make_data((2, 3, 3), "float64", seed=15)
    for n in (0, 1, 2, 5):
        assert_matches(linalg.matrix_power(_x(a), n), np.linalg.matrix_power(a, n), rtol=1e-10)
    with pytest.raises(TypeError):
        linalg.matrix_power(_x(a), 1.5)


# ---------------------------------------------------------------------- whole-matrix kernels


@pytest.mark.parametrize("dtype", DTYPES)
def test_square_functions(dtype):
    a = _stack((3, 4, 4), dtype, seed=16, spd=True)
    b = make_data((3, 4, 2), dtype, seed=17)
    x = _x(a, (2, 3, 3))
    rtol = _rtol(dtype)
    results = cubego.compute(
        linalg.det(x),
        linalg.inv(x),
        linalg.solve(x, _x(b)),
        linalg.solve(x, _x(b[0, :, 0])),
        linalg.cholesky(x),
        linalg.cholesky(x, upper=True),
        *linalg.slogdet(x),
        linalg.eigvalsh(x),
        linalg.matrix_power(x, -2),
    )
    expected = [
        np.linalg.det(a),
        np.linalg.inv(a),
        np.linalg.solve(a, b),
        np.linalg.solve(a, b[0, :, 0]),
        np.linalg.cholesky(a),
        np.linalg.cholesky(a, upper=True),
        *np.linalg.slogdet(a),
        np.linalg.eigvalsh(a),
        np.linalg.matrix_power(a, -2),
    ]
    for got, want in zip(results, expected, strict=True):
        assert_matches(got, np.asarray(want), rtol=rtol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (1, 1)])
def test_decompositions(dtype, shape):
    a = make_data(shape, dtype, seed=18)
    x = _x(a)
    rtol = _rtol(dtype)
    atol = 1e-3 if dtype in ("float32", "complex64") else 1e-10
    for mode in ("reduced", "complete"):
        q, r = linalg.qr(x, mode=mode)
        nq, nr = np.linalg.qr(a, mode=mode)
        assert q.shape == nq.shape and r.shape == nr.shape and q.dtype == nq.dtype
        qv, rv = cubego.compute(q, r)
        np.testing.assert_allclose(qv @ rv, a, atol=atol)
        np.testing.assert_allclose(np.triu(rv), rv)
    for full in (False, True):
        u, s, vh = linalg.svd(x, full_matrices=full)
        nu, ns, nvh = np.linalg.svd(a, full_matrices=full)
        assert (u.shape, s.shape, vh.shape) == (nu.shape, ns.shape, nvh.shape)
        assert s.dtype == ns.dtype and u.dtype == nu.dtype
        uv, sv, vhv = cubego.compute(u, s, vh)
        np.testing.assert_allclose(sv, ns, rtol=rtol, atol=atol)
        k = sv.shape[-1]
        np.testing.assert_allclose((uv[..., :k] * sv[..., None, :]) @ vhv[..., :k, :], a, atol=atol)
    assert_matches(linalg.svdvals(x), np.linalg.svd(a, compute_uv=False), rtol=rtol)
    assert_matches(linalg.pinv(x), np.linalg.pinv(a), rtol=max(rtol, 1e-6))
    assert_matches(linalg.matrix_rank(x), np.asarray(np.linalg.matrix_rank(a)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh(dtype):
    a = _stack((2, 5, 5), dtype, seed=19, spd=True)
    w, v = linalg.eigh(_x(a, (1, 2, 3)))
    wv, vv = cubego.compute(w, v)
    np.testing.assert_allclose(wv, np.linalg.eigvalsh(a), rtol=_rtol(dtype))
    np.testing.assert_allclose(
        a @ vv,
        vv * wv[..., None, :],
        atol=1e-4 if dtype in ("float32", "complex64") else 1e-8,
    )


def _sorted_eigenvalues(w):
    return (
        np.sort_complex(np.round(w, 6))
        if w.ndim == 1
        else np.stack([_sorted_eigenvalues(r) for r in w])
    )


@pytest.mark.parametrize("dtype", DTYPES + ["int32"])
def test_eig(dtype):
    a = _stack((3, 6, 6), dtype, seed=23)  # general: complex eigenvalues for real input too
    x = _x(a, (2, 4, 3))
    w, v = linalg.eig(x)
    single = dtype in ("float32", "complex64")
    want = np.complex64 if single else np.complex128
    assert w.dtype == want and v.dtype == want
    assert w.shape == (3, 6) and v.shape == (3, 6, 6)
    wv, vv = cubego.compute(w, v)
    ref = np.linalg.eigvals(a.astype(np.complex128))
    np.testing.assert_allclose(
        _sorted_eigenvalues(wv),
        _sorted_eigenvalues(ref),
        rtol=_rtol(dtype),
        atol=1e-4 if single else 1e-9,
    )
    tol = 1e-4 if single else 1e-9
    np.testing.assert_allclose(a @ vv, vv * wv[..., None, :], atol=tol * np.abs(a).max())
    np.testing.assert_allclose(np.linalg.norm(vv, axis=-2), 1, rtol=tol)
    if dtype in ("float64", "int32"):  # LAPACK's dgeev, as numpy: the same order and vectors
        rw, rv = np.linalg.eig(a.astype(np.float64))
        np.testing.assert_allclose(wv, rw, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(vv, rv, rtol=1e-8, atol=1e-10)
    assert_matches(linalg.eigvals(x), wv, rtol=1e-12 if not single else 1e-6)


def test_eig_special_matrices():
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])
    assert_matches(linalg.eigvals(_x(rot)), np.array([1j, -1j]))
    nan = np.array([[1.0, np.nan], [0.0, 1.0]])
    assert np.isnan(
        linalg.eigvals(_x(nan)).compute()
    ).all()  # numpy raises; a stack is not held back
    assert linalg.eigvals(_x(np.zeros((0, 2, 2)))).shape == (0, 2)


def test_rank_deficient_and_singular():
    a = np.outer(np.arange(1.0, 5.0), np.arange(1.0, 4.0))  # rank one
    assert int(linalg.matrix_rank(_x(a))) == 1
    assert_matches(linalg.pinv(_x(a)), np.linalg.pinv(a), rtol=1e-8)
    assert int(linalg.matrix_rank(_x(a), rtol=0.5)) == 1
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert float(linalg.det(_x(singular))) == 0.0
    sign, logabs = linalg.slogdet(_x(singular))
    assert float(sign) == 0 and float(logabs) == -np.inf
    with pytest.raises(ValueError, match="singular"):
        linalg.inv(_x(singular)).compute()
    with pytest.raises(ValueError, match="positive definite"):
        linalg.cholesky(_x(-np.eye(2))).compute()


def test_empty_matrices():
    for shape in [(0, 3, 3), (2, 0, 0)]:
        a = np.zeros(shape)
        assert_matches(linalg.det(_x(a)), np.linalg.det(a))
        assert_matches(linalg.inv(_x(a)), np.linalg.inv(a))
        assert_matches(linalg.svdvals(_x(a)), np.linalg.svd(a, compute_uv=False))
    q, r = linalg.qr(_x(np.zeros((3, 0))), mode="complete")
    assert q.shape == (3, 3) and r.shape == (3, 0)


def test_matrices_are_gathered_within_the_memory_budget():
    a = make_data((6, 150, 150), "float64", seed=20)
    x = cubego.asarray(a, chunks=(6, 70, 90), spec=cubego.Spec(allowed_mem="2MB"))
    d = linalg.det(x)
    assert d.chunks[0] == (1,) * 6  # a batch of six matrices per task would not fit
    assert_matches(d, np.linalg.det(a), rtol=1e-8)
    big = cubego.ones((2000, 2000), chunks=500, spec=cubego.Spec(allowed_mem="10MB"))
    with pytest.raises(ValueError, match="allowed_mem"):
        linalg.inv(big)


def test_errors():
    with pytest.raises(ValueError, match="square"):
        linalg.det(_x(np.ones((2, 3))))
    with pytest.raises(ValueError, match="dimensions"):
        linalg.inv(_x(np.ones(3)))
    with pytest.raises(ValueError, match="mode"):
        linalg.qr(_x(np.ones((2, 2))), mode="r")
    with pytest.raises(ValueError, match="square"):
        linalg.eig(_x(np.ones((2, 3))))
    with pytest.raises(ValueError, match="square"):
        linalg.eigvals(_x(np.ones((3, 2))))
    with pytest.raises(ValueError):
        linalg.matrix_norm(_x(np.ones((2, 2))), ord=3)


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_batched_chunkings(data):
    batch = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    n = data.draw(st.integers(1, 5))
    shape = batch + (n, n)
    chunks = tuple(data.draw(st.integers(1, s)) for s in shape)
    a = _stack(shape, "float64", seed=data.draw(st.integers(0, 9)), spd=True)
    x = cubego.asarray(a, chunks=chunks, spec=SPEC)
    det, inv = cubego.compute(linalg.det(x), linalg.inv(x))
    np.testing.assert_allclose(det, np.linalg.det(a), rtol=1e-8)
    np.testing.assert_allclose(inv, np.linalg.inv(a), rtol=1e-8, atol=1e-12)
