"""Executors that run batches of tasks on another engine (processes, Dask, Lithops, ...).

The Go engine schedules every computation: stage order, memory admission,
batching, retries, backup tasks and the events callbacks see are decided there,
whatever the executor. A remote executor supplies only a :class:`Session`: a way
to run a Python function with arguments somewhere else and get its result back
as a :class:`concurrent.futures.Future`. The coordinator hands it batches of
tasks; each call runs :func:`cubego.runtime.worker.run_batch` in a worker, which
imports cubego and runs the batch through the C ABI against the shared
``work_dir``.

A session never retries: a failed or lost call fails its future, and the
engine's retry policy decides what runs again.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Callable
from typing import Any

from cubego.runtime.types import DagExecutor
from cubego.runtime.worker import run_batch, run_batch_traced

__all__ = [
    "ENGINE_OPTIONS",
    "InlineSession",
    "PASSED_OVER",
    "PROCESSES_OPTIONS",
    "RemoteExecutor",
    "Session",
    "check_worker_memory",
    "drive",
    "machine_memory",
]

#: Options the engine's scheduler takes whatever the executor; a distributed
#: executor's other options (Dask's ``compute_kwargs``, Lithops' ``runtime``...)
#: configure the executor itself, and executors ignore these.
ENGINE_OPTIONS = frozenset(
    {
        "max_workers",
        "retries",
        "batch_size",
        "use_backups",
        "compute_arrays_in_parallel",
        "resume",
        "intermediate_mem",
        "process_budget",
        "tasks_per_batch",
        "optimize_graph",
        "optimize_function",
        "compile_function",
        "max_total_source_arrays",
        "max_total_num_input_blocks",
        "single_input_fusion",
    }
)

#: Options of Cubed's processes executor, which code written for Cubed passes
#: to other executors too.
PROCESSES_OPTIONS = ("use_processes", "max_tasks_per_child")

#: The options an engine executor accepts without using them: the engine's,
#: and those of Cubed's processes executor (code written for it runs).
PASSED_OVER = ENGINE_OPTIONS | set(PROCESSES_OPTIONS)


class Session:
    """An open connection to an engine: submit calls, then close.

    Subclasses implement :meth:`submit` and :meth:`close`, and set
    :attr:`max_workers`, the number of calls worth keeping in flight at once
    (the engine keeps at most this many batches running).
    """

    max_workers: int = 1

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> concurrent.futures.Future:
        """Run ``fn(*args)`` on the engine; the future holds its result or its exception.

        *fn* is a module-level function of an installed package (cubego's worker
        entry point), so every engine can import it by reference; *args* are
        picklable. A worker that dies fails the future with an ``OSError`` or a
        ``RuntimeError`` naming the engine's reason.
        """
        raise NotImplementedError

    def close(self) -> None:
        """Release what :meth:`RemoteExecutor.open` started (clients, pools, clusters)."""

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class InlineSession(Session):
    """Runs each call at once in the calling thread: one batch at a time, in this process.

    What a computation whose tasks are traced with memray (``MemrayCallback``)
    runs on in place of the in-process executors, so that a traced task runs
    alone and the traces are of this process.
    """

    max_workers = 1

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args))
        except BaseException as e:  # noqa: BLE001 - the future carries it, as a pool's would
            future.set_exception(e)
        return future


class RemoteExecutor(DagExecutor):
    """An executor whose tasks run in other processes or machines.

    Subclasses set ``name`` (Cubed's executor name) and implement :meth:`open`.
    Options common to every executor (``retries``, ``use_backups``, ``batch_size``,
    ``compute_arrays_in_parallel``) are the engine's; the others configure the
    engine (``max_workers``, Dask's ``compute_kwargs``, Lithops' ``runtime_memory``...).
    """

    remote = True

    def close(self) -> None:
        """Release what the executor keeps between computations (worker pools)."""

    def open(self, allowed_mem: int) -> Session:
        """Connect to (or start) the engine and return a session.

        Raises ``ValueError`` before anything runs if a worker has less memory
        than *allowed_mem* (the memory one task may use), naming both sizes.
        """
        raise NotImplementedError


def machine_memory() -> int | None:
    """The memory this process and its children share: RAM, or the cgroup's limit when lower.

    What local executors (processes, Spark and Beam in local mode) divide among
    their workers; None where the platform says neither.
    """
    sizes = []
    try:
        sizes.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                value = f.read().strip()
        except OSError:
            continue
        if value.isdigit():
            sizes.append(int(value))
    return min(sizes) if sizes else None


def check_worker_memory(engine: str, worker_mem: int | None, allowed_mem: int, what: str) -> None:
    """``ValueError`` if a worker's memory (*worker_mem* bytes, None if unknown) < *allowed_mem*.

    *what* says where the worker's memory comes from (e.g. "memory_limit / nthreads").
    """
    if worker_mem is not None and worker_mem < allowed_mem:
        raise ValueError(
            f"{engine}: a worker has {worker_mem} bytes of memory ({what}), less than "
            f"allowed_mem of {allowed_mem} bytes that one task may use; give workers more "
            "memory or lower Spec(allowed_mem=...)"
        )


def drive(
    job: Any,
    session: Session,
    graph: str,
    options: dict,
    on_cycle: Callable[[], None] | None = None,
    memray_dir: Callable[[], str] | None = None,
) -> None:
    """Run *job* (started with ``"runner": "remote"``) on *session* until it finishes.

    The calling thread hands the batches the engine queues to the session, reports
    each as its future completes (so a lost worker costs only its own calls), and
    calls *on_cycle* (event dispatch) in between. On failure the original exception
    of a chunk function that raised in a worker is raised, as in process.
    With *memray_dir* (called when the first batch is submitted), the first task
    of every operation is traced with memray into that directory
    (:func:`~cubego.runtime.worker.run_batch_traced`).
    """
    inflight: dict[concurrent.futures.Future, dict] = {}
    raised: list[BaseException] = []

    def pump() -> None:
        for batch in job.poll_batches(timeout_ms=0 if inflight else 20):
            if memray_dir is None:
                future = session.submit(run_batch, graph, options, batch)
            else:
                future = session.submit(run_batch_traced, graph, options, batch, memray_dir())
            inflight[future] = batch
        if inflight:
            done, _ = concurrent.futures.wait(
                list(inflight), timeout=0.02, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in done:
                batch = inflight.pop(future)
                job.batch_done(batch["id"], _result(future, raised))
        if on_cycle is not None:
            on_cycle()

    try:
        job.wait(timeout_ms=0, on_cycle=pump)
    except Exception as e:
        if raised and raised[0] is not e:
            raise raised[0] from e
        raise
    finally:
        for future in inflight:
            future.cancel()


def _result(future: concurrent.futures.Future, raised: list[BaseException]) -> dict:
    """A finished call's report for ``cg_job_batch_done``; keeps the exceptions workers raised."""
    try:
        result = future.result()
    except BaseException as e:  # noqa: BLE001 - the engine lost the call: the batch may run again
        return {"error": f"{type(e).__name__}: {e}", "permanent": False}
    if "error" in result and result.get("permanent") and result.get("exception"):
        import base64

        import cloudpickle

        try:
            raised.append(cloudpickle.loads(base64.b64decode(result["exception"])))
        except Exception:  # noqa: BLE001, S110 - the message still says what happened
            pass
    return {k: result[k] for k in ("stats", "error", "permanent") if k in result}
