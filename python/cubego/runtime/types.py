"""Executors and callbacks: the runtime's types, with Cubed's names (``cubed.runtime.types``).

An executor (:class:`DagExecutor`) says how the tasks of a plan run: its
``name`` selects the engine's runner and its ``options`` (``max_workers``,
``retries``, ``use_backups``, ``batch_size``, ...) tune it. Scheduling itself —
stage order, memory admission, retries, backup tasks, the events below — is
decided once, by the Go engine, whatever the executor.

Callbacks are hooks into a running computation.

A :class:`Callback` receives events while ``compute()`` (or ``to_zarr``/``store``)
runs: the start and end of the computation, of each operation, and the end of
every task. The engine records the events in Go; the waiting Python thread polls
them between waits and calls the callbacks on the calling thread, in order, so a
callback never runs concurrently with another and never on an engine thread.

Pass callbacks to ``compute(..., callbacks=[...])``, or register one for every
computation in a block with ``with callback: ...``.

>>> import cubego as cg
>>> class TaskCounter(cg.Callback):
...     def on_compute_start(self, event):
...         self.value = 0
...     def on_task_end(self, event):
...         self.value += event.num_tasks
>>> counter = TaskCounter()
>>> x = cg.ones((4, 4), chunks=2, spec=cg.Spec(allowed_mem="100MB"))
>>> _ = (x + 1).compute(callbacks=[counter])
>>> counter.value
4
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "Callback",
    "DagExecutor",
    "ComputeEndEvent",
    "ComputeStartEvent",
    "OperationEndEvent",
    "OperationStartEvent",
    "TaskEndEvent",
]


@dataclass
class ComputeStartEvent:
    """The computation *compute_id* is about to run *plan*."""

    compute_id: str
    plan: Any  # cubego.core.plan.FinalizedPlan (the core sits above the runtime)
    start_tstamp: float | None = None
    """When the computation started (seconds since the epoch)."""

    @property
    def dag(self) -> Any:
        """The plan as a networkx graph, as Cubed's events carry (``FinalizedPlan.dag``)."""
        return self.plan.dag


@dataclass
class ComputeEndEvent:
    """The computation *compute_id* has finished (not sent when it fails)."""

    compute_id: str
    plan: Any  # cubego.core.plan.FinalizedPlan (the core sits above the runtime)
    end_tstamp: float | None = None
    """When the computation finished (seconds since the epoch)."""

    @property
    def dag(self) -> Any:
        """The plan as a networkx graph, as Cubed's events carry (``FinalizedPlan.dag``)."""
        return self.plan.dag


@dataclass
class OperationStartEvent:
    """The operation *name* (e.g. ``op-003``) is about to run its tasks."""

    name: str
    func: str | None = None
    """What the operation computes, e.g. ``add`` or ``add+multiply`` when fused."""
    num_tasks: int | None = None
    """The operation's number of tasks."""


@dataclass
class OperationEndEvent:
    """All tasks of the operation *name* have finished (not sent when one fails)."""

    name: str
    func: str | None = None


@dataclass
class TaskEndEvent:
    """One task (or *num_tasks* tasks) of the operation *name* finished.

    Times are seconds since the epoch (``time.time()``); memory is in bytes.
    A task end that the engine had to drop because events were not polled in time
    arrives folded into one event per operation with ``dropped=True``, its
    ``num_tasks`` counting them and no times or memory.
    """

    name: str
    num_tasks: int = 1
    result: Any = None
    task_create_tstamp: float | None = None
    """When the task was submitted."""
    function_start_tstamp: float | None = None
    """When the task started running, after memory admission."""
    function_end_tstamp: float | None = None
    """When the task's function returned (its chunk written)."""
    task_result_tstamp: float | None = None
    """When the executor took the result."""
    peak_measured_mem_start: int | None = None
    """The process's peak resident memory since the computation started, before the task."""
    peak_measured_mem_end: int | None = None
    """The same after the task."""
    projected_mem: int | None = None
    """The operation's projected memory per task, including ``reserved_mem``."""
    peak_allocated: int | None = None
    """The most chunk-buffer bytes the task held at once (excludes ``reserved_mem``)."""
    func: str | None = None
    block: tuple[int, ...] | None = None
    """Block coordinates of the output chunk the task computed."""
    attempts: int | None = None
    backup: bool = False
    """The result came from a backup copy of a straggling task (``use_backups``)."""
    dropped: bool = False


class Callback:
    """Base class of computation callbacks: override the hooks you need.

    Use as a context manager to receive the events of every computation started
    inside the block (``Callback.active`` holds the registered callbacks), or pass
    instances to ``compute(..., callbacks=[...])``.
    """

    active: ClassVar[set[Callback]] = set()

    def on_compute_start(self, event: ComputeStartEvent) -> None:
        """Called when a computation starts, before any task."""

    def on_compute_end(self, event: ComputeEndEvent) -> None:
        """Called when a computation has finished successfully."""

    def on_operation_start(self, event: OperationStartEvent) -> None:
        """Called when an operation starts."""

    def on_operation_end(self, event: OperationEndEvent) -> None:
        """Called when all of an operation's tasks have finished."""

    def on_task_end(self, event: TaskEndEvent) -> None:
        """Called when a task (or ``event.num_tasks`` tasks) has finished."""

    def register(self) -> None:
        Callback.active.add(self)

    def unregister(self) -> None:
        Callback.active.discard(self)

    def __enter__(self) -> Callback:
        self.register()
        return self

    def __exit__(self, *exc: object) -> None:
        self.unregister()


class DagExecutor:
    """An executor: a *name* that selects how tasks run, and its *options*.

    Executors compare equal when their names and options are equal, as Cubed's
    do. Subclasses (:mod:`cubego.runtime.executors`) fix the name; options given
    to the constructor override ``Spec.executor_options``, and options given to
    ``compute()`` override both.
    """

    name: ClassVar[str] = ""

    def __init__(self, **options: Any):
        self.options: dict[str, Any] = dict(options)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DagExecutor):
            return NotImplemented
        return (self.name, self.options) == (other.name, other.options)

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted(self.options))))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"{type(self).__name__}({args})"
