"""Chunk sizes cross the C ABI as runs (docs/capi.md "Array results").

``cg_op`` describes a result's chunks as ``[size, count]`` runs per axis, and
``Array.chunks`` is expanded from them only when read, so building an array
of millions of blocks never builds tuples of millions of block sizes. These
tests hold the runs to the full lists: the library's own explicit lists
(``cg_arrays_from_json``, which pickling uses) and Python's
``normalize_chunks``.
"""

import pickle

import numpy as np
import pytest

import cubego
from cubego.binding import libcubego
from cubego.core.array import chunk_runs, expand_runs
from cubego.core.chunks import MAX_BLOCKS, normalize_chunks

CASES = [
    ((), ()),
    ((0,), 3),
    ((0, 4), (0, 2)),
    ((5, 0, 3), (2, 1, 3)),
    ((10,), 3),
    ((10,), 5),
    ((10,), ((1, 2, 3, 4),)),
    ((10,), ((3, 3, 1, 1, 1, 1),)),
    ((9, 7), ((2, 2, 2, 2, 1), -1)),
    ((12, 5), ((4, 4, 4), (1, 4))),
    ((6, 6, 6), (4, 5, 6)),
    ((100,), 1),
]


@pytest.mark.parametrize(("shape", "chunks"), CASES)
def test_chunks_match_normalize_and_the_explicit_lists(spec, shape, chunks):
    x = cubego.zeros(shape, chunks=chunks, spec=spec)
    want = normalize_chunks(chunks, shape, dtype=np.float64)
    assert x.chunks == want
    assert all(type(c) is int for axis in x.chunks for c in axis)
    assert x.numblocks == tuple(len(axis) for axis in want)
    assert x.chunksize == tuple(max(axis) if axis else 0 for axis in want)
    # cg_arrays_from_json gives the explicit lists: the two decodings agree.
    y = pickle.loads(pickle.dumps(x))
    assert y.chunks == x.chunks
    assert (y.numblocks, y.chunksize) == (x.numblocks, x.chunksize)


@pytest.mark.parametrize(("shape", "chunks"), CASES)
def test_op_returns_runs_not_lists(spec, shape, chunks):
    (info,) = libcubego.op(
        "full",
        {
            "shape": list(shape),
            "dtype": "float64",
            "chunks": cubego.core.array.encode_chunks(chunks),
            "fill_value": libcubego.encode_scalar(0.0),
            "spec": spec._to_json(),
        },
        [],
    )
    try:
        assert "chunks" not in info
        want = normalize_chunks(chunks, shape, dtype=np.float64)
        got = tuple(expand_runs(tuple(map(tuple, axis))) for axis in info["chunk_runs"])
        assert got == want
        # Runs are maximal: no two neighbours have the same size.
        for axis in info["chunk_runs"]:
            assert all(a[0] != b[0] for a, b in zip(axis, axis[1:], strict=False))
            assert all(count >= 1 for _, count in axis)
    finally:
        libcubego.array_release(info["handle"])


@pytest.mark.parametrize(
    "sizes",
    [(), (0,), (5,), (4, 4, 4, 1), (1, 2, 2, 3, 3, 3), (2, 1, 2, 1), (7,) * 1000 + (3,)],
)
def test_runs_round_trip(sizes):
    runs = chunk_runs(sizes)
    assert expand_runs(runs) == sizes
    assert sum(count for _, count in runs) == len(sizes)


def test_irregular_results(spec):
    a = cubego.asarray(np.arange(10.0), chunks=((3, 3, 4),), spec=spec)
    b = cubego.asarray(np.arange(10.0, 16.0), chunks=((1, 5),), spec=spec)
    c = cubego.concat([a, b])
    assert c.chunks == ((3, 3, 4, 1, 5),)
    assert c.chunksize == (5,)
    assert c[2:13].chunks == ((1, 3, 4, 1, 2),)
    np.testing.assert_array_equal(c.compute(), np.arange(16.0))


def test_zero_d(spec):
    x = cubego.asarray(np.float64(2.5), spec=spec)
    assert (x.chunks, x.numblocks, x.chunksize, x.npartitions) == ((), (), (), 1)
    y = cubego.sum(cubego.ones((4, 3), chunks=2, spec=spec))
    assert (y.shape, y.chunks) == ((), ())
    assert y.compute() == 12.0


def test_huge_block_count_stays_lazy(spec):
    """An array of MAX_BLOCKS blocks builds without its chunk tuples."""
    x = cubego.ones((MAX_BLOCKS,), chunks=1, spec=spec)
    y = (x + 1) * 2
    for a in (x, y):
        assert a._chunks is None  # not expanded by building
        assert a.numblocks == (MAX_BLOCKS,)
        assert a.npartitions == MAX_BLOCKS
        assert a.chunksize == (1,)
        assert a._chunks is None  # nor by the counts
    chunks = y.chunks
    assert len(chunks[0]) == MAX_BLOCKS and set(chunks[0]) == {1}
    assert y.chunks is chunks  # expanded once, then kept
    # The cap counts the block sizes listed over all axes, not their product.
    half = MAX_BLOCKS // 2
    z = cubego.ones((half, half), chunks=1, spec=spec) * 2
    assert z._chunks is None
    assert z.numblocks == (half, half) and z.npartitions == half * half
    assert z.chunks == ((1,) * half, (1,) * half)


def test_more_blocks_than_the_cap_is_a_value_error(spec):
    with pytest.raises(ValueError, match="blocks"):
        cubego.ones((MAX_BLOCKS + 1,), chunks=1, spec=spec)
    with pytest.raises(ValueError, match="blocks"):
        cubego.ones((MAX_BLOCKS // 2, MAX_BLOCKS // 2 + 1), chunks=1, spec=spec)


def test_rechunk_keeps_an_axis_as_its_block_size(spec):
    """An axis a rechunk keeps goes to the library as its block size when regular."""
    data = np.arange(60.0).reshape(10, 6)
    x = cubego.asarray(data, chunks=(3, (1, 2, 3)), spec=spec)
    assert x._axis_chunks(0) == 3
    assert x._axis_chunks(1) == (1, 2, 3)
    y = x.rechunk({1: 6})
    assert y.chunks == ((3, 3, 3, 1), (6,))
    z = x.rechunk((None, 2))
    assert z.chunks == ((3, 3, 3, 1), (2, 2, 2))
    w = x.rechunk({0: 5})
    assert w.chunks == ((5, 5), (1, 2, 3))
    np.testing.assert_array_equal(w.compute(), data)
    assert x.rechunk({1: None}) is x
    e = cubego.zeros((0, 4), chunks=(0, 2), spec=spec)
    assert e._axis_chunks(0) == (0,)
    assert e.rechunk({1: 4}).chunks == ((0,), (4,))


@pytest.mark.parametrize(
    ("sizes", "want"),
    [
        ((4, 4, 4, 1), 4),
        ((4,), 4),
        ((5, 5), 5),
        ((np.int64(3), np.int64(3)), 3),
        ((0,), [0]),
        ((), []),
        ((1, 2), [1, 2]),
        ((2, 1, 2), [2, 1, 2]),
        ((3, 3, 3, 3, 4), [3, 3, 3, 3, 4]),
    ],
)
def test_python_op_axis_encoding(sizes, want):
    from cubego.primitive.blockwise import _encode_axis

    got = _encode_axis(sizes, int(sum(sizes)))
    assert got == want and type(got) is type(want)
    if isinstance(want, int):  # a list whose sum is not the axis length stays a list
        assert _encode_axis(sizes, int(sum(sizes)) + 1) == [int(c) for c in sizes]
    assert all(type(c) is int for c in (got if isinstance(got, list) else [got]))


def test_map_blocks_is_described_in_constant_size(spec, monkeypatch):
    """map_blocks over a regular chunking sends one block size per axis and
    identity maps, not a list or a range per block."""
    sent = []
    real = libcubego.python_op

    def spy(args, payload, inputs):
        sent.append(args)
        return real(args, payload, inputs)

    monkeypatch.setattr(libcubego, "python_op", spy)
    data = np.arange(2000.0).reshape(1000, 2)
    x = cubego.asarray(data, chunks=(3, 2), spec=spec)
    y = cubego.map_blocks(np.negative, x, dtype=x.dtype)
    (args,) = sent
    assert args["chunks"] == [3, 2]
    assert args["maps"] == [
        [
            {"kind": "affine", "out_dim": 0, "start": 0, "step": 1},
            {"kind": "affine", "out_dim": 1, "start": 0, "step": 1},
        ]
    ]
    assert y.chunks == x.chunks
    np.testing.assert_array_equal(y.compute(), -data)
    # Irregular blocks are still listed, and misaligned inputs still read ranges.
    a = cubego.asarray(np.arange(10.0), chunks=((3, 3, 4),), spec=spec)
    b = cubego.asarray(np.arange(10.0), chunks=((4, 3, 3),), spec=spec)
    z = cubego.blockwise(np.add, "i", a, "i", b, "i", dtype=np.float64, align_arrays=True)
    args = sent[-1]
    assert args["chunks"][0] != 3 and isinstance(args["chunks"][0], list)
    np.testing.assert_array_equal(z.compute(), 2 * np.arange(10.0))


def test_map_blocks_block_info_with_identity_maps(spec):
    seen = {}

    def f(block, block_info=None):
        seen[block_info[None]["chunk-location"]] = (
            block_info[0]["array-location"],
            block_info[None]["array-location"],
        )
        return block

    x = cubego.asarray(np.arange(10.0), chunks=4, spec=spec)
    np.testing.assert_array_equal(cubego.map_blocks(f, x, dtype=x.dtype).compute(), np.arange(10.0))
    assert seen == {
        (0,): ([(0, 4)], [(0, 4)]),
        (1,): ([(4, 8)], [(4, 8)]),
        (2,): ([(8, 10)], [(8, 10)]),
    }
