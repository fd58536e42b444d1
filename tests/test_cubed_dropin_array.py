"""Cubed drop-in behaviour of arrays and array functions (issue #18).

Each test is a case from Cubed's documented behaviour (its API docs and its own
tests) or Dask's where Cubed follows Dask, with values compared with numpy.
"""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import dask.array as da
import numpy as np
import pytest

import cubego

# ---------------------------------------------------------------------- Array.blocks

A = np.arange(10 * 12, dtype=np.float64).reshape(10, 12)


@pytest.fixture
def a(spec):
    return cubego.asarray(A, chunks=(3, 5), spec=spec)


@pytest.fixture
def da_a():
    return da.from_array(A, chunks=(3, 5))


BLOCK_KEYS = [
    (0, 0),
    1,
    (-1, -1),
    (slice(1, 3), slice(None, None, 2)),
    (slice(None, None, -1), 0),
    ([2, 0], 1),
    (Ellipsis, 1),
    (slice(None), [0, 2]),
    ([3, 1, 1], slice(None)),
    np.array([0, 2]),
]


@pytest.mark.parametrize("key", BLOCK_KEYS, ids=repr)
def test_blocks_match_dask(a, da_a, key):
    got = a.blocks[key]
    expected = da_a.blocks[key]
    assert isinstance(got, cubego.Array)
    assert got.shape == expected.shape
    assert got.chunks == expected.chunks
    np.testing.assert_array_equal(got.compute(), expected.compute())


def test_blocks_cubed_cases(spec):
    # Cubed's test_blocks (after Dask's)
    x = cubego.arange(10, chunks=2, spec=spec)
    assert x.blocks.shape == (5,)
    assert x.blocks.size == 5
    xn = np.arange(10)
    np.testing.assert_array_equal(x.blocks[0].compute(), xn[:2])
    np.testing.assert_array_equal(x.blocks[-1].compute(), xn[-2:])
    np.testing.assert_array_equal(x.blocks[:3].compute(), xn[:6])
    np.testing.assert_array_equal(x.blocks[[0, 1, 2]].compute(), xn[:6])
    np.testing.assert_array_equal(x.blocks[[3, 0, 2]].compute(), [6, 7, 0, 1, 4, 5])
    r = cubego.random.random((20, 20), chunks=(4, 5), spec=spec)
    rn = r.compute()
    assert r.blocks.shape == (5, 4)
    np.testing.assert_array_equal(r.blocks[0].compute(), rn[:4])
    np.testing.assert_array_equal(r.blocks[0, :3].compute(), rn[:4, :15])
    np.testing.assert_array_equal(r.blocks[:, :3].compute(), rn[:, :15])
    o = cubego.ones((40, 40, 40), chunks=(10, 10, 10), spec=spec)
    np.testing.assert_array_equal(o.blocks[0, :, 0].compute(), np.ones((10, 40, 10)))
    s = cubego.ones((2, 2), chunks=1, spec=spec)
    with pytest.raises(ValueError, match="newaxis is not supported"):
        s.blocks[cubego.newaxis, :, :]
    with pytest.raises(NotImplementedError):
        s.blocks[[0, 1], [0, 1]]
    with pytest.raises(IndexError, match="out of bounds"):
        s.blocks[100, 100]


def test_blocks_empty_selection(a):
    # Dask and Cubed give the empty axis no blocks; cubego one block of 0 elements
    y = a.blocks[2:2, 0]
    assert y.shape == (0, 5) and y.chunks == ((0,), (5,))
    assert y.compute().shape == (0, 5)


def test_blocks_shape_and_size(a):
    assert a.blocks.shape == a.numblocks == (4, 3)
    assert a.blocks.size == 12
    assert len(a.blocks) == 4


def test_blocks_whole_array_is_the_array(a):
    assert a.blocks[:, :] is a
    assert a.blocks[...] is a


def test_blocks_1d_irregular_chunks(spec):
    x = cubego.asarray(np.arange(10), chunks=((4, 3, 3),), spec=spec)
    y = x.blocks[[2, 0]]
    assert y.chunks == ((3, 4),)
    np.testing.assert_array_equal(y.compute(), np.r_[np.arange(7, 10), np.arange(4)])


@pytest.mark.parametrize(
    ("key", "error", "match"),
    [
        ((None, 0), ValueError, "newaxis"),
        (([0, 1], [0, 1]), NotImplementedError, "Only one integer array index is allowed"),
        ((4, 0), IndexError, "out of bounds"),
        ((-5, 0), IndexError, "out of bounds"),
        ((0, 0, 0), IndexError, "too many indices"),
        ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
        (("a", 0), IndexError, "valid block indices"),
        (([0.5], 0), IndexError, "integers"),
        ((True, 0), IndexError, "boolean"),
    ],
)
def test_blocks_bad_keys(a, key, error, match):
    with pytest.raises(error, match=match):
        a.blocks[key]


# ---------------------------------------------------------------------- chunkmem, svg, html


def test_chunkmem(spec):
    x = cubego.ones((10, 12), chunks=(3, 5), dtype=np.float32, spec=spec)
    assert x.chunkmem == 3 * 5 * 4
    y = cubego.ones((7,), chunks=((2, 5),), dtype=np.int16, spec=spec)
    assert y.chunkmem == 5 * 2


def _svg(text):
    root = ET.fromstring(text)
    assert root.tag.endswith("svg")
    return root


def _count(root, tag):
    return sum(1 for e in root.iter() if e.tag.endswith(tag))


def test_to_svg_2d_draws_one_line_per_block_boundary(a):
    root = _svg(a.to_svg())
    # 4 blocks down: 5 horizontal lines; 3 blocks across: 4 vertical lines
    assert _count(root, "line") == 5 + 4
    assert float(root.get("width")) <= 500 + 60
    texts = {e.text for e in root.iter() if e.tag.endswith("text")}
    assert texts == {"10", "12"}


def test_to_svg_1d_and_3d(spec):
    row = _svg(cubego.ones(10, chunks=3, spec=spec).to_svg(size=200))
    assert _count(row, "line") == (4 + 1) + 2
    cube = _svg(cubego.ones((4, 6, 8), chunks=(2, 3, 4), spec=spec).to_svg())
    # three faces: front (2+1)+(2+1), top (2+1)+(2+1), side (2+1)+(2+1)
    assert _count(cube, "line") == 18
    assert _count(cube, "polygon") == 3


def test_to_svg_many_blocks_draws_the_outline(spec):
    x = cubego.ones((10_000, 10), chunks=(1, 10), spec=spec)
    root = _svg(x.to_svg(size=100))
    assert _count(root, "line") == 4


@pytest.mark.parametrize("shape", [(), (0, 3), (2, 2, 2, 2)])
def test_to_svg_refuses_arrays_without_a_picture(spec, shape):
    with pytest.raises(NotImplementedError, match="no chunk picture"):
        cubego.ones(shape, spec=spec).to_svg()


def test_to_svg_bad_size(a):
    with pytest.raises(ValueError, match="size must be positive"):
        a.to_svg(size=0)


def test_repr_html_table(spec):
    x = cubego.ones((1000, 1000), chunks=(100, 250), spec=spec)
    text = x._repr_html_()
    assert "<svg" in text
    for figure in ("8.0 MB", "200.0 KB", "(1000, 1000)", "(100, 250)", "40 chunks", "float64"):
        assert figure in text, figure
    plan = x.plan()
    assert f"{plan.num_arrays} arrays in plan" in text
    assert f"{plan.num_tasks} tasks" in text


@pytest.mark.parametrize(
    "make",
    [
        lambda s: cubego.ones([], spec=s),
        lambda s: cubego.ones(10, spec=s)[:0],
        lambda s: cubego.ones(10, spec=s),
        lambda s: cubego.ones((10, 10), spec=s),
        lambda s: cubego.ones((10, 10, 10), spec=s),
        lambda s: cubego.ones((10, 10, 10, 10), spec=s),
    ],
)
def test_repr_html_every_dimension(spec, make):
    # Cubed's test_repr_html cases: every one has a summary; 0-d, empty and 4-d no picture.
    x = make(spec)
    text = x._repr_html_()
    assert "<table>" in text and str(x.shape) in text
    has_picture = x.ndim in (1, 2, 3) and x.size > 0
    assert ("<svg" in text) == has_picture


# ---------------------------------------------------------------------- no-op operations


def test_noop_indexing_returns_the_array(a):
    assert a[...] is a
    assert a[:, :] is a
    assert a[0:10, :] is a
    assert a[0:1000] is a
    assert a[::1, ...] is a
    assert a[1:] is not a
    assert a[::-1] is not a


def test_noop_rechunk_returns_the_array(a):
    assert a.rechunk(a.chunks) is a
    assert a.rechunk((3, 5)) is a
    assert cubego.rechunk(a, a.chunks) is a
    assert a.rechunk((5, 5)) is not a


def test_noop_broadcast_returns_the_array(a):
    assert cubego.broadcast_to(a, a.shape) is a


# ---------------------------------------------------------------------- zero-length dimensions


def test_zero_length_chunks(spec):
    x = cubego.ones((0, 2), chunks=(0, 2), spec=spec)
    assert x.chunks == ((0,), (2,))
    np.testing.assert_array_equal(x.compute(), np.ones((0, 2)))
    y = cubego.zeros((3, 0), chunks=(2, 0), spec=spec)
    assert y.chunks == ((2, 1), (0,))
    assert y.compute().shape == (3, 0)


def test_zero_chunk_of_a_nonempty_axis_is_refused(spec):
    with pytest.raises(ValueError, match="positive"):
        cubego.ones((3, 2), chunks=(0, 2), spec=spec)


@pytest.mark.parametrize(
    "key",
    [slice(5, 2), (slice(None), slice(3, 3)), (slice(7, 1, 2), 0), slice(100, None)],
    ids=repr,
)
def test_indexing_to_an_empty_result(a, key):
    got = a[key]
    expected = A[key]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.compute(), expected)


@pytest.mark.parametrize(("shape", "axis"), [((0, 2), 0), ((0, 2), 1), ((2, 0), 0), ((2, 0, 3), 2)])
def test_unstack_of_zero_size_arrays(spec, shape, axis):
    xn = np.zeros(shape)
    x = cubego.asarray(xn, spec=spec)
    got = cubego.unstack(x, axis=axis)
    expected = np.unstack(xn, axis=axis)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape
        np.testing.assert_array_equal(g.compute(), e)


# ---------------------------------------------------------------------- Cubed's result chunks


def test_broadcast_to_chunks_follow_cubed(spec):
    xn = np.arange(30).reshape(5, 1, 6)
    x = cubego.asarray(xn, chunks=(2, 1, 4), spec=spec)
    y = cubego.broadcast_to(x, (5, 4, 6))
    assert y.chunks == ((2, 2, 1), (1, 1, 1, 1), (4, 2))
    np.testing.assert_array_equal(y.compute(), np.broadcast_to(xn, (5, 4, 6)))
    z = cubego.broadcast_to(x, (3, 5, 4, 6))  # a new leading axis: blocks of 1
    assert z.chunks == ((1, 1, 1), (2, 2, 1), (1, 1, 1, 1), (4, 2))
    np.testing.assert_array_equal(z.compute(), np.broadcast_to(xn, (3, 5, 4, 6)))


def test_broadcast_to_with_chunks(spec):
    xn = np.arange(6).reshape(1, 6)
    x = cubego.asarray(xn, chunks=(1, 3), spec=spec)
    y = cubego.broadcast_to(x, (4, 6), chunks=(2, 2))
    assert y.chunks == ((2, 2), (2, 2, 2))
    np.testing.assert_array_equal(y.compute(), np.broadcast_to(xn, (4, 6)))


def test_strided_slice_chunks_follow_cubed(spec):
    x = cubego.arange(20, chunks=5, spec=spec)
    y = x[3:14:2]
    assert y.chunks == ((4, 2),)
    np.testing.assert_array_equal(y.compute(), np.arange(20)[3:14:2])
    z = x[::7]  # step larger than the chunk: blocks of the chunk size
    assert z.chunks == ((3,),)
    np.testing.assert_array_equal(z.compute(), np.arange(20)[::7])
    w = x[1::3]  # 5 - 5 % 3 = 3
    assert w.chunks == ((3, 3, 1),)
    np.testing.assert_array_equal(w.compute(), np.arange(20)[1::3])


def test_pad_symmetric_chunks_follow_cubed(spec):
    # Cubed's test_pad_symmetric
    an = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    a = cubego.asarray(an, chunks=(2, 2), spec=spec)
    b = cubego.pad(a, ((1, 0), (0, 0)), mode="symmetric")
    assert b.chunks == ((2, 2), (2, 1))
    np.testing.assert_array_equal(b.compute(), np.pad(an, ((1, 0), (0, 0)), mode="symmetric"))


@pytest.mark.parametrize("mode", ["symmetric", "reflect", "edge", "wrap"])
def test_pad_modes_regular_chunks(spec, mode):
    an = np.arange(35).reshape(5, 7)
    x = cubego.asarray(an, chunks=(2, 3), spec=spec)
    y = cubego.pad(x, ((2, 1), (3, 2)), mode=mode)
    assert y.chunks == ((2, 2, 2, 2), (3, 3, 3, 3))
    np.testing.assert_array_equal(y.compute(), np.pad(an, ((2, 1), (3, 2)), mode=mode))


def test_concat_with_chunks(spec):
    x = cubego.asarray(np.arange(5), chunks=2, spec=spec)
    y = cubego.asarray(np.arange(5, 12), chunks=3, spec=spec)
    z = cubego.concat([x, y], chunks=4)
    assert z.chunks == ((4, 4, 4),)
    np.testing.assert_array_equal(z.compute(), np.arange(12))


# ---------------------------------------------------------------------- asarray and allowed_mem


def test_asarray_larger_than_allowed_mem_raises(tmp_path):
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="1MB", reserved_mem=0)
    with pytest.raises(
        ValueError, match="Size of in memory array is 8.0 MB which exceeds maximum of 1.0 MB"
    ):
        cubego.asarray(np.ones((1000, 1000)), chunks=(100, 100), spec=spec)
    small = cubego.asarray(np.ones((100, 100)), chunks=(50, 50), spec=spec)
    np.testing.assert_array_equal(small.compute(), np.ones((100, 100)))


# ---------------------------------------------------------------------- raise_if_computes


def test_raise_if_computes(spec):
    x = cubego.ones((4, 4), chunks=2, spec=spec)
    with cubego.raise_if_computes():
        y = cubego.sum(x + 1)  # building plans is fine
        y.plan()
        with pytest.raises(RuntimeError, match="'compute' was called"):
            y.compute()
        with pytest.raises(RuntimeError, match="'compute' was called"):
            np.asarray(x)
        with pytest.raises(RuntimeError, match="'compute' was called"):
            cubego.to_zarr(x, None)
        # as in Cubed, an explicit executor still runs
        assert y.compute(executor="single-threaded") == 32
    assert y.compute() == 32


# ---------------------------------------------------------------------- map_overlap options


def test_map_overlap_chunks_cubed_1d(spec):
    # Cubed's test_map_overlap_1d
    a = cubego.asarray(np.arange(6), chunks=(3,), spec=spec)
    b = cubego.map_overlap(
        lambda x: x, a, dtype=a.dtype, chunks=((5, 5),), depth=1, boundary=0, trim=False
    )
    assert b.chunks == ((5, 5),)
    np.testing.assert_array_equal(b.compute(), [0, 0, 1, 2, 3, 2, 3, 4, 5, 0])


def test_map_overlap_chunks_cubed_trim_by_hand(spec):
    # Cubed's test_map_overlap_trim
    a = cubego.asarray(np.array([1, 1, 2, 3, 5, 8, 13, 21]), chunks=5, spec=spec)

    def derivative(x):
        return (x - np.roll(x, 1))[1:-1]

    b = cubego.map_overlap(
        derivative, a, dtype=a.dtype, chunks=a.chunks, depth=1, boundary=0, trim=False
    )
    np.testing.assert_array_equal(b.compute(), [1, 0, 1, 1, 2, 3, 5, 8])


def test_map_overlap_chunks_2d_cubed(spec):
    # Cubed's test_map_overlap_2d: per-axis depth and constant boundaries
    x = np.arange(36).reshape((6, 6))
    a = cubego.asarray(x, chunks=(3, 3), spec=spec)
    b = cubego.map_overlap(
        lambda x: x,
        a,
        dtype=a.dtype,
        chunks=((7, 7), (5, 5)),
        depth={0: 2, 1: 1},
        boundary={0: 100, 1: 200},
        trim=False,
    )
    dx = da.from_array(x, chunks=(3, 3))
    expected = da.overlap.overlap(dx, depth={0: 2, 1: 1}, boundary={0: 100, 1: 200})
    np.testing.assert_array_equal(b.compute(), expected.compute())


def test_map_overlap_chunks_with_trim_as_dask(spec):
    xn = np.arange(24.0)
    x = cubego.asarray(xn, chunks=6, spec=spec)
    dx = da.from_array(xn, chunks=6)

    def halve(b):  # the extended block (8 elements) to 4
        return b[::2]

    kw = dict(depth=1, boundary="reflect", chunks=(4,), dtype=np.float64)
    got = cubego.map_overlap(halve, x, **kw)
    expected = da.map_overlap(halve, dx, **kw)
    assert got.chunks == expected.chunks
    np.testing.assert_array_equal(got.compute(), expected.compute())


def test_map_overlap_drop_axis(spec):
    xn = np.arange(8 * 6.0).reshape(8, 6)
    x = cubego.asarray(xn, chunks=(4, 3), spec=spec)

    def rowsum(b):
        return b.sum(axis=1)

    # the dropped axis has two blocks: it is read whole (Dask would concatenate too)
    got = cubego.map_overlap(rowsum, x, depth={0: 1}, boundary="none", drop_axis=1, dtype=float)
    assert got.chunks == ((4, 4),)
    np.testing.assert_allclose(got.compute(), xn.sum(axis=1))
    # a depth on the dropped axis pads its ends (here with 1.0 on each side)
    padded = cubego.map_overlap(rowsum, x, depth=1, boundary=1.0, drop_axis=-1, dtype=float)
    np.testing.assert_allclose(padded.compute(), xn.sum(axis=1) + 2)


def test_map_overlap_new_axis(spec):
    xn = np.arange(10.0)
    x = cubego.asarray(xn, chunks=5, spec=spec)

    def pair(b):
        return np.stack([b, 2 * b], axis=1)

    kw = dict(depth=1, boundary="nearest", new_axis=1, chunks=((7, 7), (2,)), dtype=float)
    got = cubego.map_overlap(pair, x, **kw)
    assert got.chunks == ((5, 5), (2,))
    np.testing.assert_array_equal(got.compute(), np.stack([xn, 2 * xn], axis=1))
    # without chunks a new axis has length 1 (Dask's default)
    one = cubego.map_overlap(lambda b: b[:, None], x, depth=1, new_axis=1, dtype=float)
    assert one.chunks == ((5, 5), (1,))
    np.testing.assert_array_equal(one.compute(), xn[:, None])


def test_map_overlap_block_info(spec):
    x = cubego.asarray(np.zeros(10), chunks=4, spec=spec)
    seen = {}

    def record(b, block_info=None):
        loc = block_info[None]["chunk-location"]
        seen[loc] = (block_info[0]["array-location"], block_info[None]["array-location"])
        return b

    cubego.map_overlap(record, x, depth=1, boundary=0, dtype=float).compute(
        executor="single-threaded"
    )
    assert seen == {
        (0,): ([(0, 4)], [(0, 4)]),
        (1,): ([(4, 8)], [(4, 8)]),
        (2,): ([(8, 10)], [(8, 10)]),
    }


def test_map_overlap_bad_chunks(spec):
    x = cubego.asarray(np.zeros(10), chunks=5, spec=spec)
    with pytest.raises(ValueError, match="blocks along it"):
        cubego.map_overlap(lambda b: b, x, depth=1, chunks=((3, 3, 3),), dtype=float)
    with pytest.raises(ValueError, match="out of range"):
        cubego.map_overlap(lambda b: b, x, depth=1, drop_axis=3, dtype=float)


# ---------------------------------------------------------------------- map_blocks without arrays


def test_map_blocks_without_arrays_passes_a_block_as_cubed(spec):
    def fill(x, block_id=None):
        return np.full(x.shape, 10 * block_id[0] + block_id[1], dtype=np.int64)

    y = cubego.map_blocks(fill, dtype=np.int64, chunks=((2, 1), (3, 3)), spec=spec)
    expected = np.array([[0] * 3 + [1] * 3] * 2 + [[10] * 3 + [11] * 3])
    np.testing.assert_array_equal(y.compute(), expected)
    z = cubego.map_blocks(np.ones_like, dtype=np.float32, chunks=((2, 2),), spec=spec)
    np.testing.assert_array_equal(z.compute(), np.ones(4, dtype=np.float32))


def test_map_blocks_without_arrays_dask_convention_still_works(spec):
    def f(block_id=None):
        return np.full((2,), block_id[0])

    y = cubego.map_blocks(f, dtype=np.int64, chunks=((2, 2),), spec=spec)
    np.testing.assert_array_equal(y.compute(), [0, 0, 1, 1])


# ---------------------------------------------------------------------- rechunk, to_zarr, tensordot


@pytest.mark.parametrize("allow_irregular", [True, False])
def test_rechunk_allow_irregular(a, allow_irregular):
    y = a.rechunk((4, 4), allow_irregular=allow_irregular)
    assert y.chunks == ((4, 4, 2), (4, 4, 4))
    np.testing.assert_array_equal(y.compute(), A)
    z = cubego.rechunk(a, (2, 6), allow_irregular=allow_irregular)
    np.testing.assert_array_equal(z.compute(), A)


def test_rechunk_allow_irregular_must_be_bool(a):
    with pytest.raises(TypeError, match="allow_irregular"):
        a.rechunk((4, 4), allow_irregular="yes")


def test_to_zarr_without_store(a):
    assert cubego.to_zarr(a + 1, None) is None
    stored = cubego.to_zarr(a + 1, None, compute=False)
    np.testing.assert_array_equal(stored.compute(), A + 1)
    with pytest.raises(ValueError, match="Target store must be specified"):
        cubego.to_zarr(a, None, region=(slice(0, 3), slice(0, 5)))


@pytest.mark.parametrize("axes", [(1, 0), ([1], [0]), ((1,), 0), 1])
def test_tensordot_pair_of_ints(spec, axes):
    xn = np.arange(12.0).reshape(3, 4)
    yn = np.arange(20.0).reshape(4, 5)
    x = cubego.asarray(xn, chunks=2, spec=spec)
    y = cubego.asarray(yn, chunks=2, spec=spec)
    np.testing.assert_allclose(
        cubego.tensordot(x, y, axes=axes).compute(), np.tensordot(xn, yn, axes=axes)
    )


# ---------------------------------------------------------------------- random


def test_random_reproducible_after_python_seed(spec):
    random.seed(42)
    first = cubego.random.random((10, 3), chunks=4, spec=spec).compute()
    random.seed(42)
    second = cubego.random.random((10, 3), chunks=4, spec=spec).compute()
    third = cubego.random.random((10, 3), chunks=4, spec=spec).compute()
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(second, third)
    random.seed(7)
    ints = cubego.random.integers((20,), low=0, high=100, chunks=6, spec=spec).compute()
    random.seed(7)
    again = cubego.random.integers((20,), low=0, high=100, chunks=6, spec=spec).compute()
    np.testing.assert_array_equal(ints, again)


# ---------------------------------------------------------------------- validation


def test_roll_shift_and_axis_must_match(a):
    with pytest.raises(ValueError, match="Must have the same number of shifts as axes"):
        cubego.roll(a, (1, 2), axis=0)
    with pytest.raises(ValueError, match="Must have the same number of shifts as axes"):
        cubego.roll(a, (1, 2), axis=(0, 1, 0))
    with pytest.raises(TypeError, match="shift must be an int when axis is None"):
        cubego.roll(a, (1, 2))
    # The standard: one int shift applies to every axis of a tuple axis
    np.testing.assert_array_equal(cubego.roll(a, 2, axis=(0, 1)).compute(), np.roll(A, 2, (0, 1)))
    np.testing.assert_array_equal(
        cubego.roll(a, (1, -3), axis=(0, 1)).compute(), np.roll(A, (1, -3), axis=(0, 1))
    )


def test_where_with_two_scalars_is_refused(a):
    with pytest.raises(TypeError, match="At least one of x1 and x2 must be an array"):
        cubego.where(a > 3, 1.0, 0.0)
    np.testing.assert_array_equal(cubego.where(a > 3, a, 0.0).compute(), np.where(A > 3, A, 0.0))


# ---------------------------------------------------------------------- Cubed's error phrases


def test_store_different_number_of_sources(a, tmp_path):
    with pytest.raises(ValueError, match=r"Different number of sources \(2\) and targets \(1\)"):
        cubego.store([a, a], [str(tmp_path / "one.zarr")])


def test_arrays_with_different_specs(tmp_path):
    x = cubego.ones((4,), spec=cubego.Spec(work_dir=tmp_path, allowed_mem="100MB"))
    y = cubego.ones((4,), spec=cubego.Spec(work_dir=tmp_path, allowed_mem="200MB"))
    with pytest.raises(ValueError, match="Arrays must have same spec in single computation"):
        x + y
    with pytest.raises(ValueError, match="Arrays must have same spec in single computation"):
        cubego.compute(x, y)


def test_exceeds_allowed_mem(tmp_path):
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="2MB", reserved_mem=0)
    x = cubego.ones((1000, 1000), chunks=(1000, 1000), spec=spec)
    with pytest.raises(ValueError, match="exceeds allowed_mem"):
        (x + 1).compute()


def test_matmul_dimension_mismatch(spec):
    x = cubego.ones((3, 4), spec=spec)
    with pytest.raises(ValueError, match="matmul: dimension mismatch"):
        x @ x
