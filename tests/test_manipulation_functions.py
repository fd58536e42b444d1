"""Manipulation functions against numpy over shapes x chunkings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cubego

from helpers import assert_matches, make_data

SPEC = cubego.Spec(allowed_mem="100MB")

# (shape, chunks): regular, irregular, one-element chunks, one chunk.
GRID = [
    pytest.param((7, 5), (3, 2), id="7x5-irregular"),
    pytest.param((4, 6), (1, 1), id="4x6-by1"),
    pytest.param((2, 3, 4), (2, 3, 4), id="2x3x4-one"),
    pytest.param((6,), (4,), id="6-by4"),
]


@st.composite
def chunked(draw, min_dims=1, max_dims=3, dtype="float64"):
    """A (numpy array, cubego array) pair with random shape and chunks."""
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=min_dims, max_size=max_dims)))
    chunks = tuple(draw(st.integers(1, n)) for n in shape)
    a = make_data(shape, dtype, seed=draw(st.integers(0, 3)))
    return a, cubego.asarray(a, chunks=chunks, spec=SPEC)


def _x(shape, chunks, dtype="float64", seed=1):
    a = make_data(shape, dtype, seed=seed)
    return a, cubego.asarray(a, chunks=chunks, spec=SPEC)


@pytest.mark.parametrize(("shape", "chunks"), GRID)
def test_flip(shape, chunks):
    a, x = _x(shape, chunks)
    assert_matches(cubego.flip(x), np.flip(a))
    assert_matches(cubego.flip(x, axis=0), np.flip(a, axis=0))
    assert_matches(cubego.flip(x, axis=-1), np.flip(a, axis=-1))
    if a.ndim > 1:
        assert_matches(cubego.flip(x, axis=(0, -1)), np.flip(a, axis=(0, -1)))


@pytest.mark.parametrize(("shape", "chunks"), GRID)
def test_roll(shape, chunks):
    a, x = _x(shape, chunks)
    for shift in (1, -2, 0, 13):
        assert_matches(cubego.roll(x, shift), np.roll(a, shift))
        assert_matches(cubego.roll(x, shift, axis=0), np.roll(a, shift, axis=0))
    if a.ndim > 1:
        assert_matches(cubego.roll(x, (1, -1), axis=(0, 1)), np.roll(a, (1, -1), axis=(0, 1)))
        assert_matches(cubego.roll(x, 2, axis=(0, 1)), np.roll(a, 2, axis=(0, 1)))


@pytest.mark.parametrize(("shape", "chunks"), GRID)
def test_repeat(shape, chunks):
    a, x = _x(shape, chunks)
    for r in (0, 1, 3):
        assert_matches(cubego.repeat(x, r), np.repeat(a, r))
        assert_matches(cubego.repeat(x, r, axis=-1), np.repeat(a, r, axis=-1))
    counts = np.arange(a.shape[0]) % 3
    r = cubego.asarray(counts, spec=SPEC)
    assert_matches(cubego.repeat(x, r, axis=0), np.repeat(a, counts, axis=0))
    assert_matches(cubego.repeat(x, cubego.asarray([2], spec=SPEC), axis=0), np.repeat(a, 2, 0))


@pytest.mark.parametrize(("shape", "chunks"), GRID)
def test_tile(shape, chunks):
    a, x = _x(shape, chunks)
    for reps in ((2,), (1, 3), (2, 1, 2), (0, 2)):
        assert_matches(cubego.tile(x, reps), np.tile(a, reps))


@pytest.mark.parametrize(("shape", "chunks"), GRID)
def test_expand_squeeze_moveaxis_permute(shape, chunks):
    a, x = _x(shape, chunks)
    assert_matches(cubego.expand_dims(x, axis=0), np.expand_dims(a, 0))
    assert_matches(cubego.expand_dims(x, axis=-1), np.expand_dims(a, -1))
    assert_matches(cubego.expand_dims(x, axis=(0, 2)), np.expand_dims(a, (0, 2)))
    e = cubego.expand_dims(x, axis=1)
    assert_matches(cubego.squeeze(e, 1), a)
    assert_matches(cubego.squeeze(e, axis=(1,)), a)
    assert_matches(cubego.moveaxis(x, 0, -1), np.moveaxis(a, 0, -1))
    order = tuple(reversed(range(a.ndim)))
    assert_matches(cubego.permute_dims(x, order), np.transpose(a, order))
    if a.ndim == 3:
        assert_matches(cubego.moveaxis(x, (0, 1), (2, 0)), np.moveaxis(a, (0, 1), (2, 0)))


@pytest.mark.parametrize(("shape", "chunks"), GRID)
def test_reshape(shape, chunks):
    a, x = _x(shape, chunks)
    assert_matches(cubego.reshape(x, (-1,)), a.reshape(-1))
    assert_matches(cubego.reshape(x, (1, a.size)), a.reshape(1, a.size))
    assert_matches(cubego.reshape(x, a.shape[::-1]), a.reshape(a.shape[::-1]))
    assert_matches(cubego.reshape(cubego.reshape(x, (-1,)), a.shape), a)
    with pytest.raises(ValueError):
        cubego.reshape(x, (a.size + 1,))


@pytest.mark.parametrize(("shape", "chunks"), GRID)
def test_concat_stack_unstack(shape, chunks):
    a, x = _x(shape, chunks)
    b, y = _x(shape, chunks, dtype="float32", seed=2)
    assert_matches(cubego.concat([x, y], axis=0), np.concatenate([a, b], axis=0))
    assert_matches(cubego.concat((x, y), axis=-1), np.concatenate([a, b], axis=-1))
    assert_matches(cubego.concat([x, y], axis=None), np.concatenate([a, b], axis=None))
    assert cubego.concat([x, y], axis=0, chunks=2).chunksize == (2,) * a.ndim
    assert_matches(cubego.stack([x, y]), np.stack([a, b]))
    assert_matches(cubego.stack([x, y], axis=-1), np.stack([a, b], axis=-1))
    parts = cubego.unstack(x, axis=-1)
    assert isinstance(parts, tuple)
    for part, expected in zip(parts, np.moveaxis(a, -1, 0), strict=True):
        assert_matches(part, expected)


def test_broadcasting():
    a, x = _x((3, 1), (2, 1))
    b, y = _x((4,), (3,), seed=2)
    assert cubego.broadcast_shapes((3, 1), (4,), ()) == (3, 4)
    assert cubego.broadcast_shapes() == ()
    with pytest.raises(ValueError):
        cubego.broadcast_shapes((3,), (4,))
    bx, by = cubego.broadcast_arrays(x, y)
    assert_matches(bx, np.broadcast_to(a, (3, 4)))
    assert_matches(by, np.broadcast_to(b, (3, 4)))
    z = cubego.broadcast_to(x, (2, 3, 4), chunks=(1, 2, 2))
    assert z.chunks == ((1, 1), (2, 1), (2, 2))
    assert_matches(z, np.broadcast_to(a, (2, 3, 4)))
    with pytest.raises(ValueError):
        cubego.broadcast_to(x, (4, 4))


def test_errors():
    _, x = _x((3, 4), (2, 2))
    with pytest.raises(ValueError, match="out of bounds"):
        cubego.flip(x, axis=2)
    with pytest.raises(ValueError, match="repeated"):
        cubego.flip(x, axis=(0, 0))
    with pytest.raises(ValueError):
        cubego.squeeze(x, 0)
    with pytest.raises(ValueError, match="non-negative"):
        cubego.repeat(x, -1)
    with pytest.raises(ValueError, match="non-negative"):
        cubego.tile(x, (-1,))
    with pytest.raises(TypeError):
        cubego.flip(np.ones(3))
    with pytest.raises(ValueError):
        cubego.concat([])
    with pytest.raises(IndexError):
        cubego.expand_dims(x, axis=5)


@settings(max_examples=20, deadline=None)
@given(pair=chunked(), data=st.data())
def test_roll_flip_repeat_hypothesis(pair, data):
    a, x = pair
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    shift = data.draw(st.integers(-8, 8))
    r = data.draw(st.integers(0, 3))
    results = cubego.compute(
        cubego.roll(x, shift, axis=axis), cubego.flip(x, axis=axis), cubego.repeat(x, r, axis=axis)
    )
    for got, expected in zip(
        results,
        (np.roll(a, shift, axis=axis), np.flip(a, axis=axis), np.repeat(a, r, axis=axis)),
        strict=True,
    ):
        assert_matches(got, expected)
