"""Window operations: ``moving_reduce``, ``sliding_window_view`` and xarray's ``rolling`` on cubego.

Results are compared with xarray's rolling on numpy data (bottleneck off, so
the reference is xarray's own window arithmetic), and the projected memory of
a rolling reduction is checked to follow the data, not the window.
"""

from __future__ import annotations

import contextlib
from unittest import mock

import numpy as np
import pytest

import cubego
from cubego.primitive.window import moving_reduce, sliding_window_view

xr = pytest.importorskip("xarray")

SPEC = cubego.Spec(allowed_mem="200MB")
KW = {"chunked_array_type": "cubego", "from_array_kwargs": {"spec": SPEC}}
FUNCS = ["sum", "mean", "max", "min", "prod", "std", "var", "count"]


@pytest.fixture(autouse=True)
def _options():
    with xr.set_options(use_bottleneck=False, use_numbagg=False, use_flox=False):
        yield


@contextlib.contextmanager
def raise_if_computes():
    def refuse(*args, **kwargs):
        raise AssertionError("a cubego computation ran while building a lazy xarray result")

    with mock.patch("cubego.core.compute.run", refuse):
        yield


def _data(shape=(40, 3, 5), nan=True, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.random(shape) + 0.5
    if nan:
        data[rng.random(shape) < 0.15] = np.nan
    return data


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize(
    "window, center, min_periods",
    [
        (1, False, None),
        (3, False, None),
        (4, True, None),
        (7, False, 2),
        (7, True, 1),
        (40, False, 5),
    ],
)
@pytest.mark.parametrize("chunks", [(6, 3, 5), (40, 2, 5), (1, 3, 5), (13, 1, 2)])
def test_xarray_rolling_matches_numpy(func, window, center, min_periods, chunks):
    da = xr.DataArray(_data(), dims=("time", "y", "x"))
    lazy = da.chunk(dict(zip(da.dims, chunks, strict=True)), **KW)

    def build(d):
        return getattr(d.rolling(time=window, center=center, min_periods=min_periods), func)()

    with raise_if_computes():
        result = build(lazy)
    assert isinstance(result.data, cubego.Array)
    assert "rolling" in " ".join(op.func for op in result.data.plan().ops)
    xr.testing.assert_allclose(result.compute(), build(da))


@pytest.mark.parametrize("func", ["sum", "mean", "max", "std"])
def test_rolling_on_other_axes_and_dtypes(func):
    ints = xr.DataArray(np.arange(60).reshape(6, 10) % 7, dims=("y", "x"))
    lazy = ints.chunk({"x": 3}, **KW)
    got = getattr(lazy.rolling(x=4), func)().compute()
    xr.testing.assert_allclose(got, getattr(ints.rolling(x=4), func)())
    f32 = xr.DataArray(_data((6, 10), nan=False).astype(np.float32), dims=("y", "x"))
    got32 = getattr(f32.chunk({"x": 4}, **KW).rolling(x=3, center=True), func)().compute()
    assert got32.dtype == np.float32
    xr.testing.assert_allclose(got32, getattr(f32.rolling(x=3, center=True), func)(), rtol=1e-5)


def test_dataset_rolling_and_std_ddof():
    ds = xr.Dataset(
        {"a": (("time", "x"), _data((30, 4))), "b": (("x",), np.arange(4.0))},
    )
    lazy = ds.chunk({"time": 7}, **KW)
    with raise_if_computes():
        result = lazy.rolling(time=5).mean()
    xr.testing.assert_allclose(result.compute(), ds.rolling(time=5).mean())
    xr.testing.assert_allclose(
        lazy.a.rolling(time=5).std(ddof=1).compute(), ds.a.rolling(time=5).std(ddof=1)
    )


def _namespace_nanmax(x, axis):
    return x.__array_namespace__().nanmax(x, axis=axis)


@pytest.mark.filterwarnings("ignore:All-NaN")
def test_other_rolling_operations_still_work():
    da = xr.DataArray(_data((20, 3)), dims=("time", "x"))
    lazy = da.chunk({"time": 6}, **KW)
    for build in (
        lambda d: d.rolling(time=3).median(),
        lambda d: d.rolling(time=3).construct("w"),
        lambda d: d.rolling(time=3, x=2).sum(),
        lambda d: d.rolling(time=4).reduce(_namespace_nanmax),
    ):
        xr.testing.assert_allclose(build(lazy).compute(), build(da))


def test_rolling_memory_follows_the_data():
    # rolling(time=30) over a variable that is one chunk along time: the projected
    # memory of every op is a small multiple of the chunk, not 30 times it
    spec = cubego.Spec(allowed_mem="2GB")
    da = xr.DataArray(np.zeros((365, 40, 50)), dims=("time", "y", "x"))
    lazy = da.chunk({"time": -1}, chunked_array_type="cubego", from_array_kwargs={"spec": spec})
    chunk = 365 * 40 * 50 * 8
    for func in ("mean", "sum", "max", "std", "count"):
        plan = getattr(lazy.rolling(time=30), func)().data.plan()
        assert plan.max_projected_mem < 10 * chunk + spec.reserved_mem, func


def test_sliding_window_memory_error_names_the_window():
    spec = cubego.Spec(allowed_mem="2MB", reserved_mem=0)
    x = cubego.ones((10, 20_000), chunks=(10, 20_000), spec=spec)  # 1.6 MB, one chunk
    windows = sliding_window_view(x, 5, axis=0)
    with pytest.raises(ValueError, match=r"window=5 along axis 0.*exceeds allowed_mem"):
        windows.compute()


@pytest.mark.parametrize("automatic_rechunk", [True, False])
@pytest.mark.parametrize("window, axis", [(3, 0), (5, 1), ((2, 3), (0, 1)), (1, 0), (10, 1)])
@pytest.mark.parametrize("chunks", [(4, 3), (1, 1), (6, 10)])
def test_sliding_window_view_matches_numpy(automatic_rechunk, window, axis, chunks):
    data = np.arange(60.0).reshape(6, 10)
    x = cubego.asarray(data, chunks=chunks, spec=SPEC)
    got = sliding_window_view(x, window, axis, automatic_rechunk=automatic_rechunk)
    expected = np.lib.stride_tricks.sliding_window_view(data, window, axis)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.compute(), expected)


def test_sliding_window_view_splits_blocks():
    x = cubego.ones((100, 8), chunks=(50, 8), spec=SPEC)
    split = sliding_window_view(x, 10, axis=0)
    assert max(split.chunks[0]) <= 5 and split.chunks[-1] == (10,)
    kept = sliding_window_view(x, 10, axis=0, automatic_rechunk=False)
    assert kept.chunks[0] == (50, 41)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"func": "median", "window": 3}, ValueError),
        ({"func": "sum", "window": 0}, ValueError),
        ({"func": "sum", "window": 11}, ValueError),
        ({"func": "sum", "window": 3, "axis": 2}, ValueError),
        ({"func": "sum", "window": 3, "min_count": -1}, ValueError),
    ],
)
def test_moving_reduce_errors(kwargs, error):
    x = cubego.ones((10, 4), chunks=5, spec=SPEC)
    with pytest.raises(error):
        moving_reduce(x, **kwargs)
    with pytest.raises(TypeError):
        moving_reduce(np.ones(4), "sum", 2)
