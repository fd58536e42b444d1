"""Test data and comparisons: numpy is the reference for every operation."""

from __future__ import annotations

import os

import numpy as np
import pytest

import cubego

# Array API dtypes by category.
BOOL = ["bool"]
SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
INTEGER = SIGNED + UNSIGNED
REAL_FLOATING = ["float32", "float64"]
COMPLEX = ["complex64", "complex128"]
FLOATING = REAL_FLOATING + COMPLEX
REAL = INTEGER + REAL_FLOATING
NUMERIC = INTEGER + FLOATING
ALL = BOOL + NUMERIC

# (shape, chunks): regular, irregular last chunk, one-element chunks, a single
# chunk, 0-d and zero-size arrays.
SHAPES_CHUNKS = [
    pytest.param((), (), id="0d"),
    pytest.param((5,), (2,), id="5-by2"),
    pytest.param((6,), (1,), id="6-by1"),
    pytest.param((4, 4), (4, 4), id="4x4-one"),
    pytest.param((7, 5), (3, 2), id="7x5-irregular"),
    pytest.param((2, 3, 4), (1, 2, 3), id="2x3x4"),
    pytest.param((0,), (2,), id="0-empty"),
    pytest.param((3, 0), (2, 2), id="3x0-empty"),
]

# The same without 0-d arrays (for operations that need an axis).
SHAPES_CHUNKS_ND = [p for p in SHAPES_CHUNKS if p.values[0] != ()]


def make_data(shape, dtype, seed=0, *, low=None, high=None, nonzero=False) -> np.ndarray:
    """Deterministic test data of *shape* and *dtype* (small values: no overflow in + - *)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        lo = (0 if dtype.kind == "u" else -10) if low is None else low
        hi = 10 if high is None else high
        data = np.asarray(rng.integers(lo, hi, size=shape, endpoint=True)).astype(dtype)
        if nonzero:
            data[data == 0] = 1
        return data
    real = np.asarray(rng.standard_normal(shape))
    if low is not None or high is not None:
        lo = -10 if low is None else low
        hi = 10 if high is None else high
        real = np.asarray(rng.uniform(lo, hi, shape))
    if dtype.kind == "c":
        imag = np.asarray(rng.standard_normal(shape))
        return (real + 1j * imag).astype(dtype)
    data = np.asarray(real).astype(dtype)
    if nonzero:
        data[data == 0] = 1
    return data


def assert_matches(actual, expected, *, rtol=None, atol=0.0) -> None:
    """*actual* (cubego or numpy) equals numpy's *expected* in shape, dtype and values
    (within *rtol*, and *atol* for results that cancel to about zero)."""
    if isinstance(actual, cubego.Array):
        assert actual.shape == np.shape(expected), (actual.shape, np.shape(expected))
        assert actual.dtype == np.asarray(expected).dtype, (
            actual.dtype,
            np.asarray(expected).dtype,
        )
        actual = actual.compute()
    expected = np.asarray(expected)
    assert isinstance(actual, np.ndarray), type(actual)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if expected.dtype.kind in "fc":
        if rtol is None:
            rtol = 1e-5 if expected.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def descendants(pid: int) -> list[int]:
    """The pids of *pid*'s child processes, their children, ... (Linux /proc)."""
    out = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                children = [int(c) for c in f.read().split()]
        except FileNotFoundError:
            continue
        for child in children:
            out += [child, *descendants(child)]
    return out
