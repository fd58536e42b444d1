"""xarray on cubego: the ``cubego`` chunk manager and what xarray calls on the namespace.

Every lazy operation is built under :func:`raise_if_computes`, which fails the
test if anything is computed (that is how xarray would load a whole variable
into memory), then computed and compared with the same operation on numpy.
flox is not used here (``use_flox=False``): xarray's own groupby path is
tested; flox's Cubed path on cubego is tested in ``test_xarray_groupby.py``.
"""

from __future__ import annotations

import contextlib
import pickle
from unittest import mock

import numpy as np
import pytest

import cubego

xr = pytest.importorskip("xarray")
dask_array = pytest.importorskip("dask.array")

from xarray.namedarray.parallelcompat import list_chunkmanagers  # noqa: E402

from cubego.core.chunks import normalize_chunks  # noqa: E402
from cubego.xarray_chunkmanager import CubegoManager  # noqa: E402

SPEC = cubego.Spec(allowed_mem="200MB")
KW = {"chunked_array_type": "cubego", "from_array_kwargs": {"spec": SPEC}}


@pytest.fixture(autouse=True)
def _options():
    with xr.set_options(chunk_manager="cubego", use_flox=False):
        yield


@contextlib.contextmanager
def raise_if_computes():
    """Fail if anything is computed inside the block (every computation goes through run)."""

    def refuse(*args, **kwargs):
        raise AssertionError("a cubego computation ran while building a lazy xarray result")

    with mock.patch("cubego.core.compute.run", refuse):
        yield


def _dataset(seed: int = 0, nan: bool = False) -> xr.Dataset:
    rng = np.random.default_rng(seed)
    a = rng.random((24, 6, 8))
    b = rng.random((24, 6, 8))
    if nan:
        a[rng.random(a.shape) < 0.2] = np.nan
    return xr.Dataset(
        {"a": (("time", "y", "x"), a), "b": (("time", "y", "x"), b)},
        coords={
            "time": np.arange("2000-01-01", "2000-01-25", dtype="datetime64[D]"),
            "y": np.arange(6),
            "x": np.arange(8.0),
        },
    )


@pytest.fixture
def ds() -> xr.Dataset:
    return _dataset(nan=True)


@pytest.fixture
def lazy(ds) -> xr.Dataset:
    return ds.chunk({"time": 5, "y": 3, "x": 4}, **KW)


def _is_cubego(obj) -> bool:
    variables = obj.data_vars.values() if isinstance(obj, xr.Dataset) else [obj]
    return all(isinstance(v.data, cubego.Array) for v in variables)


def assert_lazy_equal(build, lazy_obj, eager_obj, **kw):
    with raise_if_computes():
        result = build(lazy_obj)
        assert _is_cubego(result)
    xr.testing.assert_allclose(result.compute(), build(eager_obj), **kw)


# ---------------------------------------------------------------- discovery and chunks


def test_entry_point_is_discovered():
    managers = list_chunkmanagers()
    assert isinstance(managers["cubego"], CubegoManager)
    assert CubegoManager.available
    assert managers["cubego"].array_api is cubego


def test_chunk_gives_cubego_arrays(ds):
    c = ds.a.chunk({"time": 10}, **KW)
    assert isinstance(c.data, cubego.Array)
    assert c.data.spec == SPEC
    assert c.chunksizes == {"time": (10, 10, 4), "y": (6,), "x": (8,)}


@pytest.mark.parametrize(
    "chunks, expected",
    [
        (3, ((3, 1), (3, 3))),
        ({"x": 3}, ((3, 1), (6,))),
        ({"x": (3, 1)}, ((3, 1), (6,))),
        ({"x": "16B"}, ((1, 1, 1, 1), (6,))),
        ("16B", ((1, 1, 1, 1), (1, 1, 1, 1, 1, 1))),
        ("16MB", ((4,), (6,))),
        (-1, ((4,), (6,))),
    ],
)
def test_chunk_specifications(chunks, expected):
    da = xr.DataArray(np.arange(24.0).reshape(4, 6), dims=("x", "y"))
    assert da.chunk(chunks, **KW).data.chunks == expected


@pytest.mark.parametrize(
    "chunks, expected",
    [
        ({}, ((2, 2), (2, 2, 2))),
        ({"x": 3}, ((3, 1), (2, 2, 2))),
        ({"x": "16B"}, ((1, 1, 1, 1), (2, 2, 2))),
        ({"y": 3}, ((2, 2), (3, 3))),
    ],
)
def test_rechunk_keeps_unnamed_axes(chunks, expected):
    # .chunk on an already chunked array goes to the manager's rechunk;
    # axes not mentioned keep their chunks, byte sizes count the others.
    da = xr.DataArray(np.arange(24.0).reshape(4, 6), dims=("x", "y")).chunk(2, **KW)
    with raise_if_computes():
        out = da.chunk(chunks)
    assert out.data.chunks == expected
    np.testing.assert_array_equal(out.values, da.values)


NORMALIZE_CASES = [
    ((4, 6), (2, 2), None, None, None),
    ((4, 6), 3, None, None, None),
    ((4, 6), {0: 3}, None, None, None),
    ((4, 6), {1: (1, 5)}, None, None, None),
    ((4, 6), (-1, None), None, None, None),
    ((10,), (3, 3, 4), None, None, None),
    ((0, 5), "auto", None, "f8", None),
    ((100, 200), "auto", None, "f8", None),
    ((1000, 2000), "auto", 80_000, "f8", None),
    ((1000, 2000), ("auto", 100), 80_000, "f8", None),
    ((4, 6), {0: "16B"}, None, "f8", None),
    ((4, 6), "16B", None, "f8", None),
    ((4, 6), "16MB", None, "f8", None),
    ((5, 1000, 2000), "auto", 1_000_000, "f4", None),
    ((5000, 1000, 2000), "auto", "100MB", "f4", (10, 100, 100)),
    ((5000, 1000, 2000), "auto", "100MB", "f4", (10, 1000, 2000)),
    ((50000, 1000), "auto", None, "f8", (100, 100)),
    ((50000, 1000), ("auto", -1), None, "f8", (100, 100)),
    ((50000, 1000), "auto", "1MB", "f8", (1000, 1000)),
    ((365, 721, 1440), {0: "auto", 1: -1, 2: -1}, "500MB", "f4", (1, 721, 1440)),
]


@pytest.mark.parametrize("shape, chunks, limit, dtype, previous", NORMALIZE_CASES)
def test_normalize_chunks_matches_dask(shape, chunks, limit, dtype, previous):
    expected = dask_array.core.normalize_chunks(
        chunks, shape=shape, limit=limit, dtype=dtype, previous_chunks=previous
    )
    assert normalize_chunks(chunks, shape, limit, dtype, previous) == expected


@pytest.mark.parametrize("seed", range(40))
def test_normalize_chunks_auto_properties(seed):
    # With previous chunks, "auto" blocks are whole previous blocks when they
    # grow, and stay within the limit (one previous block at least).
    rng = np.random.default_rng(seed)
    ndim = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 3000, ndim))
    previous = tuple(int(rng.integers(1, n + 1)) for n in shape)
    limit = int(rng.integers(8, 10**7))
    out = normalize_chunks("auto", shape, limit, "f8", previous)
    assert tuple(sum(c) for c in out) == shape
    block = 8 * np.prod([max(c) for c in out])
    assert block <= max(
        limit, 8 * np.prod([min(p, n) for p, n in zip(previous, shape, strict=True)])
    )
    for c, p, n in zip(out, previous, shape, strict=True):
        if max(c) >= p:
            bounds = set(np.cumsum(c).tolist())
            assert bounds <= set(range(p, n, p)) | {n}


@pytest.mark.parametrize(
    "bad, error",
    [
        (((4, 6), None, None, None, None), ValueError),
        (((4, 6), (2, 2, 2), None, None, None), ValueError),
        (((4, 6), ((2, 1), 3), None, None, None), ValueError),
        (((4, 6), "auto", None, None, None), TypeError),
        (((4, 6), "12 parsecs", None, "f8", None), ValueError),
        (((4, 6), ("8B", "16B"), None, "f8", None), ValueError),
        (((4, 6), {5: 2}, None, None, None), ValueError),
        (((4, 6), 0, None, None, None), ValueError),
    ],
)
def test_normalize_chunks_errors(bad, error):
    shape, chunks, limit, dtype, previous = bad
    with pytest.raises(error):
        normalize_chunks(chunks, shape, limit, dtype, previous)


def test_get_auto_chunk_size_follows_the_spec():
    manager = CubegoManager()
    assert manager.get_auto_chunk_size() == 128 * 2**20  # 2 GB budget: Dask's size
    with cubego.config.set({"spec.allowed_mem": "200MB", "spec.reserved_mem": "0"}):
        assert manager.get_auto_chunk_size() == 20_000_000


def test_unify_chunks():
    manager = CubegoManager()
    x = cubego.ones((10, 20), chunks=(4, 5), spec=SPEC)
    y = cubego.ones((10,), chunks=(3,), spec=SPEC)
    chunkss, (x2, y2) = manager.unify_chunks(x, ("i", "j"), y, ("i",))
    # every boundary of (4, 4, 2) and of (3, 3, 3, 1)
    assert chunkss == {"i": (3, 1, 2, 2, 1, 1), "j": (5, 5, 5, 5)}
    assert x2.chunks == ((3, 1, 2, 2, 1, 1), (5, 5, 5, 5))
    assert y2.chunks == ((3, 1, 2, 2, 1, 1),)
    # a single-chunk blocking imposes nothing; numpy arguments are converted
    chunkss, (a, b) = manager.unify_chunks(x, ("i", "j"), np.ones(10), ("i",))
    assert chunkss["i"] == (4, 4, 2) and b.chunks == ((4, 4, 2),)
    with pytest.raises(ValueError, match="different lengths"):
        manager.unify_chunks(x, ("i", "j"), cubego.ones(7, spec=SPEC), ("i",))
    ds = xr.Dataset(
        {
            "u": (("x", "y"), np.ones((10, 20))),
            "v": (("x", "y"), np.ones((10, 20))),
        }
    )
    ds = ds.assign(u=ds.u.chunk({"x": 4, "y": 5}, **KW), v=ds.v.chunk({"x": 5, "y": 10}, **KW))
    assert dict(xr.unify_chunks(ds)[0].chunks) == {"x": (4, 1, 3, 2), "y": (5, 5, 5, 5)}


def test_shuffle_groups_are_contiguous():
    manager = CubegoManager()
    data = np.arange(40.0).reshape(10, 4)
    x = cubego.asarray(data, chunks=(3, 2), spec=SPEC)
    indexer = [[0, 5, 9], [1, 2], [3, 4, 6, 7, 8]]
    out = manager.shuffle(x, indexer, axis=0, chunks="auto")
    np.testing.assert_array_equal(out.compute(), data[np.concatenate(indexer)])
    assert out.chunks[0] == (3, 2, 5)
    with pytest.raises(NotImplementedError):
        manager.shuffle(x, indexer, axis=0, chunks=(5, 5))


# ---------------------------------------------------------------- opening data


@pytest.fixture
def stored(tmp_path, ds):
    path = tmp_path / "in.zarr"
    encoding = {v: {"chunks": (4, 3, 4)} for v in ds.data_vars}
    ds.to_zarr(path, encoding=encoding, zarr_format=3, consolidated=False)
    return path


@pytest.mark.parametrize(
    "chunks, expected",
    [
        ({}, ((4,) * 6, (3, 3), (4, 4))),
        (-1, ((24,), (6,), (8,))),
        ("auto", ((24,), (6,), (8,))),
        ({"time": 8}, ((8, 8, 8), (3, 3), (4, 4))),
        ({"time": 8, "x": -1}, ((8, 8, 8), (3, 3), (8,))),
    ],
)
def test_open_dataset(stored, ds, chunks, expected):
    with raise_if_computes():
        opened = xr.open_dataset(stored, engine="zarr", chunks=chunks, consolidated=False, **KW)
    assert isinstance(opened.a.data, cubego.Array)
    assert opened.a.data.chunks == expected
    assert opened.a.data.spec == SPEC
    xr.testing.assert_identical(opened.compute(), ds)


def test_open_zarr_reads_block_by_block(stored, ds):
    opened = xr.open_zarr(stored, consolidated=False, **KW)
    assert opened.a.data.chunks == ((4,) * 6, (3, 3), (4, 4))
    # the engine's tasks read one block each from xarray's lazy backend array
    reads = []
    from cubego.primitive import blockwise as _chunk_functions

    original = _chunk_functions._GetItem.__call__

    def spy(self, inputs, out, task):
        reads.append(out.size)
        return original(self, inputs, out, task)

    with mock.patch.object(_chunk_functions._GetItem, "__call__", spy):
        result = opened.a.mean("time").compute()
    xr.testing.assert_allclose(result, ds.a.mean("time"))
    assert reads and max(reads) == 4 * 3 * 4


# ---------------------------------------------------------------- computations


@pytest.mark.parametrize(
    "build",
    [
        lambda d: d.a * 2 + d.b,
        lambda d: (d**2).mean("time"),
        lambda d: d.a.where(d.a > 0.5),
        lambda d: d.a.where(d.a > 0.5, -1.0),
        lambda d: d.a.fillna(0.0),
        lambda d: xr.where(d.b > 0.5, d.a, d.b),
        lambda d: abs(-d.a).round(2),
        lambda d: d.a.clip(0.2, 0.8),
        lambda d: d.a.isnull().sum("time"),
        lambda d: d.a.astype("float32"),
        lambda d: d.a.transpose("x", "time", "y"),
        lambda d: d.a.isel(time=slice(2, 20, 3), x=[0, 3, 5]),
        lambda d: d.a.sel(x=[1.0, 5.0]),
        lambda d: (d.b * 10).round().isin([1.0, 3.0, 7.0]),
    ],
    ids=[
        "arithmetic",
        "mean-of-squares",
        "where",
        "where-other",
        "fillna",
        "xr.where",
        "abs-round",
        "clip",
        "isnull-sum",
        "astype",
        "transpose",
        "isel",
        "sel",
        "isin",
    ],
)
def test_elementwise_and_indexing(build, lazy, ds):
    assert_lazy_equal(build, lazy, ds)


@pytest.mark.parametrize("name", ["mean", "sum", "std", "var", "min", "max", "prod"])
@pytest.mark.parametrize("dim", ["time", ("y", "x"), None])
def test_skipna_reductions(name, dim, lazy, ds):
    assert_lazy_equal(lambda d: getattr(d.a, name)(dim), lazy, ds)
    assert_lazy_equal(lambda d: getattr(d.a, name)(dim, skipna=False), lazy, ds)


@pytest.mark.parametrize("name", ["argmin", "argmax"])
def test_arg_reductions(name, lazy, ds):
    assert_lazy_equal(lambda d: getattr(d.a, name)("time"), lazy, ds)


@pytest.mark.parametrize("name", ["idxmin", "idxmax"])
@pytest.mark.parametrize("dim", ["x", "time"])
def test_idx_reductions(name, dim, lazy, ds):
    # the coordinate is looked up lazily with the arg-reduction (cubego.routing)
    with raise_if_computes():
        result = getattr(lazy.a, name)(dim)
    xr.testing.assert_identical(result.compute(), getattr(ds.a, name)(dim))


def test_cumulative(lazy, ds):
    assert_lazy_equal(lambda d: d.a.cumsum("time"), lazy, ds)
    assert_lazy_equal(lambda d: d.b.cumprod("x"), lazy, ds)
    assert_lazy_equal(lambda d: d.a.cumsum("time", skipna=False), lazy, ds)


def test_count_any_all(lazy, ds):
    assert_lazy_equal(lambda d: d.a.count("time"), lazy, ds)
    assert_lazy_equal(lambda d: (d.b > 0.5).any("x"), lazy, ds)
    assert_lazy_equal(lambda d: (d.b > 0.1).all("time"), lazy, ds)


def test_groupby_resample_coarsen(lazy, ds):
    assert_lazy_equal(lambda d: d.groupby("time.dayofweek").mean(), lazy, ds)
    assert_lazy_equal(lambda d: d.a.groupby("y").sum(), lazy, ds)
    assert_lazy_equal(lambda d: d.resample(time="5D").mean(), lazy, ds)
    assert_lazy_equal(lambda d: d.coarsen(time=4, x=2).mean(), lazy, ds)
    assert_lazy_equal(lambda d: d.a.coarsen(time=5, boundary="trim").max(), lazy, ds)


@pytest.mark.parametrize("window", [3, 7])
def test_rolling(window, lazy, ds):
    assert_lazy_equal(lambda d: d.a.rolling(time=window).mean(), lazy, ds)
    assert_lazy_equal(
        lambda d: d.b.rolling(time=window, center=True, min_periods=1).sum(), lazy, ds
    )


def test_shift_roll_concat_merge_stack(lazy, ds):
    assert_lazy_equal(lambda d: d.a.shift(time=3), lazy, ds)
    assert_lazy_equal(lambda d: d.a.shift(x=-2, fill_value=0.0), lazy, ds)
    assert_lazy_equal(lambda d: d.a.roll(time=5, roll_coords=True), lazy, ds)
    assert_lazy_equal(lambda d: xr.concat([d.a, d.b], dim="time"), lazy, ds)
    assert_lazy_equal(lambda d: xr.concat([d.a, d.b], dim="var"), lazy, ds)
    assert_lazy_equal(lambda d: xr.merge([d.a.rename("p"), (d.b * 2).rename("q")]), lazy, ds)
    assert_lazy_equal(lambda d: d.a.stack(z=("y", "x")), lazy, ds)
    assert_lazy_equal(lambda d: d.a.stack(z=("y", "x")).unstack("z"), lazy, ds)
    assert_lazy_equal(lambda d: d.a.pad(time=(2, 1), mode="constant"), lazy, ds)


@pytest.mark.parametrize("limit", [None, 1, 4])
def test_ffill_bfill(limit, lazy, ds):
    pd = pytest.importorskip("pandas")
    for method in ("ffill", "bfill"):
        with raise_if_computes():
            result = getattr(lazy.a, method)("time", limit=limit)
            assert isinstance(result.data, cubego.Array)
        values = result.values
        frame = pd.DataFrame(ds.a.values.reshape(24, -1))
        expected = getattr(frame, method)(limit=limit).values.reshape(ds.a.shape)
        np.testing.assert_array_equal(values, expected)


def test_dot(lazy, ds):
    assert_lazy_equal(lambda d: xr.dot(d.a, d.b, dim="time"), lazy, ds)
    assert_lazy_equal(lambda d: d.a.dot(d.b, dim=["y", "x"]), lazy, ds)


def test_quantile_and_median(lazy, ds):
    assert_lazy_equal(lambda d: d.a.quantile([0.1, 0.5], dim="time"), lazy, ds)
    assert_lazy_equal(lambda d: d.a.median("time"), lazy, ds)


# ---------------------------------------------------------------- apply_ufunc


def test_apply_ufunc_parallelized(lazy, ds):
    def double(x):
        return 2 * x

    build = lambda d: xr.apply_ufunc(  # noqa: E731
        double, d.a, dask="parallelized", output_dtypes=[float]
    )
    assert_lazy_equal(build, lazy, ds)
    # a core dimension split into several chunks needs allow_rechunk
    build = lambda d: xr.apply_ufunc(  # noqa: E731
        lambda x: np.sort(x, axis=-1),
        d.a,
        input_core_dims=[["time"]],
        output_core_dims=[["time"]],
        dask="parallelized",
        output_dtypes=[float],
        dask_gufunc_kwargs={"allow_rechunk": True},
    )
    assert_lazy_equal(build, lazy, ds)
    with pytest.raises(ValueError):
        xr.apply_ufunc(
            lambda x: x.sum(-1),
            lazy.a,
            input_core_dims=[["time"]],
            dask="parallelized",
            output_dtypes=[float],
            dask_gufunc_kwargs={"allow_rechunk": False},
        )
    # new output dimensions take output_sizes; vectorize wraps the function
    build = lambda d: xr.apply_ufunc(  # noqa: E731
        lambda v: np.array([np.nanmin(v), np.nanmax(v)]),
        d.a,
        input_core_dims=[["x"]],
        output_core_dims=[["stat"]],
        vectorize=True,
        dask="parallelized",
        output_dtypes=[float],
        dask_gufunc_kwargs={"output_sizes": {"stat": 2}, "allow_rechunk": True},
    )
    assert_lazy_equal(build, lazy, ds)


def test_map_blocks_decoding(tmp_path):
    # CF decoding of lazily opened packed data goes through the manager's map_blocks
    raw = xr.Dataset({"t": (("x",), np.arange(10) * 0.5 + 1.0)})
    raw.t.encoding = {"dtype": "int16", "scale_factor": 0.5, "add_offset": 1.0, "_FillValue": -1}
    raw.to_zarr(tmp_path / "packed.zarr", consolidated=False)
    opened = xr.open_zarr(tmp_path / "packed.zarr", consolidated=False, chunks={}, **KW)
    assert isinstance(opened.t.data, cubego.Array)
    np.testing.assert_allclose(opened.t.values, np.arange(10) * 0.5 + 1.0)


# ---------------------------------------------------------------- computing and writing


def test_compute_load_persist(lazy, ds):
    xr.testing.assert_identical(lazy.compute(), ds)
    loaded = lazy.copy().load()
    assert isinstance(loaded.a.data, np.ndarray)
    xr.testing.assert_identical(loaded, ds)
    persisted = (lazy * 2).persist()
    assert isinstance(persisted.a.data, cubego.Array)
    assert persisted.a.data.chunks == lazy.a.data.chunks
    with raise_if_computes():
        later = persisted.a + 1
    xr.testing.assert_identical(later.compute(), ds.a * 2 + 1)


def test_compute_passes_keyword_arguments(lazy):
    with mock.patch("cubego.core.compute.compute", wraps=cubego.core.compute.compute) as spy:
        lazy.a.compute(executor="single-threaded", optimize_graph=False)
    assert spy.call_args.kwargs == {"executor": "single-threaded", "optimize_graph": False}
    with pytest.raises(ValueError):
        lazy.a.compute(no_such_option=1)


def test_to_zarr_round_trip(tmp_path, lazy, ds):
    (lazy * 2).to_zarr(tmp_path / "out.zarr", consolidated=False)
    back = xr.open_zarr(tmp_path / "out.zarr", consolidated=False, **KW)
    assert back.a.data.chunks == lazy.a.data.chunks
    xr.testing.assert_identical(back.compute(), ds * 2)


def test_to_zarr_region(tmp_path):
    data = np.arange(20.0).reshape(10, 2)
    template = xr.Dataset({"v": (("x", "y"), np.zeros((10, 2)))}).chunk({"x": 2}, **KW)
    template.to_zarr(tmp_path / "r.zarr", consolidated=False)
    for start in range(0, 10, 2):
        part = xr.Dataset({"v": (("x", "y"), data[start : start + 2])}).chunk({"x": 2}, **KW)
        part.to_zarr(tmp_path / "r.zarr", region={"x": slice(start, start + 2)}, consolidated=False)
    back = xr.open_zarr(tmp_path / "r.zarr", consolidated=False, chunks=None)
    np.testing.assert_array_equal(back.v.values, data)


def test_store_into_memory_and_unaligned_regions():
    zarr = pytest.importorskip("zarr")
    manager = CubegoManager()
    data = np.arange(30.0).reshape(6, 5)
    target = zarr.create_array(zarr.storage.MemoryStore(), shape=(8, 5), chunks=(4, 5), dtype="f8")
    x = cubego.asarray(data, chunks=(2, 3), spec=SPEC)
    manager.store([x], [target], regions=[(slice(1, 7), slice(None))], lock=True, flush=True)
    expected = np.zeros((8, 5))
    expected[1:7] = data
    np.testing.assert_array_equal(target[:], expected)
    with pytest.raises(NotImplementedError, match="compute=False"):
        manager.store([x], [target], compute=False)
    with pytest.raises(ValueError, match="region"):
        manager.store([x], [target], regions=[(slice(0, 3),)])


def test_to_netcdf_like_setitem_target(lazy, ds):
    # to_netcdf and other writers hand the manager objects supporting target[region] = block
    target = np.zeros(ds.a.shape)
    CubegoManager().store([lazy.a.data], [target], lock=None)
    np.testing.assert_array_equal(target, ds.a.values)


@pytest.mark.parametrize("dumps", ["pickle", "dill"])
def test_pickle_without_computing(dumps, lazy, ds):
    module = pytest.importorskip(dumps)
    result = (lazy.a * 2).mean("time")
    with raise_if_computes():
        restored = module.loads(module.dumps(result))
    assert isinstance(restored.data, cubego.Array)
    xr.testing.assert_allclose(restored.compute(), (ds.a * 2).mean("time"))
    assert pickle.loads(pickle.dumps(lazy)).a.data.chunks == lazy.a.data.chunks


def test_repr_does_not_compute(lazy):
    with raise_if_computes():
        text = repr(lazy)
        html = lazy._repr_html_()
    assert "cubego.Array<chunksize=(5, 3, 4)>" in text
    assert "cubego" in html


# ---------------------------------------------------------------- the quadratic-means workload


def test_quadratic_means(tmp_path):
    # The xarray blog's workload at a small size: dims (time, face, j, i)
    shape = (30, 1, 98, 192)
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="100MB")
    u = cubego.random.random(shape, chunks=(10, 1, -1, -1), spec=spec)
    v = cubego.random.random(shape, chunks=(10, 1, -1, -1), spec=spec)
    dims = ["time", "face", "j", "i"]
    ds = xr.Dataset({"anom_u": (dims, u), "anom_v": (dims, v)})
    with raise_if_computes():
        quad = ds**2
        quad["uv"] = ds.anom_u * ds.anom_v
        result = quad.mean("time")
    values = cubego.compute(u, v)
    computed = result.compute()
    np.testing.assert_allclose(computed.anom_u.values, (values[0] ** 2).mean(axis=0))
    np.testing.assert_allclose(computed.anom_v.values, (values[1] ** 2).mean(axis=0))
    np.testing.assert_allclose(computed.uv.values, (values[0] * values[1]).mean(axis=0))
    plan = cubego.plan(*(result[name].data for name in result.data_vars))
    assert plan.max_projected_mem <= spec.allowed_mem
