"""map_overlap against dask.array.map_overlap: every boundary, depths, trimming, rechunking."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest

import cubego

RNG = np.random.default_rng(7)
A = RNG.standard_normal((11, 13))

BOUNDARIES = ["none", "reflect", "periodic", "nearest", 2.5]


def stencil(b):
    """A 3×3 box sum: needs one element of overlap on each side."""
    out = b.copy()
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            if dx or dy:
                out += np.roll(np.roll(b, dx, axis=0), dy, axis=1)
    return out


@pytest.fixture
def x(spec):
    return cubego.asarray(A, chunks=(4, 5), spec=spec)


@pytest.fixture
def dx():
    return da.from_array(A, chunks=(4, 5))


@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_boundaries_match_dask(x, dx, boundary):
    y = cubego.map_overlap(stencil, x, depth=1, boundary=boundary, dtype=np.float64)
    z = da.map_overlap(stencil, dx, depth=1, boundary=boundary, dtype=np.float64)
    assert y.chunks == x.chunks
    np.testing.assert_allclose(y.compute(), z.compute())


@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_untrimmed_blocks_match_dask(x, dx, boundary):
    y = cubego.map_overlap(lambda b: b, x, depth={0: 2, 1: 1}, boundary=boundary, trim=False)
    z = da.map_overlap(lambda b: b, dx, depth={0: 2, 1: 1}, boundary=boundary, trim=False)
    np.testing.assert_array_equal(y.compute(), z.compute())


def test_boundary_per_axis(x, dx):
    boundary = {0: "periodic", 1: "reflect"}
    y = cubego.map_overlap(stencil, x, depth=(1, 2), boundary=boundary, dtype=np.float64)
    z = da.map_overlap(stencil, dx, depth=(1, 2), boundary=boundary, dtype=np.float64)
    np.testing.assert_allclose(y.compute(), z.compute())


def test_asymmetric_depth(x, dx):
    f = lambda b: b - np.roll(b, 1, axis=1)  # noqa: E731
    y = cubego.map_overlap(f, x, depth={1: (1, 0)}, boundary="none")
    z = da.map_overlap(f, dx, depth={1: (1, 0)}, boundary="none")
    np.testing.assert_allclose(y.compute(), z.compute())
    with pytest.raises(NotImplementedError, match="Asymmetric"):
        cubego.map_overlap(f, x, depth={1: (1, 0)}, boundary="reflect")


def test_depth_larger_than_a_chunk(spec):
    a = np.arange(10.0)
    x = cubego.asarray(a, chunks=((3, 3, 3, 1),), spec=spec)
    dx = da.from_array(a, chunks=((3, 3, 3, 1),))
    f = lambda b: b + np.roll(b, 2)  # noqa: E731
    y = cubego.map_overlap(f, x, depth=2, boundary="reflect")
    z = da.map_overlap(f, dx, depth=2, boundary="reflect")
    assert y.chunks == z.chunks == ((3, 3, 4),)
    np.testing.assert_allclose(y.compute(), z.compute())
    with pytest.raises(ValueError, match="larger than its smallest block"):
        cubego.map_overlap(f, x, depth=2, boundary="reflect", allow_rechunk=False)


def test_block_id_and_several_arrays(spec):
    a, b = RNG.standard_normal((9, 8)), RNG.standard_normal((9, 8))
    xa = cubego.asarray(a, chunks=(3, 4), spec=spec)
    xb = cubego.asarray(b, chunks=(3, 4), spec=spec)

    def f(p, q, block_id=None):
        return p * q + block_id[0]

    y = cubego.map_overlap(f, xa, xb, depth=1, boundary=0, dtype=np.float64)
    z = da.map_overlap(
        f,
        da.from_array(a, chunks=(3, 4)),
        da.from_array(b, chunks=(3, 4)),
        depth=1,
        boundary=0,
        dtype=np.float64,
    )
    np.testing.assert_allclose(y.compute(), z.compute())


def test_reads_are_bounded(spec):
    # the extended regions are read from the neighbouring chunks, never the whole array
    x = cubego.ones((20_000, 200), chunks=(1000, 200), spec=spec)
    y = cubego.map_overlap(lambda b: b * 2, x, depth=3, boundary="nearest")
    one_block = 1000 * 200 * 8
    assert cubego.plan(y).max_projected_mem < spec.reserved_mem + 10 * one_block
    assert float(cubego.sum(y)) == 2 * 20_000 * 200
