"""datetime64 and timedelta64 arrays (int64 in the engine, numpy's dtype in Python).

Each operation is compared with numpy on the same values, NaT included; then
xarray's datetime data variables and ``idxmin``/``idxmax`` along a time
coordinate are compared with xarray on numpy data.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import cubego

SPEC = cubego.Spec(allowed_mem="200MB")

NS = np.array(
    [
        "2000-01-01T00:00",
        "NaT",
        "1969-12-31T23:59:59.5",
        "2024-02-29T12:00",
        "2000-01-01T00:00",
        "1990-06-15",
        "NaT",
        "2010-10-10T10:10:10",
    ],
    dtype="datetime64[ns]",
)
SECONDS = np.array(
    [
        "2000-01-01T00:00:01",
        "2001-01-01",
        "NaT",
        "2024-02-29T12:00",
        "1970-01-01",
        "1990-06-15",
        "1999-12-31",
        "2010-10-10T10:10:10",
    ],
    dtype="datetime64[s]",
)


def arr(x, chunks=3):
    return cubego.asarray(x, chunks=chunks, spec=SPEC)


def same(got, expected):
    got = got.compute() if isinstance(got, cubego.Array) else got
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected)


def test_round_trip_and_dtype():
    x = arr(NS)
    assert x.dtype == np.dtype("datetime64[ns]")
    assert "datetime64[ns]" in repr(x)
    same(x, NS)
    same(arr(NS - NS[0]), NS - NS[0])  # timedelta64[ns]


@pytest.mark.parametrize(
    "build",
    [
        lambda m, x: x[2:7],
        lambda m, x: x[::-1] if isinstance(x, np.ndarray) else x[::-1],
        lambda m, x: m.reshape(x, (2, 4)),
        lambda m, x: m.concat([x, x]) if m is cubego else np.concatenate([x, x]),
        lambda m, x: m.stack([x, x], axis=1),
        lambda m, x: m.broadcast_to(x, (2, 8)),
        lambda m, x: m.take(x, m.asarray([5, 0, 1]) if m is cubego else np.array([5, 0, 1])),
        lambda m, x: x[m.asarray([3, 1]) if m is cubego else np.array([3, 1])],
        lambda m, x: (
            m.permute_dims(m.reshape(x, (2, 4)), (1, 0))
            if m is cubego
            else np.transpose(x.reshape(2, 4))
        ),
    ],
    ids=["slice", "reverse", "reshape", "concat", "stack", "broadcast", "take", "index", "T"],
)
def test_layout_keeps_datetimes(build):
    same(build(cubego, arr(NS)), build(np, NS))


@pytest.mark.parametrize(
    "func", ["max", "min", "argmax", "argmin", "nanmax", "nanmin", "nanargmax", "nanargmin"]
)
@pytest.mark.parametrize("data", [NS, SECONDS, SECONDS[3:] - SECONDS[:5], NS[2:4]])
def test_reductions_follow_numpys_nat_rules(func, data):
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = getattr(np, func)(data)
    got = getattr(cubego, func)(arr(data)).compute()
    if func.endswith(("max", "min")) and "arg" not in func:
        assert got.dtype == data.dtype
        np.testing.assert_array_equal(got, expected)
    else:
        assert int(got) == int(expected)


def test_reductions_along_an_axis():
    data = NS.reshape(2, 4)
    same(cubego.max(arr(data, (1, 2)), axis=0), np.max(data, axis=0))
    same(cubego.nanmin(arr(data, (1, 2)), axis=1), np.nanmin(data, axis=1))


@pytest.mark.parametrize(
    "func",
    [
        "equal",
        "not_equal",
        "less",
        "less_equal",
        "greater",
        "greater_equal",
        "subtract",
        "maximum",
        "minimum",
    ],
)
def test_binary_datetime_operations(func):
    expected = getattr(np, func)(NS, SECONDS)
    same(getattr(cubego, func)(arr(NS), arr(SECONDS)), expected)


@pytest.mark.parametrize(
    "build",
    [
        lambda x, y: x - y,
        lambda x, y: (x - y) + y,
        lambda x, y: x - (x - y),
        lambda x, y: x > np.datetime64("2000-01-01"),
        lambda x, y: x == np.datetime64("NaT"),
        lambda x, y: x != np.datetime64("NaT"),
        lambda x, y: x + np.timedelta64(90, "m"),
        lambda x, y: (x - y) * 3,
        lambda x, y: (x - y) / np.timedelta64(1, "h"),
        lambda x, y: -(x - y),
        lambda x, y: abs(x - y),
        lambda x, y: np.datetime64("2005-05-05", "D") < x,
    ],
)
def test_arithmetic_and_comparisons(build):
    with np.errstate(all="ignore"):
        expected = build(NS, SECONDS)
    same(build(arr(NS), arr(SECONDS)), expected)


def test_isnan_where_astype():
    x = arr(NS)
    same(cubego.isnan(x), np.isnat(NS))
    same(
        cubego.where(cubego.isnan(x), np.datetime64("1970-01-02", "s"), x),
        np.where(np.isnat(NS), np.datetime64("1970-01-02", "s"), NS),
    )
    same(x.astype("datetime64[s]"), NS.astype("datetime64[s]"))
    same(arr(SECONDS).astype("datetime64[ns]"), SECONDS.astype("datetime64[ns]"))
    same(x.astype("int64"), NS.astype("int64"))
    same(arr(np.arange(5)).astype("datetime64[D]"), np.arange(5).astype("datetime64[D]"))


def test_pad_with_datetimes():
    x = arr(NS)
    same(
        cubego.pad(x, (2, 1), constant_values=np.datetime64("NaT")),
        np.pad(NS, (2, 1), constant_values=np.datetime64("NaT")),
    )
    same(
        cubego.pad(x, 1, constant_values=np.datetime64("1999-01-01", "s")),
        np.pad(NS, 1, constant_values=np.datetime64("1999-01-01", "s")),
    )
    sides = ((np.datetime64("NaT"), np.datetime64("2030-01-01", "ns")),)
    same(cubego.pad(x, (1, 2), constant_values=sides), np.pad(NS, (1, 2), constant_values=sides))
    with pytest.raises(TypeError):
        cubego.pad(x, 1, constant_values=0.5)


def test_chunk_functions_see_datetimes():
    x = arr(NS)
    years = cubego.map_blocks(
        lambda b: b.astype("datetime64[Y]").astype(np.int64) + 1970, x, dtype=np.int64
    )
    same(years, NS.astype("datetime64[Y]").astype(np.int64) + 1970)
    back = cubego.map_blocks(lambda b: b + np.timedelta64(1, "D"), x, dtype=NS.dtype)
    same(back, NS + np.timedelta64(1, "D"))


def test_pickle_keeps_the_dtype():
    x = arr(NS)
    same(pickle.loads(pickle.dumps(x)), NS)


@pytest.mark.parametrize(
    "build, error",
    [
        (lambda x: x + x, TypeError),
        (lambda x: cubego.sum(x), TypeError),
        (lambda x: cubego.sin(x), TypeError),
        (lambda x: x * 2, TypeError),
        (lambda x: x.astype("datetime64[M]"), TypeError),
        (lambda x: x.astype("timedelta64[ns]"), TypeError),
        (lambda x: cubego.concat([x, cubego.ones(2)]), TypeError),
    ],
    ids=["add", "sum", "sin", "multiply", "months", "kind", "concat"],
)
def test_refused_operations(build, error):
    with pytest.raises(error):
        build(arr(NS))


def test_refused_dtypes():
    with pytest.raises(TypeError, match="needs a unit"):
        cubego.asarray(np.array(["2000"], dtype="datetime64[Y]"))
    with pytest.raises(TypeError, match="no unit"):
        cubego.asarray(np.array(["NaT"], dtype="datetime64"))


# ---------------------------------------------------------------- xarray

xr = pytest.importorskip("xarray")
KW = {"chunked_array_type": "cubego", "from_array_kwargs": {"spec": SPEC}}


@pytest.fixture
def ds():
    rng = np.random.default_rng(0)
    time = np.arange("2000-01-01", "2000-03-01", dtype="datetime64[D]").astype("datetime64[ns]")
    data = rng.random((time.size, 3, 4))
    data[0, 0, 0] = np.nan
    data[:, 2, 3] = np.nan  # an all-NaN series
    when = time[rng.integers(0, time.size, size=(3, 4))]
    when[1, 1] = np.datetime64("NaT")
    return xr.Dataset(
        {"a": (("time", "y", "x"), data), "when": (("y", "x"), when)},
        coords={"time": time, "y": np.arange(3), "x": np.arange(4.0)},
    )


@pytest.fixture(autouse=False)
def no_flox():
    with xr.set_options(use_flox=False, chunk_manager="cubego"):
        yield


@pytest.mark.parametrize(
    "build",
    [
        lambda d: d.when,
        lambda d: d.when.max(),
        lambda d: d.when.min(skipna=False),
        lambda d: d.when.max("x"),
        lambda d: d.when > np.datetime64("2000-02-01"),
        lambda d: d.when - np.datetime64("2000-01-01", "ns"),
        lambda d: (d.when - d.when.min()).max(),
        lambda d: d.when.isnull(),
        lambda d: d.when.isel(x=[0, 2]),
        lambda d: d.when.shift(x=1),
        lambda d: d.when.diff("x"),
        lambda d: d.when.where(d.when > np.datetime64("2000-01-15")),
        lambda d: d.a.idxmax("time"),
        lambda d: d.a.idxmin("time"),
        lambda d: d.a.idxmax("time", skipna=False),
        lambda d: d.a.idxmax("x"),
    ],
)
def test_xarray_datetime_variables(build, ds, no_flox):
    lazy = ds.chunk({"time": 7, "x": 2}, **KW)
    result = build(lazy)
    assert isinstance(result.data, cubego.Array)
    xr.testing.assert_identical(result.compute(), build(ds))


def test_zarr_round_trip_of_datetime_variables(tmp_path, ds):
    # xarray stores datetimes CF-encoded (integers and a units attribute); opened
    # lazily, they are decoded block by block into cubego datetime arrays
    ds.to_zarr(tmp_path / "a.zarr")
    opened = xr.open_zarr(tmp_path / "a.zarr", **KW)
    assert isinstance(opened.when.data, cubego.Array)
    assert opened.when.dtype.kind == "M"
    xr.testing.assert_identical(opened.when.compute(), ds.when)
    # and written back from cubego arrays
    lazy = ds.chunk({"time": 7}, **KW)
    lazy.to_zarr(tmp_path / "b.zarr")
    xr.testing.assert_identical(xr.open_zarr(tmp_path / "b.zarr").load(), ds)
