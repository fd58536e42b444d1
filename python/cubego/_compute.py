"""``compute`` and ``plan``: run or describe the plan of one or more arrays.

The engine runs a computation in the background; the calling thread waits for it
in short slices (so Ctrl-C lands), and after each slice polls the engine's events
and hands them to the callbacks (see :mod:`cubego.callbacks`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _lib
from .array import Array, elemwise
from .callbacks import (
    Callback,
    ComputeEndEvent,
    ComputeStartEvent,
    OperationEndEvent,
    OperationStartEvent,
    TaskEndEvent,
)

__all__ = [
    "FinalizedPlan",
    "PlanArray",
    "PlanOp",
    "compute",
    "measure_reserved_mem",
    "options",
    "plan",
    "run",
]

_last_stats: dict | None = None

# Options of Cubed's other executors, accepted (with a warning) so that code
# written for them runs.
IGNORED_OPTIONS = ("use_processes", "max_tasks_per_child")


def last_stats() -> dict | None:
    """Statistics of the most recent computation in this process (``cg_job_stats``).

    ``{"compute_id", "max_projected_mem", "allowed_mem", "num_ops", "num_tasks",
    "peak_allocated", "peak_rss", "process_budget", "backups", "ops": [...]}`` as in
    docs/capi.md, or None before the first computation. Exposed as
    ``cubego._last_stats()``; callbacks give the same figures per task.
    """
    return _last_stats


# ---------------------------------------------------------------------- the plan


def _format_bytes(n: int) -> str:
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n} bytes" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class PlanOp:
    """One operation of a plan: a blockwise op computing one array, one task per block."""

    name: str
    func: str
    kind: str
    num_tasks: int
    projected_mem: int
    stage: int
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    nbytes_read: int
    nbytes_written: int
    exceeds_memory: bool

    @classmethod
    def _from_json(cls, d: dict) -> PlanOp:
        return cls(
            name=d["name"],
            func=d["func"],
            kind=d["kind"],
            num_tasks=int(d["num_tasks"]),
            projected_mem=int(d["projected_mem"]),
            stage=int(d["stage"]),
            inputs=tuple(d["inputs"]),
            outputs=tuple(d["outputs"]),
            nbytes_read=int(d["nbytes_read"]),
            nbytes_written=int(d["nbytes_written"]),
            exceeds_memory=bool(d["exceeds_memory"]),
        )


@dataclass(frozen=True)
class PlanArray:
    """One array of a plan and its role: input, virtual, intermediate or output."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    chunksize: tuple[int, ...]
    numblocks: tuple[int, ...]
    nbytes: int
    role: str
    target: str | None

    @classmethod
    def _from_json(cls, d: dict) -> PlanArray:
        return cls(
            name=d["name"],
            shape=tuple(d["shape"]),
            dtype=d["dtype"],
            chunksize=tuple(d["chunksize"]),
            numblocks=tuple(d["numblocks"]),
            nbytes=int(d["nbytes"]),
            role=d["role"],
            target=d.get("target"),
        )


class FinalizedPlan:
    """A finalised (optimised) plan: what ``compute()`` would run, and its statistics.

    Returned by :func:`cubego.plan` and ``Array.plan()``, and passed to callbacks in
    ``ComputeStartEvent.plan``. Memory figures are bytes.

    Attributes
    ----------
    num_ops, num_tasks : int
        Operations and tasks (one task per output chunk of an operation).
    num_stages : int
        Topological generations that have work: the operations of one stage can run
        at the same time (``compute_arrays_in_parallel=True``).
    max_projected_mem, allowed_mem, reserved_mem : int
        The largest per-task projected memory of any operation, and the spec's limits.
    total_nbytes_read, total_nbytes_written : int
        Bytes of stored arrays that tasks read (counted once per task that reads
        them) and bytes of every array operations write.
    num_arrays, num_intermediate_arrays : int
        Arrays in the plan, and those written under ``work_dir`` that are neither
        requested outputs nor ``to_zarr`` targets.
    ops : list of PlanOp
    arrays : list of PlanArray
    ops_exceeding_memory : list of PlanOp
        Operations projected over ``allowed_mem``, worst first.
    exceeds_memory : bool
    """

    def __init__(self, info: dict):
        self._info = info
        self.num_ops: int = int(info["num_ops"])
        self.num_tasks: int = int(info["num_tasks"])
        self.num_stages: int = int(info["num_stages"])
        self.num_arrays: int = int(info["num_arrays"])
        self.num_intermediate_arrays: int = int(info["num_intermediate_arrays"])
        self.max_projected_mem: int = int(info["max_projected_mem"])
        self.allowed_mem: int = int(info["allowed_mem"])
        self.reserved_mem: int = int(info["reserved_mem"])
        self.total_nbytes_read: int = int(info["total_nbytes_read"])
        self.total_nbytes_written: int = int(info["total_nbytes_written"])
        self.ops: list[PlanOp] = [PlanOp._from_json(o) for o in info["ops"]]
        self.arrays: list[PlanArray] = [PlanArray._from_json(a) for a in info["arrays"]]
        by_name = {o.name: o for o in self.ops}
        self.ops_exceeding_memory: list[PlanOp] = [
            by_name[name] for name in info["ops_exceeding_memory"]
        ]
        self.max_workers: int | None = None
        self.process_budget: int | None = None

    @property
    def num_primitive_ops(self) -> int:
        """Cubed's name for :attr:`num_ops`."""
        return self.num_ops

    @property
    def exceeds_memory(self) -> bool:
        """Whether any operation is projected over ``allowed_mem``."""
        return bool(self.ops_exceeding_memory)

    def array_role(self, name: str) -> str:
        """The role of array *name*: ``input``, ``virtual``, ``intermediate`` or ``output``."""
        for a in self.arrays:
            if a.name == name:
                return a.role
        raise KeyError(name)

    def validate(self) -> None:
        """Raise ``ValueError`` for the worst operation over ``allowed_mem``, as compute would."""
        if not self.ops_exceeding_memory:
            return
        op = self.ops_exceeding_memory[0]
        raise ValueError(
            f"projected memory of {op.name} ({op.func}) is {_format_bytes(op.projected_mem)}, "
            f"which exceeds allowed_mem of {_format_bytes(self.allowed_mem)} (including "
            f"reserved_mem of {_format_bytes(self.reserved_mem)}); use smaller chunks or "
            "increase allowed_mem"
        )

    def __repr__(self) -> str:
        return (
            f"FinalizedPlan(num_ops={self.num_ops}, num_tasks={self.num_tasks}, "
            f"num_stages={self.num_stages}, max_projected_mem={self.max_projected_mem}, "
            f"allowed_mem={self.allowed_mem}, exceeds_memory={self.exceeds_memory})"
        )


def _check_arrays(arrays: tuple[Any, ...], what: str) -> None:
    for x in arrays:
        if not isinstance(x, Array):
            raise TypeError(f"{what}: expected cubego arrays, got {type(x).__name__}")


#: Cubed's bounds on what one fused operation reads (docs/execution.md).
FUSION_BOUNDS = ("max_total_source_arrays", "max_total_num_input_blocks")


def fusion_options(options: dict) -> dict:
    """*options* with Cubed's ``optimize_function`` turned into fusion bounds.

    Cubed takes its bounds as ``optimize_function=functools.partial(
    multiple_inputs_optimize_dag, max_total_source_arrays=8)``; cubego fuses with its
    own optimizer and takes the same bounds as options, so such a partial becomes its
    keywords. Any other ``optimize_function`` raises ``NotImplementedError``.
    """
    fn = options.pop("optimize_function", None)
    if fn is None:
        return options
    target = getattr(fn, "func", None)
    keywords = dict(getattr(fn, "keywords", None) or {})
    if getattr(target, "__name__", None) != "multiple_inputs_optimize_dag" or set(keywords) - set(
        FUSION_BOUNDS
    ):
        raise NotImplementedError(
            f"optimize_function={fn!r} is not supported: cubego fuses with its own optimizer; "
            "pass max_total_source_arrays=... and max_total_num_input_blocks=... to compute "
            "instead (or optimize_graph=False)"
        )
    return {**keywords, **options}


def plan_info(
    *arrays: Array, optimize_graph: bool = True, dot: bool = False, **fusion: Any
) -> dict:
    """The ``cg_plan`` JSON of *arrays*: statistics (and DOT) without running anything.

    *fusion* takes the bounds of :data:`FUSION_BOUNDS` or Cubed's ``optimize_function``.
    """
    _check_arrays(arrays, "plan")
    options: dict[str, Any] = fusion_options(dict(fusion))
    options["optimize_graph"] = bool(optimize_graph)
    if dot:
        options["dot"] = True
    return _lib.plan_info([x._handle for x in arrays], options)


def plan(*arrays: Array, optimize_graph: bool = True, **fusion: Any) -> FinalizedPlan:
    """The finalised plan that computing *arrays* together would run.

    Nothing runs and nothing is checked against ``allowed_mem``: see
    ``FinalizedPlan.exceeds_memory`` and ``ops_exceeding_memory``.

    Parameters
    ----------
    *arrays : Array
    optimize_graph : bool, default True
        Fuse operations, as ``compute`` does.
    **fusion
        ``max_total_source_arrays`` (default 4) and ``max_total_num_input_blocks``
        (default 10), as for ``compute``.
    """
    return FinalizedPlan(plan_info(*arrays, optimize_graph=optimize_graph, **fusion))


# ---------------------------------------------------------------------- running


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

    The executor is, in order: the *executor* argument, the configuration's
    ``executor_name``, ``spec.executor``, ``spec.executor_name``; its options are
    ``spec.executor_options`` updated by the keyword arguments of ``compute`` (e.g.
    ``max_workers``, ``retries``, ``use_backups``). Options of Cubed's other
    executors (``use_processes``, ``max_tasks_per_child``) are dropped with a
    warning; the library rejects any other unknown option with ``ValueError``.
    """
    from .config import config
    from .spec import common

    spec = common(x.spec for x in arrays)
    opts: dict[str, Any] = {}
    name = _executor_name(executor)
    if name is None:
        name = _executor_name(config.get("executor_name", None))
    if name is None:
        name = _executor_name(spec.executor)
    if name is None:
        name = spec.executor_name
    if name is not None:
        opts["executor"] = name
    opts.update(spec.executor_options)
    opts.update(kwargs)
    opts = fusion_options(opts)
    for key in IGNORED_OPTIONS:
        if key in opts:
            del opts[key]
            warnings.warn(
                f"cubego: executor option {key!r} does not apply to cubego's in-process "
                "executors and is ignored",
                UserWarning,
                stacklevel=4,
            )
    if opts.get("intermediate_mem") is not None:
        from .spec import parse_size

        opts["intermediate_mem"] = parse_size(opts["intermediate_mem"], "intermediate_mem")
    opts["optimize_graph"] = bool(optimize_graph)
    return opts


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

    def __init__(self, job: _lib.Job, callbacks: list[Any]):
        self.job = job
        self.callbacks = callbacks
        self.compute_id = ""
        self.plan: FinalizedPlan | None = None

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


def run(arrays: tuple[Array, ...], executor: Any, optimize_graph: bool, kwargs: dict) -> _lib.Job:
    """Start and wait for the computation of *arrays*; the caller releases the job.

    ``kwargs`` are the executor options of ``compute``, and may hold ``callbacks``.
    """
    global _last_stats
    kwargs = dict(kwargs)
    callbacks = _callbacks(kwargs.pop("callbacks", None))
    job = _lib.compute(
        [x._handle for x in arrays], options(arrays, executor, optimize_graph, kwargs)
    )
    try:
        job.wait(on_cycle=_Dispatcher(job, callbacks) if callbacks else None)
        _last_stats = job.stats()
    except BaseException:
        job.release()
        raise
    return job


def compute(
    *arrays: Array,
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
        Receive the computation's events (see :mod:`cubego.callbacks`), in addition to
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
    _check_arrays(arrays, "compute")
    if not arrays:
        return ()
    with run(arrays, executor, optimize_graph, dict(kwargs, callbacks=callbacks)) as job:
        return tuple(job.read(i, np.empty(x.shape, dtype=x.dtype)) for i, x in enumerate(arrays))


class _PeakMemory(Callback):
    def __init__(self) -> None:
        self.peak = 0

    def on_task_end(self, event: TaskEndEvent) -> None:
        if event.peak_measured_mem_end is not None:
            self.peak = max(self.peak, event.peak_measured_mem_end)


def measure_reserved_mem(executor: Any = None, work_dir: Any = None, **kwargs: Any) -> int:
    """Measure the memory a worker uses before it holds any chunk data.

    Runs a trivial one-task computation (the negation of a one-element array) and
    returns the process's peak resident memory while it ran, in bytes, as Cubed
    does. Use the result (with some headroom) as ``Spec(reserved_mem=...)``.

    Parameters
    ----------
    executor : str or executor, optional
    work_dir : str, optional
        Where the computation writes its (tiny) intermediate.
    **kwargs
        Executor options, as for :func:`compute`.
    """
    from ._creation import ones
    from .spec import Spec

    spec = Spec(work_dir=work_dir, allowed_mem=500_000_000)
    x = elemwise("negative", ones((1,), spec=spec))
    peak = _PeakMemory()
    compute(x, executor=executor, callbacks=[peak], optimize_graph=False, **kwargs)
    if peak.peak <= 0:
        raise NotImplementedError(
            "measure_reserved_mem: this platform does not report peak memory (Linux only)"
        )
    return peak.peak


# Methods of Array that belong to execution (array.py keeps the array API).


def _array_plan(self: Array, optimize_graph: bool = True) -> FinalizedPlan:
    """The finalised plan that computing this array would run (see :func:`cubego.plan`)."""
    return plan(self, optimize_graph=optimize_graph)


def _array_visualize(self: Array, filename: str = "cubego", format: str | None = None, **kwargs):
    """Write this array's plan as a graph (see :func:`cubego.visualize`)."""
    from .visualize import visualize

    return visualize(self, filename=filename, format=format, **kwargs)


Array.plan = _array_plan  # type: ignore[attr-defined]
Array.visualize = _array_visualize  # type: ignore[attr-defined]
