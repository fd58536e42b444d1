"""Every elementwise function of the Array API against numpy, special values included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cubego
from cubego.array_api.elementwise_functions import ELEMENTWISE

from helpers import (
    BOOL,
    COMPLEX,
    FLOATING,
    INTEGER,
    NUMERIC,
    REAL,
    REAL_FLOATING,
    assert_matches,
    make_data,
)

# Floats that exercise the special cases: NaN, infinities, signed zeros, ±1.
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0]


# name: (numpy function, dtypes, data options) for functions whose numpy name differs
# or whose domain needs care; the rest are np.<name> over NUMERIC.
def _std_floor_divide(a, b):
    """numpy's floor_divide with the Array API's cases for one infinite operand.

    The standard says ±inf // finite is ±inf and finite // ∓inf is -0, where numpy
    gives NaN and -1.
    """
    out = np.floor_divide(a, b)
    if out.dtype.kind == "f":
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        one_inf = (np.isinf(a) != np.isinf(b)) & (b != 0)
        out = np.where(one_inf, (a / b).astype(out.dtype), out)
    return out


FUNCTIONS: dict[str, tuple] = {
    "abs": (np.abs, NUMERIC),
    "acos": (np.arccos, FLOATING),
    "acosh": (np.arccosh, FLOATING),
    "add": (np.add, NUMERIC),
    "asin": (np.arcsin, FLOATING),
    "asinh": (np.arcsinh, FLOATING),
    "atan": (np.arctan, FLOATING),
    "atan2": (np.arctan2, REAL_FLOATING),
    "atanh": (np.arctanh, FLOATING),
    "bitwise_and": (np.bitwise_and, INTEGER + BOOL),
    "bitwise_invert": (np.invert, INTEGER + BOOL),
    "bitwise_left_shift": (np.left_shift, INTEGER),
    "bitwise_or": (np.bitwise_or, INTEGER + BOOL),
    "bitwise_right_shift": (np.right_shift, INTEGER),
    "bitwise_xor": (np.bitwise_xor, INTEGER + BOOL),
    "ceil": (np.ceil, REAL),
    "conj": (np.conj, NUMERIC),
    "copysign": (np.copysign, REAL_FLOATING),
    "cos": (np.cos, FLOATING),
    "cosh": (np.cosh, FLOATING),
    "divide": (np.divide, FLOATING),
    "equal": (np.equal, NUMERIC + BOOL),
    "exp": (np.exp, FLOATING),
    "expm1": (np.expm1, REAL_FLOATING),
    "floor": (np.floor, REAL),
    "floor_divide": (_std_floor_divide, REAL),
    "greater": (np.greater, REAL),
    "greater_equal": (np.greater_equal, REAL),
    "hypot": (np.hypot, REAL_FLOATING),
    "imag": (np.imag, COMPLEX),
    "isfinite": (np.isfinite, NUMERIC),
    "isinf": (np.isinf, NUMERIC),
    "isnan": (np.isnan, NUMERIC),
    "less": (np.less, REAL),
    "less_equal": (np.less_equal, REAL),
    "log": (np.log, FLOATING),
    "log10": (np.log10, FLOATING),
    "log1p": (np.log1p, FLOATING),
    "log2": (np.log2, FLOATING),
    "logaddexp": (np.logaddexp, REAL_FLOATING),
    "logical_and": (np.logical_and, BOOL),
    "logical_not": (np.logical_not, BOOL),
    "logical_or": (np.logical_or, BOOL),
    "logical_xor": (np.logical_xor, BOOL),
    "maximum": (np.maximum, REAL),
    "minimum": (np.minimum, REAL),
    "multiply": (np.multiply, NUMERIC),
    "negative": (np.negative, NUMERIC),
    "nextafter": (np.nextafter, REAL_FLOATING),
    "not_equal": (np.not_equal, NUMERIC + BOOL),
    "positive": (np.positive, NUMERIC),
    "pow": (np.power, NUMERIC),
    "real": (np.real, COMPLEX),
    "reciprocal": (np.reciprocal, FLOATING),
    "remainder": (np.remainder, REAL),
    "round": (np.round, REAL),
    "sign": (np.sign, REAL),
    "signbit": (np.signbit, REAL_FLOATING),
    "sin": (np.sin, FLOATING),
    "sinh": (np.sinh, FLOATING),
    "sqrt": (np.sqrt, FLOATING),
    "square": (np.square, NUMERIC),
    "subtract": (np.subtract, NUMERIC),
    "tan": (np.tan, FLOATING),
    "tanh": (np.tanh, FLOATING),
    "trunc": (np.trunc, REAL),
}


def test_table_covers_the_standard():
    assert set(FUNCTIONS) == set(ELEMENTWISE)
    for name in ELEMENTWISE:
        assert getattr(cubego, name).__name__ == name
        assert getattr(cubego.array_api, name) is getattr(cubego, name)


def _data(name: str, dtype: str, shape: tuple, seed: int) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "f":
        rng = np.random.default_rng(seed)
        return rng.choice(np.asarray(SPECIAL, dtype=dt), size=shape)
    if dt.kind in "iu" and name in ("bitwise_left_shift", "bitwise_right_shift"):
        if seed == 2:  # the shift: within the width of the type
            return make_data(shape, dtype, seed=seed, low=0, high=dt.itemsize * 8 - 1)
        return make_data(shape, dtype, seed=seed)
    if dt.kind in "iu" and name == "pow":
        return make_data(shape, dtype, seed=seed, low=0, high=3)
    if dt.kind == "c":
        return make_data(shape, dtype, seed=seed, low=-2, high=2)
    return make_data(shape, dtype, seed=seed)


def assert_all_match(pairs: list[tuple[cubego.Array, np.ndarray, float | None]]) -> None:
    """Compare many results with numpy, computing them in one go."""
    values = cubego.compute(*(actual for actual, _, _ in pairs))
    for (actual, expected, rtol), value in zip(pairs, values, strict=True):
        assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
        assert_matches(value, expected, rtol=rtol)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_against_numpy(spec, name):
    """All dtypes of the function's category, on irregular chunks, special values included."""
    np_func, dtypes = FUNCTIONS[name]
    nin = ELEMENTWISE[name]
    shape, chunks = (7, 5), (3, 2)
    pairs = []
    for dtype in dtypes:
        arrays = [_data(name, dtype, shape, seed) for seed in range(1, nin + 1)]
        with np.errstate(all="ignore"):
            expected = np.asarray(np_func(*arrays))
        xs = [cubego.asarray(a, chunks=chunks, spec=spec) for a in arrays]
        rtol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
        if np.dtype(dtype).kind == "c" and name not in ("real", "imag", "conj", "add", "subtract"):
            rtol = 1e-4 if np.dtype(dtype) == np.complex64 else 1e-10
        pairs.append((getattr(cubego, name)(*xs), expected, rtol))
    assert_all_match(pairs)


@pytest.mark.parametrize(("shape", "chunks"), [((), ()), ((6,), (1,)), ((0, 3), (2, 2))])
def test_shapes(spec, shape, chunks):
    a = make_data(shape, "float64", seed=4)
    x = cubego.asarray(a, chunks=chunks, spec=spec)
    assert_matches(cubego.sin(x), np.sin(a))
    assert_matches(cubego.atan2(x, 2.0), np.arctan2(a, 2.0))


def test_signed_zeros(spec):
    a = np.array([0.0, -0.0, 1.0, -1.0])
    x = cubego.asarray(a, spec=spec)
    assert np.array_equal(np.signbit(cubego.negative(x).compute()), np.signbit(-a))
    assert np.array_equal(cubego.signbit(x).compute(), np.signbit(a))
    assert np.array_equal(np.signbit(cubego.copysign(1.0, x).compute()), np.signbit(a))


def test_integer_division_by_zero_is_zero(spec):
    a = np.array([7, -7, 0, 3], dtype=np.int32)
    x = cubego.asarray(a, spec=spec)
    with np.errstate(all="ignore"):
        assert_matches(cubego.floor_divide(x, 0), np.floor_divide(a, np.int32(0)))
        assert_matches(cubego.remainder(x, 0), np.remainder(a, np.int32(0)))


def test_integer_overflow_wraps(spec):
    a = np.array([127, -128], dtype=np.int8)
    x = cubego.asarray(a, spec=spec)
    assert_matches(x + 1, (a.astype(np.int16) + 1).astype(np.int8))
    assert_matches(-x, (-(a.astype(np.int16))).astype(np.int8))


@pytest.mark.parametrize("dtype", REAL)
def test_clip(spec, dtype):
    a = make_data((9, 4), dtype, seed=5)
    x = cubego.asarray(a, chunks=(4, 3), spec=spec)
    lo, hi = (1, 6) if np.dtype(dtype).kind == "u" else (-3, 4)
    assert_matches(cubego.clip(x, lo, hi), np.clip(a, lo, hi))
    assert_matches(cubego.clip(x, min=lo), np.clip(a, lo, None))
    assert_matches(cubego.clip(x, max=hi), np.clip(a, None, hi))
    assert_matches(cubego.clip(x), a)
    bounds = make_data((4,), dtype, seed=6)
    b = cubego.asarray(bounds, spec=spec)
    assert_matches(cubego.clip(x, b), np.maximum(a, bounds).astype(dtype))


def test_clip_special_cases(spec):
    a = np.array([np.nan, -np.inf, np.inf, -0.0, 5.0])
    x = cubego.asarray(a, spec=spec)
    assert_matches(cubego.clip(x, -1.0, 1.0), np.clip(a, -1.0, 1.0))
    assert_matches(cubego.clip(x, np.nan, 1.0), np.full(5, np.nan))
    i8 = cubego.asarray(np.array([-100, 0, 100], dtype=np.int8), spec=spec)
    assert_matches(cubego.clip(i8, -1000, 50), np.array([-100, 0, 50], dtype=np.int8))
    with pytest.raises(TypeError):
        cubego.clip(cubego.ones((2,), dtype=cubego.complex64, spec=spec), 0, 1)


# ---------------------------------------------------------------------- operators

BINARY_OPERATORS = {
    "__add__": np.add,
    "__sub__": np.subtract,
    "__mul__": np.multiply,
    "__truediv__": np.divide,
    "__floordiv__": _std_floor_divide,
    "__mod__": np.remainder,
    "__pow__": np.power,
    "__and__": np.bitwise_and,
    "__or__": np.bitwise_or,
    "__xor__": np.bitwise_xor,
    "__lshift__": np.left_shift,
    "__rshift__": np.right_shift,
}


def _operator_data(op: str, dtype: str, shape: tuple, seed: int) -> np.ndarray:
    if op in ("__lshift__", "__rshift__", "__pow__") and seed == 2:
        return make_data(shape, dtype, seed=seed, low=0, high=3)
    return make_data(shape, dtype, seed=seed, nonzero=op in ("__truediv__", "__floordiv__"))


@pytest.mark.parametrize("op", list(BINARY_OPERATORS))
def test_operators_forward_reflected_in_place(spec, op):
    dtype = "float64" if op == "__truediv__" else "int32"
    a = _operator_data(op, dtype, (5, 4), 1)
    b = _operator_data(op, dtype, (5, 4), 2)
    np_func = BINARY_OPERATORS[op]
    with np.errstate(all="ignore"):
        expected = np_func(a, b)
        expected_scalar = np_func(3, b) if op not in ("__lshift__", "__rshift__") else None
    x = cubego.asarray(a, chunks=(2, 3), spec=spec)
    y = cubego.asarray(b, chunks=(2, 3), spec=spec)
    assert_matches(getattr(x, op)(y), expected)
    reflected = "__r" + op[2:]
    assert_matches(getattr(y, reflected)(x), expected)
    if expected_scalar is not None:
        assert_matches(getattr(y, reflected)(3), expected_scalar)
    # In place: the same object, rebound to the new expression; other arrays unchanged.
    z = x
    before = x.compute()
    inplace = "__i" + op[2:]
    result = getattr(z, inplace)(y)
    assert result is x
    assert_matches(x, expected)
    np.testing.assert_array_equal(before, a)


def test_in_place_keeps_earlier_results(spec):
    x = cubego.asarray(np.arange(6.0), chunks=4, spec=spec)
    y = x * 2
    x += 1
    x *= 3
    np.testing.assert_array_equal(x.compute(), (np.arange(6.0) + 1) * 3)
    np.testing.assert_array_equal(y.compute(), np.arange(6.0) * 2)
    m = cubego.asarray(np.eye(3), spec=spec)
    m @= cubego.asarray(np.full((3, 3), 2.0), spec=spec)
    np.testing.assert_array_equal(m.compute(), np.full((3, 3), 2.0))


def test_in_place_refuses_dtype_and_shape_changes(spec):
    x = cubego.ones((3,), dtype=cubego.int32, spec=spec)
    with pytest.raises(TypeError, match="dtype"):
        x += 1.5
    with pytest.raises(ValueError, match="shape"):
        x += cubego.ones((2, 3), dtype=cubego.int32, spec=spec)
    np.testing.assert_array_equal(x.compute(), np.ones(3, dtype=np.int32))


def test_invert_and_unary(spec):
    a = np.array([0, 1, -5, 127], dtype=np.int8)
    x = cubego.asarray(a, spec=spec)
    assert_matches(~x, ~a)
    assert_matches(-x, -a)
    assert_matches(+x, a)
    assert_matches(abs(x), np.abs(a))
    b = cubego.asarray(np.array([True, False]), spec=spec)
    assert_matches(~b, np.array([False, True]))


@settings(max_examples=15, deadline=None)
@given(
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=3).map(tuple),
    data=st.data(),
    func=st.sampled_from(["add", "multiply", "maximum", "hypot", "logaddexp", "atan2"]),
)
def test_broadcast_chunkings(func, shape, data):
    chunks = tuple(data.draw(st.integers(1, n)) for n in shape)
    other = shape[data.draw(st.integers(0, len(shape) - 1)) :]
    spec = cubego.Spec(allowed_mem="100MB")
    a = make_data(shape, "float64", seed=7)
    b = make_data(other, "float64", seed=8)
    x = cubego.asarray(a, chunks=chunks, spec=spec)
    y = cubego.asarray(b, chunks=1, spec=spec)
    np_func = {"atan2": np.arctan2}.get(func, getattr(np, func))
    assert_matches(getattr(cubego, func)(x, y), np_func(a, b))
