"""Elementwise functions against numpy over shapes x chunkings x dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cubego

from helpers import (
    ALL,
    COMPLEX,
    FLOATING,
    INTEGER,
    NUMERIC,
    REAL,
    REAL_FLOATING,
    SHAPES_CHUNKS,
    SIGNED,
    assert_matches,
    make_data,
)

# name: (numpy function, dtypes it is defined for, data options for x1, for x2)
BINARY = {
    "add": (np.add, NUMERIC, {}, {}),
    "subtract": (np.subtract, NUMERIC, {}, {}),
    "multiply": (np.multiply, NUMERIC, {}, {}),
    "divide": (np.divide, FLOATING, {}, {"nonzero": True}),
    "floor_divide": (np.floor_divide, REAL, {}, {"nonzero": True}),
    "remainder": (np.remainder, REAL, {}, {"nonzero": True}),
    "pow": (np.power, NUMERIC, {"low": 0, "high": 3}, {"low": 0, "high": 3}),
    "equal": (np.equal, ALL, {}, {}),
    "not_equal": (np.not_equal, ALL, {}, {}),
    "less": (np.less, REAL, {}, {}),
    "less_equal": (np.less_equal, REAL, {}, {}),
    "greater": (np.greater, REAL, {}, {}),
    "greater_equal": (np.greater_equal, REAL, {}, {}),
}

UNARY = {
    "negative": (np.negative, NUMERIC),
    "positive": (np.positive, NUMERIC),
    "abs": (np.abs, NUMERIC),
}


def _binary_cases():
    for name, (_, dtypes, _, _) in BINARY.items():
        for dtype in dtypes:
            yield pytest.param(name, dtype, id=f"{name}-{dtype}")


@pytest.mark.parametrize(("name", "dtype"), list(_binary_cases()))
@pytest.mark.parametrize(("shape", "chunks"), SHAPES_CHUNKS)
def test_binary(spec, name, dtype, shape, chunks):
    np_func, _, opts1, opts2 = BINARY[name]
    a = make_data(shape, dtype, seed=1, **opts1)
    b = make_data(shape, dtype, seed=2, **opts2)
    x = cubego.asarray(a, chunks=chunks, spec=spec)
    y = cubego.asarray(b, chunks=chunks, spec=spec)
    with np.errstate(all="ignore"):
        expected = np_func(a, b)
    assert_matches(getattr(cubego, name)(x, y), expected)


@pytest.mark.parametrize(
    ("name", "dtype"),
    [pytest.param(n, d, id=f"{n}-{d}") for n, (_, dtypes) in UNARY.items() for d in dtypes],
)
@pytest.mark.parametrize(("shape", "chunks"), SHAPES_CHUNKS)
def test_unary(spec, name, dtype, shape, chunks):
    np_func, _ = UNARY[name]
    a = make_data(shape, dtype, seed=3)
    x = cubego.asarray(a, chunks=chunks, spec=spec)
    assert_matches(getattr(cubego, name)(x), np_func(a))


@pytest.mark.parametrize(
    ("shape1", "chunks1", "shape2", "chunks2"),
    [
        ((4, 5), (2, 2), (5,), (2,)),
        ((4, 5), (2, 2), (1, 5), (1, 3)),
        ((4, 1), (3, 1), (1, 5), (1, 2)),
        ((3, 4, 5), (2, 2, 2), (4, 1), (4, 1)),
        ((4, 5), (2, 2), (), ()),
        ((0, 5), (1, 2), (5,), (5,)),
        ((4, 5), (2, 2), (4, 5), (3, 1)),  # different chunks, same shape
    ],
)
def test_broadcasting(spec, shape1, chunks1, shape2, chunks2):
    a = make_data(shape1, "float64", seed=4)
    b = make_data(shape2, "float64", seed=5)
    x = cubego.asarray(a, chunks=chunks1, spec=spec)
    y = cubego.asarray(b, chunks=chunks2, spec=spec)
    assert_matches(cubego.add(x, y), a + b)
    assert_matches(cubego.multiply(y, x), b * a)
    assert_matches(cubego.less(x, y), a < b)


def test_broadcasting_mismatch(spec):
    x = cubego.ones((3, 4), spec=spec)
    y = cubego.ones((5,), spec=spec)
    with pytest.raises(ValueError):
        cubego.add(x, y)


# Array API type promotion within a kind (these agree with numpy's).
PROMOTIONS = [
    ("int8", "int16"),
    ("int8", "int64"),
    ("int32", "int16"),
    ("uint8", "uint32"),
    ("uint16", "uint64"),
    ("uint8", "int8"),
    ("uint8", "int16"),
    ("uint16", "int32"),
    ("uint32", "int64"),
    ("float32", "float64"),
    ("float32", "complex64"),
    ("float64", "complex64"),
    ("float32", "complex128"),
    ("complex64", "complex128"),
    ("bool", "bool"),
]


@pytest.mark.parametrize(("dtype1", "dtype2"), PROMOTIONS)
def test_promotion(spec, dtype1, dtype2):
    a = make_data((5, 3), dtype1, seed=6)
    b = make_data((5, 3), dtype2, seed=7, nonzero=True)
    x = cubego.asarray(a, chunks=2, spec=spec)
    y = cubego.asarray(b, chunks=(3, 2), spec=spec)
    assert_matches(cubego.equal(x, y), np.equal(a, b))
    if dtype1 != "bool":
        assert_matches(cubego.add(x, y), np.add(a, b))
        assert_matches(cubego.multiply(y, x), np.multiply(b, a))


# (array dtypes, scalars): Python scalars take the array's dtype (Array API).
SCALAR_CASES = [
    (INTEGER, [3, 0, np.int8(2)]),
    (REAL_FLOATING, [2, 2.5, float("nan"), float("inf"), np.float64(-1.5)]),
    (COMPLEX, [2, 0.5, 1 - 1j, 1j]),
]


def _scalar_cases():
    for dtypes, scalars in SCALAR_CASES:
        for dtype in dtypes:
            for scalar in scalars:
                yield pytest.param(dtype, scalar, id=f"{dtype}-{scalar!r}")


@pytest.mark.parametrize(("dtype", "scalar"), list(_scalar_cases()))
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "equal", "not_equal"])
def test_scalars(spec, name, dtype, scalar):
    a = make_data((7,), dtype, seed=8, low=0, high=5)
    x = cubego.asarray(a, chunks=3, spec=spec)
    np_func = BINARY[name][0]
    # numpy's "weak" promotion of Python scalars matches the Array API's
    s = scalar.item() if isinstance(scalar, np.generic) else scalar
    with np.errstate(all="ignore"):
        assert_matches(getattr(cubego, name)(x, scalar), np_func(a, s))
        assert_matches(getattr(cubego, name)(scalar, x), np_func(s, a))


@pytest.mark.parametrize("dtype", REAL_FLOATING)
def test_special_values(spec, dtype):
    a = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 2.5], dtype=dtype)
    b = np.array([np.nan, 1.0, 0.0, -0.0, 1.0, np.inf, 2.0, -np.inf], dtype=dtype)
    x = cubego.asarray(a, chunks=3, spec=spec)
    y = cubego.asarray(b, chunks=3, spec=spec)
    with np.errstate(all="ignore"):
        for name in (
            "add",
            "subtract",
            "multiply",
            "divide",
            "pow",
            "equal",
            "less",
            "greater_equal",
        ):
            assert_matches(getattr(cubego, name)(x, y), BINARY[name][0](a, b))
        assert_matches(cubego.negative(x), -a)
        assert_matches(cubego.abs(x), np.abs(a))


@pytest.mark.parametrize("dtype", SIGNED)
def test_integer_floor_division_signs(spec, dtype):
    a = np.array([7, -7, 7, -7, 0, 5, -5], dtype=dtype)
    b = np.array([2, 2, -2, -2, 3, -5, 5], dtype=dtype)
    x = cubego.asarray(a, chunks=2, spec=spec)
    y = cubego.asarray(b, chunks=2, spec=spec)
    assert_matches(cubego.floor_divide(x, y), a // b)
    assert_matches(cubego.remainder(x, y), a % b)
    assert_matches(x // 3, a // 3)
    assert_matches(x % -3, a % -3)


def test_unsupported_dtype_combinations(spec):
    """Combinations outside the Array API raise the library's TypeError."""
    complex_array = cubego.ones((2,), dtype=cubego.complex64, spec=spec)
    with pytest.raises(TypeError):
        cubego.less(complex_array, 1)
    with pytest.raises(TypeError):
        cubego.floor_divide(complex_array, 1)
    with pytest.raises(TypeError):
        cubego.negative(cubego.ones((3,), dtype=cubego.bool, spec=spec))


def test_functions_need_an_array():
    with pytest.raises(TypeError, match="cubego Array"):
        cubego.add(1, 2)
    with pytest.raises(TypeError):
        cubego.negative(3.0)
    with pytest.raises(TypeError):
        cubego.add(np.ones(2), 1)


def test_same_array_twice(spec):
    a = make_data((5, 4), "int32", seed=9)
    x = cubego.asarray(a, chunks=2, spec=spec)
    assert_matches(x == x, a == a)
    assert_matches(x * x + x, a * a + a)


def test_expression_chain(spec):
    a = make_data((9, 7), "float64", seed=10)
    b = make_data((9, 7), "float64", seed=11)
    x = cubego.asarray(a, chunks=(4, 3), spec=spec)
    y = cubego.asarray(b, chunks=(2, 5), spec=spec)
    assert_matches(((x * y + 1) / (abs(y) + 2)) ** 2 - x, ((a * b + 1) / (np.abs(b) + 2)) ** 2 - a)


@st.composite
def _shape_and_chunks(draw):
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(0, 6)) for _ in range(ndim))
    chunks1 = tuple(draw(st.integers(1, max(n, 1))) for n in shape)
    chunks2 = tuple(draw(st.integers(1, max(n, 1))) for n in shape)
    return shape, chunks1, chunks2


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    case=_shape_and_chunks(),
    dtype=st.sampled_from(["int32", "uint8", "float32", "float64", "complex128"]),
    name=st.sampled_from(["add", "subtract", "multiply", "equal"]),
    seed=st.integers(0, 2**16),
)
def test_hypothesis_binary(spec, case, dtype, name, seed):
    shape, chunks1, chunks2 = case
    a = make_data(shape, dtype, seed=seed)
    b = make_data(shape, dtype, seed=seed + 1)
    x = cubego.asarray(a, chunks=chunks1, spec=spec)
    y = cubego.asarray(b, chunks=chunks2, spec=spec)
    assert_matches(getattr(cubego, name)(x, y), BINARY[name][0](a, b))
