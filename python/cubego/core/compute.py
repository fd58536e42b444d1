"""``compute``: run the plan of one or more arrays and read the results.

The engine runs a computation in the background; the calling thread waits for it
in short slices (so Ctrl-C lands), and after each slice polls the engine's events
and hands them to the callbacks (see :mod:`cubego.runtime.types`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from cubego.binding import libcubego
from cubego.core.config import config
from cubego.core.plan import FinalizedPlan, fusion_options, handles, install_execute
from cubego.core.spec import common, parse_size
from cubego.runtime.create import EXECUTORS, create_executor, is_remote
from cubego.runtime.remote import (
    ENGINE_OPTIONS,
    PROCESSES_OPTIONS,
    InlineSession,
    RemoteExecutor,
    drive,
)
from cubego.runtime.types import (
    Callback,
    ComputeEndEvent,
    ComputeStartEvent,
    OperationEndEvent,
    OperationStartEvent,
    TaskEndEvent,
)

__all__ = [
    "ENGINE_OPTIONS",
    "compute",
    "execution",
    "last_stats",
    "options",
    "raise_if_computes",
    "run",
]

#: The configuration's ``executor_name`` inside :func:`raise_if_computes` (Cubed's name).
RAISE_IF_COMPUTES = "raise-if-computes"


def raise_if_computes() -> Any:
    """A context manager in which any computation raises ``RuntimeError`` (as Cubed's).

    For tests that check an operation stays lazy::

        with cubego.raise_if_computes():
            y = x + 1          # fine: nothing runs
            y.compute()        # RuntimeError: 'compute' was called

    It sets the configuration's ``executor_name`` to ``"raise-if-computes"`` for
    the block, so (as in Cubed) a computation given an explicit ``executor=`` still
    runs. Building plans (``plan``, ``visualize``) never raises.
    """
    return config.set({"executor_name": RAISE_IF_COMPUTES})

_last_stats: dict | None = None


def last_stats() -> dict | None:
    """Statistics of the most recent computation in this process (``cg_job_stats``).

    ``{"compute_id", "max_projected_mem", "allowed_mem", "num_ops", "num_tasks",
    "peak_allocated", "peak_rss", "process_budget", "backups", "ops": [...]}`` as in
    docs/capi.md, or None before the first computation. Exposed as
    ``cubego._last_stats()``; callbacks give the same figures per task.
    """
    return _last_stats


# ---------------------------------------------------------------------- the plan


# ---------------------------------------------------------------------- running


def _executor_name(executor: Any) -> str | None:
    if executor is None or isinstance(executor, str):
        return executor
    name = getattr(executor, "name", None)
    if not isinstance(name, str):
        raise TypeError(
            f"executor must be an executor name ({', '.join(sorted(EXECUTORS))}) or an "
            f"object with a name, got {executor!r}"
        )
    return name


def execution(
    arrays: tuple[Any, ...], executor: Any, optimize_graph: bool, kwargs: dict
) -> tuple[dict, RemoteExecutor | None]:
    """The ``options_json`` of ``cg_compute_start``, and the distributed executor if any.

    The executor is, in order: the *executor* argument, the configuration's
    ``executor_name``, ``spec.executor``, ``spec.executor_name``; its options are
    ``spec.executor_options`` updated by an executor object's ``options``, then by
    the keyword arguments of ``compute`` (e.g. ``max_workers``, ``retries``,
    ``use_backups``). A distributed executor named by a string is created from
    them (``create_executor``); the engine gets only the options it schedules
    with (:data:`ENGINE_OPTIONS`). For the in-process executors, options of
    Cubed's process executors (``use_processes``, ``max_tasks_per_child``) are
    dropped with a warning; the library rejects any other unknown option with
    ``ValueError``.
    """
    spec = common(x.spec for x in arrays)
    candidates = (executor, config.get("executor_name", None), spec.executor)
    chosen = next((e for e in candidates if e is not None), spec.executor_name)
    name = _executor_name(chosen)
    if name == RAISE_IF_COMPUTES:
        raise RuntimeError("'compute' was called (inside cubego.raise_if_computes())")
    merged: dict[str, Any] = dict(spec.executor_options)
    if isinstance(getattr(chosen, "options", None), dict):
        merged.update(chosen.options)  # a DagExecutor's own options
    merged.update(kwargs)
    remote = chosen if isinstance(chosen, RemoteExecutor) else None
    if remote is None and name is not None and is_remote(name):
        # Made for this computation: run() closes it afterwards.
        remote = create_executor(name, merged)
        remote.created_for_compute = True
    if remote is not None:
        opts = {k: v for k, v in merged.items() if k in ENGINE_OPTIONS}
        opts["runner"] = "remote"
    else:
        opts = merged
        for key in PROCESSES_OPTIONS:  # accepted with a warning, so Cubed code runs
            if key in opts:
                del opts[key]
                warnings.warn(
                    f"cubego: executor option {key!r} does not apply to cubego's in-process "
                    "executors and is ignored",
                    UserWarning,
                    stacklevel=4,
                )
    if name is not None:
        opts["executor"] = name
    opts.pop("optimize_graph", None)
    opts = fusion_options(opts, arrays)
    if opts.get("intermediate_mem") is not None:
        opts["intermediate_mem"] = parse_size(opts["intermediate_mem"], "intermediate_mem")
    # An identity optimize_function turns fusion off ("optimize_graph": False).
    opts["optimize_graph"] = bool(optimize_graph) and opts.get("optimize_graph", True)
    return opts, remote


def options(arrays: tuple[Any, ...], executor: Any, optimize_graph: bool, kwargs: dict) -> dict:
    """The ``options_json`` of ``cg_compute_start`` (see :func:`execution`)."""
    return execution(arrays, executor, optimize_graph, kwargs)[0]


_HOOKS = ("on_compute_start", "on_compute_end", "on_operation_start", "on_operation_end")


def _callbacks(callbacks: Iterable[Any] | None) -> list[Any]:
    """The callbacks of a computation: those given, then those registered with ``with``."""
    out: list[Any] = []
    for cb in list(callbacks or []) + list(Callback.active):
        if not any(callable(getattr(cb, hook, None)) for hook in (*_HOOKS, "on_task_end")):
            raise TypeError(
                f"callbacks must be cubego.Callback instances (or have its on_... methods), "
                f"got {cb!r}"
            )
        if not any(cb is seen for seen in out):
            out.append(cb)
    return out


def _tuple(value: Any) -> tuple[int, ...] | None:
    return None if value is None else tuple(value)


class _Dispatcher:
    """Turns polled engine events (docs/capi.md) into callback calls, in order."""

    def __init__(self, job: libcubego.Job, callbacks: list[Any]):
        self.job = job
        self.callbacks = callbacks
        self.compute_id = ""
        self.plan: FinalizedPlan | None = None

    def memray_dir(self, history: Path) -> str:
        """``<history>/<compute_id>/memray``, absolute (workers may run elsewhere).

        Dispatches the events polled so far if the computation's start has not
        been seen yet: its id names the directory.
        """
        if not self.compute_id:
            self()
        if not self.compute_id:
            raise RuntimeError("cubego: a task was queued before the computation's start event")
        return str((history / self.compute_id / "memray").resolve())

    def _call(self, hook: str, event: Any) -> None:
        for cb in self.callbacks:
            method = getattr(cb, hook, None)
            if method is not None:
                method(event)

    def __call__(self) -> None:
        for ev in self.job.events():
            kind = ev["type"]
            if kind == "compute_start":
                self.compute_id = ev["compute_id"]
                self.plan = FinalizedPlan(ev["plan"])
                self.plan.max_workers = ev.get("max_workers")
                self.plan.process_budget = ev.get("process_budget")
                self._call(
                    "on_compute_start",
                    ComputeStartEvent(self.compute_id, self.plan, ev.get("time")),
                )
            elif kind == "operation_start":
                self._call(
                    "on_operation_start",
                    OperationStartEvent(ev["name"], ev.get("func"), ev.get("num_tasks")),
                )
            elif kind == "task_end":
                dropped = bool(ev.get("dropped", False))
                self._call(
                    "on_task_end",
                    TaskEndEvent(
                        name=ev["name"],
                        num_tasks=int(ev.get("num_tasks", 1)),
                        task_create_tstamp=ev.get("task_create_tstamp"),
                        function_start_tstamp=ev.get("function_start_tstamp"),
                        function_end_tstamp=ev.get("function_end_tstamp"),
                        task_result_tstamp=ev.get("task_result_tstamp"),
                        peak_measured_mem_start=ev.get("peak_measured_mem_start"),
                        peak_measured_mem_end=ev.get("peak_measured_mem_end"),
                        projected_mem=ev.get("projected_mem"),
                        peak_allocated=None if dropped else ev.get("peak_allocated", 0),
                        func=ev.get("func"),
                        block=None if dropped else _tuple(ev.get("block", [])),
                        attempts=ev.get("attempts"),
                        backup=bool(ev.get("backup", False)),
                        dropped=dropped,
                    ),
                )
            elif kind == "operation_end":
                self._call("on_operation_end", OperationEndEvent(ev["name"], ev.get("func")))
            elif kind == "compute_end":
                assert self.plan is not None
                self._call(
                    "on_compute_end", ComputeEndEvent(self.compute_id, self.plan, ev.get("time"))
                )


def run(
    arrays: tuple[Any, ...], executor: Any, optimize_graph: bool, kwargs: dict
) -> libcubego.Job:
    """Start and wait for the computation of *arrays*; the caller releases the job.

    ``kwargs`` are the executor options of ``compute``, and may hold ``callbacks``.
    """
    global _last_stats
    kwargs = dict(kwargs)
    callbacks = _callbacks(kwargs.pop("callbacks", None))
    array_handles = handles(arrays, "compute")
    opts, remote = execution(arrays, executor, optimize_graph, kwargs)
    dispatch = _Dispatcher if callbacks else None
    history = _memray_history(callbacks)
    if remote is None and history is not None:
        # Traced: the tasks run one batch at a time in this thread, so that each
        # traced task runs alone (see runtime.worker.run_batch_traced).
        unknown = sorted(set(opts) - ENGINE_OPTIONS - {"executor"})
        if unknown:
            raise ValueError(f"unknown compute option(s): {', '.join(unknown)}")
        opts = {k: v for k, v in opts.items() if k in ENGINE_OPTIONS}
        opts.update(runner="remote", max_workers=1)
        remote = _INLINE
    if remote is None:
        job = libcubego.compute(array_handles, opts)
        try:
            job.wait(on_cycle=dispatch(job, callbacks) if dispatch else None)
            _last_stats = job.stats()
        except BaseException:
            job.release()
            raise
        return job
    # A distributed executor: check the workers' memory and connect before
    # anything runs, then hand the engine's batches to the workers.
    spec = common(x.spec for x in arrays)
    session = remote.open(spec.allowed_mem)
    try:
        opts.setdefault("max_workers", session.max_workers)
        graph = libcubego.arrays_to_json(array_handles)
        job = libcubego.compute(array_handles, opts)
        try:
            worker_options = job.worker_options()
            on_cycle = dispatch(job, callbacks) if dispatch else None
            memray_dir = None
            if history is not None:
                memray_dir = lambda: on_cycle.memray_dir(history)  # noqa: E731
            drive(job, session, graph, worker_options, on_cycle, memray_dir)
            _last_stats = job.stats()
        except BaseException:
            job.release()
            raise
    finally:
        session.close()
        if getattr(remote, "created_for_compute", False):
            remote.close()
    return job


class _InlineExecutor(RemoteExecutor):
    """The in-process executors' stand-in while memray traces a computation."""

    name = "inline"

    def open(self, allowed_mem: int) -> InlineSession:
        return InlineSession()


_INLINE = _InlineExecutor()


def _memray_history(callbacks: list[Any]) -> Path | None:
    """The history directory of the first callback asking for memray traces, if any.

    A callback asks by having a ``memray_directory`` (``MemrayCallback``): the
    first task of every operation is then traced with memray into
    ``<memray_directory>/<compute_id>/memray/<op>.bin``, as Cubed's executors do.
    """
    for cb in callbacks:
        directory = getattr(cb, "memray_directory", None)
        if directory is not None:
            try:
                import memray  # noqa: F401
            except ImportError as e:
                raise ImportError(
                    f"{type(cb).__name__} traces tasks with memray, which is not installed; "
                    "install cubego's diagnostics extra: pip install 'cubego[diagnostics]'"
                ) from e
            return Path(directory)
    return None


def _execute(arrays: tuple[Any, ...], executor: Any, optimize_graph: bool, kwargs: dict) -> None:
    """Run *arrays*' plan without reading the results (``FinalizedPlan.execute``)."""
    with run(arrays, executor, optimize_graph, kwargs):
        pass


install_execute(_execute)


def compute(
    *arrays: Any,
    executor: Any = None,
    callbacks: Iterable[Any] | None = None,
    optimize_graph: bool = True,
    **kwargs: Any,
) -> tuple[np.ndarray, ...]:
    """Compute several arrays in one plan and return them as numpy arrays.

    Parameters
    ----------
    *arrays : Array
    executor : str or executor, optional
        ``"threads"`` (default) or ``"single-threaded"``; default: the configuration's
        ``executor_name``, then the arrays' spec.
    callbacks : list of Callback, optional
        Receive the computation's events (see :mod:`cubego.runtime.types`), in addition to
        callbacks registered with ``with callback:``.
    optimize_graph : bool, default True
        Fuse blockwise operations before running.
    **kwargs
        Executor options, updating the spec's ``executor_options``: ``max_workers``,
        ``retries``, ``batch_size``, ``use_backups``, ``compute_arrays_in_parallel``,
        and the fusion bounds ``max_total_source_arrays`` (default 4) and
        ``max_total_num_input_blocks`` (default 10; 0 for no bound) (see
        docs/execution.md). Unknown options raise ``ValueError``.

    Returns
    -------
    tuple of numpy.ndarray
        One per array, in order.
    """
    handles(arrays, "compute")
    if not arrays:
        return ()
    results = _result_buffers(arrays)
    with run(arrays, executor, optimize_graph, dict(kwargs, callbacks=callbacks)) as job:
        return tuple(job.read(i, out) for i, out in enumerate(results))


def _result_buffers(arrays: tuple) -> list[np.ndarray]:
    """The numpy arrays the results are read into, allocated before anything runs.

    A result larger than the memory numpy can allocate is refused at once with
    numpy's ``MemoryError``, not after its tasks have run.
    """
    out = []
    for x in arrays:
        try:
            out.append(np.empty(x.shape, dtype=x.dtype))
        except MemoryError as e:
            raise MemoryError(
                f"the result of {x.name} (shape {x.shape}, dtype {x.dtype}) needs {x.nbytes} "
                "bytes of memory, more than can be allocated; compute a part of it (x[...]) "
                "or write it to storage with to_zarr"
            ) from e
    return out
