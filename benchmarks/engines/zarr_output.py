"""Zarr arrays the Python peers (Cubed, Dask, numpy) read and write with zarr-python.

``compressors`` maps a variant's codec to zarr-python's ``compressors=`` and
``shard_shape`` gives the shards of the ``shard`` codec; the data generator
uses them too, so inputs and outputs share one definition.
"""

from __future__ import annotations

import shutil

import zarr
from common import shard_shape  # noqa: F401 - re-exported for the data generator
from zarr.codecs import BloscCodec, ZstdCodec


def compressors(codec: str) -> list | None:
    """zarr-python ``compressors=`` for a codec name (none, zstd, blosc, shard)."""
    if codec == "none":
        return None
    if codec in ("zstd", "shard"):
        # zarr-python's default for Zarr v3.
        return [ZstdCodec(level=0, checksum=False)]
    if codec == "blosc":
        return [BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")]
    raise ValueError(f"unknown codec {codec!r}")


def create_output(job: dict) -> zarr.Array:
    """The empty Zarr array a case stores its result into (the job's codec)."""
    out = job["output_spec"]
    shutil.rmtree(job["output"], ignore_errors=True)
    return zarr.create_array(
        store=job["output"],
        shape=tuple(out["shape"]),
        chunks=tuple(out["chunks"]),
        dtype=out["dtype"],
        compressors=compressors(out["codec"]),
        shards=shard_shape(out["codec"], out["shape"], out["chunks"]),
        fill_value=0,
        overwrite=True,
    )
