"""astype and rechunk against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import cubego

from helpers import ALL, SHAPES_CHUNKS, assert_matches, make_data


@pytest.mark.parametrize("to", ALL)
@pytest.mark.parametrize(
    "frm", ["bool", "int8", "uint16", "int64", "float32", "float64", "complex64"]
)
def test_astype(spec, frm, to):
    a = make_data((7, 4), frm, seed=1, low=0, high=100)
    x = cubego.asarray(a, chunks=(3, 3), spec=spec)
    if np.dtype(frm).kind == "c" and np.dtype(to).kind != "c":
        pytest.skip("complex to real casts are not defined by the Array API")
    with np.errstate(all="ignore"):
        expected = a.astype(to)
    assert_matches(cubego.astype(x, to), expected)
    assert_matches(x.astype(getattr(cubego, to)), expected)


@pytest.mark.parametrize(("shape", "chunks"), SHAPES_CHUNKS)
def test_astype_shapes(spec, shape, chunks):
    a = make_data(shape, "float64", seed=2)
    x = cubego.asarray(a, chunks=chunks, spec=spec)
    assert_matches(cubego.astype(x, cubego.float32), a.astype(np.float32))
    assert x.astype(cubego.float32).chunks == x.chunks


def test_astype_copy_and_device(spec):
    x = cubego.ones((3,), dtype=cubego.int32, spec=spec)
    assert cubego.astype(x, cubego.int32, copy=False) is x
    assert_matches(cubego.astype(x, cubego.int32), np.ones(3, dtype=np.int32))
    with pytest.raises(ValueError, match="device"):
        cubego.astype(x, cubego.int8, device="gpu")
    with pytest.raises(TypeError):
        cubego.astype(np.ones(3), cubego.int8)


@pytest.mark.parametrize(
    ("shape", "chunks", "new_chunks", "expected_chunks"),
    [
        ((10,), 3, 4, ((4, 4, 2),)),
        ((10,), 3, (5,), ((5, 5),)),
        ((10,), 1, -1, ((10,),)),
        ((10,), 10, 1, ((1,) * 10,)),
        ((7, 6), (2, 3), (3, 2), ((3, 3, 1), (2, 2, 2))),
        ((7, 6), (2, 3), ((4, 3), (1, 5)), ((4, 3), (1, 5))),
        ((7, 6), (7, 6), (1, 1), ((1,) * 7, (1,) * 6)),
        ((7, 6), (2, 3), {0: 7}, ((7,), (3, 3))),
        ((7, 6), (2, 3), {1: 4}, ((2, 2, 2, 1), (4, 2))),
        ((7, 6), (2, 3), {-1: 6}, ((2, 2, 2, 1), (6,))),
        ((7, 6), (2, 3), (None, 2), ((2, 2, 2, 1), (2, 2, 2))),
        ((3, 4, 5), (1, 2, 3), (3, 1, 5), ((3,), (1, 1, 1, 1), (5,))),
        ((), (), (), ()),
        ((0, 4), (1, 2), (3, 3), ((0,), (3, 1))),
    ],
    ids=repr,
)
@pytest.mark.parametrize("dtype", ["float64", "int16", "bool", "complex128"])
def test_rechunk(spec, shape, chunks, new_chunks, expected_chunks, dtype):
    a = make_data(shape, dtype, seed=3)
    x = cubego.asarray(a, chunks=chunks, spec=spec)
    y = cubego.rechunk(x, new_chunks)
    assert y.chunks == expected_chunks
    assert_matches(y, a)
    assert x.rechunk(new_chunks).chunks == expected_chunks


def test_rechunk_of_expression(spec):
    a = make_data((12, 9), "float64", seed=4)
    x = cubego.asarray(a, chunks=(5, 2), spec=spec)
    y = (x * 2).rechunk((4, 9)) + 1
    assert y.chunks == ((4, 4, 4), (9,))
    assert_matches(y, a * 2 + 1)
    assert_matches(cubego.sum(y, axis=1), np.sum(a * 2 + 1, axis=1))


def test_rechunk_needs_an_array():
    with pytest.raises(TypeError):
        cubego.rechunk(np.ones(3), 2)


def test_rechunk_min_mem_chooses_the_stages():
    # (1, n) -> (n, 1) under a budget too small for one copy stage: through
    # min(S, T) it would write n*n one-element chunks; by default the
    # multi-stage plan's intermediates interpolate between the two shapes.
    n = 512  # 2 MB of float64
    spec = cubego.Spec(allowed_mem="1MB")
    data = np.arange(n * n, dtype=np.float64).reshape(n, n)
    x = cubego.from_array(data, chunks=(1, n), spec=spec)

    def intermediate_chunks(y):
        plan = y.plan()
        return [a.chunksize for a in plan.arrays if a.role == "intermediate"]

    y = (-x).rechunk((n, 1))
    assert intermediate_chunks(y) == [(23, 23)]  # about sqrt(n) each way
    np.testing.assert_array_equal(y.compute(), -data)
    tiny = (-x).rechunk((n, 1), min_mem=8)  # one-element (8-byte) intermediates are accepted
    assert intermediate_chunks(tiny) == [(1, 1)]  # (not computed: n*n chunks take a minute)
    with pytest.raises(ValueError, match="min_mem"):
        x.rechunk((n, 1), min_mem=-1)
