"""Callbacks: events per computation, operation and task; executor options."""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest

import cubego
from cubego.core import compute as _compute
from cubego.runtime.types import (
    ComputeEndEvent,
    ComputeStartEvent,
    OperationEndEvent,
    OperationStartEvent,
    TaskEndEvent,
)

from helpers import make_data


class TaskCounter(cubego.Callback):
    """Counts task ends per operation (Cubed's tests have the same helper)."""

    def __init__(self, check_timestamps: bool = True):
        self.check_timestamps = check_timestamps
        self.value = 0
        self.per_op: Counter[str] = Counter()
        self.log: list[tuple[str, str]] = []
        self.events: list[TaskEndEvent] = []

    def on_compute_start(self, event: ComputeStartEvent) -> None:
        assert isinstance(event, ComputeStartEvent)
        self.value = 0
        self.per_op = Counter()
        self.plan = event.plan
        self.compute_id = event.compute_id
        self.log.append(("compute_start", event.compute_id))

    def on_operation_start(self, event: OperationStartEvent) -> None:
        self.log.append(("operation_start", event.name))

    def on_task_end(self, event: TaskEndEvent) -> None:
        if self.check_timestamps:
            assert (
                event.task_create_tstamp
                <= event.function_start_tstamp
                <= event.function_end_tstamp
                <= event.task_result_tstamp
            )
            assert 0 < event.peak_measured_mem_start <= event.peak_measured_mem_end
            assert 0 <= event.peak_allocated <= event.projected_mem
        self.value += event.num_tasks
        self.per_op[event.name] += event.num_tasks
        self.events.append(event)
        self.log.append(("task_end", event.name))

    def on_operation_end(self, event: OperationEndEvent) -> None:
        self.log.append(("operation_end", event.name))

    def on_compute_end(self, event: ComputeEndEvent) -> None:
        assert event.compute_id == self.compute_id
        self.log.append(("compute_end", event.compute_id))


def test_task_counts_per_op(spec):
    a = make_data((10, 12), "float64", seed=1)
    x = cubego.asarray(a, chunks=(3, 4), spec=spec)
    y = cubego.sum(x * 2 + 1, axis=0, split_every=2)
    counter = TaskCounter()
    result = y.compute(callbacks=[counter])
    np.testing.assert_allclose(result, np.sum(a * 2 + 1, axis=0))
    plan = counter.plan
    assert counter.value == plan.num_tasks
    assert dict(counter.per_op) == {op.name: op.num_tasks for op in plan.ops}
    # the start and end of the computation bracket everything; each operation's
    # tasks lie between its start and its end
    log = counter.log
    assert log[0][0] == "compute_start" and log[-1][0] == "compute_end"
    for op in plan.ops:
        positions = [i for i, (_, name) in enumerate(log) if name == op.name]
        kinds = [log[i][0] for i in positions]
        assert kinds[0] == "operation_start" and kinds[-1] == "operation_end"
        assert kinds[1:-1] == ["task_end"] * op.num_tasks
    assert all(e.attempts == 1 and not e.backup and not e.dropped for e in counter.events)
    blocks = {(e.name, e.block) for e in counter.events}
    assert len(blocks) == plan.num_tasks


def test_unfused_plan_has_more_ops(spec):
    x = cubego.ones((8, 8), chunks=4, spec=spec)
    y = -(x + 1) * 3
    fused, unfused = TaskCounter(), TaskCounter()
    y.compute(callbacks=[fused])
    y.compute(callbacks=[unfused], optimize_graph=False)
    assert fused.plan.num_ops == 1 and fused.value == 4
    assert unfused.plan.num_ops == 3 and unfused.value == 12


def test_callback_as_context_manager(spec):
    x = cubego.ones((4,), chunks=2, spec=spec)
    counter = TaskCounter()
    with counter:
        assert counter in cubego.Callback.active
        (x + 1).compute()
        assert counter.value == 2
        # passed explicitly too: still called once per event
        (x + 2).compute(callbacks=[counter])
        assert counter.value == 2
    assert counter not in cubego.Callback.active
    (x + 3).compute()
    assert counter.value == 2


def test_callbacks_of_to_zarr_and_store(tmp_path, spec):
    x = cubego.ones((6,), chunks=2, spec=spec)
    counter = TaskCounter()
    cubego.to_zarr(x + 1, tmp_path / "a.zarr", callbacks=[counter])
    assert counter.value == 3
    cubego.store([x, x * 2], [tmp_path / "b.zarr", tmp_path / "c.zarr"], callbacks=[counter])
    assert counter.value == 6


def test_plain_hooks_are_enough(spec):
    seen = []

    class OnlyTasks:
        def on_task_end(self, event):
            seen.append(event.name)

    cubego.ones((4,), chunks=1, spec=spec).__add__(1).compute(callbacks=[OnlyTasks()])
    assert len(seen) == 4


def test_not_a_callback(spec):
    with pytest.raises(TypeError, match="Callback"):
        cubego.ones((3,), spec=spec).compute(callbacks=[object()])


def test_callback_error_cancels_the_computation(spec):
    class Boom(cubego.Callback):
        def on_task_end(self, event):
            raise ZeroDivisionError("from a callback")

    x = cubego.ones((1000,), chunks=1, spec=spec)
    start = time.monotonic()
    with pytest.raises(ZeroDivisionError, match="from a callback"):
        (x + 1).compute(callbacks=[Boom()])
    assert time.monotonic() - start < 30


def test_failed_task_names_op_block_and_error(tmp_path, spec):
    zarr = pytest.importorskip("zarr")
    z = zarr.create_array(
        store=str(tmp_path / "bad.zarr"), shape=(4,), chunks=(2,), dtype="float64", compressors=None
    )
    z[:] = np.arange(4.0)
    (tmp_path / "bad.zarr" / "c" / "1").write_bytes(b"not eight float64 values")
    x = cubego.from_zarr(tmp_path / "bad.zarr", spec=spec)
    counter = TaskCounter()
    with pytest.raises(Exception) as info:
        (x + 1).compute(callbacks=[counter], retries=1)
    message = str(info.value)
    assert "op-" in message and "add" in message, message
    assert "block (1)" in message, message
    assert "after 2 attempts" in message, message
    assert "compute_end" not in [kind for kind, _ in counter.log]


def test_unknown_option(spec):
    x = cubego.ones((3,), spec=spec)
    with pytest.raises(ValueError, match="no_such_option") as info:
        x.compute(no_such_option=1, another=2)
    assert "another" in str(info.value)


def test_options_of_other_executors_warn(spec):
    x = cubego.ones((3,), spec=spec)
    with pytest.warns(UserWarning, match="use_processes"):
        x.compute(use_processes="spawn")
    with pytest.warns(UserWarning, match="max_tasks_per_child"):
        x.compute(max_tasks_per_child=1)


@pytest.mark.parametrize(
    "options",
    [
        {"batch_size": 1},
        {"batch_size": 3, "max_workers": 2},
        {"compute_arrays_in_parallel": True},
        {"use_backups": True},
        {"use_backups": True, "compute_arrays_in_parallel": True, "batch_size": 2},
    ],
    ids=repr,
)
def test_executor_options(spec, options):
    a = make_data((12, 10), "float64", seed=3)
    b = make_data((12, 10), "float64", seed=4)
    x = cubego.asarray(a, chunks=(3, 5), spec=spec)
    y = cubego.asarray(b, chunks=(4, 2), spec=spec)
    # two independent reductions, then a combination: stages with two ops
    z = cubego.sum(x * 2, axis=0) + cubego.mean(y - 1, axis=0)
    counter = TaskCounter()
    result = z.compute(callbacks=[counter], **options)
    np.testing.assert_allclose(result, np.sum(a * 2, axis=0) + np.mean(b - 1, axis=0))
    assert counter.value == counter.plan.num_tasks


def test_invalid_option_values(spec):
    x = cubego.ones((3,), spec=spec)
    with pytest.raises(ValueError, match="batch_size"):
        x.compute(batch_size=-1)
    with pytest.raises(TypeError, match="use_backups"):
        x.compute(use_backups="yes")


def test_event_metadata(spec):
    x = cubego.ones((6, 4), chunks=(2, 4), spec=spec)
    counter = TaskCounter()
    (x * 3).compute(callbacks=[counter], max_workers=2)
    plan = counter.plan
    assert plan.max_workers == 2
    assert plan.process_budget == 2 * spec.allowed_mem
    assert counter.compute_id.startswith("compute-")
    (op,) = plan.ops
    assert sorted(e.block for e in counter.events) == [(0, 0), (1, 0), (2, 0)]
    assert all(e.projected_mem == op.projected_mem and e.func == op.func for e in counter.events)


def test_last_stats_have_the_compute_id(spec):
    counter = TaskCounter()
    (cubego.ones((3,), spec=spec) + 1).compute(callbacks=[counter])
    stats = cubego._last_stats()
    assert stats["compute_id"] == counter.compute_id
    assert stats["backups"] == 0


def test_measure_reserved_mem(tmp_path):
    reserved = cubego.measure_reserved_mem(work_dir=tmp_path)
    # the interpreter with numpy and the Go runtime: tens of MB, not GB
    assert 10_000_000 < reserved < 2_000_000_000


def test_dispatch_of_dropped_task_ends():
    """A summary of dropped task ends reaches on_task_end with its count."""

    class FakeJob:
        def events(self):
            plan = cubego.plan(cubego.ones((2,), chunks=1) + 1)
            return [
                {"type": "compute_start", "compute_id": "compute-x", "plan": plan._info},
                {"type": "operation_start", "name": "op-001", "func": "add", "num_tasks": 2},
                {
                    "type": "task_end",
                    "name": "op-001",
                    "func": "add",
                    "num_tasks": 2,
                    "dropped": True,
                },
                {"type": "operation_end", "name": "op-001", "func": "add"},
                {"type": "compute_end", "compute_id": "compute-x"},
            ]

    counter = TaskCounter(check_timestamps=False)
    _compute._Dispatcher(FakeJob(), [counter])()
    assert counter.value == 2
    (event,) = counter.events
    assert event.dropped and event.block is None and event.task_create_tstamp is None
