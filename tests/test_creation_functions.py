"""eye, linspace, meshgrid, tril, triu, from_dlpack; DLPack export and devices."""

from __future__ import annotations

import numpy as np
import pytest

import cubego

from helpers import assert_matches, make_data

SPEC = cubego.Spec(allowed_mem="100MB")


@pytest.mark.parametrize(
    ("n", "m", "k"), [(4, None, 0), (3, 5, 1), (5, 3, -2), (3, 3, 7), (0, 2, 0)]
)
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "complex64"])
def test_eye(n, m, k, dtype):
    x = cubego.eye(n, m, k=k, dtype=dtype, chunks=2, spec=SPEC)
    assert_matches(x, np.eye(n, m, k=k, dtype=dtype))
    assert all(c <= 2 for c in x.chunksize)


@pytest.mark.parametrize("k", [2**63, -(2**63) - 5, 10**30, 5, -4])
def test_eye_far_diagonals(k):
    # diagonals outside the matrix, even beyond int64, give zeros as in numpy
    assert_matches(cubego.eye(3, 4, k=k, spec=SPEC), np.eye(3, 4, k=k))


def test_eye_defaults():
    assert cubego.eye(3, spec=SPEC).dtype == cubego.float64
    assert cubego.eye(3, chunks=(1, 2), spec=SPEC).chunks == ((1, 1, 1), (2, 1))


@pytest.mark.parametrize(
    ("start", "stop", "num", "endpoint"),
    [
        (0, 1, 5, True),
        (0, 1, 5, False),
        (-3.5, 10, 7, True),
        (2, 2, 3, True),
        (0, 1, 1, True),
        (0, 1, 0, True),
        (1, 0, 4, True),
        (0, 1e-300, 3, True),
    ],
)
def test_linspace(start, stop, num, endpoint):
    x = cubego.linspace(start, stop, num, endpoint=endpoint, chunks=2, spec=SPEC)
    expected = np.linspace(start, stop, num, endpoint=endpoint)
    assert_matches(x, expected, rtol=1e-14)
    if num > 1 and endpoint:
        assert float(x[-1]) == stop


def test_linspace_dtypes():
    assert_matches(
        cubego.linspace(0, 1, 4, dtype="float32", spec=SPEC), np.linspace(0, 1, 4, dtype="float32")
    )
    z = cubego.linspace(0, 1 + 2j, 5, spec=SPEC)
    assert_matches(z, np.linspace(0, 1 + 2j, 5), rtol=1e-14)
    with pytest.raises(ValueError):
        cubego.linspace(0, 1, -1, spec=SPEC)
    with pytest.raises(TypeError):
        cubego.linspace(0, 1j, 3, dtype="float64", spec=SPEC)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(indexing):
    arrays = [np.arange(3.0), np.arange(4, dtype=np.int32), np.linspace(0, 1, 2)]
    xs = [cubego.asarray(a, chunks=2, spec=SPEC) for a in arrays]
    for n in (1, 2, 3):
        got = cubego.meshgrid(*xs[:n], indexing=indexing)
        expected = np.meshgrid(*arrays[:n], indexing=indexing)
        assert isinstance(got, tuple) and len(got) == n
        for g, e in zip(got, expected, strict=True):
            assert_matches(g, e)
    assert cubego.meshgrid() == ()
    with pytest.raises(ValueError):
        cubego.meshgrid(xs[0], indexing="xx")


@pytest.mark.parametrize("k", [0, 1, -1, 5, -5])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (2, 5, 3)])
def test_tril_triu(k, shape):
    a = make_data(shape, "int16", seed=3)
    x = cubego.asarray(a, chunks=2, spec=SPEC)
    assert_matches(cubego.tril(x, k=k), np.tril(a, k=k))
    assert_matches(cubego.triu(x, k=k), np.triu(a, k=k))
    b = a > 0
    assert_matches(cubego.tril(cubego.asarray(b, spec=SPEC), k=k), np.tril(b, k=k))
    with pytest.raises(ValueError):
        cubego.tril(cubego.ones((3,), spec=SPEC))


def test_dlpack_round_trip():
    a = make_data((3, 4), "float32", seed=4)
    x = cubego.asarray(a, chunks=2, spec=SPEC)
    assert x.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(x), a)
    y = cubego.from_dlpack(a, chunks=3, spec=SPEC)
    assert y.chunksize == (3, 3)
    assert_matches(y, a)
    assert cubego.from_dlpack(x) is x
    with pytest.raises(TypeError):
        cubego.from_dlpack([1, 2])


def test_devices():
    x = cubego.ones((2,), spec=SPEC)
    assert x.device == "cpu"
    assert x.to_device("cpu") is x
    with pytest.raises(ValueError, match="cpu"):
        x.to_device("cuda")
    info = cubego.__array_namespace_info__()
    assert info.default_device() == x.device
    assert x.device in info.devices()


def test_like_functions_keep_chunks():
    x = cubego.asarray(np.arange(10.0), chunks=3, spec=SPEC)
    for f in (cubego.zeros_like, cubego.ones_like, cubego.empty_like):
        assert f(x).chunks == x.chunks
    assert_matches(cubego.full_like(x, 2, dtype="int8"), np.full(10, 2, dtype=np.int8))
