"""Write the Zarr v3 interop fixtures read by fixtures_test.go.

Run from this directory with zarr-python 3 and numpy installed (outside the
repository, e.g. python3 -m venv /tmp/zvenv && /tmp/zvenv/bin/pip install
zarr numpy):

    /tmp/zvenv/bin/python generate.py

It replaces fixtures/ with one array per case, each beside an
expected.bin holding the whole array as raw little-endian C-order bytes,
and writes fixtures/manifest.json describing every case: path, shape,
chunk shape, data type, the fill value as little-endian hex bytes, and the
chunk keys that must be missing (never written because they hold only the
fill value).
"""

import json
import os
import shutil

import numpy as np
import zarr
from zarr.codecs import BytesCodec, ZstdCodec

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
    fill = np.asarray(arr.fill_value, dtype=dt).tobytes()
    for key in missing:
        assert not os.path.exists(os.path.join(path, key)), (name, key)
    cases.append({
        "path": name,
        "shape": list(data.shape),
        "chunk_shape": list(chunks),
        "data_type": str(data.dtype),
        "fill_value_hex": fill.hex(),
        "missing": list(missing),
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

    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump({"zarr_python": zarr.__version__, "numpy": np.__version__,
                   "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
