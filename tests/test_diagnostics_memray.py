"""cubego.diagnostics.memray.MemrayCallback: memray traces of each operation's first task."""

from __future__ import annotations

import memray  # the diagnostics extra: a missing memray fails these tests
import numpy as np
import pytest

import cubego
import cubego.random
from cubego.diagnostics.memray import AllocationType, MemrayCallback
from cubego.runtime.types import Callback

MB = 1_000_000


class _Plan(Callback):
    """Keeps the computation's id and plan."""

    def on_compute_start(self, event):
        self.compute_id, self.plan = event.compute_id, event.plan


def _allocate_10mb(x):
    scratch = np.ones(10 * MB // 8)  # a 10 MB numpy array the task holds a moment
    return x + scratch[: x.size].reshape(x.shape)


def _run(tmp_path, mem_threshold=5 * MB, **compute_kwargs):
    spec = cubego.Spec(allowed_mem="400MB")
    # made by the engine (an in-memory input would grow the Go heap on first
    # read, which memray shows as the Go runtime's MMAPs: docs/execution.md)
    x = cubego.ones((2000, 2000), chunks=(1000, 1000), spec=spec)  # 8 MB chunks
    y = x.map_blocks(_allocate_10mb, dtype=x.dtype)
    z = y * 2
    cb = MemrayCallback(mem_threshold=mem_threshold, directory=tmp_path)
    seen = _Plan()
    result = cubego.compute(z, callbacks=[cb, seen], optimize_graph=False, **compute_kwargs)[0]
    np.testing.assert_array_equal(result, np.full((2000, 2000), 4.0))
    return cb, seen


def test_traces_each_operation(tmp_path):
    cb, seen = _run(tmp_path)
    traces = tmp_path / seen.compute_id / "memray"
    ops = [op.name for op in seen.plan.ops]
    written = sorted(p.stem for p in traces.glob("*.bin"))
    # every operation with a block (0, 0) has its trace, and the callback read each
    assert written == sorted(ops)
    assert sorted(cb.stats) == sorted(ops) == sorted(cb.allocations)
    for name in ops:
        with memray.FileReader(str(traces / f"{name}.bin")) as reader:
            assert reader.metadata.peak_memory == cb.stats[name].peak_memory_allocated


def test_python_function_allocations(tmp_path):
    cb, seen = _run(tmp_path)
    (op,) = [op for op in seen.plan.ops if "multiply" not in op.func]
    # the 10 MB numpy array, on top of the 8 MB input and output chunk buffers
    # and the function's 8 MB result; little else, since the traced task ran alone
    peak = cb.stats[op.name].peak_memory_allocated
    assert 10 * MB + 3 * 8 * MB <= peak < 10 * MB + 3 * 8 * MB + MB
    # listed where it was made, then its release (paired by object id) when freed
    made, freed = [a for a in cb.allocations[op.name] if a.memory == 10 * MB]
    assert made.allocation_type in (AllocationType.MALLOC, AllocationType.CALLOC)
    assert made.call.startswith("ones;")  # numpy.ones, inside _allocate_10mb
    assert freed.allocation_type is AllocationType.FREE
    assert freed.object_id == made.object_id
    # the function's own 8 MB result is attributed to it by name
    assert any((a.call or "").startswith("_allocate_10mb;") for a in cb.allocations[op.name])


def test_go_operation_chunk_buffers(tmp_path):
    cb, seen = _run(tmp_path)
    (op,) = [op for op in seen.plan.ops if "multiply" in op.func]
    peak = cb.stats[op.name].peak_memory_allocated
    # Go's chunk buffers come from C malloc: y * 2 reads its input chunk into its
    # output buffer and multiplies there (an in-place element-wise task,
    # docs/memory.md), so one 8 MB chunk is live at a time
    assert peak >= 8 * MB
    # and the projection covers what memray saw, as Cubed's tests check
    assert peak <= op.projected_mem
    # memray sees the chunk buffer as C malloc gave it: 8 MB and the padding
    # that aligns it to a page (for direct reads, engine/malloc.go)
    sizes = [a.memory for a in cb.allocations[op.name]]
    assert sizes.count(8 * MB + 4096) + sizes.count(8 * MB) >= 1


def test_threshold_filters_allocations(tmp_path):
    cb, _ = _run(tmp_path, mem_threshold=9 * MB)
    listed = [a for allocs in cb.allocations.values() for a in allocs]
    assert listed and all(a.memory >= 9 * MB for a in listed)


def test_default_directory_is_history(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = cubego.ones((4, 4), chunks=2, spec=cubego.Spec(allowed_mem="100MB"))
    cb = MemrayCallback()
    seen = _Plan()
    (x + 1).compute(callbacks=[cb, seen])
    assert cb.mem_threshold == 50_000_000
    assert (tmp_path / "history" / seen.compute_id / "memray").is_dir()
    assert set(cb.stats) == {op.name for op in seen.plan.ops}


def test_single_threaded_and_registered_with_with(tmp_path):
    x = cubego.ones((4, 4), chunks=2, spec=cubego.Spec(allowed_mem="100MB"))
    seen = _Plan()
    with MemrayCallback(directory=tmp_path) as cb:
        np.testing.assert_array_equal(
            (x + 1).compute(executor="single-threaded", callbacks=[seen]), np.full((4, 4), 2.0)
        )
    assert set(cb.stats) == {op.name for op in seen.plan.ops}


@pytest.mark.parametrize(
    ("threshold", "error"), [(-1, ValueError), ("1MB", TypeError), (1.5, TypeError)]
)
def test_bad_threshold(threshold, error):
    with pytest.raises(error, match="mem_threshold"):
        MemrayCallback(mem_threshold=threshold)


def test_processes_executor_traces_in_workers(tmp_path):
    # the workers trace their own first tasks, into the coordinator's directory
    x = cubego.random.random(
        (2000, 2000), chunks=(1000, 1000), spec=cubego.Spec(allowed_mem="200MB")
    )
    cb = MemrayCallback(mem_threshold=5 * MB, directory=tmp_path)
    seen = _Plan()
    result = (x * 2).compute(callbacks=[cb, seen], executor="processes", max_workers=1)
    np.testing.assert_array_equal(result, 2 * x.compute())
    (op,) = seen.plan.ops
    assert (tmp_path / seen.compute_id / "memray" / f"{op.name}.bin").is_file()
    # the input and output chunk buffers
    assert 2 * 8 * MB <= cb.stats[op.name].peak_memory_allocated <= op.projected_mem
    # a constant input (ones) is read as its one value: just the output chunk
    ones = cubego.ones((2000, 2000), chunks=(1000, 1000), spec=cubego.Spec(allowed_mem="200MB"))
    cb = MemrayCallback(mem_threshold=5 * MB, directory=tmp_path)
    seen = _Plan()
    result = (ones * 2).compute(callbacks=[cb, seen], executor="processes", max_workers=1)
    np.testing.assert_array_equal(result, np.full((2000, 2000), 2.0))
    (op,) = seen.plan.ops
    assert 8 * MB <= cb.stats[op.name].peak_memory_allocated < 2 * 8 * MB


def test_unknown_executor_option_is_refused(tmp_path):
    x = cubego.ones((4, 4), chunks=2, spec=cubego.Spec(allowed_mem="100MB"))
    with pytest.raises(ValueError, match="max_wokers"):
        x.compute(callbacks=[MemrayCallback(directory=tmp_path)], max_wokers=2)
