"""Executors on this machine: the Go engine's own workers in this process
(``threads``, ``single-threaded``), or worker processes (``processes``)."""

from __future__ import annotations

import atexit
import os
from typing import Any

from cubego.runtime.remote import RemoteExecutor, Session, check_worker_memory, machine_memory
from cubego.runtime.types import DagExecutor

__all__ = ["ProcessSession", "ProcessesExecutor", "SingleThreadedExecutor", "ThreadsExecutor"]


class ThreadsExecutor(DagExecutor):
    """Tasks run on the engine's goroutines in this process (the default executor).

    Options: ``max_workers`` (default: the number of CPUs), ``retries`` (2),
    ``use_backups``, ``batch_size``, ``compute_arrays_in_parallel`` (docs/execution.md).
    No task touches the GIL unless it runs a Python chunk function.
    """

    name = "threads"


class SingleThreadedExecutor(DagExecutor):
    """Tasks run one at a time, in order: for debugging and deterministic tests."""

    name = "single-threaded"


class ProcessSession(Session):
    """A computation's use of its executor's :class:`~._pool.ProcessPool`."""

    def __init__(self, pool: Any, n: int):
        self.max_workers = n
        self.pool = pool

    def submit(self, fn: Any, /, *args: Any) -> Any:
        return self.pool.submit(fn, *args)

    def close(self) -> None:
        # The workers stay for the executor's next computation; calls still
        # running (a straggler's losing copy) are stopped.
        self.pool.abandon()


class ProcessesExecutor(RemoteExecutor):
    """Tasks run in worker processes on this machine (spawned, never forked).

    Options: ``max_workers`` (default: the number of CPUs), ``max_tasks_per_child``
    (replace a worker after that many calls; default: never), ``use_processes``
    (the multiprocessing start method: ``"spawn"``, the default, or
    ``"forkserver"``; ``"fork"`` is refused, since a forked child cannot run the
    Go library). A worker that dies (killed, out of memory) costs only the batch it
    was running, which the engine retries; a new worker takes its place. Each
    worker must have room for ``allowed_mem``: total RAM / ``max_workers``.

    The workers start with the executor's first computation and serve its later
    ones (they keep the plans and the library loaded); :meth:`close`, or the
    end of the interpreter, stops them.
    """

    name = "processes"

    def __init__(self, **options: Any):
        super().__init__(**options)
        method = options.get("use_processes", "spawn")
        if method is True or method is None:
            method = "spawn"
        if method == "fork":
            raise ValueError(
                "processes executor: use_processes='fork' cannot run libcubego in the child "
                "(the Go runtime does not survive fork); use 'spawn' or 'forkserver'"
            )
        if method not in ("spawn", "forkserver"):
            raise ValueError(
                f"processes executor: use_processes must be 'spawn' or 'forkserver', got {method!r}"
            )
        self._max_workers = _positive(options.get("max_workers"), "max_workers") or os.cpu_count()
        self._max_tasks = _positive(options.get("max_tasks_per_child"), "max_tasks_per_child")
        self._pool: Any = None

    def close(self) -> None:
        """Stop the worker processes (a later computation starts new ones)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def open(self, allowed_mem: int) -> Session:
        total = machine_memory()
        check_worker_memory(
            "processes",
            None if total is None else total // self._max_workers,
            allowed_mem,
            f"total memory (or the cgroup's limit) / max_workers {self._max_workers}",
        )
        if self._pool is None or self._pool.closed:
            from cubego.runtime.executors._pool import ProcessPool

            self._pool = ProcessPool(self._max_workers, self._max_tasks)
            atexit.register(self._pool.close)
        return ProcessSession(self._pool, self._max_workers)


def _positive(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"processes executor: {what} must be a positive integer, got {value!r}")
    return value
