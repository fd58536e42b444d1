"""Groupby with flox on cubego: Cubed's groupby operations and flox's Cubed path.

xarray sends ``groupby(...).mean()`` to flox whenever flox is installed;
:mod:`cubego.routing` makes flox take its Cubed path for cubego arrays, which
calls :mod:`cubego.core.groupby`. Every result is built without computing and
compared with xarray on numpy data.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from unittest import mock

import numpy as np
import pytest

import cubego
import cubego.core.groupby
from cubego.primitive import groupby as groupby_module

xr = pytest.importorskip("xarray")
flox = pytest.importorskip("flox")
pd = pytest.importorskip("pandas")

SPEC = cubego.Spec(allowed_mem="200MB")
KW = {"chunked_array_type": "cubego", "from_array_kwargs": {"spec": SPEC}}


@contextlib.contextmanager
def raise_if_computes():
    def refuse(*args, **kwargs):
        raise AssertionError("a cubego computation ran while building a lazy xarray result")

    with mock.patch("cubego.core.compute.run", refuse):
        yield


@contextlib.contextmanager
def counting(name: str):
    """Count the calls of cubego.core.groupby.<name> (what flox's Cubed path calls)."""
    calls = []
    original = getattr(groupby_module, name)

    def spy(*args, **kwargs):
        calls.append(kwargs.get("num_groups"))
        return original(*args, **kwargs)

    with mock.patch.object(groupby_module, name, spy):
        yield calls


def _dataset(nan: bool = True) -> xr.Dataset:
    rng = np.random.default_rng(42)
    time = pd.date_range("2000-01-01", periods=400, freq="D")
    u = rng.random((400, 3, 4))
    v = rng.normal(size=(400, 3, 4))
    if nan:
        u[rng.random(u.shape) < 0.1] = np.nan
    return xr.Dataset(
        {"u": (("time", "y", "x"), u), "v": (("time", "y", "x"), v)},
        coords={"time": time, "y": np.arange(3), "x": np.arange(4.0)},
    )


@pytest.fixture(scope="module")
def ds() -> xr.Dataset:
    return _dataset()


@pytest.fixture
def lazy(ds) -> xr.Dataset:
    return ds.chunk({"time": 37, "y": 2}, **KW)


def test_cubed_module_path():
    assert cubego.core.groupby.groupby_reduction is groupby_module.groupby_reduction
    from cubego.core.groupby import groupby_blockwise  # Cubed's import path

    assert groupby_blockwise is groupby_module.groupby_blockwise


@pytest.mark.parametrize("func", ["mean", "sum", "max", "min", "count", "prod", "any"])
def test_groupby_month_uses_flox_cubed_path(func, lazy, ds):
    with xr.set_options(use_flox=True), counting("groupby_reduction") as calls:
        with raise_if_computes():
            result = getattr(lazy.groupby("time.month"), func)()
        assert all(isinstance(v.data, cubego.Array) for v in result.data_vars.values())
        assert calls and set(calls) == {12}
        got = result.compute()
    with xr.set_options(use_flox=False):
        expected = getattr(ds.groupby("time.month"), func)()
    xr.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("func", ["std", "var"])
def test_groupby_moments_take_xarrays_path(func, lazy, ds):
    # flox's Cubed path cannot store their intermediates (flox's MultiArray)
    with xr.set_options(use_flox=True), counting("groupby_reduction") as calls:
        with raise_if_computes():
            result = getattr(lazy.groupby("time.month"), func)(ddof=1)
        assert not calls
        got = result.compute()
    with xr.set_options(use_flox=False):
        expected = getattr(ds.groupby("time.month"), func)(ddof=1)
    xr.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("func", ["cumsum", "cumprod"])
def test_groupby_scans_take_xarrays_path(func, lazy, ds):
    # flox has no Cubed path for scans
    with xr.set_options(use_flox=True):
        with raise_if_computes():
            result = getattr(lazy.groupby("time.month"), func)()
        got = result.compute()
    with xr.set_options(use_flox=False):
        expected = getattr(ds.groupby("time.month"), func)()
    xr.testing.assert_allclose(got, expected)


def test_groupby_skipna_false_and_dataarray(lazy, ds):
    with xr.set_options(use_flox=True), counting("groupby_reduction") as calls:
        got = lazy.u.groupby("time.season").mean(skipna=False).compute()
        assert calls
    with xr.set_options(use_flox=False):
        expected = ds.u.groupby("time.season").mean(skipna=False)
    xr.testing.assert_allclose(got, expected)


def test_resample_uses_flox(lazy, ds):
    with xr.set_options(use_flox=True), counting("groupby_reduction") as calls:
        with raise_if_computes():
            result = lazy.resample(time="MS").mean()
        assert calls
        got = result.compute()
    with xr.set_options(use_flox=False):
        expected = ds.resample(time="MS").mean()
    xr.testing.assert_allclose(got, expected)


def test_blockwise_method(ds):
    lazy = ds.chunk({"time": 100}, **KW)
    with xr.set_options(use_flox=True), counting("groupby_blockwise") as calls:
        with raise_if_computes():
            result = lazy.resample(time="MS").sum(method="blockwise")
        assert calls
        got = result.compute()
    with xr.set_options(use_flox=False):
        expected = ds.resample(time="MS").sum()
    xr.testing.assert_allclose(got, expected)


def test_flox_on_numpy_is_unchanged(ds):
    with xr.set_options(use_flox=True), counting("groupby_reduction") as calls:
        got = ds.groupby("time.month").mean()
    assert not calls
    with xr.set_options(use_flox=False):
        xr.testing.assert_allclose(got, ds.groupby("time.month").mean())


def test_flox_routing_installed_after_import():
    # cubego was imported before flox in this process or after it: either way routed
    import flox.core
    import flox.xrutils

    assert flox.core.is_duck_cubed_array(cubego.ones(3))
    assert not flox.core.is_duck_cubed_array(np.ones(3))
    assert sys.modules.get("cubed") is not cubego  # no module named cubed is faked


# ---------------------------------------------------------------- the operations themselves


def _sum_chunk(a, by, axis, intermediate_dtype, num_groups):
    out = np.zeros(a.shape[:axis] + (num_groups,) + a.shape[axis + 1 :])
    count = np.zeros(out.shape, dtype=np.int64)
    for g in range(num_groups):
        sel = np.compress(by == g, a, axis=axis)
        out[(slice(None),) * axis + (g,)] = sel.sum(axis=axis)
        count[(slice(None),) * axis + (g,)] = sel.shape[axis]
    return {"total": out, "n": count}


def _sum_combine(a, axis, dummy_axis, dtype, keepdims):
    assert dummy_axis == -1 and keepdims
    return {k: v.sum(axis=dummy_axis, keepdims=True) for k, v in a.items()}


def _mean_aggregate(a, **kwargs):
    return a["total"] / a["n"]


@pytest.mark.parametrize("chunks", [(1, 3), (4, 2), (10, 5), (3, 5)])
@pytest.mark.parametrize("split_every", [None, 2])
def test_groupby_reduction_against_numpy(chunks, split_every):
    rng = np.random.default_rng(1)
    data = rng.random((10, 5))
    labels = rng.integers(0, 4, size=10)
    x = cubego.asarray(data, chunks=chunks, spec=SPEC)
    result = cubego.core.groupby.groupby_reduction(
        x,
        labels,
        func=_sum_chunk,
        combine_func=_sum_combine,
        aggregate_func=_mean_aggregate,
        axis=0,
        intermediate_dtype=[("total", np.float64), ("n", np.int64)],
        dtype=np.float64,
        num_groups=4,
        split_every=split_every,
    )
    assert result.shape == (4, 5)
    expected = np.stack(
        [
            data[labels == g].mean(axis=0) if (labels == g).any() else np.full(5, np.nan)
            for g in range(4)
        ]
    )
    np.testing.assert_allclose(result.compute(), expected)


def test_groupby_reduction_errors():
    x = cubego.ones((6, 2), chunks=(2, 2), spec=SPEC)
    kw = dict(
        func=_sum_chunk,
        combine_func=_sum_combine,
        aggregate_func=_mean_aggregate,
        intermediate_dtype=[("total", np.float64), ("n", np.int64)],
        dtype=np.float64,
        num_groups=2,
    )
    with pytest.raises(ValueError, match="single axis"):
        cubego.core.groupby.groupby_reduction(x, np.zeros(6, int), axis=(0, 1), **kw)
    with pytest.raises(ValueError, match="5 labels"):
        cubego.core.groupby.groupby_reduction(x, np.zeros(5, int), axis=0, **kw)
    with pytest.raises(ValueError, match="must be 1D"):
        cubego.core.groupby.groupby_reduction(x, np.zeros((6, 2), int), axis=0, **kw)
    with pytest.raises(TypeError, match="integer group labels"):
        cubego.core.groupby.groupby_reduction(x, np.zeros(6), axis=0, **kw)
    with pytest.raises(ValueError, match="num_groups"):
        cubego.core.groupby.groupby_reduction(
            x, np.zeros(6, int), axis=0, **{**kw, "num_groups": None}
        )


def _blockwise_sum(a, by, axis, start_group, num_groups):
    out = np.zeros(a.shape[:axis] + (num_groups,) + a.shape[axis + 1 :])
    for g in range(num_groups):
        out[(slice(None),) * axis + (g,)] = np.compress(by - start_group == g, a, axis=axis).sum(
            axis=axis
        )
    return out


@pytest.mark.parametrize("chunks", [(3, 7), (7, 7), (2, 4)])
def test_groupby_blockwise_against_numpy(chunks):
    rng = np.random.default_rng(2)
    data = rng.random((7, 12))
    labels = np.repeat(np.arange(5), [2, 3, 1, 4, 2])
    x = cubego.asarray(data, chunks=chunks, spec=SPEC)
    result = cubego.core.groupby.groupby_blockwise(
        x, labels, func=_blockwise_sum, axis=1, dtype=np.float64, num_groups=5
    )
    expected = np.stack([data[:, labels == g].sum(axis=1) for g in range(5)], axis=1)
    np.testing.assert_allclose(result.compute(), expected)


def test_groupby_blockwise_needs_sorted_labels():
    x = cubego.ones((4,), chunks=2, spec=SPEC)
    with pytest.raises(ValueError, match="sorted"):
        cubego.core.groupby.groupby_blockwise(
            x, np.array([1, 0, 1, 0]), func=_blockwise_sum, axis=0, dtype=np.float64, num_groups=2
        )


@pytest.mark.parametrize("order", [("cubego", "flox", "xarray"), ("xarray", "flox", "cubego")])
def test_routing_in_either_import_order(order):
    code = (
        "import importlib, sys\n"
        f"for name in {order!r}:\n"
        "    importlib.import_module(name)\n"
        "import cubego, flox.core, xarray\n"
        "from xarray.computation import rolling\n"
        "assert flox.core.is_duck_cubed_array(cubego.ones(2))\n"
        "assert rolling.DataArrayRolling._array_reduce.__module__ == 'cubego.routing'\n"
        "assert type(xarray.__spec__.loader).__name__ == 'SourceFileLoader'\n"
        "assert getattr(sys.modules.get('cubed'), '__file__', 'absent')  # no fake cubed\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
