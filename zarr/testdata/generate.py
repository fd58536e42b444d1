"""Write the Zarr v3 and v2 interop fixtures read by fixtures_test.go.

Run from this directory with zarr-python 3 and numpy installed (outside the
repository, e.g. python3 -m venv /tmp/zvenv && /tmp/zvenv/bin/pip install
zarr numpy):

    /tmp/zvenv/bin/python generate.py

It replaces fixtures/ with one array per case, each beside an
expected.bin holding the whole array as raw little-endian C-order bytes,
and writes fixtures/manifest.json describing every case: path, shape,
chunk shape, data type, the fill value as little-endian hex bytes, the
chunk keys that must be missing (never written because they hold only the
fill value) and the Zarr format; and "groups", each with its members and
attributes, consolidated or not.
"""

import json
import os
import shutil

import numcodecs
import numpy as np
import zarr
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec,
                         ShardingCodec, TransposeCodec, ZstdCodec)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")

DTYPES = [
    "bool", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]


def sample(dtype, shape, rng):
    """Deterministic values that exercise the whole range of dtype."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if dt.kind == "b":
        v = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        v = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        v[0], v[-1] = info.min, info.max
    elif dt.kind == "f":
        v = (rng.standard_normal(n) * 1000).astype(dt)
        v[0], v[1], v[2] = np.inf, -np.inf, -0.0
    else:
        part = np.dtype(f"f{dt.itemsize // 2}")
        re = (rng.standard_normal(n) * 100).astype(part)
        im = (rng.standard_normal(n) * 100).astype(part)
        v = re + 1j * im
        v = v.astype(dt)
        v[0] = complex(np.inf, -0.0)
    return v.reshape(shape)


def smooth(dtype, shape, rng):
    """Slowly varying values: Blosc compresses them, more so shuffled."""
    n = int(np.prod(shape))
    v = np.cumsum(rng.integers(-1, 2, n) * (rng.random(n) < 0.3))
    return (v % 100).astype(dtype).reshape(shape)


def write(cases, name, data, chunks, fill_value=None, missing=(), **kw):
    """Create fixture `name` holding data and record it in cases."""
    path = os.path.join(OUT, name)
    args = dict(store=path, shape=data.shape, chunks=chunks, dtype=data.dtype, **kw)
    if fill_value is not None:
        args["fill_value"] = fill_value
    arr = zarr.create_array(**args)
    arr[...] = data
    dt = data.dtype.newbyteorder("<")
    with open(os.path.join(path, "expected.bin"), "wb") as f:
        f.write(np.ascontiguousarray(data, dtype=dt).tobytes())
    fill_value = arr.fill_value if arr.fill_value is not None else 0
    fill = np.asarray(fill_value, dtype=dt).tobytes()
    for key in missing:
        assert not os.path.exists(os.path.join(path, key)), (name, key)
    cases.append({
        "path": name,
        "shape": list(data.shape),
        "chunk_shape": list(chunks),
        "data_type": data.dtype.name,
        "fill_value_hex": fill.hex(),
        "missing": list(missing),
        "zarr_format": kw.get("zarr_format", 3),
    })


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    rng = np.random.default_rng(20261121)
    cases = []

    # Every data type with zarr-python's default codecs (bytes + zstd) and
    # an irregular last chunk in both dimensions.
    for dt in DTYPES:
        write(cases, f"dtype_{dt}", sample(dt, (5, 3), rng), (2, 2))

    # Codec chains.
    for dt in ["int16", "float64", "complex64", "uint8"]:
        data = sample(dt, (7, 4), rng)
        write(cases, f"bytes_little_{dt}", data, (3, 4),
              serializer=BytesCodec(endian="little"), compressors=None)
        write(cases, f"bytes_big_{dt}", data, (3, 4),
              serializer=BytesCodec(endian="big"), compressors=None)
        write(cases, f"zstd_checksum_{dt}", data, (3, 4),
              serializer=BytesCodec(endian="big"),
              compressors=ZstdCodec(level=5, checksum=True))

    # Fill values: NaN with chunks that are all NaN (so never written).
    data = sample("float32", (6, 4), rng)
    data[0:3, 0:2] = np.nan
    write(cases, "fill_nan_float32", data, (3, 2), fill_value=np.nan,
          missing=["c/0/0"])
    data = sample("float64", (4,), rng)
    data[2:] = np.inf
    write(cases, "fill_inf_float64", data, (2,), fill_value=np.inf,
          missing=["c/1"])
    data = sample("complex128", (4,), rng)
    data[0:2] = complex(np.nan, -np.inf)
    write(cases, "fill_complex_nan", data, (2,),
          fill_value=complex(np.nan, -np.inf), missing=["c/0"])
    data = sample("uint64", (3, 3), rng)
    data[0:2, 0:2] = np.iinfo(np.uint64).max
    write(cases, "fill_uint64_max", data, (2, 2),
          fill_value=np.iinfo(np.uint64).max, missing=["c/0/0"])
    data = sample("int64", (3,), rng)
    data[0:2] = np.iinfo(np.int64).min
    write(cases, "fill_int64_min", data, (2,),
          fill_value=np.iinfo(np.int64).min, missing=["c/0"])
    data = sample("float16", (4,), rng)
    data[0:2] = np.float16(0.1)
    write(cases, "fill_float16", data, (2,), fill_value=np.float16(0.1),
          missing=["c/0"])

    # A missing chunk: only some of the chunks are ever written.
    data = np.full((4, 6), 42, dtype="int32")
    data[3, 5] = 7
    write(cases, "missing_chunk", data, (2, 3), fill_value=42,
          missing=["c/0/0", "c/0/1", "c/1/0"])

    # A 0-d array.
    write(cases, "zero_d", np.array(3.5, dtype="float64"), ())
    write(cases, "zero_d_v2", np.array(-9, dtype="int16"), (),
          chunk_key_encoding={"name": "v2", "separator": "."})

    # Chunk key encodings.
    data = sample("int32", (4, 5), rng)
    write(cases, "separator_dot", data, (3, 2),
          chunk_key_encoding={"name": "default", "separator": "."})
    write(cases, "key_v2", data, (3, 2),
          chunk_key_encoding={"name": "v2", "separator": "."})

    # Attributes and dimension names; a 3-d array.
    data = sample("uint16", (3, 4, 5), rng)
    write(cases, "attrs_3d", data, (2, 3, 2),
          attributes={"title": "t", "big": 2**64 - 1, "nested": {"a": [1, 2.5, None]}},
          dimension_names=["z", None, "x"])

    v3_codecs(cases, rng)
    v2_arrays(cases, rng)
    groups = write_groups(cases, rng)

    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump({"zarr_python": zarr.__version__, "numpy": np.__version__,
                   "numcodecs": numcodecs.__version__,
                   "cases": cases, "groups": groups}, f, indent=1)
        f.write("\n")


def v3_codecs(cases, rng):
    # transpose, gzip, crc32c over a few data types.
    for dt in ["int16", "float64", "uint8", "complex64", "bool"]:
        data = sample(dt, (7, 9), rng)
        write(cases, f"transpose_{dt}", data, (4, 5),
              filters=[TransposeCodec(order=(1, 0))], compressors=None)
        write(cases, f"gzip_{dt}", data, (4, 5), compressors=GzipCodec(level=5))
        write(cases, f"crc32c_{dt}", data, (4, 5),
              compressors=[ZstdCodec(level=1), Crc32cCodec()])
    data = sample("float32", (3, 4, 5), rng)
    write(cases, "transpose_3d", data, (2, 3, 5),
          filters=[TransposeCodec(order=(2, 0, 1))],
          serializer=BytesCodec(endian="big"), compressors=GzipCodec(level=1))

    # Blosc: every compressor numcodecs has, every shuffle, chunks large
    # enough that blocks are compressed and split.
    for cname in ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]:
        for shuffle in ["noshuffle", "shuffle", "bitshuffle"]:
            data = smooth("float32", (40, 30), rng)
            write(cases, f"blosc_{cname}_{shuffle}", data, (20, 30),
                  compressors=BloscCodec(cname=cname, clevel=5, shuffle=shuffle))
    for dt in ["int64", "uint8", "float16", "complex128"]:
        data = smooth(dt, (30, 20), rng)
        write(cases, f"blosc_lz4_shuffle_{dt}", data, (16, 16),
              compressors=BloscCodec(cname="lz4", clevel=5, shuffle="shuffle"))

    # Sharding: index at the end and at the start, inner codec chains,
    # nested shards, a partial last shard, missing inner chunks and shards.
    data = sample("int32", (13, 10), rng)
    write(cases, "shard_end", data, (6, 10),
          serializer=ShardingCodec(chunk_shape=(3, 5), codecs=[BytesCodec(), ZstdCodec(level=1)],
                                   index_location="end"), compressors=None)
    write(cases, "shard_start", data, (6, 10),
          serializer=ShardingCodec(chunk_shape=(2, 5), codecs=[BytesCodec(endian="big"), GzipCodec(level=1)],
                                   index_location="start"), compressors=None)
    write(cases, "shard_nested", data, (6, 10),
          serializer=ShardingCodec(chunk_shape=(3, 10), codecs=[
              ShardingCodec(chunk_shape=(1, 5), codecs=[BytesCodec(), BloscCodec(cname="zstd", clevel=3)],
                            index_location="start")]), compressors=None)
    data = smooth("float64", (12, 10), rng)
    data[0:6, :] = -1.0
    data[6:9, 0:5] = -1.0
    write(cases, "shard_missing", data, (6, 10), fill_value=-1.0,
          serializer=ShardingCodec(chunk_shape=(3, 5), codecs=[BytesCodec(), Crc32cCodec()]),
          compressors=None, missing=["c/0/0"])


def v2_arrays(cases, rng):
    compressors = [
        ("raw", None),
        ("blosc", numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)),
        ("zlib", numcodecs.Zlib(level=1)),
        ("gzip", numcodecs.GZip(level=5)),
        ("zstd", numcodecs.Zstd(level=3)),
        ("lz4", numcodecs.LZ4()),
    ]
    for dt in ["bool", "int16", "uint8", "float16", "float64", "complex128"]:
        data = sample(dt, (7, 9), rng)
        for name, comp in compressors:
            write(cases, f"v2_{name}_{dt}", data, (4, 5), zarr_format=2, compressors=comp)
    data = smooth("int32", (40, 30), rng)
    for cname in ["lz4", "blosclz", "zstd", "zlib", "lz4hc"]:
        for shuffle in [0, 1, 2]:
            write(cases, f"v2_blosc_{cname}_{shuffle}", data, (20, 30), zarr_format=2,
                  compressors=numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle))
    data = sample(">f8", (7, 9), rng)
    write(cases, "v2_big_F", data, (4, 5), zarr_format=2, order="F",
          compressors=numcodecs.Zlib(level=1))
    data = sample("<u2", (5, 6, 4), rng)
    write(cases, "v2_F_3d", data, (2, 4, 3), zarr_format=2, order="F", compressors=None)
    data = smooth("int64", (50,), rng)
    write(cases, "v2_delta", data, (16,), zarr_format=2,
          filters=[numcodecs.Delta(dtype="<i8", astype="<i2")], compressors=numcodecs.Zlib(level=1))
    data = smooth(">f4", (50,), rng)
    write(cases, "v2_delta_float", data, (16,), zarr_format=2,
          filters=[numcodecs.Delta(dtype=">f4")], compressors=None)
    data = smooth("float64", (50,), rng)
    write(cases, "v2_astype", data, (16,), zarr_format=2,
          filters=[numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")], compressors=numcodecs.Zstd(level=1))
    data = sample("int32", (5, 6), rng)
    write(cases, "v2_slash", data, (2, 4), zarr_format=2,
          chunk_key_encoding={"name": "v2", "separator": "/"}, compressors=None)
    data = sample("float32", (6, 4), rng)
    data[0:3, 0:2] = np.nan
    write(cases, "v2_fill_nan", data, (3, 2), zarr_format=2, fill_value=np.nan,
          compressors=numcodecs.Zstd(level=1), missing=["0.0"])
    data = sample("float64", (4,), rng)
    data[2:] = -np.inf
    write(cases, "v2_fill_inf", data, (2,), zarr_format=2, fill_value=-np.inf,
          compressors=None, missing=["1"])
    write(cases, "v2_zero_d", np.array(7, dtype="uint16"), (), zarr_format=2, compressors=None)


def write_groups(cases, rng):
    groups = []
    for fmt in [3, 2]:
        for consolidated in [False, True]:
            name = f"group_v{fmt}" + ("_consolidated" if consolidated else "")
            root = zarr.open_group(os.path.join(OUT, name), mode="w", zarr_format=fmt,
                                   attributes={"title": name, "n": 1})
            a = root.create_array("a", shape=(5,), chunks=(2,), dtype="int16",
                                  compressors=None, attributes={"units": "m"})
            a[...] = np.arange(5, dtype="int16")
            sub = root.create_group("sub", attributes={"x": [1, 2]})
            b = sub.create_array("b", shape=(2, 3), chunks=(2, 2), dtype="float32")
            b[...] = np.arange(6, dtype="float32").reshape(2, 3)
            if consolidated:
                zarr.consolidate_metadata(os.path.join(OUT, name), zarr_format=fmt)
            for path, arr in [("a", a), ("sub/b", b)]:
                data = np.asarray(arr[...])
                dt = data.dtype.newbyteorder("<")
                with open(os.path.join(OUT, name, path, "expected.bin"), "wb") as f:
                    f.write(np.ascontiguousarray(data, dtype=dt).tobytes())
                cases.append({
                    "path": f"{name}/{path}", "shape": list(data.shape),
                    "chunk_shape": list(arr.chunks), "data_type": str(data.dtype),
                    "fill_value_hex": np.asarray(arr.fill_value or 0, dtype=dt).tobytes().hex(),
                    "missing": [], "zarr_format": fmt,
                })
            groups.append({"path": name, "zarr_format": fmt, "consolidated": consolidated,
                           "attributes": {"title": name, "n": 1},
                           "members": [["a", "array"], ["sub", "group"]]})
    return groups


if __name__ == "__main__":
    main()
