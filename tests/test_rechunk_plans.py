"""Plan shapes around rechunks (issue #19): a copy that makes stored chunks
(to_zarr of a misaligned or rechunked result) writes the target directly
instead of an intermediate; a reduction of a rechunk reduces the rechunked
array (the rechunk is not skipped). Results are checked against numpy.

See docs/memory.md, "Fusion" and "Rechunk: one stage or several".
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import zarr

import cubego


def _stored(tmp_path, name, a, chunks, spec):
    path = str(tmp_path / f"{name}.zarr")
    z = zarr.create_array(path, shape=a.shape, chunks=chunks, dtype=a.dtype)
    z[...] = a
    return cubego.from_zarr(path, spec=spec)


def _rechunk_ops(y) -> list[str]:
    return [o.func for o in y.plan().ops if "rechunk" in o.func]


def _zarr_arrays_under(root) -> list[str]:
    return [d for d, _, files in os.walk(root) if "zarr.json" in files]


@pytest.mark.parametrize("fn", ["sum", "mean", "min", "max", "prod"])
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_full_reduction_of_a_rechunk_matches_numpy(tmp_path, spec, fn, dtype):
    rng = np.random.default_rng(3)
    a = (rng.random((40, 36)) * 4 - 2).astype(dtype)
    if fn == "prod":
        a = np.where(np.abs(a) < 0.5, 1, a).astype(dtype)[:6, :6]
    x = _stored(tmp_path, "x", a, (a.shape[0], 5), spec)  # column strips
    y = cubego.rechunk(x, (5, a.shape[1]))  # row strips: the swap of W4
    r = getattr(cubego, fn)(y)
    # the reduction reduces the rechunked array: the rechunk is not skipped
    # (its chunks decide the summation order, as in Dask and Cubed)
    assert _rechunk_ops(r) != []
    want = getattr(np, fn)(a)
    got = r.compute()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_multi_stage_rechunk_under_a_sum_matches_numpy(tmp_path):
    """A swap that needs two copy stages (the array does not fit one task)."""
    sp = cubego.Spec(work_dir=tmp_path / "w", allowed_mem="200kB", reserved_mem=0)
    a = np.random.default_rng(4).random((256, 256))
    x = _stored(tmp_path, "x", a, (256, 4), sp)
    y = cubego.rechunk(x, (4, 256))
    assert len(_rechunk_ops(y)) >= 2
    s = cubego.sum(y)
    assert len(_rechunk_ops(s)) >= 2
    np.testing.assert_allclose(s.compute(), a.sum(), rtol=1e-12)
    np.testing.assert_allclose(cubego.sum(y + 0).compute(), a.sum(), rtol=1e-12)


def test_partial_reduction_of_a_rechunk_keeps_its_chunks(tmp_path, spec):
    a = np.arange(30 * 24, dtype="float64").reshape(30, 24)
    x = _stored(tmp_path, "x", a, (7, 6), spec)
    r0 = cubego.sum(cubego.rechunk(x, (10, 6)), axis=0)
    assert r0.chunks == ((6, 6, 6, 6),)
    np.testing.assert_array_equal(r0.compute(), a.sum(axis=0))
    r1 = cubego.sum(cubego.rechunk(x, (10, 8)), axis=0)
    assert r1.chunks == ((8, 8, 8),)
    np.testing.assert_array_equal(r1.compute(), a.sum(axis=0))
    r2 = cubego.sum(cubego.rechunk(x, (10, 6)), axis=1, keepdims=True)
    assert r2.chunks == ((10, 10, 10), (1,))
    np.testing.assert_array_equal(r2.compute(), a.sum(axis=1, keepdims=True))


def test_misaligned_difference_is_stored_without_an_intermediate(tmp_path, spec):
    rng = np.random.default_rng(5)
    a, b = rng.random((50, 45)), rng.random((50, 45))
    x = _stored(tmp_path, "a", a, (10, 9), spec)
    y = _stored(tmp_path, "b", b, (10, 9), spec)
    out = str(tmp_path / "out.zarr")
    d = x[1:, 1:] - y[:-1, :-1]
    s = cubego.to_zarr(d, out, compute=False, overwrite=True)
    p = s.plan()
    assert len(p.ops) == 1, [o.func for o in p.ops]
    assert p.num_intermediate_arrays == 0
    work = tmp_path / "work"
    sp0 = cubego.Spec(work_dir=work, allowed_mem="100MB")
    x0 = cubego.from_zarr(str(tmp_path / "a.zarr"), spec=sp0)
    y0 = cubego.from_zarr(str(tmp_path / "b.zarr"), spec=sp0)
    cubego.to_zarr(x0[1:, 1:] - y0[:-1, :-1], out, overwrite=True, intermediate_mem=0)
    assert _zarr_arrays_under(work) == []
    z = zarr.open_array(out, mode="r")
    assert z.chunks == (10, 9)
    np.testing.assert_array_equal(z[...], a[1:, 1:] - b[:-1, :-1])


@pytest.mark.parametrize(
    "src,target,allowed,fused",
    [
        ((6, 5), (8, 8), "100MB", True),  # one copy, several target blocks per task
        ((48, 2), (2, 40), "100MB", True),  # one copy of the whole array
        ((48, 2), (2, 40), "8kB", True),  # several stages: the last one stores
        # one copy of 9 kB fits, but not with y * 2's temporary beside it:
        # the copy is kept and the product computed from it
        ((48, 2), (2, 40), "12kB", False),
    ],
)
def test_rechunk_then_store_writes_the_target_from_the_last_copy(tmp_path, src, target, allowed, fused):
    sp = cubego.Spec(work_dir=tmp_path / "w", allowed_mem=allowed, reserved_mem=0)
    a = np.random.default_rng(6).random((48, 40)).astype("float32")
    x = _stored(tmp_path, "x", a, src, sp)
    y = cubego.rechunk(x, target)
    stages = len(_rechunk_ops(y))
    out = str(tmp_path / "out.zarr")
    s = cubego.to_zarr(y * 2, out, compute=False, overwrite=True)
    p = s.plan()
    funcs = [o.func for o in p.ops]
    if fused:
        # every op is a copy stage; the last one computes y * 2 and stores it
        assert len(funcs) == stages and funcs[-1] == "rechunk+multiply+store", funcs
    else:
        assert len(funcs) == stages + 1 and funcs[-1] == "multiply+store", funcs
    assert not p.exceeds_memory
    cubego.to_zarr(y * 2, out, overwrite=True)
    z = zarr.open_array(out, mode="r")
    assert z.chunks == target
    np.testing.assert_array_equal(z[...], a * 2)


@pytest.mark.parametrize("src", [(6, 5), (16, 16), (48, 3)])
def test_rechunk_stored_in_shards_matches_numpy(tmp_path, spec, src):
    """The copy writing shards of a rechunked array (fused with the store)."""
    a = np.random.default_rng(7).random((48, 40))
    x = _stored(tmp_path, "x", a, src, spec)
    out = str(tmp_path / "out.zarr")
    cubego.to_zarr(cubego.rechunk(x, (8, 8)), out, shards=(16, 16), overwrite=True)
    z = zarr.open_array(out, mode="r")
    assert z.chunks == (8, 8) and z.shards == (16, 16)
    np.testing.assert_array_equal(z[...], a)


@pytest.mark.parametrize("compressors", [None, zarr.codecs.ZstdCodec()])
def test_swap_axes_rechunk_of_raw_chunks_reads_the_source_directly(tmp_path, compressors):
    """(N, c) -> (c, N) of uncompressed chunks on local disk: each target block
    reads a contiguous band of every source chunk, so the rechunk is one stage
    with no intermediate and feeds the reduction directly; compressed chunks
    (decoded whole) go through an intermediate. Both match numpy."""
    n, c = 1024, 192  # a band of c rows of a (n, c) chunk: 288 KiB contiguous
    spec = cubego.Spec(work_dir=str(tmp_path / "work"), allowed_mem="12MB")  # the array is 8 MB
    a = np.random.default_rng(5).random((n, n))
    path = str(tmp_path / "x.zarr")
    z = zarr.create_array(path, shape=a.shape, chunks=(n, c), dtype=a.dtype, compressors=compressors)
    z[...] = a
    x = cubego.from_zarr(path, spec=spec)
    y = cubego.rechunk(x, (c, n))
    s = cubego.sum(y)
    funcs = [o.func for o in s.plan().ops]
    if compressors is None:
        assert funcs[0] == "rechunk+sum", funcs
        assert sum("rechunk" in f for f in funcs) == 1, funcs
    else:
        assert sum("rechunk" in f for f in funcs) >= 2, funcs
    np.testing.assert_allclose(s.compute(), a.sum(), rtol=1e-12)
    np.testing.assert_allclose(cubego.sum(y, axis=1).compute(), a.sum(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(y.compute(), a)
