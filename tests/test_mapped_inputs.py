"""Raw Zarr inputs on local disk are mapped, not copied, into the kernels
(docs/execution.md, "Mapped inputs"): results equal numpy's for full and
edge chunks of several dtypes, big-endian and compressed inputs still read,
and no computation ever writes to an input's files."""

import hashlib
import os

import numpy as np
import pytest
import zarr

import cubego


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 10).astype(dtype)


def _store(path, data, chunks, **kw):
    z = zarr.create_array(str(path), shape=data.shape, chunks=chunks, dtype=data.dtype, **kw)
    z[...] = data
    return str(path)


def _digest(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int16", "uint8"])
@pytest.mark.parametrize(
    "shape,chunks",
    [
        # chunks of at least 256 KiB (engine minMapBytes) are mapped
        ((8, 1, 256, 512), (2, 1, 256, 512)),  # full chunks: mapped
        ((7, 1, 256, 512), (3, 1, 256, 512)),  # last chunk short along axis 0: mapped
        ((6, 1, 700, 512), (2, 1, 300, 512)),  # edge chunks short along axis 2: read
    ],
)
def test_matches_numpy(tmp_path, spec, dtype, shape, chunks):
    u_np, v_np = _data(shape, dtype, 1), _data(shape, dtype, 2)
    up = _store(tmp_path / "u.zarr", u_np, chunks, compressors=None)
    vp = _store(tmp_path / "v.zarr", v_np, chunks, compressors=None)
    before = _digest(tmp_path)
    u, v = cubego.from_zarr(up, spec=spec), cubego.from_zarr(vp, spec=spec)
    uu, vv, uv = cubego.compute(
        cubego.mean(u * u, axis=0), cubego.mean(v * v, axis=0), cubego.mean(u * v, axis=0)
    )
    np.testing.assert_allclose(uu, (u_np * u_np).mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(vv, (v_np * v_np).mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(uv, (u_np * v_np).mean(axis=0), rtol=1e-5)
    np.testing.assert_array_equal(cubego.max(u, axis=0).compute(), u_np.max(axis=0))
    # A one-step map stored: it may compute in place into one input's
    # buffer; the input files are untouched.
    cubego.to_zarr(u + v, str(tmp_path / "out.zarr"), overwrite=True)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "out.zarr"))[...], u_np + v_np)
    np.testing.assert_array_equal((-u).compute(), -u_np)
    after = _digest(tmp_path)
    for p, h in before.items():
        assert after[p] == h, f"{p} changed"


@pytest.mark.parametrize(
    "kw",
    [
        {"compressors": None, "serializer": zarr.codecs.BytesCodec(endian="big")},
        {"compressors": zarr.codecs.ZstdCodec(level=1)},
    ],
    ids=["big-endian", "zstd"],
)
def test_other_chunks_still_read(tmp_path, spec, kw):
    data = _data((9, 4, 6), "float64", 3)
    p = _store(tmp_path / "x.zarr", data, (4, 4, 6), **kw)
    x = cubego.from_zarr(p, spec=spec)
    np.testing.assert_allclose(cubego.sum(x * 2, axis=0).compute(), (data * 2).sum(axis=0))


def test_missing_chunks_read_as_fill_value(tmp_path, spec):
    z = zarr.create_array(
        str(tmp_path / "x.zarr"),
        shape=(6, 5),
        chunks=(2, 5),
        dtype="float64",
        compressors=None,
        fill_value=1.5,
    )
    z[2:4] = np.arange(10.0).reshape(2, 5)
    want = np.full((6, 5), 1.5)
    want[2:4] = np.arange(10.0).reshape(2, 5)
    x = cubego.from_zarr(str(tmp_path / "x.zarr"), spec=spec)
    np.testing.assert_array_equal(cubego.sum(x, axis=0).compute(), want.sum(axis=0))
