"""Zarr interoperability with zarr-python 3, in both directions."""

from __future__ import annotations

import numpy as np
import pytest
import zarr
import zarr.codecs

import cubego

from helpers import assert_matches, make_data

DTYPES = ["bool", "int8", "uint16", "int32", "int64", "uint64", "float32", "float64", "complex128"]
SHAPES_CHUNKS = [((10, 7), (3, 4)), ((5,), (5,)), ((6, 4, 3), (4, 4, 1)), ((0, 4), (2, 2))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("shape", "chunks"),
    [pytest.param(*sc, id=repr(sc)) for sc in SHAPES_CHUNKS],
)
@pytest.mark.parametrize("compressor", [None, "zstd"])
def test_to_zarr_opens_in_zarr_python(tmp_path, shape, chunks, dtype, compressor):
    spec = cubego.Spec(work_dir=tmp_path / "work", allowed_mem="100MB", zarr_compressor=compressor)
    data = make_data(shape, dtype)
    x = cubego.asarray(data, chunks=chunks, spec=spec)
    target = tmp_path / "out.zarr"
    assert cubego.to_zarr(x, str(target)) is None
    z = zarr.open_array(str(target), mode="r")
    assert z.metadata.zarr_format == 3
    assert z.shape == shape
    assert z.dtype == np.dtype(dtype)
    # A zero-length axis has no blocks to take a size from (dask normalises
    # its chunks to (0,)); only the other axes keep the requested size.
    kept = [i for i, n in enumerate(shape) if n]
    assert [z.chunks[i] for i in kept] == [chunks[i] for i in kept]
    np.testing.assert_array_equal(z[...], data)


def test_to_zarr_path_and_pathlike(tmp_path, spec):
    data = make_data((6, 5), "float64")
    x = cubego.asarray(data, chunks=(4, 2), spec=spec)
    cubego.to_zarr(x, tmp_path / "group.zarr", path="a/b")
    z = zarr.open_array(str(tmp_path / "group.zarr"), path="a/b", mode="r")
    np.testing.assert_array_equal(z[...], data)


def test_to_zarr_lazy(tmp_path, spec):
    data = make_data((6, 5), "int32")
    x = cubego.asarray(data, chunks=3, spec=spec) * 2
    stored = cubego.to_zarr(x, str(tmp_path / "lazy.zarr"), compute=False)
    assert isinstance(stored, cubego.Array)
    assert stored.shape == x.shape and stored.dtype == x.dtype
    assert_matches(stored, data * 2)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "lazy.zarr"))[...], data * 2)


def test_to_zarr_overwrite(tmp_path, spec):
    target = str(tmp_path / "twice.zarr")
    cubego.to_zarr(cubego.ones((4,), chunks=2, spec=spec), target)
    with pytest.raises((ValueError, OSError)):
        cubego.to_zarr(cubego.zeros((4,), chunks=2, spec=spec), target)
    cubego.to_zarr(cubego.zeros((4,), chunks=2, spec=spec), target, overwrite=True)
    np.testing.assert_array_equal(zarr.open_array(target)[...], np.zeros(4))


def test_to_zarr_nan_and_infinity(tmp_path, spec):
    data = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5])
    cubego.to_zarr(cubego.asarray(data, chunks=4, spec=spec), str(tmp_path / "special.zarr"))
    result = zarr.open_array(str(tmp_path / "special.zarr"))[...]
    np.testing.assert_array_equal(result, data)
    assert np.signbit(result[4])


def _write_with_zarr_python(path, data, chunks, compressors, **kwargs):
    z = zarr.create_array(
        store=str(path),
        shape=data.shape,
        chunks=chunks,
        dtype=data.dtype,
        compressors=compressors,
        **kwargs,
    )
    z[...] = data
    return z


CODECS = {
    "bytes": None,
    "zstd": zarr.codecs.ZstdCodec(level=3),
    "zstd-checksum": zarr.codecs.ZstdCodec(level=1, checksum=True),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "chunks"), SHAPES_CHUNKS, ids=repr)
@pytest.mark.parametrize("codec", list(CODECS))
def test_from_zarr_reads_zarr_python(tmp_path, spec, shape, chunks, dtype, codec):
    data = make_data(shape, dtype, seed=3)
    _write_with_zarr_python(tmp_path / "in.zarr", data, chunks, CODECS[codec])
    x = cubego.from_zarr(str(tmp_path / "in.zarr"), spec=spec)
    assert x.shape == shape and x.dtype == np.dtype(dtype)
    if data.size:
        assert x.chunksize == tuple(min(c, n) for c, n in zip(chunks, shape, strict=True))
    assert_matches(x, data)
    assert_matches(x[1:], data[1:])


def test_from_zarr_big_endian(tmp_path, spec):
    data = np.arange(12, dtype=">i4").reshape(3, 4)
    z = zarr.create_array(
        store=str(tmp_path / "be.zarr"),
        shape=data.shape,
        chunks=(2, 2),
        dtype="int32",
        serializer=zarr.codecs.BytesCodec(endian="big"),
        compressors=None,
    )
    z[...] = data
    assert_matches(cubego.from_zarr(str(tmp_path / "be.zarr"), spec=spec), data.astype("<i4"))


def test_from_zarr_missing_chunks_are_fill_value(tmp_path, spec):
    for fill_value, dtype in ((np.nan, "float64"), (7, "int16"), (-np.inf, "float32")):
        path = tmp_path / f"sparse-{dtype}.zarr"
        z = zarr.create_array(
            store=str(path), shape=(6, 6), chunks=(3, 3), dtype=dtype, fill_value=fill_value
        )
        z[0:3, 0:3] = 1
        expected = np.full((6, 6), fill_value, dtype=dtype)
        expected[0:3, 0:3] = 1
        assert_matches(cubego.from_zarr(str(path), spec=spec), expected)


def test_from_zarr_group_path_and_chunks(tmp_path, spec):
    data = make_data((8, 6), "float32", seed=4)
    group = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    z = group.create_array("sub/x", shape=data.shape, chunks=(2, 3), dtype=data.dtype)
    z[...] = data
    x = cubego.from_zarr(str(tmp_path / "g.zarr"), path="sub/x", spec=spec)
    assert x.chunks == ((2, 2, 2, 2), (3, 3))
    assert_matches(x, data)
    y = cubego.from_zarr(str(tmp_path / "g.zarr"), path="sub/x", chunks=(4, 6), spec=spec)
    assert y.chunks == ((4, 4), (6,))
    assert_matches(y, data)
    assert_matches(cubego.from_zarr(f"file://{tmp_path}/g.zarr", path="sub/x", spec=spec), data)


def test_round_trip_through_cubego(tmp_path, spec):
    data = make_data((9, 5), "float64", seed=5)
    _write_with_zarr_python(tmp_path / "a.zarr", data, (4, 2), CODECS["zstd"])
    x = cubego.from_zarr(str(tmp_path / "a.zarr"), spec=spec)
    cubego.to_zarr(cubego.mean(x * 2, axis=0), str(tmp_path / "b.zarr"))
    result = zarr.open_array(str(tmp_path / "b.zarr"))[...]
    np.testing.assert_allclose(result, np.mean(data * 2, axis=0), rtol=1e-12)


def test_from_zarr_missing(tmp_path, spec):
    with pytest.raises(FileNotFoundError):
        cubego.from_zarr(str(tmp_path / "nothing-here.zarr"), spec=spec)
    _write_with_zarr_python(tmp_path / "g.zarr", np.ones(3), (3,), None)
    with pytest.raises(FileNotFoundError):
        cubego.from_zarr(str(tmp_path / "g.zarr"), path="missing", spec=spec)


def test_from_zarr_missing_message_names_it(tmp_path, spec):
    with pytest.raises(FileNotFoundError, match="nothing-here"):
        cubego.from_zarr(str(tmp_path / "nothing-here.zarr"), spec=spec)
    _write_with_zarr_python(tmp_path / "g.zarr", np.ones(3), (3,), None)
    with pytest.raises(FileNotFoundError, match="missing"):
        cubego.from_zarr(str(tmp_path / "g.zarr"), path="missing", spec=spec)


def test_store_several(tmp_path, spec):
    a = make_data((5, 4), "float64", seed=6)
    b = make_data((3,), "int64", seed=7)
    x = cubego.asarray(a, chunks=2, spec=spec)
    y = cubego.asarray(b, chunks=2, spec=spec)
    targets = [str(tmp_path / "x.zarr"), str(tmp_path / "y.zarr")]
    assert cubego.store([x + 1, y * 3], targets) is None
    np.testing.assert_array_equal(zarr.open_array(targets[0])[...], a + 1)
    np.testing.assert_array_equal(zarr.open_array(targets[1])[...], b * 3)
    cubego.store(x, str(tmp_path / "single.zarr"))
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "single.zarr"))[...], a)


def test_store_lazy_and_errors(tmp_path, spec):
    x = cubego.ones((3,), spec=spec)
    stored = cubego.store([x], [str(tmp_path / "lazy.zarr")], compute=False)
    assert len(stored) == 1
    cubego.compute(*stored)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "lazy.zarr"))[...], np.ones(3))
    with pytest.raises(FileNotFoundError):
        cubego.store([x], [str(tmp_path / "r.zarr")], regions=[(slice(0, 3),)])
    with pytest.raises(ValueError, match="targets"):
        cubego.store([x, x], [str(tmp_path / "r.zarr")])
    with pytest.raises(ValueError, match="group"):
        cubego.to_zarr(x, zarr.open_group(str(tmp_path / "obj.zarr"), mode="w"))
