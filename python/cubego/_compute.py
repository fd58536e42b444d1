"""``compute``: run the plan of one or more arrays in the library."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _lib
from .array import Array

__all__ = ["compute", "run", "options"]

_last_stats: dict | None = None


def last_stats() -> dict | None:
    """Statistics of the most recent computation in this process (``cg_job_stats``).

    ``{"max_projected_mem", "allowed_mem", "num_ops", "num_tasks", "peak_allocated",
    "peak_rss", "process_budget", "ops": [...]}`` as in docs/capi.md, or None
    before the first computation. Exposed as ``cubego._last_stats()`` until the
    diagnostics callbacks exist.
    """
    return _last_stats


def _executor_name(executor: Any) -> str | None:
    if executor is None or isinstance(executor, str):
        return executor
    name = getattr(executor, "name", None)
    if not isinstance(name, str):
        raise TypeError(
            f"executor must be an executor name ('threads', 'single-threaded') or an "
            f"object with a name, got {executor!r}"
        )
    return name


def options(arrays: tuple[Array, ...], executor: Any, optimize_graph: bool, kwargs: dict) -> dict:
    """The ``options_json`` of ``cg_compute_start``.

    The executor is, in order: the *executor* argument, ``spec.executor``,
    ``spec.executor_name``; its options are ``spec.executor_options`` updated by
    the keyword arguments of ``compute`` (e.g. ``max_workers``, ``retries``).
    """
    spec = arrays[0].spec
    opts: dict[str, Any] = {}
    name = _executor_name(executor if executor is not None else spec.executor)
    if name is None:
        name = spec.executor_name
    if name is not None:
        opts["executor"] = name
    opts.update(spec.executor_options)
    opts.update(kwargs)
    opts["optimize_graph"] = bool(optimize_graph)
    return opts


def _check_arrays(arrays: tuple[Any, ...], what: str) -> None:
    for x in arrays:
        if not isinstance(x, Array):
            raise TypeError(f"{what}: expected cubego arrays, got {type(x).__name__}")


def run(arrays: tuple[Array, ...], executor: Any, optimize_graph: bool, kwargs: dict) -> _lib.Job:
    """Start and wait for the computation of *arrays*; the caller releases the job."""
    global _last_stats
    job = _lib.compute(
        [x._handle for x in arrays], options(arrays, executor, optimize_graph, kwargs)
    )
    try:
        job.wait()
        _last_stats = job.stats()
    except BaseException:
        job.release()
        raise
    return job


def compute(
    *arrays: Array,
    executor: Any = None,
    callbacks: Any = None,
    optimize_graph: bool = True,
    **kwargs: Any,
) -> tuple[np.ndarray, ...]:
    """Compute several arrays in one plan and return them as numpy arrays.

    Parameters
    ----------
    *arrays : Array
    executor : str or executor, optional
        ``"threads"`` (default) or ``"single-threaded"``; default: the arrays' spec.
    callbacks : list, optional
        Not supported yet; passing any raises ``NotImplementedError``.
    optimize_graph : bool, default True
        Fuse blockwise operations before running.
    **kwargs
        Executor options, e.g. ``max_workers=2``, ``retries=2``; they update the
        spec's ``executor_options``.

    Returns
    -------
    tuple of numpy.ndarray
        One per array, in order.
    """
    _check_arrays(arrays, "compute")
    if callbacks:
        raise NotImplementedError("cubego.compute: callbacks are not supported yet")
    if not arrays:
        return ()
    with run(arrays, executor, optimize_graph, kwargs) as job:
        return tuple(job.read(i, np.empty(x.shape, dtype=x.dtype)) for i, x in enumerate(arrays))


def plan_info(*arrays: Array, optimize_graph: bool = True) -> dict:
    """The plan of *arrays* (ops, tasks, projected memory) without running it."""
    _check_arrays(arrays, "plan")
    return _lib.plan_info([x._handle for x in arrays], {"optimize_graph": bool(optimize_graph)})
