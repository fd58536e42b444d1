"""The in-process executors: the Go engine's own workers, in this process."""

from __future__ import annotations

from cubego.runtime.types import DagExecutor

__all__ = ["SingleThreadedExecutor", "ThreadsExecutor"]


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
