"""Python functions per block: map_blocks, blockwise, lazy from_array, reductions, scans.

Dask (or numpy) is the reference for every result.
"""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import textwrap
import threading
import traceback
from functools import partial

import dask.array as da
import numpy as np
import pytest

import cubego

RNG = np.random.default_rng(42)
A = RNG.standard_normal((10, 12))


@pytest.fixture
def x(spec):
    return cubego.asarray(A, chunks=(3, 5), spec=spec)


@pytest.fixture
def dx():
    return da.from_array(A, chunks=(3, 5))


# ---------------------------------------------------------------------- map_blocks


def test_map_blocks_matches_dask(x, dx):
    f = lambda b, k: np.sin(b) * k  # noqa: E731
    np.testing.assert_allclose(
        cubego.map_blocks(f, x, 3).compute(), da.map_blocks(f, dx, 3).compute()
    )
    assert cubego.map_blocks(f, x, 3).chunks == x.chunks


def test_map_blocks_infers_dtype_and_passes_kwargs(x):
    y = cubego.map_blocks(lambda b, offset=0: (b > offset).astype(np.int32), x, offset=0.5)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y.compute(), (A > 0.5).astype(np.int32))


def test_map_blocks_several_arrays_broadcast(spec):
    a = RNG.standard_normal((6, 8))
    b = RNG.standard_normal((8,))
    c = RNG.standard_normal((6, 1))
    xa = cubego.asarray(a, chunks=(2, 4), spec=spec)
    xb = cubego.asarray(b, chunks=4, spec=spec)  # same blocks along the last axis
    xc = cubego.asarray(c, chunks=(2, 1), spec=spec)  # one block along the last axis: broadcast
    f = lambda p, q, r: p * q + r  # noqa: E731
    expected = da.map_blocks(
        f,
        da.from_array(a, chunks=(2, 4)),
        da.from_array(b, chunks=4),
        da.from_array(c, chunks=(2, 1)),
    ).compute()
    np.testing.assert_allclose(cubego.map_blocks(f, xa, xb, xc).compute(), expected)


def _record(store, lock):
    def f(b, block_id=None, block_info=None):
        with lock:
            store[block_id] = block_info
        return b + block_id[0] * 100 + block_id[-1]

    return f


def test_block_id_and_block_info_match_dask(spec):
    a = RNG.standard_normal((7, 9))
    b = RNG.standard_normal((9,))
    ours, theirs, lock = {}, {}, threading.Lock()
    # two arrays with a constant between them (block_info is keyed by argument position)
    f = _record(ours, lock)
    y = cubego.map_blocks(
        lambda p, k, q, block_id=None, block_info=None: f(p + q * k, block_id, block_info),
        cubego.asarray(a, chunks=(3, 4), spec=spec),
        2.0,
        cubego.asarray(b, chunks=4, spec=spec),
        dtype=np.float64,
    )
    g = _record(theirs, lock)
    z = da.map_blocks(
        lambda p, k, q, block_id=None, block_info=None: g(p + q * k, block_id, block_info),
        da.from_array(a, chunks=(3, 4)),
        2.0,
        da.from_array(b, chunks=4),
        dtype=np.float64,
    )
    np.testing.assert_allclose(y.compute(), z.compute(scheduler="sync"))
    theirs = {k: v for k, v in theirs.items() if isinstance(k, tuple)}  # not dask's meta calls
    assert set(ours) == set(theirs) == {(i, j) for i in range(3) for j in range(3)}
    for block, info in theirs.items():
        assert ours[block] == info, block


def test_map_blocks_drop_axis(x, dx):
    f = lambda b: b.sum(axis=0)  # noqa: E731
    y = cubego.map_blocks(f, x.rechunk((10, 5)), drop_axis=0)
    np.testing.assert_allclose(
        y.compute(), da.map_blocks(f, dx.rechunk((10, 5)), drop_axis=0).compute()
    )
    # several blocks along the dropped axis are concatenated, as in Dask
    z = cubego.map_blocks(f, x, drop_axis=0)
    np.testing.assert_allclose(z.compute(), A.sum(axis=0))
    assert z.chunks == ((5, 5, 2),)


def test_map_blocks_new_axis_and_chunks(x, dx):
    f = lambda b: b[:, None, :] * np.arange(2)[None, :, None]  # noqa: E731
    chunks = ((3, 3, 3, 1), (2,), (5, 5, 2))
    y = cubego.map_blocks(f, x, new_axis=1, chunks=chunks)
    expected = da.map_blocks(f, dx, new_axis=1, chunks=chunks)
    assert y.chunks == expected.chunks
    np.testing.assert_allclose(y.compute(), expected.compute())
    g = lambda b: b[::2]  # noqa: E731
    smaller = cubego.map_blocks(g, x, chunks=((2, 2, 2, 1), (5, 5, 2)))
    np.testing.assert_allclose(
        smaller.compute(), da.map_blocks(g, dx, chunks=((2, 2, 2, 1), (5, 5, 2))).compute()
    )


def test_map_blocks_without_arrays(spec):
    def f(block_id=None):
        return np.full((2, 3), block_id[0] * 10 + block_id[1], dtype=np.int64)

    y = cubego.map_blocks(f, dtype=np.int64, chunks=((2, 2), (3, 3)), spec=spec)
    expected = np.kron(np.array([[0, 1], [10, 11]]), np.ones((2, 3), dtype=np.int64))
    np.testing.assert_array_equal(y.compute(), expected)


def test_map_blocks_method(x):
    np.testing.assert_allclose(x.map_blocks(np.abs).compute(), np.abs(A))


# ---------------------------------------------------------------------- blockwise


def test_blockwise_contraction_concatenates(spec):
    a = RNG.standard_normal((6, 7))
    b = RNG.standard_normal((7, 4))
    xa = cubego.asarray(a, chunks=(2, 3), spec=spec)
    xb = cubego.asarray(b, chunks=(3, 2), spec=spec)
    y = cubego.blockwise(np.dot, "ik", xa, "ij", xb, "jk", dtype=np.float64)
    assert y.chunks == ((2, 2, 2), (2, 2))
    np.testing.assert_allclose(y.compute(), a @ b)


def test_blockwise_concatenate_false_passes_lists(spec):
    a = RNG.standard_normal((4, 6))
    xa = cubego.asarray(a, chunks=(2, 4), spec=spec)

    def f(blocks):
        assert isinstance(blocks, list) and [b.shape[1] for b in blocks] == [4, 2]
        return sum(b.sum(axis=1) for b in blocks)

    y = cubego.blockwise(f, "i", xa, "ij", dtype=np.float64, concatenate=False)
    np.testing.assert_allclose(y.compute(), a.sum(axis=1))


def test_blockwise_outer_new_axes_adjust_chunks(spec):
    a, b = np.arange(5.0), np.arange(4.0)
    xa = cubego.asarray(a, chunks=2, spec=spec)
    xb = cubego.asarray(b, chunks=3, spec=spec)
    outer = cubego.blockwise(np.multiply.outer, "ij", xa, "i", xb, "j", dtype=np.float64)
    np.testing.assert_array_equal(outer.compute(), np.multiply.outer(a, b))
    rep = cubego.blockwise(
        lambda v: np.repeat(v[:, None], 3, axis=1),
        "ik",
        xa,
        "i",
        new_axes={"k": 3},
        dtype=np.float64,
    )
    np.testing.assert_array_equal(rep.compute(), np.repeat(a[:, None], 3, axis=1))
    halves = cubego.blockwise(
        lambda v: v[::2],
        "i",
        xa,
        "i",
        adjust_chunks={"i": lambda n: (n + 1) // 2},
        dtype=np.float64,
    )
    assert halves.chunks == ((1, 1, 1),)
    np.testing.assert_array_equal(halves.compute(), np.array([0.0, 2.0, 4.0]))


def test_blockwise_aligns_misaligned_chunks(spec):
    a, b = RNG.standard_normal(10), RNG.standard_normal(10)
    f = lambda p, q: p - q  # noqa: E731
    y = cubego.blockwise(
        f,
        "i",
        cubego.asarray(a, chunks=((5, 5),), spec=spec),
        "i",
        cubego.asarray(b, chunks=((3, 7),), spec=spec),
        "i",
        dtype=np.float64,
    )
    z = da.blockwise(
        f,
        "i",
        da.from_array(a, chunks=((5, 5),)),
        "i",
        da.from_array(b, chunks=((3, 7),)),
        "i",
        dtype=np.float64,
    )
    assert y.chunks == z.chunks
    np.testing.assert_allclose(y.compute(), z.compute())


def test_blockwise_contraction_is_projected(spec):
    big = cubego.ones((100, 200_000), chunks=(100, 1000), spec=spec)  # 160 MB rows
    y = cubego.blockwise(lambda b: b.sum(axis=1), "i", big, "ij", dtype=np.float64)
    with pytest.raises(ValueError, match="exceeds"):
        y.compute()


def test_memory_is_projected_and_measured(x):
    y = cubego.map_blocks(np.abs, x)
    y.compute()
    (op,) = [o for o in cubego._last_stats()["ops"] if o["func"] == "map_blocks"]
    chunk = 3 * 5 * 8
    # input, output and the function's result, each at least a chunk
    assert op["projected_mem"] >= y.spec.reserved_mem + 3 * chunk
    # engine buffers only: the input region and the output block
    assert 2 * chunk <= op["peak_allocated"] <= op["projected_mem"]


def test_extra_projected_mem(x, spec):
    plain = cubego.plan(cubego.map_blocks(np.abs, x)).max_projected_mem
    more = cubego.plan(cubego.map_blocks(np.abs, x, extra_projected_mem=10_000)).max_projected_mem
    assert more - plain == 10_000


# ---------------------------------------------------------------------- lazy sources


class Recorder:
    """An array-like that records every read."""

    def __init__(self, data):
        self.data = data
        self.shape = data.shape
        self.dtype = data.dtype
        self.reads = []
        self.lock = threading.Lock()

    def __getitem__(self, key):
        with self.lock:
            self.reads.append(key)
        return self.data[key]


def test_from_array_reads_each_block_once(spec):
    data = np.arange(7 * 9, dtype=np.float32).reshape(7, 9)
    source = Recorder(data)
    y = cubego.from_array(source, chunks=(3, 4), spec=spec)
    assert source.reads == []  # lazy
    assert y.chunks == ((3, 3, 1), (4, 4, 1)) and y.dtype == np.float32
    np.testing.assert_array_equal(y.compute(), data)
    expected = {
        ((i, min(i + 3, 7)), (j, min(j + 4, 9))) for i in range(0, 7, 3) for j in range(0, 9, 4)
    }
    reads = {tuple((s.start, s.stop) for s in key) for key in source.reads}
    assert len(source.reads) == 9 and reads == expected


def test_from_array_zarr_python(tmp_path, spec):
    zarr = pytest.importorskip("zarr")
    z = zarr.create_array(
        store=str(tmp_path / "z.zarr"), shape=(20, 10), chunks=(5, 5), dtype="int32"
    )
    z[:] = np.arange(200, dtype=np.int32).reshape(20, 10)
    y = cubego.from_array(z, spec=spec)
    assert all(c % 5 == 0 for axis in y.chunks for c in axis[:-1])
    np.testing.assert_array_equal((y + 1).compute(), z[:] + 1)


def test_from_array_numpy_keeps_in_memory_path(spec):
    y = cubego.from_array(A, chunks=4, spec=spec)
    assert cubego.plan(y).num_ops == 0 or y.compute().shape == A.shape
    np.testing.assert_array_equal(y.compute(), A)


# ---------------------------------------------------------------------- reductions and scans


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_matches_numpy(x, axis, keepdims):
    y = cubego.reduction(x, np.sum, axis=axis, dtype=np.float64, keepdims=keepdims, split_every=2)
    np.testing.assert_allclose(y.compute(), A.sum(axis=axis, keepdims=keepdims))


def _chunk_stats(b, axis=None, keepdims=True):
    return {
        "n": np.sum(np.ones_like(b, dtype=np.int64), axis=axis, keepdims=True),
        "total": np.sum(b, axis=axis, keepdims=True),
    }


def _combine_stats(d, axis=None, keepdims=True):
    return {k: v.sum(axis=axis, keepdims=True) for k, v in d.items()}


def _mean(d, axis=None, keepdims=True):
    return d["total"] / d["n"]


@pytest.mark.parametrize("axis", [0, 1, None])
def test_reduction_with_structured_intermediates(x, axis):
    y = cubego.reduction(
        x,
        _chunk_stats,
        _combine_stats,
        _mean,
        axis=axis,
        intermediate_dtype=[("n", np.int64), ("total", np.float64)],
        dtype=np.float64,
        split_every=2,
    )
    np.testing.assert_allclose(y.compute(), A.mean(axis=axis))


@pytest.mark.parametrize("func", [np.argmax, np.argmin])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_arg_reduction(x, func, axis):
    np.testing.assert_array_equal(
        cubego.arg_reduction(x, func, axis=axis).compute(), func(A, axis=axis)
    )
    kept = cubego.arg_reduction(x, func, axis=axis, keepdims=True).compute()
    np.testing.assert_array_equal(kept, func(A, axis=axis, keepdims=True))


@pytest.mark.parametrize("axis", [0, 1])
def test_cumreduction_matches_dask(x, dx, axis):
    y = cubego.cumreduction(np.cumsum, np.add, 0, x, axis=axis, dtype=np.float64)
    z = da.reductions.cumreduction(np.cumsum, np.add, 0, dx, axis=axis, dtype=np.float64)
    np.testing.assert_allclose(y.compute(), z.compute())
    p = cubego.scan(x, np.cumprod, binop=np.multiply, axis=axis)
    np.testing.assert_allclose(p.compute(), np.cumprod(A, axis=axis))


def _ffill(a, axis):
    """Forward-fill NaNs along axis (xarray's ``push`` with no limit)."""
    a = np.moveaxis(np.asarray(a), axis, -1)
    idx = np.where(~np.isnan(a), np.arange(a.shape[-1]), 0)
    np.maximum.accumulate(idx, axis=-1, out=idx)
    return np.moveaxis(np.take_along_axis(a, idx, axis=-1), -1, axis)


def _fill_with_last(a, b):
    return np.where(~np.isnan(b), b, a)


def test_cumreduction_forward_fill_many_blocks(spec):
    data = RNG.standard_normal((3, 40))
    data[RNG.random(data.shape) < 0.6] = np.nan
    data[:, :7] = np.nan
    x = cubego.asarray(
        data, chunks=(2, 3), spec=spec
    )  # 14 blocks: the carries are scanned recursively
    y = cubego.cumreduction(_ffill, _fill_with_last, np.nan, x, axis=1, dtype=data.dtype)
    np.testing.assert_array_equal(y.compute(), _ffill(data, 1))


# ---------------------------------------------------------------------- errors


class UserError(Exception):
    pass


def _explode(b, block_id=None):
    if block_id == (1, 1):
        raise UserError(f"bad block {block_id}")
    return b


def test_user_exception_is_reraised(x):
    y = cubego.map_blocks(_explode, x)
    with pytest.raises(UserError, match=r"bad block \(1, 1\)") as info:
        y.compute()
    exc = info.value
    frames = [f.name for f in traceback.extract_tb(exc.__traceback__)]
    assert frames[-1] == "_explode"  # the user's own frame, where it raised
    (note,) = [n for n in exc.__notes__ if n.startswith("cubego:")]
    assert "_explode" in note and "block (1, 1)" in note and "map_blocks" in note and y.name in note


def test_wrong_shape_or_dtype_names_the_op(x):
    y = cubego.map_blocks(lambda b: b[:1], x, dtype=np.float64)
    with pytest.raises(
        ValueError, match=r"returned a block of shape \(1, 5\).*needs shape \(3, 5\)"
    ) as info:
        y.compute()
    assert "map_blocks" in str(info.value) and y.name in str(info.value)
    z = cubego.map_blocks(lambda b: b.astype(np.float32), x, dtype=np.float64)
    with pytest.raises(ValueError, match="dtype float32.*dtype float64"):
        z.compute()


def test_keeping_a_view_is_an_error(x):
    kept = []
    y = cubego.map_blocks(lambda b: kept.append(b) or b + 0, x)
    with pytest.raises(RuntimeError, match="kept a reference to input block"):
        y.compute()
    kept.clear()


def test_a_view_held_for_a_moment_by_another_thread_is_not_an_error(x):
    # As a stack-sampling profiler (Dask's worker profiler) holds the frame
    # of a call that has just returned, and the views in it, while it walks
    # the frame: the block is released a few milliseconds after the call.
    def hold_briefly(b):
        kept = [b]
        threading.Timer(0.005, kept.clear).start()
        return b + 0

    y = cubego.map_blocks(hold_briefly, x)
    np.testing.assert_array_equal(y.compute(), A)


def test_dtype_inference_failure_asks_for_dtype(x):
    def f(b):
        raise KeyError("nope")

    with pytest.raises(ValueError, match="specify the dtype"):
        cubego.map_blocks(f, x)


# ---------------------------------------------------------------------- other processes


def test_pickled_array_with_a_function_computes_in_another_process(x):
    offset = 7.5
    y = cubego.map_blocks(lambda b: np.cos(b) + offset, x) * 2
    z = cubego.reduction(y, np.max, axis=0, dtype=np.float64)
    code = (
        "import pickle, sys, numpy as np, cubego\n"
        "z = pickle.loads(sys.stdin.buffer.read())\n"
        "np.save(sys.stdout.buffer, z.compute())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=pickle.dumps(z),
        capture_output=True,
        env=os.environ,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr.decode()
    np.testing.assert_allclose(
        np.load(io.BytesIO(out.stdout)), ((np.cos(A) + offset) * 2).max(axis=0)
    )


def test_unpicklable_source_fails_clearly_in_another_process(spec):
    source = Recorder(np.arange(6.0))  # holds a lock: cloudpickle refuses it
    y = cubego.from_array(source, chunks=3, spec=spec)
    np.testing.assert_array_equal(y.compute(), np.arange(6.0))  # in this process it runs
    code = (
        "import pickle, sys, cubego\n"
        "y = pickle.loads(sys.stdin.buffer.read())\n"
        "try:\n"
        "    y.compute()\n"
        "except TypeError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=pickle.dumps(y), capture_output=True, timeout=120
    )
    assert out.returncode == 0, out.stderr.decode()
    assert "could not be pickled" in out.stdout.decode()


def test_ctrl_c_cancels_a_slow_python_map_blocks(tmp_path):
    script = textwrap.dedent(
        f"""
        import os, signal, threading, time
        import numpy as np, cubego
        spec = cubego.Spec(work_dir={str(tmp_path)!r}, allowed_mem="100MB")
        calls = []
        def slow(b):
            calls.append(1)
            time.sleep(0.2)
            return b
        x = cubego.map_blocks(slow, cubego.ones((40,), chunks=1, spec=spec))
        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
        start = time.monotonic()
        try:
            x.compute(max_workers=2)
            print("finished")
        except KeyboardInterrupt:
            print("interrupted", round(time.monotonic() - start, 2), len(calls))
        y = cubego.map_blocks(np.negative, cubego.ones((4,), chunks=2, spec=spec))
        print("after", float(cubego.sum(y)))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, env=os.environ, timeout=60
    )
    assert out.returncode == 0, out.stderr.decode()
    lines = out.stdout.decode().split("\n")
    kind, seconds, calls = lines[0].split()
    assert kind == "interrupted"
    assert (
        float(seconds) < 1.5 and int(calls) < 20
    )  # 40 calls × 0.2 s / 2 workers = 4 s uninterrupted
    assert lines[1] == "after -4.0"


def test_functions_run_in_parallel(spec):
    # numpy releases the GIL: two workers overlap two blocks' work
    def busy(b):
        m = np.ones((300, 300))
        for _ in range(20):
            m = m @ m / 300
        return b + m[0, 0]

    x = cubego.ones((4,), chunks=1, spec=spec)
    events = []

    class Times(cubego.Callback):
        def on_task_end(self, event):
            events.append((event.function_start_tstamp, event.function_end_tstamp))

    cubego.map_blocks(busy, x).compute(max_workers=2, callbacks=[Times()])
    events.sort()
    assert len(events) == 4
    overlap = any(b[0] < a[1] for a, b in zip(events, events[1:], strict=False))
    assert overlap, events


def test_partial_functions_and_names_in_plan(x):
    y = cubego.map_blocks(partial(np.round, decimals=1), x)
    ops = cubego.plan(y).ops
    assert [o.func for o in ops] == ["map_blocks"]
    np.testing.assert_allclose(y.compute(), np.round(A, 1))
