"""Benchmark inputs: Zarr v3 arrays written once by zarr-python, read by every engine.

Each array is written chunk by chunk (bounded memory, two threads) from a
generator seeded by the array's seed and the chunk's index, so the same
(array, variant) always has the same bytes. A ``bench.json`` beside
``zarr.json`` records what was written; an existing array with the same record
is reused.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import zarr

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "engines"))

from workloads import ArraySpec, parse_variant  # noqa: E402
from zarr_output import compressors, shard_shape  # noqa: E402

RECORD = "bench.json"


def chunk_data(spec: ArraySpec, data: str, index: tuple[int, ...], shape: tuple[int, ...]):
    """The values of one chunk: uniform, or uniform with every other element zeroed."""
    seed = [spec.seed, *index]
    rng = np.random.default_rng(seed)
    if spec.dtype == "uint16":
        block = rng.integers(0, 2**16, size=shape, dtype=np.uint16)
    else:
        block = rng.random(shape, dtype=np.float64).astype(spec.dtype, copy=False)
    if data == "compressible":
        block[..., 1::2] = 0
    return block


def _blocks(shape, chunks, region=None):
    """(chunk index, slices) of each chunk of an array, or of those inside
    *region* (slices on chunk boundaries)."""
    if region is None:
        region = tuple(slice(0, s) for s in shape)
    ranges = [
        range(r.start, max(r.stop, r.start + 1), c) for r, c in zip(region, chunks, strict=True)
    ]
    for starts in itertools.product(*ranges):
        index = tuple(s // c for s, c in zip(starts, chunks, strict=True))
        sl = tuple(
            slice(s, min(s + c, r.stop)) for s, c, r in zip(starts, chunks, region, strict=True)
        )
        yield index, sl


def path_of(data_dir: str, size: str, variant: str, spec: ArraySpec) -> str:
    return os.path.join(data_dir, size, variant, f"{spec.name}.zarr")


def ensure_input(data_dir: str, size: str, variant: str, spec: ArraySpec) -> tuple[str, bool]:
    """Write *spec* for *variant* unless an identical copy exists; (path, written)."""
    codec, data = parse_variant(variant)
    path = path_of(data_dir, size, variant, spec)
    record = {"array": spec.to_json(), "variant": variant, "zarr": zarr.__version__}
    record_path = os.path.join(path, RECORD)
    if os.path.exists(record_path):
        with open(record_path) as f:
            if json.load(f).get("array") == record["array"]:
                return path, False
    shutil.rmtree(path, ignore_errors=True)
    shards = shard_shape(codec, spec.shape, spec.chunks)
    z = zarr.create_array(
        store=path,
        shape=spec.shape,
        chunks=spec.chunks,
        shards=shards,
        dtype=spec.dtype,
        compressors=compressors(codec),
        fill_value=0,
        overwrite=True,
    )

    def write(item):
        # One write per shard (or chunk), so that no two threads write into
        # the same shard; each chunk's data depends only on its index.
        _, region = item
        block = np.empty(tuple(s.stop - s.start for s in region), dtype=spec.dtype)
        for index, sl in _blocks(spec.shape, spec.chunks, region):
            shape = tuple(s.stop - s.start for s in sl)
            inner = tuple(
                slice(s.start - r.start, s.stop - r.start) for s, r in zip(sl, region, strict=True)
            )
            block[inner] = chunk_data(spec, data, index, shape)
        z[region] = block

    with ThreadPoolExecutor(2) as pool:
        for _ in pool.map(write, _blocks(spec.shape, shards or spec.chunks)):
            pass
    with open(record_path, "w") as f:
        json.dump(record, f)
    return path, True


def checksum(path: str) -> dict:
    """Engine-independent summary of a stored output, read chunk by chunk.

    ``sum`` and ``sumsq`` in float64 (exact ``sum`` for integer arrays), the
    dtype, shape and codecs actually on disk.
    """
    z = zarr.open_array(path, mode="r")
    total = 0
    sumsq = 0.0
    integer = np.issubdtype(z.dtype, np.integer)
    chunks = z.chunks
    for _, sl in _blocks(z.shape, chunks):
        block = z[sl]
        if integer:
            total += int(block.sum(dtype=np.uint64))
        else:
            b = block.astype(np.float64, copy=False)
            total += float(b.sum())
            sumsq += float(np.dot(b.ravel(), b.ravel()))
    with open(os.path.join(path, "zarr.json")) as f:
        meta = json.load(f)
    return {
        "sum": total,
        "sumsq": sumsq,
        "dtype": str(z.dtype),
        "shape": list(z.shape),
        "chunks": list(chunks),
        "codecs": [c.get("name") for c in meta.get("codecs", [])],
    }


def du(path: str) -> tuple[int, int]:
    """(bytes, files) under *path*."""
    total = files = 0
    for root, _, names in os.walk(path):
        for n in names:
            try:
                total += os.lstat(os.path.join(root, n)).st_size
                files += 1
            except OSError:
                pass
    return total, files
