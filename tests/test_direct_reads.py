"""Direct (O_DIRECT) reads of stored raw chunks give the values numpy does.

The engine reads an array directly only when the inputs exceed the machine's
memory, or when it is a cold scan of at least a quarter of memory (the engine
tests cover both choices); ``CUBEGO_DIRECT_READS=1`` (read when the library loads, so in a new
process) forces it for arrays read once in whole chunks, and ``=0`` turns it
off. Both must give the same bits.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import zarr

SCRIPT = textwrap.dedent(
    """
    import sys, numpy as np, cubego
    spec = cubego.Spec(work_dir=sys.argv[2], allowed_mem="200MB")
    u = cubego.from_zarr(sys.argv[1] + "/u.zarr", spec=spec)
    v = cubego.from_zarr(sys.argv[1] + "/v.zarr", spec=spec)
    out = cubego.compute(cubego.mean(u * u, axis=0, split_every=4), cubego.mean(u * v, axis=0, split_every=4),
                         cubego.max(v, axis=1))
    np.save(sys.argv[3], np.concatenate([o.ravel() for o in out]))
    """
)


def _run(tmp_path, setting):
    out = tmp_path / f"out{setting}.npy"
    env = dict(os.environ, CUBEGO_DIRECT_READS=setting)
    subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), str(tmp_path / f"w{setting}"), str(out)],
                   env=env, check=True, timeout=300)
    return np.load(out)


def test_direct_reads_match_cached_reads_and_numpy(tmp_path):
    rng = np.random.default_rng(5)
    # 1 MiB chunks (the engine aligns buffers from 1 MiB to a page); the
    # last chunk along axis 0 is short.
    un, vn = rng.standard_normal((60, 16384)), rng.standard_normal((60, 16384))
    un[3, 5] = np.nan
    for name, a in (("u", un), ("v", vn)):
        z = zarr.create_array(str(tmp_path / f"{name}.zarr"), shape=a.shape, chunks=(8, 16384), dtype="f8",
                              compressors=None)
        z[...] = a
    direct, cached = _run(tmp_path, "1"), _run(tmp_path, "0")
    np.testing.assert_array_equal(direct, cached)
    want = np.concatenate([(un * un).mean(axis=0), (un * vn).mean(axis=0), vn.max(axis=1)])
    np.testing.assert_allclose(direct, want, rtol=1e-12, atol=1e-15, equal_nan=True)


WRITE_SCRIPT = textwrap.dedent(
    """
    import sys, cubego
    spec = cubego.Spec(work_dir=sys.argv[2], allowed_mem="200MB")
    u = cubego.from_zarr(sys.argv[1] + "/u.zarr", spec=spec)
    cubego.to_zarr(u * 2 + 1, sys.argv[3], compressors=None)
    """
)


def test_direct_writes_match_cached_writes_for_zarr_python(tmp_path):
    """A large to_zarr target is written with O_DIRECT (``CUBEGO_DIRECT_WRITES=1``
    forces it whatever the size, ``=0`` turns it off): zarr-python reads the same
    bits either way, the values numpy computes, and no temporary file is left."""
    rng = np.random.default_rng(6)
    un = rng.standard_normal((60, 16384))  # 1 MiB chunks; the last one is short
    z = zarr.create_array(str(tmp_path / "u.zarr"), shape=un.shape, chunks=(8, 16384), dtype="f8", compressors=None)
    z[...] = un
    outs = {}
    for setting in ("1", "0"):
        target = tmp_path / f"out{setting}.zarr"
        env = dict(os.environ, CUBEGO_DIRECT_WRITES=setting)
        subprocess.run([sys.executable, "-c", WRITE_SCRIPT, str(tmp_path), str(tmp_path / f"w{setting}"), str(target)],
                       env=env, check=True, timeout=300)
        outs[setting] = zarr.open_array(str(target), mode="r")[...]
        leftovers = [p for p in target.rglob(".*") if p.is_file() and p.name != ".zarray" and p.name != ".zattrs"]
        assert not leftovers, leftovers
    np.testing.assert_array_equal(outs["1"], outs["0"])
    np.testing.assert_array_equal(outs["1"], un * 2 + 1)
