"""cumulative_sum/prod, std, var, all, any, diff, Cubed's nan functions, pad and random."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cubego

from helpers import assert_matches, make_data

SPEC = cubego.Spec(allowed_mem="100MB")

GRID = [
    pytest.param((7, 5), (3, 2), id="7x5-irregular"),
    pytest.param((6,), (1,), id="6-by1"),
    pytest.param((2, 3, 4), (2, 3, 4), id="2x3x4-one"),
    pytest.param((0, 3), (2, 2), id="0x3-empty"),
]


def _x(shape, chunks, dtype="float64", seed=1, **kw):
    a = make_data(shape, dtype, seed=seed, **kw)
    return a, cubego.asarray(a, chunks=chunks, spec=SPEC)


def _check_all(pairs, rtol=None, atol=0.0):
    values = cubego.compute(*(got for got, _ in pairs))
    for value, (got, want) in zip(values, pairs, strict=True):
        want = np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype, (got, want.dtype)
        assert_matches(value, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize(("shape", "chunks"), GRID)
@pytest.mark.parametrize("dtype", ["int8", "float32", "complex128"])
def test_cumulative(shape, chunks, dtype):
    a, x = _x(shape, chunks, dtype, low=0, high=2)
    pairs = []
    for axis in range(a.ndim):
        # Sums without and products with the initial value on odd axes, and vice versa.
        for func, np_func in (
            ("cumulative_sum", np.cumulative_sum),
            ("cumulative_prod", np.cumulative_prod),
        ):
            initial = (func == "cumulative_prod") == (axis % 2 == 1)
            got = getattr(cubego, func)(x, axis=axis, include_initial=initial)
            pairs.append((got, np_func(a, axis=axis, include_initial=initial)))
    pairs.append(
        (
            cubego.cumulative_sum(x, axis=0, dtype="float64"),
            np.cumulative_sum(a, axis=0, dtype="float64"),
        )
    )
    _check_all(pairs, rtol=1e-4 if dtype == "float32" else None)
    if a.ndim > 1:
        with pytest.raises(ValueError, match="axis"):
            cubego.cumulative_sum(x)


@pytest.mark.parametrize(("shape", "chunks"), GRID)
@pytest.mark.parametrize("dtype", ["float64", "complex64"])
def test_var_std(shape, chunks, dtype):
    a, x = _x(shape, chunks, dtype)
    pairs = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for axis in [None, 0, -1]:
            for correction, keepdims in ((0, False), (1, True), (2.5, False)):
                kw = {"axis": axis, "keepdims": keepdims}
                pairs.append(
                    (cubego.var(x, correction=correction, **kw), np.var(a, ddof=correction, **kw))
                )
                pairs.append(
                    (cubego.std(x, correction=correction, **kw), np.std(a, ddof=correction, **kw))
                )
    _check_all(pairs, rtol=1e-4 if dtype != "float64" else 1e-10)


@pytest.mark.parametrize(("shape", "chunks"), GRID)
@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32"])
@pytest.mark.parametrize("split_every", [None, 2, {0: 3}])
def test_var_std_records(shape, chunks, dtype, split_every):
    # One tree reduction of (count, total, M2) records: every axis combination,
    # keepdims, corrections, fan-ins, numpy's result dtypes.
    a, x = _x(shape, chunks, dtype)
    axes = [None, 0, -1, (0, -1)] if len(shape) > 1 else [None, 0]
    pairs = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for axis in axes:
            for correction, keepdims in ((0, False), (1, True)):
                kw = {"axis": axis, "keepdims": keepdims}
                for name in ("var", "std"):
                    got = getattr(cubego, name)(
                        x, correction=correction, split_every=split_every, **kw
                    )
                    pairs.append((got, getattr(np, name)(a, ddof=correction, **kw)))
    _check_all(pairs, rtol=1e-5 if dtype == "float32" else 1e-12)


def _exact_var(a, axis, ddof=0):
    """Corrected two-pass variance with correctly rounded sums (math.fsum): exact
    to a few ulps, unlike numpy's, whose rounded mean costs it ~1e-12 here."""
    a = np.moveaxis(np.asarray(a), axis, -1) if axis is not None else np.asarray(a).reshape(1, -1)
    out = []
    for lane in a.reshape(-1, a.shape[-1]):
        lane = lane[~np.isnan(lane)]
        m = math.fsum(lane) / len(lane)
        d = lane - m
        m2 = math.fsum(d * d) - math.fsum(d) ** 2 / len(lane)
        out.append(m2 / (len(lane) - ddof))
    out = np.array(out).reshape(a.shape[:-1])
    return out if axis is not None else out[0]


@pytest.mark.parametrize("chunks", [(1000, 7), (7, 3), (1, 50)])
def test_var_is_accurate_far_from_zero(chunks):
    # 1e9 + N(0, 1): squares are ~1e18, so a sum-of-squares variance keeps no
    # digit of the ~1 result; the records' shifted totals keep them all.
    rng = np.random.default_rng(12)
    a = 1e9 + rng.standard_normal((1000, 50))
    x = cubego.asarray(a, chunks=chunks, spec=SPEC)
    for axis in (None, 0, 1):
        want = np.var(a, axis=axis)
        naive = np.mean(a * a, axis=axis) - np.mean(a, axis=axis) ** 2
        assert np.max(np.abs(naive - want) / want) > 1e-3  # the naive formula fails
        got = cubego.var(x, axis=axis).compute()
        np.testing.assert_allclose(got, want, rtol=1e-10)  # numpy's own error is ~3e-12
        np.testing.assert_allclose(got, _exact_var(a, axis), rtol=1e-13)
        std = cubego.std(x, axis=axis, correction=1).compute()
        np.testing.assert_allclose(std**2, _exact_var(a, axis, 1), rtol=1e-13)
        exact_mean = (
            math.fsum(a.ravel()) / a.size
            if axis is None
            else np.apply_along_axis(math.fsum, axis, a) / a.shape[axis]
        )
        np.testing.assert_allclose(cubego.nanmean(x, axis=axis).compute(), exact_mean, rtol=2e-16)
    b = a.copy()
    b[::3, ::7] = np.nan
    y = cubego.asarray(b, chunks=chunks, spec=SPEC)
    for axis in (None, 0, 1):
        got = cubego.nanvar(y, axis=axis).compute()
        np.testing.assert_allclose(got, np.nanvar(b, axis=axis), rtol=1e-10)
        np.testing.assert_allclose(got, _exact_var(b, axis), rtol=1e-13)


@pytest.mark.parametrize("split_every", [None, 2])
def test_complex_var_is_accurate_far_from_zero(split_every):
    # Records of the real and imaginary parts: var(z) = var(re) + var(im).
    rng = np.random.default_rng(13)
    a = (1e9 + rng.standard_normal((60, 20))) + 1j * (-5e8 + rng.standard_normal((60, 20)))
    x = cubego.asarray(a, chunks=(7, 6), spec=SPEC)
    for axis in (None, 0, 1):
        want = _exact_var(a.real, axis, 1) + _exact_var(a.imag, axis, 1)
        got = cubego.var(x, axis=axis, correction=1, split_every=split_every)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got.compute(), want, rtol=1e-13)
        np.testing.assert_allclose(got.compute(), np.var(a, axis=axis, ddof=1), rtol=1e-10)
    assert cubego.plan(cubego.var(x, axis=0, split_every=split_every)).num_ops == (
        1 if split_every is None else 4
    )


@pytest.mark.parametrize("split_every", [None, 2, 4])
def test_nan_moments_split_every_and_plan(split_every):
    a, x = _with_nans((40, 30), (3, 4))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        pairs = [
            (cubego.nanmean(x, axis=1, split_every=split_every), np.nanmean(a, axis=1)),
            (
                cubego.nanvar(x, axis=0, ddof=1, split_every=split_every),
                np.nanvar(a, axis=0, ddof=1),
            ),
            (cubego.nanstd(x, split_every=split_every), np.nanstd(a)),
        ]
    _check_all(pairs, rtol=1e-12)
    # One tree: no separate count, mean and squared-deviation reductions.
    p = cubego.plan(cubego.nanvar(x, axis=0, split_every=split_every))
    assert p.num_ops == {None: 1, 2: 4, 4: 2}[split_every]


@pytest.mark.parametrize(("shape", "chunks"), GRID)
@pytest.mark.parametrize("dtype", ["bool", "int16", "float64", "complex64"])
def test_all_any(shape, chunks, dtype):
    a, x = _x(shape, chunks, dtype, low=0, high=3)
    if dtype == "float64" and a.size:
        a.flat[0] = np.nan  # NaN is true
        x = cubego.asarray(a, chunks=chunks, spec=SPEC)
    pairs = []
    for axis in [None, 0, -1, tuple(range(a.ndim))]:
        for keepdims in (False, True):
            pairs.append(
                (
                    cubego.all(x, axis=axis, keepdims=keepdims),
                    np.all(a, axis=axis, keepdims=keepdims),
                )
            )
            pairs.append(
                (
                    cubego.any(x, axis=axis, keepdims=keepdims),
                    np.any(a, axis=axis, keepdims=keepdims),
                )
            )
    _check_all(pairs)


@pytest.mark.parametrize(("shape", "chunks"), GRID)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "float64"])
def test_diff(shape, chunks, dtype):
    a, x = _x(shape, chunks, dtype)
    pairs = []
    for axis in range(-a.ndim, a.ndim):
        for n in (0, 1, 2, 7):
            pairs.append((cubego.diff(x, axis=axis, n=n), np.diff(a, axis=axis, n=n)))
    edge_shape = list(a.shape)
    edge_shape[-1] = 2
    p = make_data(tuple(edge_shape), dtype, seed=9)
    px = cubego.asarray(p, spec=SPEC)
    pairs.append((cubego.diff(x, prepend=px, append=px), np.diff(a, prepend=p, append=p)))
    _check_all(pairs)
    with pytest.raises(ValueError):
        cubego.diff(x, n=-1)


# ---------------------------------------------------------------------- nan functions


def _with_nans(shape, chunks, dtype="float64", seed=2):
    a = make_data(shape, dtype, seed=seed)
    rng = np.random.default_rng(seed)
    a[rng.random(shape) < 0.3] = np.nan
    if a.ndim == 2 and a.shape[0] > 1:
        a[1, :] = np.nan  # a lane of only NaNs
    return a, cubego.asarray(a, chunks=chunks, spec=SPEC)


NAN_REDUCTIONS = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]


@pytest.mark.parametrize(("shape", "chunks"), GRID[:3])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_nan_reductions(shape, chunks, dtype):
    if dtype == "int32":
        a, x = _x(shape, chunks, dtype)
    else:
        a, x = _with_nans(shape, chunks, dtype)
    pairs = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in NAN_REDUCTIONS:
            for axis, keepdims in ((None, False), (0, True), (-1, False)):
                want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
                pairs.append((getattr(cubego, name)(x, axis=axis, keepdims=keepdims), want))
        pairs.append((cubego.nanvar(x, axis=0, ddof=1), np.nanvar(a, axis=0, ddof=1)))
        pairs.append((cubego.nanstd(x, axis=-1, correction=1), np.nanstd(a, axis=-1, ddof=1)))
    _check_all(pairs, rtol=1e-4 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize(("shape", "chunks"), GRID[:3])
def test_nan_arg_and_cumulative(shape, chunks):
    a, x = _with_nans(shape, chunks)
    valid = ~np.all(np.isnan(a), axis=0) if a.ndim > 1 else True
    pairs = []
    for name in ("nancumsum", "nancumprod"):
        for axis in (None, 0, -1):
            pairs.append((getattr(cubego, name)(x, axis=axis), getattr(np, name)(a, axis=axis)))
    b = np.where(np.isnan(a).all(axis=-1, keepdims=True), 0.0, a)  # no all-NaN lanes
    y = cubego.asarray(b, chunks=chunks, spec=SPEC)
    for name in ("nanargmax", "nanargmin"):
        for axis in (None, -1):
            pairs.append((getattr(cubego, name)(y, axis=axis), getattr(np, name)(b, axis=axis)))
        pairs.append(
            (
                getattr(cubego, name)(y, axis=-1, keepdims=True),
                getattr(np, name)(b, axis=-1, keepdims=True),
            )
        )
    _check_all(pairs)
    assert valid is not None


@pytest.mark.parametrize(("shape", "chunks"), GRID[:3])
def test_nanmedian(shape, chunks):
    a, x = _with_nans(shape, chunks)
    pairs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for axis in [0, -1, tuple(range(a.ndim))]:
            for keepdims in (False, True):
                pairs.append(
                    (
                        cubego.nanmedian(x, axis=axis, keepdims=keepdims),
                        np.nanmedian(a, axis=axis, keepdims=keepdims),
                    )
                )
    _check_all(pairs)
    i, y = _x(shape, chunks, "int16")
    assert_matches(cubego.nanmedian(y, axis=0), np.median(i, axis=0))
    with pytest.raises(TypeError, match="axis"):
        cubego.nanmedian(x, axis=None)


# ---------------------------------------------------------------------- pad and random


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
@pytest.mark.parametrize("width", [1, (2, 0), ((0, 3), (4, 1)), ((7, 9),)])
def test_pad(mode, width):
    a, x = _x((4, 3), (3, 2))
    kw = {"constant_values": 2.5} if mode == "constant" else {}
    assert_matches(cubego.pad(x, width, mode=mode, **kw), np.pad(a, width, mode=mode, **kw))


def test_pad_options():
    a, x = _x((4, 3), (3, 2), "int32")
    values = ((1, 2), (3, 4))
    assert_matches(cubego.pad(x, 2, constant_values=values), np.pad(a, 2, constant_values=values))
    assert cubego.pad(x, 1, chunks=2).chunksize == (2, 2)
    assert_matches(cubego.pad(x, 1, mode=None), np.pad(a, 1))
    with pytest.raises(ValueError, match="mode"):
        cubego.pad(x, 1, mode="mean")
    with pytest.raises(ValueError):
        cubego.pad(x, -1)
    with pytest.raises(ValueError, match="empty"):
        cubego.pad(cubego.zeros((0, 2), spec=SPEC), 1, mode="wrap")


def test_random_integers():
    x = cubego.random.integers((50, 40), chunks=(7, 9), spec=SPEC)
    assert x.dtype == cubego.int32
    a = x.compute()
    np.testing.assert_array_equal(a, x.compute())  # fixed when created
    assert a.min() < -(2**28) and a.max() > 2**28  # spans the dtype's range
    y = cubego.random.integers((1000,), dtype="uint8", low=3, high=7, spec=SPEC).compute()
    assert set(np.unique(y)) == {3, 4, 5, 6}
    z = cubego.random.integers((10,), dtype="int64", spec=SPEC).compute()
    assert z.dtype == np.int64
    with pytest.raises(TypeError):
        cubego.random.integers((3,), dtype="float64", spec=SPEC)
    with pytest.raises(ValueError):
        cubego.random.integers((3,), dtype="uint8", low=0, high=300, spec=SPEC)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_nansum_nanmax_hypothesis(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    chunks = tuple(data.draw(st.integers(1, n)) for n in shape)
    a = make_data(shape, "float64", seed=data.draw(st.integers(0, 5)))
    a[a > 0.8] = np.nan
    a[a < -1.5] = -np.inf
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    x = cubego.asarray(a, chunks=chunks, spec=SPEC)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _check_all(
            [
                (cubego.nansum(x, axis=axis), np.nansum(a, axis=axis)),
                (cubego.nanmax(x, axis=axis), np.nanmax(a, axis=axis)),
                (cubego.nanmean(x, axis=axis), np.nanmean(a, axis=axis)),
            ]
        )


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_record_reductions_hypothesis(data):
    # Random shapes, chunkings, axes and fan-ins: arg reductions and moments
    # against numpy, with NaNs, infinities and ties.
    shape = tuple(data.draw(st.lists(st.integers(1, 7), min_size=1, max_size=3)))
    chunks = tuple(data.draw(st.integers(1, n)) for n in shape)
    a = np.round(make_data(shape, "float64", seed=data.draw(st.integers(0, 5))), 1)
    a[a > 1.2] = np.nan
    a[a < -1.7] = -np.inf
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    split = data.draw(st.sampled_from([None, 2, 3]))
    x = cubego.asarray(a, chunks=chunks, spec=SPEC)
    pairs = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in ("argmax", "argmin", "var", "std", "nanvar", "nanmean"):
            got = getattr(cubego, name)(x, axis=axis, split_every=split)
            pairs.append((got, getattr(np, name)(a, axis=axis)))
    # Values of magnitude ~1 rounded to 0.1: a mean may cancel to ~1e-17, where
    # only an absolute tolerance of a few ulps of the data is meaningful.
    _check_all(pairs, rtol=1e-10, atol=1e-14)


def test_arg_records_keep_64_bit_values_exact():
    # Values a float64 record could not tell apart.
    big = np.array([2**62 + 1, 2**62 + 3, 2**62 + 2, -(2**63), 2**62 + 3], dtype="int64")
    x = cubego.asarray(big, chunks=2, spec=SPEC)
    assert int(cubego.argmax(x)) == 1 and int(cubego.argmin(x)) == 3
    ubig = np.array([2**64 - 2, 2**64 - 1, 2**63, 2**64 - 1], dtype="uint64")
    y = cubego.asarray(ubig, chunks=1, spec=SPEC)
    assert int(cubego.argmax(y, split_every=2)) == 1 and int(cubego.argmin(y)) == 2
