"""Claims of the docs that their code blocks do not show, checked.

- docs/zarr.md: ``store``/``to_zarr`` regions take open slices as
  zarr-python does (a start of None is 0, a stop of None the target's extent,
  negative bounds count from the end), compared with zarr-python writing the
  same region.
- docs/xarray.md: ``xr.map_blocks``, ``Dataset.map_blocks`` and
  ``DataArray.map_blocks`` work on cubego-backed objects, but not block by
  block: xarray calls the function once, on the whole lazy object.
"""

from __future__ import annotations

import numpy as np
import pytest

import cubego

zarr = pytest.importorskip("zarr")

# ---------------------------------------------------------------- regions


def _pair(tmp_path, name):
    """Two equal zarr-python targets, (12, 10) in (4, 5) chunks: ours and zarr-python's."""
    arrays = []
    for who in ("cubego", "zarr"):
        z = zarr.create_array(
            str(tmp_path / f"{name}-{who}.zarr"), shape=(12, 10), chunks=(4, 5), dtype="f8"
        )
        z[...] = -1.0
        arrays.append(z)
    return arrays


REGIONS = [
    (slice(4, 8), slice(None, None)),
    (slice(None, 4), slice(None)),
    (slice(8, None), slice(0, None)),
    (slice(-4, None), slice(None, 10)),
    (slice(-8, -4), slice(-10, None)),
]


@pytest.mark.parametrize("region", REGIONS, ids=str)
def test_store_open_region_as_zarr_python(tmp_path, spec, region):
    ours, theirs = _pair(tmp_path, "t")
    part = np.random.default_rng(0).random((4, 10))
    cubego.store(cubego.asarray(part, chunks=(2, 3), spec=spec), ours, regions=region)
    theirs[region] = part
    np.testing.assert_array_equal(ours[...], theirs[...])


@pytest.mark.parametrize("region", REGIONS[:3], ids=str)
def test_to_zarr_open_region_on_a_path(tmp_path, spec, region):
    # A path target: the engine reads the target's shape to close the slices.
    ours, theirs = _pair(tmp_path, "p")
    part = np.random.default_rng(1).random((4, 10))
    cubego.to_zarr(cubego.asarray(part, spec=spec), str(tmp_path / "p-cubego.zarr"), region=region)
    theirs[region] = part
    np.testing.assert_array_equal(ours[...], theirs[...])


def test_open_region_of_another_extent_names_both_shapes(tmp_path, spec):
    ours, theirs = _pair(tmp_path, "e")
    part = np.ones((4, 10))
    x = cubego.asarray(part, spec=spec)
    with pytest.raises(ValueError, match=r"\(12, 10\).*\(4, 10\)"):
        cubego.store(x, ours, regions=(slice(None), slice(None)))
    with pytest.raises(ValueError):  # zarr-python refuses it too
        theirs[slice(None), slice(None)] = part
    np.testing.assert_array_equal(ours[...], -1.0)  # nothing written


def test_region_step_must_be_one(tmp_path, spec):
    ours, _ = _pair(tmp_path, "s")
    with pytest.raises(ValueError, match="step 1"):
        cubego.store(cubego.ones((2, 10), spec=spec), ours, regions=(slice(0, 4, 2), slice(None)))


def test_open_region_of_a_missing_target(tmp_path, spec):
    with pytest.raises(FileNotFoundError, match="^store: no Zarr array"):
        cubego.store(cubego.ones(4, spec=spec), str(tmp_path / "no.zarr"), regions=(slice(None),))


# ---------------------------------------------------------------- xarray map_blocks


class _Computations(cubego.Callback):
    def __init__(self):
        self.count = 0

    def on_compute_start(self, event):
        self.count += 1


def test_xarray_map_blocks_calls_func_once_on_the_lazy_object(tmp_path):
    xr = pytest.importorskip("xarray")
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="100MB")
    data = np.arange(48.0).reshape(12, 4)
    ds = xr.Dataset(
        {"u": (("time", "x"), data), "v": (("time", "x"), 2 * data)},
        coords={"time": np.arange(12), "x": np.arange(4)},
    ).chunk({"time": 3}, chunked_array_type="cubego", from_array_kwargs={"spec": spec})
    calls = []

    def scaled(obj):
        calls.append({k: v.shape for k, v in obj.data_vars.items()})
        return obj * 10

    computations = _Computations()
    with computations:
        results = [
            xr.map_blocks(scaled, ds),
            ds.map_blocks(scaled),
            ds.u.map_blocks(lambda a: a.mean("x"), template=ds.u.mean("x")),
        ]
    assert computations.count == 0  # nothing computed while building them
    # Once per call, with the whole variables (Dask would call it per block).
    assert calls == [{"u": (12, 4), "v": (12, 4)}] * 2
    for a in (results[0].u.data, results[1].v.data, results[2].data):
        assert isinstance(a, cubego.Array)
    np.testing.assert_array_equal(results[0].u.values, data * 10)
    np.testing.assert_array_equal(results[1].v.values, data * 20)
    np.testing.assert_array_equal(results[2].values, data.mean(axis=1))
