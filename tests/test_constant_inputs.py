"""Constant virtual arrays (ones, zeros, full, empty) read as broadcast scalars.

Map and reduce tasks take a constant input's regions as its one value
through zero strides instead of filling them (docs/execution.md); these
tests hold the results to numpy's for every kind of dtype, with stored and
other virtual arrays, broadcasting, where, astype, reductions (nan ones and
arg ones too) and computations whose only inputs are constants.
"""

from __future__ import annotations

import numpy as np
import pytest
import zarr

import cubego

from helpers import assert_matches, make_data

DTYPES = ["float64", "float32", "int32", "bool", "complex128", "complex64"]
SHAPE, CHUNKS = (37, 23), (10, 7)


def constants(dtype, spec, shape=SHAPE, chunks=CHUNKS):
    """(cubego, numpy) pairs of the constant arrays of *dtype*."""
    value = {"bool": True, "int32": -3, "complex128": 0.6 - 0.8j, "complex64": 0.8 + 0.6j}.get(
        dtype, 0.1
    )
    return [
        (cubego.ones(shape, dtype=dtype, chunks=chunks, spec=spec), np.ones(shape, dtype=dtype)),
        (cubego.zeros(shape, dtype=dtype, chunks=chunks, spec=spec), np.zeros(shape, dtype=dtype)),
        (
            cubego.full(shape, value, dtype=dtype, chunks=chunks, spec=spec),
            np.full(shape, value, dtype=dtype),
        ),
    ]


def stored(dtype, spec, shape=SHAPE, chunks=CHUNKS, seed=1):
    data = make_data(shape, dtype, seed=seed, nonzero=True)
    return cubego.asarray(data, chunks=chunks, spec=spec), data


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_with_stored_and_virtual(spec, dtype):
    x, xd = stored(dtype, spec)
    r = cubego.random.random(SHAPE, chunks=CHUNKS, spec=spec)
    rd = r.compute()
    for c, cd in constants(dtype, spec):
        if dtype == "bool":
            assert_matches(cubego.logical_and(c, x), np.logical_and(cd, xd))
            assert_matches(cubego.logical_or(x, c), np.logical_or(xd, cd))
            assert_matches(cubego.logical_xor(c, c), np.logical_xor(cd, cd))
        else:
            assert_matches(c + x, cd + xd)
            assert_matches(x * c, xd * cd)
            assert_matches(c - c * 2, cd - cd * 2)
        assert_matches(c == x, cd == xd)
        # With another virtual array (random).
        assert_matches(cubego.astype(c, "float64") * r, cd.astype("float64") * rd)
        assert_matches(cubego.where(r < 0.5, c, x), np.where(rd < 0.5, cd, xd))
        assert_matches(
            cubego.astype(c, "float32") + cubego.astype(x, "float32"),
            cd.astype("float32") + xd.astype("float32"),
        )


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_transcendental_of_constants(spec, dtype):
    for c, cd in constants(dtype, spec):
        assert_matches(cubego.exp(c), np.exp(cd))
        assert_matches(cubego.sqrt(c + 1), np.sqrt(cd + 1))
        assert_matches(cubego.log(c + 2) * c, np.log(cd + 2) * cd)


def test_where_with_constant_condition_and_branches(spec):
    x, xd = stored("float64", spec)
    yes = cubego.full(SHAPE, True, dtype="bool", chunks=CHUNKS, spec=spec)
    no = cubego.zeros(SHAPE, dtype="bool", chunks=CHUNKS, spec=spec)
    assert_matches(cubego.where(yes, x, 0.5), xd)
    assert_matches(
        cubego.where(no, x, cubego.full(SHAPE, 2.5, chunks=CHUNKS, spec=spec)), np.full(SHAPE, 2.5)
    )
    # empty's values are unspecified: a where that never picks them.
    e = cubego.empty(SHAPE, chunks=CHUNKS, spec=spec)
    assert_matches(cubego.where(no, e, x), xd)


@pytest.mark.parametrize(
    ("cshape", "xshape"),
    [
        ((1, 23), (37, 23)),
        ((37, 1), (37, 23)),
        ((23,), (37, 23)),
        ((37, 23), (23,)),
        ((5, 1, 23), (37, 1)),
    ],
    ids=str,
)
def test_broadcasting(spec, cshape, xshape):
    c = cubego.full(cshape, 0.3, chunks=5, spec=spec)
    x, xd = stored("float64", spec, shape=xshape, chunks=6)
    cd = np.full(cshape, 0.3)
    assert_matches(c + x, cd + xd)
    assert_matches(x / c, xd / cd)
    assert_matches(cubego.sum(c * x, axis=0), np.sum(cd * xd, axis=0))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "complex128"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions(spec, dtype, axis):
    x, xd = stored(dtype, spec)
    for c, cd in constants(dtype, spec):
        assert_matches(cubego.sum(c, axis=axis), np.sum(cd, axis=axis))
        assert_matches(cubego.sum(c + 1, axis=axis), np.sum(cd + 1, axis=axis))
        assert_matches(cubego.sum(c * x, axis=axis), np.sum(cd * xd, axis=axis))
        assert_matches(cubego.prod(c, axis=axis), np.prod(cd, axis=axis))
        if dtype != "int32":
            assert_matches(cubego.mean(c, axis=axis), np.mean(cd, axis=axis))
            assert_matches(cubego.mean(c - x, axis=axis), np.mean(cd - xd, axis=axis))
            assert_matches(cubego.nansum(c, axis=axis), np.nansum(cd, axis=axis))
            assert_matches(cubego.nansum(c + x, axis=axis), np.nansum(cd + xd, axis=axis))
            assert_matches(cubego.nanmean(c * 2, axis=axis), np.nanmean(cd * 2, axis=axis))
        if dtype.startswith("complex"):
            continue
        assert_matches(cubego.max(c, axis=axis), np.max(cd, axis=axis))
        assert_matches(cubego.min(c - x, axis=axis), np.min(cd - xd, axis=axis))
        assert_matches(cubego.argmax(c, axis=axis), np.argmax(cd, axis=axis))
        assert_matches(cubego.argmin(c + x, axis=axis), np.argmin(cd + xd, axis=axis))
        assert_matches(cubego.nanmax(c + x, axis=axis), np.nanmax(cd + xd, axis=axis))
        if dtype != "int32":
            assert_matches(cubego.nanargmax(c * 3, axis=axis), np.nanargmax(cd * 3, axis=axis))
            assert_matches(cubego.var(c + x, axis=axis), np.var(cd + xd, axis=axis))


def test_bool_reductions(spec):
    x, xd = stored("bool", spec)
    for c, cd in constants("bool", spec):
        for axis in [None, 0, 1]:
            assert_matches(cubego.any(c, axis=axis), np.any(cd, axis=axis))
            assert_matches(
                cubego.all(cubego.logical_or(c, x), axis=axis),
                np.all(np.logical_or(cd, xd), axis=axis),
            )
            assert_matches(cubego.sum(c, axis=axis), np.sum(cd, axis=axis))
            assert_matches(
                cubego.sum(cubego.logical_and(c, x), axis=axis),
                np.sum(np.logical_and(cd, xd), axis=axis),
            )
            assert_matches(cubego.argmax(c, axis=axis), np.argmax(cd, axis=axis))


def test_nan_constants(spec):
    nan = cubego.full(SHAPE, np.nan, chunks=CHUNKS, spec=spec)
    nd = np.full(SHAPE, np.nan)
    x, xd = stored("float64", spec)
    for axis in [None, 0, 1]:
        assert_matches(cubego.sum(nan + 1, axis=axis), np.sum(nd + 1, axis=axis))
        assert_matches(cubego.nansum(nan * 2, axis=axis), np.nansum(nd * 2, axis=axis))
        assert_matches(cubego.nansum(nan + x, axis=axis), np.nansum(nd + xd, axis=axis))
        assert_matches(cubego.max(nan + x, axis=axis), np.max(nd + xd, axis=axis))
        assert_matches(
            cubego.nanmax(cubego.where(x > 0, nan, x), axis=axis),
            np.nanmax(np.where(xd > 0, nd, xd), axis=axis),
        )


def test_only_constant_inputs_exact(spec):
    # W7's computation at a smaller size: exact.
    s = cubego.sum(cubego.ones((4000, 4000), chunks=500, spec=spec) + 1).compute()
    assert float(s) == 3.2e7
    assert (
        float(cubego.sum(cubego.ones((400, 300), chunks=(100, 70), spec=spec)).compute())
        == 120000.0
    )
    # Sums that round: the bits numpy gets from one block of the same length.
    for dtype in ["float64", "float32"]:
        got = cubego.sum(
            cubego.full((1000, 999), 0.1, dtype=dtype, chunks=(1000, 999), spec=spec) * 3
        ).compute()
        want = np.sum(np.full((1000, 999), 0.1, dtype=dtype) * 3)
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes(), (got, want)
        got = cubego.nansum(
            cubego.full((999, 1001), 1 / 3, dtype=dtype, chunks=(999, 1001), spec=spec) + 1
        ).compute()
        want = np.nansum(np.full((999, 1001), 1 / 3, dtype=dtype) + 1)
        assert np.allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-13)


def test_constant_map_to_zarr(spec, tmp_path):
    target = tmp_path / "twice.zarr"
    cubego.to_zarr(
        cubego.ones((50, 40), dtype="float32", chunks=(16, 16), spec=spec) * 2, str(target)
    )
    z = zarr.open_array(str(target), mode="r")
    np.testing.assert_array_equal(z[...], np.full((50, 40), 2, dtype="float32"))
    back = cubego.from_zarr(str(target), spec=spec)
    assert_matches(
        back + cubego.zeros((50, 40), dtype="float32", chunks=(16, 16), spec=spec),
        np.full((50, 40), 2, dtype="float32"),
    )
    # Integer and bool constants stored, then combined with a stored input.
    t2 = tmp_path / "ints.zarr"
    cubego.to_zarr(cubego.full((30, 20), 7, dtype="int32", chunks=(8, 8), spec=spec) // 2, str(t2))
    np.testing.assert_array_equal(
        zarr.open_array(str(t2), mode="r")[...], np.full((30, 20), 3, dtype="int32")
    )


@pytest.mark.parametrize(
    ("shape", "chunks"), [((), ()), ((0,), (2,)), ((3, 0), (2, 2)), ((1, 1), (1, 1))], ids=str
)
def test_zero_size_and_0d(spec, shape, chunks):
    c = cubego.full(shape, 2.5, chunks=chunks, spec=spec)
    cd = np.full(shape, 2.5)
    assert_matches(c * 2 + 1, cd * 2 + 1)
    assert_matches(cubego.sum(c + 1), np.sum(cd + 1))
    assert_matches(cubego.sum(cubego.ones(shape, chunks=chunks, spec=spec)), np.sum(np.ones(shape)))
    if cd.size:
        assert_matches(cubego.max(c - 1), np.max(cd - 1))
        assert_matches(cubego.argmax(c * 3), np.argmax(cd * 3))
