"""Basic indexing (__getitem__) against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import cubego

from helpers import assert_matches, make_data

KEYS_1D = [
    0,
    3,
    -1,
    -7,
    np.int64(2),
    np.uint8(1),
    slice(None),
    slice(2, 5),
    slice(None, None, 2),
    slice(1, None, 3),
    slice(-3, None),
    slice(5, 2),
    slice(None, None, -1),
    slice(5, 1, -2),
    slice(100, None),
    slice(-100, 100),
    Ellipsis,
    None,
    (None, slice(1, 4)),
    (slice(1, 4), None),
    (Ellipsis, 2),
    (),
]


@pytest.mark.parametrize("key", KEYS_1D, ids=repr)
@pytest.mark.parametrize("chunks", [1, 3, 7])
def test_getitem_1d(spec, key, chunks):
    a = make_data((7,), "int32")
    x = cubego.asarray(a, chunks=chunks, spec=spec)
    assert_matches(x[key], a[key])


KEYS_ND = [
    (0, 0, 0),
    (1, -1, 2),
    1,
    (slice(None), 2),
    (Ellipsis, 1),
    (1, Ellipsis),
    (slice(1, 3), slice(None), slice(None, None, 2)),
    (slice(None, None, -1), 0, slice(3, 0, -1)),
    (None, 1, None, slice(1, 4), None),
    (Ellipsis, None),
    (slice(0, 0), slice(None), 1),
    (slice(2, 3), Ellipsis, slice(None, None, 3)),
    (np.int32(1), np.int64(-2)),
    (),
    Ellipsis,
]


@pytest.mark.parametrize("key", KEYS_ND, ids=repr)
@pytest.mark.parametrize("chunks", [(1, 1, 1), (2, 3, 2), (3, 4, 5)])
@pytest.mark.parametrize("dtype", ["float64", "bool", "complex64", "uint16"])
def test_getitem_3d(spec, key, chunks, dtype):
    a = make_data((3, 4, 5), dtype)
    x = cubego.asarray(a, chunks=chunks, spec=spec)
    assert_matches(x[key], a[key])


@pytest.mark.parametrize("key", [(), Ellipsis, None, (None, None), (Ellipsis, None)], ids=repr)
def test_getitem_0d(spec, key):
    a = np.asarray(2.5)
    x = cubego.asarray(a, spec=spec)
    assert_matches(x[key], a[key])


@pytest.mark.parametrize("key", [slice(None), slice(0, 0), Ellipsis, (slice(None), 1)], ids=repr)
def test_getitem_zero_size(spec, key):
    a = np.zeros((0, 3))
    x = cubego.asarray(a, chunks=2, spec=spec)
    assert_matches(x[key], a[key])


def test_getitem_chunks(spec):
    x = cubego.asarray(np.arange(10), chunks=3, spec=spec)
    assert sum(x[2:9].chunks[0]) == 7
    assert x[3].shape == () and x[3].chunks == ()


def test_getitem_of_expressions(spec):
    a = make_data((6, 5), "float64", seed=2)
    x = cubego.asarray(a, chunks=(4, 2), spec=spec)
    assert_matches((x * 2 + 1)[1:5:2, ::-2], (a * 2 + 1)[1:5:2, ::-2])
    assert_matches(cubego.sum(x[:, 1:], axis=1)[2:], np.sum(a[:, 1:], axis=1)[2:])


@pytest.mark.parametrize(
    ("shape", "key"),
    [((7,), 7), ((7,), -8), ((7,), 100), ((7, 5), (0, 5)), ((7, 5), (7, 0)), ((7, 5), (0, -6))],
    ids=repr,
)
def test_out_of_bounds(spec, shape, key):
    x = cubego.ones(shape, chunks=2, spec=spec)
    with pytest.raises(IndexError):
        x[key]


def test_out_of_bounds_message(spec):
    x = cubego.ones((7, 5), chunks=2, spec=spec)
    with pytest.raises(IndexError, match="10"):
        x[10]


def test_too_many_indices(spec):
    x = cubego.ones((3, 4), spec=spec)
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError):
        x[..., 0, ...]
    with pytest.raises(IndexError):
        cubego.asarray(1.0, spec=spec)[0]


@pytest.mark.parametrize(
    "key",
    [1.5, "a", True, np.bool_(False), {0}, [0.5], np.array([True, False]), np.ones((3, 4), bool)],
    ids=repr,
)
def test_unsupported_keys(spec, key):
    x = cubego.ones((3, 4), spec=spec)
    with pytest.raises(IndexError):
        x[key]


@pytest.mark.parametrize(
    "key",
    [
        [0, 2],
        np.array([2, 0, 2]),
        (slice(None), np.array([3, -1])),
        (np.array([True, False, True]), slice(1, 3)),
        (Ellipsis, [1]),
        np.array([], dtype=np.int64),
    ],
    ids=repr,
)
def test_numpy_index_arrays(spec, key):
    # numpy index arrays and lists (whose values are known) index like numpy;
    # xarray passes them for orthogonal indexing.
    data = np.arange(12.0).reshape(3, 4)
    x = cubego.asarray(data, chunks=2, spec=spec)
    np.testing.assert_array_equal(x[key].compute(), data[key])


def test_boolean_array_keys_are_refused(spec):
    """Integer arrays index (tests/test_indexing_arrays.py); boolean masks have data-dependent
    shapes."""
    x = cubego.ones((3, 4), spec=spec)
    with pytest.raises(NotImplementedError, match="data-dependent"):
        x[cubego.asarray([True, False, True], spec=spec)]
    with pytest.raises(NotImplementedError, match="data-dependent"):
        x[cubego.asarray(True, spec=spec)]


def test_slice_with_non_integers(spec):
    x = cubego.ones((5,), spec=spec)
    with pytest.raises(TypeError):
        x[1.0:3]
    with pytest.raises(TypeError):
        x[:"a"]


def test_zero_step(spec):
    x = cubego.ones((5,), spec=spec)
    with pytest.raises(ValueError):
        x[::0]
