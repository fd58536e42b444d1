"""Reductions (sum, prod, mean, min, max) against numpy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import cubego

from helpers import FLOATING, NUMERIC, REAL, SHAPES_CHUNKS, assert_matches, make_data

# name: (numpy function, dtypes)
REDUCTIONS = {
    "sum": (np.sum, NUMERIC),
    "prod": (np.prod, NUMERIC),
    "mean": (np.mean, FLOATING),
    "min": (np.min, REAL),
    "max": (np.max, REAL),
}


def _axes(ndim):
    """None, every single axis (positive and negative) and every pair of axes."""
    axes = [None]
    axes += list(range(ndim))
    if ndim:
        axes.append(-1)
    axes += [(i, j) for i in range(ndim) for j in range(i + 1, ndim)]
    return axes


def _cases():
    for name, (_, dtypes) in REDUCTIONS.items():
        for dtype in dtypes:
            yield pytest.param(name, dtype, id=f"{name}-{dtype}")


def _rtol(dtype):
    """Tree reductions add in a different order than numpy."""
    if np.dtype(dtype).kind not in "fc":
        return None
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


@pytest.mark.parametrize(("name", "dtype"), list(_cases()))
@pytest.mark.parametrize(("shape", "chunks"), SHAPES_CHUNKS)
def test_reduction(spec, name, dtype, shape, chunks):
    np_func, _ = REDUCTIONS[name]
    # prod: values near 1 keep products of many elements finite
    opts = {"low": 1, "high": 2} if name == "prod" else {}
    a = make_data(shape, dtype, seed=1, **opts)
    x = cubego.asarray(a, chunks=chunks, spec=spec)
    for axis in _axes(len(shape)):
        for keepdims in (False, True):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # mean of an empty slice
                try:
                    expected = np_func(a, axis=axis, keepdims=keepdims)
                except ValueError:  # min/max of empty lanes: no identity
                    with pytest.raises(ValueError):
                        getattr(cubego, name)(x, axis=axis, keepdims=keepdims).compute()
                    continue
            actual = getattr(cubego, name)(x, axis=axis, keepdims=keepdims)
            assert_matches(actual, expected, rtol=_rtol(dtype))


@pytest.mark.parametrize("name", ["sum", "mean", "min", "max", "prod"])
@pytest.mark.parametrize("split_every", [None, 2, 3, 8])
def test_split_every(spec, name, split_every):
    a = make_data((40, 30), "float64", seed=2, low=0.9, high=1.1)
    x = cubego.asarray(a, chunks=(3, 4), spec=spec)
    np_func = REDUCTIONS[name][0]
    for axis in (None, 0, 1):
        actual = getattr(cubego, name)(x, axis=axis, split_every=split_every)
        assert_matches(actual, np_func(a, axis=axis), rtol=1e-10)


@pytest.mark.parametrize(
    ("name", "dtype", "result_dtype"),
    [
        ("sum", "int8", "int64"),
        ("sum", "int32", "int64"),
        ("sum", "uint8", "uint64"),
        ("sum", "float32", "float32"),
        ("prod", "int16", "int64"),
        ("prod", "uint32", "uint64"),
        ("mean", "float32", "float32"),
        ("min", "int8", "int8"),
        ("max", "uint16", "uint16"),
    ],
)
def test_default_result_dtypes(spec, name, dtype, result_dtype):
    a = make_data((6, 5), dtype, seed=3, low=1, high=3)
    x = cubego.asarray(a, chunks=2, spec=spec)
    result = getattr(cubego, name)(x)
    assert result.dtype == np.dtype(result_dtype)
    assert_matches(result, REDUCTIONS[name][0](a), rtol=1e-5)


@pytest.mark.parametrize(
    ("name", "dtype", "result_dtype"),
    [
        ("sum", "int8", "int8"),
        ("sum", "int32", "float64"),
        ("sum", "float32", "float64"),
        ("prod", "int64", "int32"),
        ("mean", "float32", "float64"),
    ],
)
def test_dtype_argument(spec, name, dtype, result_dtype):
    a = make_data((6, 5), dtype, seed=4, low=1, high=2)
    x = cubego.asarray(a, chunks=(4, 2), spec=spec)
    result = getattr(cubego, name)(x, axis=1, dtype=result_dtype)
    expected = REDUCTIONS[name][0](a, axis=1, dtype=result_dtype)
    assert_matches(result, expected, rtol=1e-5)


@pytest.mark.parametrize("name", ["sum", "mean", "min", "max", "prod"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_and_inf(spec, name, dtype):
    a = make_data((6, 4), dtype, seed=5, low=1, high=2)
    a[1, 2] = np.nan
    a[4, 0] = np.inf
    a[3, 3] = -np.inf
    x = cubego.asarray(a, chunks=(2, 3), spec=spec)
    np_func = REDUCTIONS[name][0]
    for axis in (None, 0, 1):
        with np.errstate(all="ignore"):
            expected = np_func(a, axis=axis)
        assert_matches(getattr(cubego, name)(x, axis=axis), expected, rtol=1e-5)


def test_mean_of_empty_is_nan(spec):
    x = cubego.zeros((0, 3), chunks=2, spec=spec)
    assert_matches(cubego.mean(x, axis=0), np.full(3, np.nan))
    assert_matches(cubego.sum(x), np.float64(0).reshape(()))


def test_integer_sums_are_exact(spec):
    a = np.arange(1000, dtype=np.int64) * 1_000_003
    x = cubego.asarray(a, chunks=7, spec=spec)
    assert_matches(cubego.sum(x), np.sum(a))
    assert int(cubego.max(x)) == 999 * 1_000_003


def test_mean_is_accurate(spec):
    a = np.full(10_000, 0.1) + np.linspace(0, 1e-6, 10_000)
    x = cubego.asarray(a, chunks=33, spec=spec)
    np.testing.assert_allclose(float(cubego.mean(x)), np.mean(a), rtol=1e-14)


@pytest.mark.parametrize("axis", [2, -3, (0, 0)])
def test_invalid_axis(spec, axis):
    x = cubego.ones((3, 4), chunks=2, spec=spec)
    with pytest.raises((ValueError, IndexError)):
        cubego.sum(x, axis=axis)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64"])
def test_mean_of_integers_is_numpy_like(spec, dtype):
    a = make_data((5, 4), dtype, seed=6)
    x = cubego.asarray(a, chunks=3, spec=spec)
    assert_matches(cubego.mean(x), np.mean(a))
    assert_matches(cubego.mean(x, axis=1), np.mean(a, axis=1))


# Tree reductions carrying records: arg reductions (index, value), the moments
# behind var/std/nanmean (count, total, M2); the fan-in from the memory budget.

ARG_REDUCTIONS = ["argmax", "argmin", "nanargmax", "nanargmin"]


def _arg_data(shape, dtype, seed):
    """Few distinct values (ties across blocks), NaNs in floats but no all-NaN lane."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.3
    a = rng.integers(0, 4, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "f" and a.size:
        a[rng.random(shape) < 0.2] = np.nan
        a.flat[0] = 1  # every lane of every axis below keeps a number: see _no_all_nan
    return a


def _no_all_nan(a, axis):
    return a.dtype.kind != "f" or a.size == 0 or not np.isnan(a).all(axis=axis).any()


@pytest.mark.parametrize("name", ARG_REDUCTIONS)
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "int64", "float32", "float64"])
@pytest.mark.parametrize(("shape", "chunks"), SHAPES_CHUNKS)
def test_arg_reductions(spec, name, dtype, shape, chunks):
    a = _arg_data(shape, dtype, seed=7)
    x = cubego.asarray(a, chunks=chunks, spec=spec)
    np_func = getattr(np, name)
    for axis in [None] + list(range(len(shape))) + ([-1] if shape else []):
        for keepdims in (False, True):
            try:
                expected = np_func(a, axis=axis, keepdims=keepdims)
            except ValueError:  # empty sequence, or an all-NaN slice
                with pytest.raises(ValueError):
                    getattr(cubego, name)(x, axis=axis, keepdims=keepdims).compute()
                continue
            if not _no_all_nan(a, axis):
                continue
            assert_matches(getattr(cubego, name)(x, axis=axis, keepdims=keepdims), expected)


@pytest.mark.parametrize("name", ARG_REDUCTIONS)
@pytest.mark.parametrize("split_every", [None, 2, 3, 8, {0: 2, 1: 5}])
def test_arg_reductions_split_every(spec, name, split_every):
    a = _arg_data((40, 30), "float64", seed=8)
    a[:, 0] = 1.0  # no all-NaN row
    a[0, :] = 1.0  # no all-NaN column
    x = cubego.asarray(a, chunks=(3, 4), spec=spec)
    for axis in (None, 0, 1):
        actual = getattr(cubego, name)(x, axis=axis, split_every=split_every)
        assert_matches(actual, getattr(np, name)(a, axis=axis))


def test_arg_ties_and_nans_across_blocks(spec):
    # The maximum 5 appears in blocks 3 and 1 (index 4 first); NaN first at index 9.
    a = np.array([0, 1, 2, 3, 5, 1, 5, 2, 0, np.nan, 3, np.nan, 5.0])
    x = cubego.asarray(a, chunks=2, spec=spec)
    for split in (None, 2):
        assert int(cubego.argmax(x, split_every=split)) == 9
        assert int(cubego.argmin(x, split_every=split)) == 9
        assert int(cubego.nanargmax(x, split_every=split)) == 4
        assert int(cubego.nanargmin(x, split_every=split)) == 0
    b = np.array([[3, 1, 3], [1, 3, 0]], dtype="int16")
    y = cubego.asarray(b, chunks=1, spec=spec)
    assert int(cubego.argmax(y)) == 0 and int(cubego.argmin(y)) == 5
    assert_matches(cubego.argmax(y, axis=1), np.argmax(b, axis=1))


def test_nanarg_all_nan_slice_raises(spec):
    a = np.array([[1.0, np.nan], [np.nan, np.nan], [2.0, 0.5]])
    x = cubego.asarray(a, chunks=1, spec=spec)
    with pytest.raises(ValueError, match="All-NaN slice"):
        cubego.nanargmax(x, axis=1).compute(retries=0)
    with pytest.raises(ValueError, match="All-NaN slice"):
        cubego.nanargmin(cubego.asarray(np.full(4, np.nan), chunks=3, spec=spec)).compute()
    assert_matches(cubego.nanargmax(x, axis=0), np.nanargmax(a, axis=0))


def test_arg_reductions_refuse_complex(spec):
    x = cubego.ones((3,), dtype="complex128", chunks=2, spec=spec)
    with pytest.raises(TypeError):
        cubego.argmax(x)


def _reduced_extent(x, axes):
    n = 1
    for d in axes:
        n *= len(x.chunks[d])
    return n


def _rounds(nblocks, split):
    """Rounds of a tree reduction folding *split* blocks per task each round."""
    rounds = 1
    while nblocks > split:
        nblocks = -(-nblocks // split)
        rounds += 1
    return rounds


@pytest.mark.parametrize(
    "build",
    [
        lambda x, **kw: cubego.sum(x, axis=0, **kw),
        lambda x, **kw: cubego.var(x, axis=0, **kw),
        lambda x, **kw: cubego.argmax(x, axis=0, **kw),
        lambda x, **kw: cubego.nanmean(x, axis=0, **kw),
    ],
    ids=["sum", "var", "argmax", "nanmean"],
)
def test_rounds_fan_in_from_memory(tmp_path, build):
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="200MB", reserved_mem="10MB")
    x = cubego.ones((4000, 30), chunks=(1, 30), spec=spec)
    # split_every given: every round folds that many blocks (Cubed's tree).
    for split in (2, 4, 16):
        p = cubego.plan(build(x, split_every=split))
        assert p.num_ops == _rounds(4000, split), split
        assert p.num_stages == p.num_ops
    # Not given: 16 blocks per first-round task, then every partial result at once.
    p = cubego.plan(build(x))
    assert p.num_ops == 2 < _rounds(4000, 4)
    assert p.max_projected_mem <= spec.allowed_mem
    assert not p.exceeds_memory


@pytest.mark.parametrize("name", ["sum", "var", "argmax"])
def test_rounds_within_a_tight_budget(tmp_path, name):
    # Partial results of 0.8 MB (sum) to 3.2 MB (var's records) per task: 25 MB
    # holds few at once, so combining takes several rounds, each projected within
    # allowed_mem, and never more than streaming 16 blocks per task would take.
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="25MB", reserved_mem="1MB")
    a = make_data((2000, 1), "float64", seed=9)
    x = cubego.broadcast_to(
        cubego.asarray(a, chunks=(1, 1), spec=spec), (2000, 100_000), chunks=(1, 100_000)
    )
    p = cubego.plan(getattr(cubego, name)(x, axis=0))
    assert not p.exceeds_memory
    assert p.max_projected_mem <= spec.allowed_mem
    rounds = [op for op in p.ops if op.func == name]
    assert len(rounds) == 3 == _rounds(2000, 16)
    assert [op.num_tasks for op in rounds][0] == 2000 // 16


def test_rounds_hold_as_many_partial_results_as_fit(tmp_path):
    # 500 partial results of 0.8 MB: 45 MB holds 50 of them besides the rest, so
    # the second round has 10 tasks and the third one: 3 rounds where streaming 16
    # blocks per task takes 4 (500 -> 32 -> 2 -> 1).
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="45MB", reserved_mem="1MB")
    a = make_data((8000, 1), "float64", seed=9)
    x = cubego.broadcast_to(
        cubego.asarray(a, chunks=(1, 1), spec=spec), (8000, 100_000), chunks=(1, 100_000)
    )
    p = cubego.plan(cubego.sum(x, axis=0))
    rounds = [op for op in p.ops if op.func == "sum"]
    assert [op.num_tasks for op in rounds] == [500, 10, 1]
    assert _rounds(8000, 16) == 4
    assert all(op.projected_mem <= spec.allowed_mem for op in rounds)
    # One more partial result per task would not fit.
    assert rounds[1].projected_mem + 800_000 > spec.allowed_mem


def test_rounds_of_multi_axis_reductions(tmp_path):
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="100MB", reserved_mem="1MB")
    a = make_data((60, 50, 3), "float64", seed=10)
    x = cubego.asarray(a, chunks=(2, 2, 3), spec=spec)
    for split in (None, 4, {0: 3, 1: 2}):
        r = cubego.var(x, axis=(0, 1), split_every=split)
        assert_matches(r, np.var(a, axis=(0, 1)), rtol=1e-12)
        assert_matches(cubego.argmin(x, split_every=split), np.argmin(a))
    assert cubego.plan(cubego.var(x, axis=(0, 1))).num_ops == 2


def test_split_every_validation(spec):
    x = cubego.ones((8, 8), chunks=2, spec=spec)
    with pytest.raises(ValueError):
        cubego.sum(x, split_every={0: 1})
    with pytest.raises(ValueError):
        cubego.sum(x, split_every={5: 2})
    with pytest.raises(ValueError):
        cubego.sum(x, split_every=0)
    assert_matches(cubego.sum(x, axis=0, split_every={-2: 3}), np.full(8, 8.0))


@pytest.mark.parametrize(
    "make",
    [
        lambda x: cubego.var(x, axis=0),
        lambda x: cubego.std(x, axis=1, correction=1),
        lambda x: cubego.argmax(x, axis=0),
        lambda x: cubego.nanargmin(x),
        lambda x: cubego.nanmean(x, axis=1),
    ],
    ids=["var", "std", "argmax", "nanargmin", "nanmean"],
)
def test_record_rounds_measured_within_projection(tmp_path, make):
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="100MB", reserved_mem="1MB")
    a = make_data((300, 200), "float64", seed=11)
    x = cubego.asarray(a, chunks=(7, 30), spec=spec)
    make(x).compute(max_workers=1)
    stats = cubego._last_stats()
    assert 0 < stats["max_projected_mem"] <= spec.allowed_mem
    for op in stats["ops"]:
        assert 0 < op["peak_allocated"] <= op["projected_mem"] - spec.reserved_mem, op


def test_fold_over_a_broadcast_dimension(spec):
    # A producer broadcasting along a folded dimension must not be fused into the fold.
    a = np.arange(5.0)[None, :]
    x = cubego.broadcast_to(cubego.asarray(a, chunks=(1, 2), spec=spec), (4, 5), chunks=(4, 2))
    b = np.broadcast_to(a, (4, 5))
    assert_matches(cubego.sum(x, axis=0), np.sum(b, axis=0))
    assert_matches(cubego.argmax(x), np.argmax(b))
    assert_matches(cubego.mean(x + 1, axis=(0, 1)), np.mean(b + 1))


@pytest.mark.parametrize("name", ["sum", "mean", "max", "var"])
@pytest.mark.parametrize(
    "key", [np.s_[10:40], np.s_[7:33, 2:], np.s_[:, 5:9], np.s_[30:], np.s_[12:13, 3:28]]
)
def test_reduction_of_a_stored_slice_fuses(spec, tmp_path, name, key):
    # A slice of a stored array folds into the reduction over it (no copy of
    # the slice is stored), on the chunks or across them, as numpy computes.
    a = make_data((48, 30), "float64", seed=5)
    row = make_data((30,), "float64", seed=6)
    cubego.to_zarr(cubego.asarray(a, chunks=(6, 10), spec=spec), str(tmp_path / "a.zarr"))
    x = cubego.from_zarr(str(tmp_path / "a.zarr"), spec=spec)
    r = cubego.asarray(row, chunks=(10,), spec=spec)
    for axis in (None, 0, 1):
        expected = getattr(np, name)(a[key] - row[key[-1] if isinstance(key, tuple) else slice(None)], axis=axis)
        y = getattr(cubego, name)(x[key] - (r[key[-1]] if isinstance(key, tuple) else r), axis=axis)
        funcs = [op.func for op in y.plan().ops]
        assert funcs[0].startswith("getitem+") and funcs[0] != "getitem+subtract", funcs
        assert_matches(y, expected, rtol=1e-10)


@pytest.mark.parametrize("key", [np.s_[12:42], np.s_[5:31, 3:], np.s_[::2]])
def test_anomaly_of_a_stored_slice(spec, tmp_path, key):
    # xs - mean(xs, axis=0) reads the slice in both passes: a unit-step
    # slice fuses into both and is never stored; a strided one is stored
    # once for the fold. Either way the values are numpy's.
    a = make_data((48, 30), "float64", seed=7)
    cubego.to_zarr(cubego.asarray(a, chunks=(6, 10), spec=spec), str(tmp_path / "a.zarr"))
    x = cubego.from_zarr(str(tmp_path / "a.zarr"), spec=spec)
    xs = x[key]
    y = cubego.sum((xs - cubego.mean(xs, axis=0)) ** 2, axis=0)
    funcs = [op.func for op in y.plan().ops]
    stored_views = funcs.count("getitem")
    assert stored_views == (1 if key == np.s_[::2] else 0), funcs
    ref = a[key]
    assert_matches(y, ((ref - ref.mean(axis=0)) ** 2).sum(axis=0), rtol=1e-10)
