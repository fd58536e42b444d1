"""The executor conformance suite: the same checks for every executor.

Each test takes the ``executor`` fixture, and ``work``: the Spec keyword
arguments saying where intermediates go (a local directory, or ``s3://`` on the
moto server of ``conftest.s3``).

``tests/test_executors.py`` runs it against the in-process executors and the
local ones; each engine's test module (Dask, Lithops, Ray, ...) runs it against
its engine by defining an ``executor`` fixture and importing the tests:
``from executor_suite import *``, and calls :func:`check_killed_worker` with its
executor (a killed worker is something only a distributed executor survives).
Functions that run in workers are defined in
this module, which registers itself to be pickled by value, so workers need not
import it.
"""

import os
import signal
import time
from pathlib import Path

import cloudpickle
import numpy as np
import pytest

import cubego
from cubego.runtime.remote import RemoteExecutor
from cubego.runtime.types import Callback

cloudpickle.register_pickle_by_value(__import__(__name__))

__all__ = [
    "test_results_equal_in_process",
    "test_callbacks_see_every_task",
    "test_chunk_function_error_is_raised_once",
    "test_refuses_a_plan_over_allowed_mem",
    "test_straggler_gets_a_backup",
    "test_resume_runs_only_missing_tasks",
]


def _marks(directory: Path, block: int) -> int:
    """How many times the task of *block* started (one file per start)."""
    return len(list(directory.glob(f"{block}.*")))


def _mark(directory: str, block: int) -> int:
    """Record a start of *block*'s task; return how many started before."""
    d = Path(directory)
    n = len(list(d.glob(f"{block}.*")))
    (d / f"{block}.{os.getpid()}.{time.monotonic_ns()}").touch()
    return n


def _plan(spec, target):
    a = cubego.asarray(np.arange(240.0).reshape(24, 10), chunks=(5, 4), spec=spec)
    b = (a * 2 - 1).rechunk((24, 2))
    m = cubego.map_blocks(lambda x: x + 1, b, dtype=b.dtype)
    s = cubego.mean(m, axis=0)
    stored = cubego.to_zarr(m, target, compute=False)
    return s, stored


def test_results_equal_in_process(executor, work, tmp_path):
    spec = cubego.Spec(**work, allowed_mem="100MB")
    s, stored = _plan(spec, str(tmp_path / "out.zarr"))
    want = np.mean(np.arange(240.0).reshape(24, 10) * 2 - 1 + 1, axis=0)
    # A product with its own transpose runs the tasks above the diagonal
    # only, each writing two blocks (plan.Op.Mirror).
    x = cubego.asarray(np.arange(60.0).reshape(10, 6) % 7, chunks=(3, 4), spec=spec)
    # Sibling reductions of x run as one op stacking both (plan.Kernel.Stack).
    sx, mx = cubego.sum(x * x, axis=0, split_every=2), cubego.max(x - 1, axis=0, split_every=2)
    qx = cubego.sum(x * 3, axis=0, split_every=2)
    assert any("+" in op.name for op in cubego.plan(sx, qx).ops)
    got, _, sym, gs, gm, gq = cubego.compute(s, stored, x @ x.T, sx, mx, qx, executor=executor)
    np.testing.assert_allclose(got, want)
    xn = np.arange(60.0).reshape(10, 6) % 7
    np.testing.assert_allclose(sym, xn @ xn.T)
    np.testing.assert_allclose(gs, (xn * xn).sum(axis=0))
    np.testing.assert_allclose(gm, (xn - 1).max(axis=0))
    np.testing.assert_allclose(gq, (xn * 3).sum(axis=0))
    import zarr

    np.testing.assert_allclose(
        zarr.open_array(str(tmp_path / "out.zarr"))[...],
        np.arange(240.0).reshape(24, 10) * 2,
    )


class _Counter(Callback):
    def on_compute_start(self, event):
        self.planned = event.plan.num_tasks
        self.ends = []

    def on_task_end(self, event):
        self.ends.append(event)


def test_callbacks_see_every_task(executor, work, tmp_path):
    spec = cubego.Spec(**work, allowed_mem="100MB")
    s, _ = _plan(spec, str(tmp_path / "out.zarr"))
    counter = _Counter()
    s.compute(executor=executor, callbacks=[counter])
    assert sum(e.num_tasks for e in counter.ends) == counter.planned
    for e in counter.ends:
        assert e.function_start_tstamp <= e.function_end_tstamp
        assert e.projected_mem > 0 and e.block is not None
        assert e.peak_measured_mem_end >= e.peak_measured_mem_start > 0


def _fail(x):
    raise KeyError("a chunk function's own error")


def test_chunk_function_error_is_raised_once(executor, work, tmp_path):
    spec = cubego.Spec(**work, allowed_mem="100MB")
    x = cubego.ones((8,), chunks=4, spec=spec)
    with pytest.raises(KeyError, match="own error"):
        cubego.map_blocks(_fail, x, dtype=x.dtype).compute(executor=executor)


def test_refuses_a_plan_over_allowed_mem(executor, work, tmp_path):
    spec = cubego.Spec(**work, allowed_mem="1MB")
    x = cubego.ones((2000, 2000), chunks=(1000, 1000), spec=spec)
    with pytest.raises(ValueError, match="exceeds allowed_mem"):
        (x + 1).compute(executor=executor)


#: How long the straggler of test_straggler_gets_a_backup sleeps, seconds.
STRAGGLE = 6


def _straggle(x, marks=None, block_id=None):
    if _mark(marks, block_id[0]) == 0 and block_id[0] == 0:
        time.sleep(STRAGGLE)
        (Path(marks) / "straggler-done").touch()
    return x


def test_straggler_gets_a_backup(executor, work, tmp_path, request):
    marks = tmp_path / "marks"
    marks.mkdir()
    spec = cubego.Spec(**work, allowed_mem="100MB")
    x = cubego.ones((24,), chunks=1, spec=spec)
    y = cubego.map_blocks(_straggle, x, dtype=x.dtype, marks=str(marks))
    start = time.monotonic()
    np.testing.assert_array_equal(
        y.compute(executor=executor, use_backups=True, tasks_per_batch=1), np.ones(24)
    )
    if getattr(executor, "name", executor) == "single-threaded":
        return  # one task at a time: nothing runs beside the straggler
    assert cubego._last_stats()["backups"] >= 1
    # An engine module sets backup_wins = False where a call costs more than the
    # straggler's delay (Lithops localhost starts a process per call; Beam runs
    # the backup in the pipeline after the straggler's): the engine launches the
    # backup, but whether it runs before the straggler ends says nothing there.
    wins = getattr(request.module, "backup_wins", True)
    if wins:
        assert _marks(marks, 0) == 2
    if wins and isinstance(_executor_object(executor), RemoteExecutor):
        # In process, the losing copy's Python call cannot be interrupted and the
        # op ends with it; a worker's is abandoned.
        elapsed = time.monotonic() - start
        # Engines that cannot stop a running call (Dask, Ray) keep a worker busy
        # with the abandoned copy: let it end before the next test.
        deadline = time.monotonic() + STRAGGLE + 10
        while not (marks / "straggler-done").exists() and time.monotonic() < deadline:
            if time.monotonic() - start > STRAGGLE + 1:
                break  # the engine stopped it (a killed worker process)
            time.sleep(0.1)
        assert elapsed < STRAGGLE, "the straggler was waited for"


def _die_once(x, marks=None, block_id=None):
    if _mark(marks, block_id[0]) == 0 and block_id[0] == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return x * 2


def check_killed_worker(executor, work, tmp_path):
    """A worker killed mid-run costs its batch only: the answer is right, the task re-ran."""
    marks = tmp_path / "marks"
    marks.mkdir()
    spec = cubego.Spec(**work, allowed_mem="100MB")
    x = cubego.ones((12,), chunks=1, spec=spec)
    y = cubego.map_blocks(_die_once, x, dtype=x.dtype, marks=str(marks))
    np.testing.assert_array_equal(
        y.compute(executor=executor, tasks_per_batch=1, retries=2), np.full(12, 2.0)
    )
    runs = [_marks(marks, b) for b in range(12)]
    assert runs[3] == 2, runs  # the killed task ran again
    assert sum(runs) <= 12 + 1 + 1, runs  # at most its batch and one more re-ran


def _executor_object(executor):
    if isinstance(executor, str):
        from cubego.runtime.create import create_executor

        return create_executor(executor)
    return executor


def _count(x, marks=None, block_id=None):
    _mark(marks, block_id[0])
    return x + 1


def test_resume_runs_only_missing_tasks(executor, work, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    spec = cubego.Spec(**work, allowed_mem="100MB")
    x = cubego.ones((10,), chunks=1, spec=spec)
    c = cubego.map_blocks(_count, x, dtype=x.dtype, marks=str(marks))
    np.testing.assert_array_equal(c.compute(executor=executor, resume=True), np.full(10, 2.0))
    assert sum(_marks(marks, b) for b in range(10)) == 10
    # d = -c reuses c's stored chunks: c's function does not run again.
    d = cubego.negative(c)
    np.testing.assert_array_equal(d.compute(executor=executor, resume=True), np.full(10, -2.0))
    assert sum(_marks(marks, b) for b in range(10)) == 10
