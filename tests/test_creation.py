"""Creation functions against numpy: asarray, from_array, full and friends, arange, random."""

from __future__ import annotations

import numpy as np
import pytest

import cubego
import cubego.random

from helpers import ALL, SHAPES_CHUNKS, assert_matches, make_data


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(("shape", "chunks"), SHAPES_CHUNKS)
def test_asarray_round_trip(spec, shape, chunks, dtype):
    data = make_data(shape, dtype)
    x = cubego.asarray(data, chunks=chunks, spec=spec)
    assert_matches(x, data)


@pytest.mark.parametrize(
    "obj",
    [
        [[1, 2, 3], [4, 5, 6]],
        [1.5, -2.0],
        [True, False],
        3,
        2.5,
        1 + 1j,
        np.float32(1.25),
        np.arange(10, dtype=np.uint16)[::3],  # not contiguous
        np.arange(6, dtype=">i4").reshape(2, 3),  # big-endian
        np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    ],
    ids=repr,
)
def test_asarray_conversions(spec, obj):
    assert_matches(
        cubego.asarray(obj, spec=spec),
        np.asarray(obj).astype(np.asarray(obj).dtype.newbyteorder("=")),
    )


@pytest.mark.parametrize("dtype", ["int8", "float32", "complex64", "bool"])
def test_asarray_dtype(spec, dtype):
    obj = [[0, 1], [2, 3]]
    assert_matches(cubego.asarray(obj, dtype=dtype, spec=spec), np.asarray(obj, dtype=dtype))
    assert_matches(
        cubego.asarray(obj, dtype=getattr(cubego, dtype), spec=spec), np.asarray(obj, dtype=dtype)
    )


def test_asarray_passes_arrays_through(spec):
    x = cubego.ones((3,), spec=spec)
    assert cubego.asarray(x) is x
    assert cubego.asarray(x, dtype=cubego.float64) is x
    assert_matches(cubego.asarray(x, dtype=cubego.int8), np.ones(3, dtype=np.int8))


def test_asarray_device(spec):
    assert cubego.asarray([1], device="cpu", spec=spec).device == "cpu"
    with pytest.raises(ValueError, match="device"):
        cubego.asarray([1], device="gpu", spec=spec)


@pytest.mark.parametrize(
    "chunks", [1, 2, (3, 1), ((1, 2), (2, 2)), -1, None, "auto", "10B", {0: 1}]
)
def test_asarray_chunks(spec, chunks):
    data = np.arange(12).reshape(3, 4)
    if isinstance(chunks, dict):
        with pytest.raises(TypeError):
            cubego.asarray(data, chunks=chunks, spec=spec)
        return
    x = cubego.asarray(data, chunks=chunks, spec=spec)
    assert sum(x.chunks[0]) == 3 and sum(x.chunks[1]) == 4
    assert_matches(x, data)


def test_asarray_chunk_shapes(spec):
    data = np.arange(12).reshape(3, 4)
    assert cubego.asarray(data, chunks=2, spec=spec).chunks == ((2, 1), (2, 2))
    assert cubego.asarray(data, chunks=(3, 1), spec=spec).chunks == ((3,), (1, 1, 1, 1))
    assert cubego.asarray(data, chunks=((1, 2), (2, 2)), spec=spec).chunks == ((1, 2), (2, 2))
    assert cubego.asarray(data, chunks=-1, spec=spec).chunks == ((3,), (4,))
    assert cubego.asarray(data, chunks=(None, 3), spec=spec).chunks == ((3,), (3, 1))
    assert cubego.asarray(data, chunks="auto", spec=spec).chunks == ((3,), (4,))


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "complex128"])
def test_from_array(spec, dtype):
    data = make_data((5, 6), dtype)
    x = cubego.from_array(data, chunks=(2, 4), spec=spec)
    assert x.chunks == ((2, 2, 1), (4, 2))
    assert_matches(x, data)
    assert_matches(cubego.from_array(data.tolist(), spec=spec), np.asarray(data.tolist()))


@pytest.mark.parametrize("dtype", [None, *ALL])
@pytest.mark.parametrize(("shape", "chunks"), SHAPES_CHUNKS)
def test_zeros_ones(spec, shape, chunks, dtype):
    assert_matches(
        cubego.zeros(shape, dtype=dtype, chunks=chunks, spec=spec), np.zeros(shape, dtype=dtype)
    )
    assert_matches(
        cubego.ones(shape, dtype=dtype, chunks=chunks, spec=spec), np.ones(shape, dtype=dtype)
    )


def test_shape_as_int(spec):
    assert_matches(cubego.zeros(3, spec=spec), np.zeros(3))
    assert_matches(cubego.ones(np.int64(2), spec=spec), np.ones(2))


@pytest.mark.parametrize(
    ("fill_value", "dtype"),
    [
        (7, None),
        (-3, "int8"),
        (300, "uint16"),
        (2.5, None),
        (2.5, "float32"),
        (True, None),
        (False, "bool"),
        (1 - 2j, None),
        (3, "complex64"),
        (float("nan"), None),
        (float("inf"), "float32"),
        (-float("inf"), None),
        (complex(float("nan"), float("inf")), None),
        (np.int16(5), None),
        (np.float32(0.5), None),
    ],
    ids=repr,
)
@pytest.mark.parametrize(("shape", "chunks"), SHAPES_CHUNKS[:5])
def test_full(spec, shape, chunks, fill_value, dtype):
    expected = np.full(shape, fill_value, dtype=dtype)
    assert_matches(cubego.full(shape, fill_value, dtype=dtype, chunks=chunks, spec=spec), expected)


@pytest.mark.parametrize("dtype", ALL)
def test_empty(spec, dtype):
    x = cubego.empty((5, 3), dtype=dtype, chunks=2, spec=spec)
    assert x.shape == (5, 3) and x.dtype == np.dtype(dtype) and x.chunks == ((2, 2, 1), (2, 1))
    result = x.compute()
    assert result.shape == (5, 3) and result.dtype == np.dtype(dtype)


def test_like(spec):
    data = make_data((5, 4), "int16")
    x = cubego.asarray(data, chunks=(2, 3), spec=spec)
    for like, fill in ((cubego.zeros_like, 0), (cubego.ones_like, 1)):
        y = like(x)
        assert y.chunks == x.chunks and y.spec is x.spec
        assert_matches(y, np.full_like(data, fill))
        assert_matches(like(x, dtype=cubego.float32), np.full(data.shape, fill, dtype=np.float32))
    y = cubego.full_like(x, 9, chunks=5)
    assert y.chunks == ((5,), (4,))
    assert_matches(y, np.full_like(data, 9))
    e = cubego.empty_like(x, dtype="complex64")
    assert (e.shape, e.dtype, e.chunks) == ((5, 4), np.dtype("complex64"), x.chunks)
    other = cubego.Spec(allowed_mem="1GB")
    assert cubego.zeros_like(x, spec=other).spec is other


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((10,), {}),
        ((0,), {}),
        ((2, 11), {}),
        ((2, 11, 3), {}),
        ((10, 0, -2), {}),
        ((5, 1), {}),
        ((0.0, 1.0, 0.25), {}),
        ((1, 2.5, 0.5), {}),
        ((-3.5,), {}),
        ((10,), {"dtype": "float32"}),
        ((3, 9), {"dtype": "uint8"}),
        ((20,), {"dtype": "int16"}),
        ((np.int64(4),), {}),
    ],
    ids=repr,
)
@pytest.mark.parametrize("chunks", [1, 3, "auto"])
def test_arange(spec, args, kwargs, chunks):
    expected = np.arange(*args, **kwargs)
    assert_matches(cubego.arange(*args, chunks=chunks, spec=spec, **kwargs), expected)


def test_arange_invalid(spec):
    with pytest.raises(ValueError):
        cubego.arange(0, float("inf"), spec=spec)
    with pytest.raises(TypeError):
        cubego.arange("10", spec=spec)
    # beyond float64 (numpy raises OverflowError from converting it)
    with pytest.raises(ValueError, match="out of the range of a float64"):
        cubego.arange(10**400, spec=spec)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("shape", "chunks"), [((10, 7), (3, 4)), ((5,), (5,)), ((), ()), ((0, 3), (1, 1))]
)
def test_random(spec, shape, chunks, dtype):
    x = cubego.random.random(shape, dtype=dtype, chunks=chunks, spec=spec)
    assert (x.shape, x.dtype) == (shape, np.dtype(dtype))
    values = x.compute()
    assert values.shape == shape and values.dtype == np.dtype(dtype)
    assert np.all((values >= 0) & (values < 1))
    # deterministic per array: computing twice gives the same numbers
    np.testing.assert_array_equal(x.compute(), values)
    np.testing.assert_array_equal((x + 0).compute(), values)


def test_random_arrays_differ(spec):
    a = cubego.random.random((20, 20), chunks=5, spec=spec).compute()
    b = cubego.random.random((20, 20), chunks=5, spec=spec).compute()
    assert not np.array_equal(a, b)
    assert len(np.unique(a)) > 390  # blocks are not copies of each other
    assert 0.4 < a.mean() < 0.6


def test_random_slices_agree(spec):
    x = cubego.random.random((9, 8), chunks=(4, 3), spec=spec)
    whole = x.compute()
    np.testing.assert_array_equal(x[2:7, 1:5].compute(), whole[2:7, 1:5])


def test_random_dtype_invalid(spec):
    with pytest.raises(TypeError):
        cubego.random.random((3,), dtype=cubego.int32, spec=spec)
