"""Zarr v2/v3 interop with zarr-python, regions, shards, and S3 (moto on loopback)."""

import numpy as np
import pytest
import zarr

import cubego

DTYPES = ["int16", "uint32", "float32", "float64", "complex64", "bool"]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    return (rng.random(shape) * 100).astype(dtype)


# zarr-python codecs for arrays we read, per format
V3_COMPRESSORS = {
    "none": None,
    "zstd": zarr.codecs.ZstdCodec(level=3),
    "gzip": zarr.codecs.GzipCodec(level=5),
    "blosc-lz4-shuffle": zarr.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle"),
    "blosc-zstd-bitshuffle": zarr.codecs.BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("compressor", sorted(V3_COMPRESSORS))
def test_reads_zarr_python_v3(tmp_path, spec, dtype, compressor):
    data = _data((13, 9), dtype)
    c = V3_COMPRESSORS[compressor]
    z = zarr.create_array(
        str(tmp_path / "a.zarr"),
        shape=data.shape,
        chunks=(4, 5),
        dtype=dtype,
        compressors=[c] if c else None,
    )
    z[...] = data
    x = cubego.from_zarr(str(tmp_path / "a.zarr"), spec=spec)
    np.testing.assert_array_equal(x.compute(), data)
    # A zarr-python array object works as the store too.
    np.testing.assert_array_equal(cubego.from_zarr(z, spec=spec).compute(), data)


@pytest.mark.parametrize("dtype", ["int16", "float64", ">f8", "<i4"])
@pytest.mark.parametrize("compressor", ["blosc", "zlib", "gzip", "zstd", "lz4", None])
def test_reads_zarr_python_v2(tmp_path, spec, dtype, compressor):
    import numcodecs

    data = _data((11, 6), np.dtype(dtype).newbyteorder("=").name)
    comp = {
        "blosc": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
        "zlib": numcodecs.Zlib(level=3),
        "gzip": numcodecs.GZip(level=3),
        "zstd": numcodecs.Zstd(level=1),
        "lz4": numcodecs.LZ4(),
        None: None,
    }[compressor]
    z = zarr.create_array(
        str(tmp_path / "v2.zarr"),
        shape=data.shape,
        chunks=(4, 4),
        dtype=dtype,
        zarr_format=2,
        compressors=comp,
    )
    z[...] = data
    np.testing.assert_array_equal(cubego.from_zarr(str(tmp_path / "v2.zarr"), spec=spec), data)


def test_reads_sharded_and_missing_chunks(tmp_path, spec):
    data = np.arange(24 * 10, dtype="float64").reshape(24, 10)
    z = zarr.create_array(
        str(tmp_path / "s.zarr"),
        shape=data.shape,
        shards=(12, 10),
        chunks=(4, 5),
        dtype="float64",
        fill_value=-1.0,
    )
    z[:12] = data[:12]  # the second shard is missing: fill value
    want = data.copy()
    want[12:] = -1
    # Read by inner chunks, as zarr-python's (and so Dask's and Cubed's)
    # chunks are: a task holds one inner chunk, not its whole shard.
    x = cubego.from_zarr(str(tmp_path / "s.zarr"), spec=spec)
    assert x.chunksize == z.chunks == (4, 5)
    np.testing.assert_array_equal(x, want)
    np.testing.assert_array_equal(x[5:17, 3:9], want[5:17, 3:9])
    cubego.sum(x).compute()
    first = cubego._last_stats()["ops"][0]
    assert first["peak_allocated"] < 12 * 10 * 8, first  # less than one shard
    # Chunks other than the stored ones.
    x = cubego.from_zarr(str(tmp_path / "s.zarr"), chunks=(5, 3), spec=spec)
    assert x.chunksize == (5, 3)
    np.testing.assert_array_equal(x.compute(), want)


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("compressors", [None, "zstd", "blosc", "gzip", "auto"])
def test_writes_what_zarr_python_reads(tmp_path, spec, zarr_format, compressors):
    data = _data((10, 7), "float32")
    x = cubego.asarray(data, chunks=(3, 4), spec=spec)
    cubego.to_zarr(x, str(tmp_path / "o.zarr"), zarr_format=zarr_format, compressors=compressors)
    z = zarr.open_array(str(tmp_path / "o.zarr"), mode="r")
    assert z.metadata.zarr_format == zarr_format
    assert z.chunks == (3, 4)
    np.testing.assert_array_equal(z[...], data)


def test_writes_shards(tmp_path, spec):
    data = _data((20, 12), "int32")
    x = cubego.asarray(data, chunks=(5, 4), spec=spec)
    cubego.to_zarr(x, str(tmp_path / "sh.zarr"), shards=(10, 12), compressors="zstd")
    z = zarr.open_array(str(tmp_path / "sh.zarr"), mode="r")
    assert z.shards == (10, 12) and z.chunks == (5, 4)
    np.testing.assert_array_equal(z[...], data)
    with pytest.raises(ValueError, match="multiple"):
        cubego.to_zarr(x, str(tmp_path / "bad.zarr"), shards=(7, 12))


def test_store_into_existing_array_regions(tmp_path, spec):
    target = zarr.create_array(
        str(tmp_path / "t.zarr"), shape=(12, 10), chunks=(4, 5), dtype="float64", fill_value=0
    )
    target[...] = -1.0
    part = _data((4, 10), "float64")
    x = cubego.asarray(part, chunks=(2, 3), spec=spec)  # rechunked to the target's grid
    cubego.store(x, target, regions=(slice(4, 8), slice(0, 10)))
    want = np.full((12, 10), -1.0)
    want[4:8] = part
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "t.zarr"))[...], want)
    # Through to_zarr with region=, ending at the array's end.
    tail = _data((4, 10), "float64", seed=2)
    cubego.to_zarr(cubego.asarray(tail, spec=spec), target, region=(slice(8, 12), slice(0, 10)))
    want[8:] = tail
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "t.zarr"))[...], want)
    # Misaligned regions would write parts of chunks: refused, nothing written.
    with pytest.raises(ValueError, match="chunk boundaries"):
        cubego.store(
            cubego.asarray(part[:3], spec=spec), target, regions=(slice(1, 4), slice(0, 10))
        )
    with pytest.raises(ValueError, match="does not fit"):
        cubego.store(x, target, regions=(slice(0, 8), slice(0, 10)))
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "t.zarr"))[...], want)


def test_group_and_path(tmp_path, spec):
    g = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    a = g.create_array("inner/a", shape=(5,), chunks=(2,), dtype="int64")
    a[...] = np.arange(5)
    np.testing.assert_array_equal(cubego.from_zarr(g, path="inner/a", spec=spec), np.arange(5))
    cubego.to_zarr(cubego.arange(6, chunks=4, spec=spec), g, path="b")
    np.testing.assert_array_equal(zarr.open_group(str(tmp_path / "g.zarr"))["b"][...], np.arange(6))


@pytest.mark.parametrize("compressor", [None, "zstd", "blosc", "gzip"])
def test_intermediate_compressors(tmp_path, compressor):
    spec = cubego.Spec(work_dir=str(tmp_path), allowed_mem="100MB", zarr_compressor=compressor)
    a = cubego.asarray(np.arange(100.0).reshape(10, 10), chunks=3, spec=spec)
    b = cubego.sum((a + 1).rechunk((5, 5)) * 2, axis=0)
    np.testing.assert_array_equal(b.compute(), ((np.arange(100.0).reshape(10, 10) + 1) * 2).sum(0))


# ----------------------------------------------------------------------------- S3 on moto


def test_s3_round_trip(s3, spec):
    client, options = s3
    data = _data((9, 8), "float64")
    x = cubego.asarray(data, chunks=(4, 3), spec=spec)
    cubego.to_zarr(x, "s3://cubego-test/a.zarr", storage_options=options, compressors="blosc")
    keys = {o["Key"] for o in client.list_objects_v2(Bucket="cubego-test")["Contents"]}
    assert "a.zarr/zarr.json" in keys and "a.zarr/c/2/2" in keys
    y = cubego.from_zarr("s3://cubego-test/a.zarr", storage_options=options, spec=spec)
    np.testing.assert_array_equal((y * 2).compute(), data * 2)


def test_s3_intermediates_and_sharded(s3, tmp_path):
    _, options = s3
    spec = cubego.Spec(
        work_dir="s3://cubego-test/work",
        storage_options=options,
        allowed_mem="200MB",
        zarr_compressor="zstd",
    )
    data = np.arange(240.0).reshape(12, 20)
    x = cubego.asarray(data, chunks=(3, 5), spec=spec)
    y = (x + 1).rechunk((4, 20)) * 3  # the rechunk is written to S3
    cubego.to_zarr(y, "s3://cubego-test/sh.zarr", shards=(8, 20), storage_options=options)
    back = cubego.from_zarr("s3://cubego-test/sh.zarr", storage_options=options, spec=spec)
    np.testing.assert_array_equal(back.compute(), (data + 1) * 3)
    with pytest.raises(FileNotFoundError):
        cubego.from_zarr("s3://cubego-test/missing.zarr", storage_options=options, spec=spec)
