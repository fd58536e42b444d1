"""The Ray executor: each call is a Ray task (``cubed.runtime.executors.ray``).

>>> from cubego.runtime.executors.ray import RayExecutor
>>> RayExecutor(ray_init={"address": "auto"})
RayExecutor(ray_init={'address': 'auto'})

:meth:`RayExecutor.open` connects to Ray (``ray.init(**ray_init)`` when Ray is
not initialised yet in this process, which starts a local Ray or joins the
cluster at ``ray_init["address"]``/``RAY_ADDRESS``) and returns a
:class:`RayTaskSession`. Each call is a Ray task that reserves ``allowed_mem`` of
Ray's ``memory`` resource, so Ray places no more calls on a node than fit in
its memory, and has ``max_retries=0``: a call that raises fails its future with
the exception it raised, and a call whose worker process dies fails its future
with a ``RuntimeError`` caused by Ray's ``WorkerCrashedError`` (Ray's memory
monitor killing a call gives its ``OutOfMemoryError`` the same way).
"""

from __future__ import annotations

import concurrent.futures
import itertools
import threading
from collections.abc import Callable
from typing import Any

try:
    import ray
    import ray.exceptions
except ModuleNotFoundError as err:  # pragma: no cover - exercised in a test with ray hidden
    raise ModuleNotFoundError(
        "the ray executor needs Ray: pip install 'cubego[ray]'", name=err.name
    ) from err

from cubego.runtime.remote import RemoteExecutor, Session, check_worker_memory

__all__ = ["RayExecutor", "RayTaskSession"]


class RayExecutor(RemoteExecutor):
    """Run calls as Ray tasks.

    Options (with Cubed's names):

    ray_init : dict, optional
        Keyword arguments of ``ray.init``, used only when Ray is not initialised
        yet in this process (e.g. ``{"address": "ray://head:10001"}``, or
        ``{"num_cpus": 4}`` for a local Ray). Ray started by :meth:`open` is
        shut down by :meth:`RayTaskSession.close`; a Ray the caller initialised is left running.
    max_workers : int, optional
        How many calls to keep in flight; default: the sum over the cluster's
        nodes of ``min(CPUs, memory // allowed_mem)`` when the session opens
        (set it for a cluster that autoscales).
    """

    name = "ray"

    def __init__(self, **options: Any):
        ray_init = options.get("ray_init")
        if ray_init is not None and not isinstance(ray_init, dict):
            raise TypeError(
                f"RayExecutor: ray_init must be a dict of ray.init arguments, got {ray_init!r}"
            )
        _check_max_workers("RayExecutor", options.get("max_workers"))
        super().__init__(**options)

    def open(self, allowed_mem: int) -> RayTaskSession:
        """Initialise Ray if needed, check the nodes' memory and return a session.

        Raises ``ValueError`` (after shutting down a Ray it started) if no node
        has *allowed_mem* bytes of Ray's ``memory`` resource.
        """
        _check_allowed_mem(allowed_mem)
        started = not ray.is_initialized()
        if started:
            ray.init(**(self.options.get("ray_init") or {}))
        try:
            nodes = [n["Resources"] for n in ray.nodes() if n.get("Alive")]
            largest = max((int(n.get("memory", 0)) for n in nodes), default=0)
            check_worker_memory(
                "ray", largest, allowed_mem, "the Ray 'memory' resource of the largest node"
            )
        except BaseException:
            if started:
                ray.shutdown()
            raise
        max_workers = self.options.get("max_workers") or max(
            1,
            sum(min(int(n.get("CPU", 0)), int(n.get("memory", 0)) // allowed_mem) for n in nodes),
        )
        return RayTaskSession(allowed_mem, max_workers, shutdown=started)


class RayTaskSession(Session):
    """Calls as Ray tasks reserving ``allowed_mem`` of memory each, never retried."""

    def __init__(self, allowed_mem: int, max_workers: int, shutdown: bool):
        self.allowed_mem = allowed_mem
        self.max_workers = max_workers
        self._shutdown = shutdown
        self._lock = threading.Lock()
        self._pending: dict[concurrent.futures.Future, ray.ObjectRef] = {}
        self._ids = itertools.count()
        self._closed = False

        # Defined here, not at module level, so that Ray ships it by value: the
        # worker needs only fn's own module, not cubego, to run it.
        def cubego_call(fn: Callable[..., Any], args: tuple) -> Any:
            return fn(*args)

        self._remote = ray.remote(max_retries=0, memory=allowed_mem)(cubego_call)

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> concurrent.futures.Future:
        """Run ``fn(*args)`` as a Ray task; a dead worker fails only this future."""
        with self._lock:
            if self._closed:
                raise RuntimeError("ray: submit on a closed session")
            # The task's name is its worker's process title while it runs ("ray::cubego-call-3").
            ref = self._remote.options(name=f"cubego-call-{next(self._ids)}").remote(fn, args)
            future: concurrent.futures.Future = concurrent.futures.Future()
            self._pending[future] = ref
        future.add_done_callback(self._cancel_if_cancelled)
        ref.future().add_done_callback(lambda ray_future: self._resolve(future, ray_future))
        return future

    def _resolve(
        self, future: concurrent.futures.Future, ray_future: concurrent.futures.Future
    ) -> None:
        with self._lock:
            self._pending.pop(future, None)
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(ray_future.result())
        except BaseException as err:  # noqa: BLE001 - every outcome goes to the future
            future.set_exception(_unwrap(err))

    def _cancel_if_cancelled(self, future: concurrent.futures.Future) -> None:
        if future.cancelled():
            with self._lock:
                ref = self._pending.pop(future, None)
            if ref is not None:
                ray.cancel(ref)

    def close(self) -> None:
        """Cancel the calls still running and shut down a Ray that :meth:`open` started."""
        with self._lock:
            self._closed = True
            pending = list(self._pending)
        for future in pending:
            future.cancel()
        if self._shutdown:
            self._shutdown = False
            ray.shutdown()


def _unwrap(err: BaseException) -> BaseException:
    """The exception a call's future holds for Ray's error *err*.

    A call that raised gives the exception it raised (its ``__cause__`` is
    Ray's error, which shows the remote traceback); any other Ray error (a
    worker or node that died, Ray's memory monitor) gives a ``RuntimeError``.
    """
    if isinstance(err, ray.exceptions.RayTaskError):
        cause = err.cause
        if isinstance(cause, BaseException) and not isinstance(cause, ray.exceptions.RayError):
            cause.__cause__ = err
            return cause
    if isinstance(err, ray.exceptions.RayError):
        lost = RuntimeError(f"ray: the call failed in Ray: {type(err).__name__}: {err}")
        lost.__cause__ = err
        return lost
    return err


def _check_allowed_mem(allowed_mem: Any) -> None:
    if isinstance(allowed_mem, bool) or not isinstance(allowed_mem, int) or allowed_mem <= 0:
        raise ValueError(f"allowed_mem must be a positive number of bytes, got {allowed_mem!r}")


def _check_max_workers(executor: str, max_workers: Any) -> None:
    if max_workers is not None and (
        isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1
    ):
        raise ValueError(f"{executor}: max_workers must be a positive int, got {max_workers!r}")
