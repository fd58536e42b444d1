"""Indexing with arrays and in-place updates: take, take_along_axis, x[int_array], x[key] = v."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cubego

from helpers import ALL, assert_matches, make_data

SPEC = cubego.Spec(allowed_mem="100MB")


def _x(shape, chunks, dtype="float64", seed=1):
    a = make_data(shape, dtype, seed=seed)
    return a, cubego.asarray(a, chunks=chunks, spec=SPEC)


def _i(values):
    return cubego.asarray(np.asarray(values, dtype=np.int64), spec=SPEC)


@pytest.mark.parametrize("dtype", ["float64", "int16", "bool", "complex64"])
def test_take(dtype):
    a, x = _x((7, 5), (3, 2), dtype)
    idx = [4, 0, -1, 4, 2]
    assert_matches(cubego.take(x, _i(idx), axis=0), np.take(a, idx, axis=0))
    assert_matches(cubego.take(x, _i(idx[:3]), axis=1), np.take(a, idx[:3], axis=1))
    v = a[:, 0]
    assert_matches(cubego.take(x[:, 0], _i(idx)), np.take(v, idx))
    assert_matches(cubego.take(x, _i([]), axis=0), np.take(a, [], axis=0))


def test_take_errors():
    _, x = _x((7, 5), (3, 2))
    with pytest.raises(IndexError):
        cubego.take(x, _i([7]), axis=0)
    with pytest.raises(ValueError, match="axis"):
        cubego.take(x, _i([0]))
    with pytest.raises(IndexError):
        cubego.take(x, cubego.asarray([0.0], spec=SPEC), axis=0)


@pytest.mark.parametrize("dtype", ALL)
def test_take_along_axis(dtype):
    a, x = _x((6, 5), (4, 2), dtype)
    rng = np.random.default_rng(3)
    idx = rng.integers(-6, 6, size=(3, 5))
    expected = np.take_along_axis(a, idx, axis=0)
    assert_matches(cubego.take_along_axis(x, _i(idx), axis=0), expected)
    idx1 = rng.integers(0, 5, size=(6, 4))
    assert_matches(cubego.take_along_axis(x, _i(idx1), axis=-1), np.take_along_axis(a, idx1, -1))


def test_take_along_axis_special_values_and_broadcasting():
    a = np.array([[np.nan, -0.0, np.inf], [0.0, -np.inf, 1.5]])
    x = cubego.asarray(a, chunks=1, spec=SPEC)
    idx = np.array([[1, 0, 2, 1], [0, 1, 1, 2]])
    out = cubego.take_along_axis(x, _i(idx), axis=1).compute()
    expected = np.take_along_axis(a, idx, axis=1)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(expected))
    # The indices broadcast along the other dimensions.
    b = np.array([[2, 0]])
    np.testing.assert_array_equal(
        cubego.take_along_axis(x, _i(b), axis=1).compute(),
        np.take_along_axis(a, np.broadcast_to(b, (2, 2)), axis=1),
    )


@pytest.mark.parametrize(
    "key",
    [
        (np.array([2, 0, 2]),),
        (slice(None), np.array([1, -1])),
        (np.array([[0, 1], [2, 0]]), slice(1, 3)),
        (np.array([0, 2]), np.array([1, 3])),
        (np.array([[0], [2]]), np.array([1, 3])),
        (1, np.array([0, 3]), slice(None)),
        (np.array([0, 1]), slice(None), np.array([2, 0])),
        (np.array(1),),
        (Ellipsis, np.array([3, 0])),
        (None, np.array([1, 0])),
    ],
    ids=repr,
)
def test_integer_array_keys(key):
    a, x = _x((3, 4, 5), (2, 3, 2))
    ckey = tuple(_i(k) if isinstance(k, np.ndarray) else k for k in key)
    assert_matches(x[ckey if len(ckey) > 1 else ckey[0]], a[key if len(key) > 1 else key[0]])


def test_integer_array_key_errors():
    _, x = _x((3, 4), (2, 3))
    with pytest.raises(IndexError, match="out of bounds"):
        x[_i([3])]
    with pytest.raises(IndexError, match="broadcast"):
        x[_i([0, 1]), _i([0, 1, 2])]
    with pytest.raises(NotImplementedError, match="data-dependent"):
        x[cubego.asarray(np.ones((3, 4), dtype=bool), spec=SPEC)]


# ---------------------------------------------------------------------- __setitem__


@pytest.mark.parametrize(
    "key",
    [
        1,
        -1,
        (slice(1, 3), 2),
        (slice(None, None, 2), slice(None)),
        (slice(None, None, -1), slice(1, None, 3)),
        (slice(5, 0, -2), 0),
        (Ellipsis, 1),
        (None, 0),
        slice(None),
        (slice(2, 2),),
    ],
    ids=repr,
)
@pytest.mark.parametrize("value_kind", ["scalar", "array", "broadcast"])
def test_setitem_basic(key, value_kind):
    a, x = _x((6, 5), (4, 2))
    expected = a.copy()
    selection = expected[key].shape
    if value_kind == "scalar":
        value = 7.5
        cvalue = value
    elif value_kind == "array":
        value = make_data(selection, "float32", seed=9)
        cvalue = cubego.asarray(value, chunks=1, spec=SPEC)
    else:
        value = make_data(selection[-1:] if selection else (), "float64", seed=10)
        cvalue = cubego.asarray(value, spec=SPEC)
    expected[key] = value
    before = x
    kept = x + 0
    x[key] = cvalue
    assert x is before
    assert_matches(x, expected)
    assert_matches(kept, a)  # arrays computed from the old value are unchanged


@pytest.mark.parametrize("dtype", ["int8", "bool", "complex128"])
def test_setitem_dtypes(dtype):
    a, x = _x((4, 3), (3, 2), dtype)
    expected = a.copy()
    value = np.asarray(True if dtype == "bool" else 1, dtype=dtype)
    expected[1:3, ::2] = value
    x[1:3, ::2] = value.item()
    assert_matches(x, expected)


def test_setitem_mask():
    a, x = _x((4, 3), (3, 2))
    mask = a > 0
    expected = a.copy()
    expected[mask] = -1.0
    x[cubego.asarray(mask, chunks=2, spec=SPEC)] = -1.0
    assert_matches(x, expected)
    rows = np.array([True, False, True, False])
    expected[rows] = np.arange(3.0)
    x[cubego.asarray(rows, spec=SPEC)] = cubego.asarray(np.arange(3.0), spec=SPEC)
    assert_matches(x, expected)
    expected[rows] = 5.0
    x[cubego.asarray(rows, spec=SPEC)] = cubego.asarray(5.0, spec=SPEC)
    assert_matches(x, expected)


def test_setitem_errors():
    _, x = _x((4, 3), (3, 2))
    with pytest.raises(IndexError):
        x[4] = 1.0
    with pytest.raises(ValueError, match="broadcast"):
        x[0] = cubego.ones((2,), spec=SPEC)
    with pytest.raises(NotImplementedError, match="integer-array"):
        x[_i([0, 1])] = 1.0
    with pytest.raises(NotImplementedError, match="data-dependent|depends"):
        x[cubego.asarray(np.ones((4, 3), dtype=bool), spec=SPEC)] = cubego.ones((2,), spec=SPEC)
    with pytest.raises(TypeError):
        x[0] = "a"


def test_asarray_copy_isolates_in_place_updates():
    a, x = _x((3,), (2,))
    y = cubego.asarray(x, copy=True)
    same = cubego.asarray(x)
    y[0] = 100.0
    assert same is x
    assert_matches(x, a)
    assert float(y[0]) == 100.0


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_setitem_hypothesis(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    chunks = tuple(data.draw(st.integers(1, n)) for n in shape)
    key = []
    for n in shape:
        if data.draw(st.booleans()):
            key.append(data.draw(st.integers(-n, n - 1)))
        else:
            start = data.draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            stop = data.draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            step = data.draw(st.one_of(st.none(), st.integers(1, 3), st.integers(-3, -1)))
            key.append(slice(start, stop, step))
    key = tuple(key)
    a = make_data(shape, "float64", seed=1)
    expected = a.copy()
    value = make_data(expected[key].shape, "float64", seed=2)
    expected[key] = value
    x = cubego.asarray(a, chunks=chunks, spec=SPEC)
    x[key] = cubego.asarray(value, spec=SPEC) if value.ndim else float(value)
    assert_matches(x, expected)
