"""The Coiled executor: batches of tasks run as calls of a Coiled Function.

``open`` decorates the module-level :func:`_run_call` with
``coiled.function(**coiled_kwargs)``; Coiled starts (or reuses) a Dask cluster
in your cloud account for it, built from your local software environment
(package sync) or the ``software``/``container`` you name. Each call the Go
engine hands to the session is one ``Function.submit(fn, args, pure=False,
retries=0)``: a Dask future, settled into a ``concurrent.futures.Future`` by a
done-callback. Coiled is Dask, so a worker that dies is handled by Dask's
scheduler, which re-runs the calls it held on another worker up to
``distributed.scheduler.allowed-failures`` times (a ``KilledWorker`` after
that, which the session turns into a ``RuntimeError``).

:meth:`CoiledExecutor.open_local` builds the same Coiled Function but sends
its calls to a ``distributed.Client`` of your own (a ``LocalCluster``): the
hook the tests use, since no Coiled account is reachable here.
"""

from __future__ import annotations

import concurrent.futures
import functools
import importlib
import inspect
import threading
from collections.abc import Callable
from typing import Any

from cubego.runtime.remote import (
    PASSED_OVER,
    RemoteExecutor,
    Session,
    check_worker_memory,
)

__all__ = ["CoiledExecutor", "CoiledSession"]

_OWN_OPTIONS = frozenset({"coiled_kwargs", "minimum_workers"})


def _import_coiled() -> Any:
    try:
        return importlib.import_module("coiled")
    except ImportError as e:
        raise ModuleNotFoundError(
            f"the coiled executor needs the coiled package: pip install 'cubego[coiled]' ({e})",
            name="coiled",
        ) from e


def _run_call(call_fn: Callable[..., Any], call_args: tuple) -> Any:
    """What a Coiled worker runs: ``call_fn(*call_args)``."""
    return call_fn(*call_args)


class CoiledExecutor(RemoteExecutor):
    """Run tasks as calls of a Coiled Function (``coiled.function``).

    Options, as Cubed's ``CoiledExecutor``:

    ``coiled_kwargs``
        Keyword arguments of ``coiled.function``: ``memory`` (``"8 GiB"`` or a
        range ``["4 GiB", "8 GiB"]``), ``cpu``, ``vm_type``, ``region``,
        ``account``/``workspace``, ``software``/``container``, ``spot_policy``,
        ``n_workers``, ``threads_per_worker``, ``keepalive``, ``environ``, ...
        As in Cubed, these may also be given as options themselves.
    ``minimum_workers``
        Workers the cluster keeps while the session is open
        (``cluster.adapt(minimum=...)``).
    ``max_workers``
        Calls in flight at once (default: the largest ``n_workers`` times
        ``threads_per_worker``, 500 with Coiled's defaults).

    The memory check uses ``memory`` (its smallest value) divided by
    ``threads_per_worker``; without ``memory`` a worker's size is not known
    here and nothing is checked.
    """

    name = "coiled"

    def __init__(self, **options: Any):
        super().__init__(**options)
        coiled = _import_coiled()
        known = set(inspect.signature(coiled.function).parameters)
        kwargs = options.get("coiled_kwargs") or {}
        if not isinstance(kwargs, dict):
            raise TypeError(f"coiled: coiled_kwargs must be a dict, got {kwargs!r}")
        loose = {k for k in options if k not in PASSED_OVER and k not in _OWN_OPTIONS}
        unknown = sorted((loose | set(kwargs)) - known)
        if unknown:
            raise TypeError(
                f"coiled: {', '.join(unknown)} is not an argument of coiled.function "
                f"(its arguments: {', '.join(sorted(known))})"
            )
        twice = sorted(loose & set(kwargs))
        if twice:
            raise ValueError(
                f"coiled: {', '.join(twice)} given both as option and in coiled_kwargs"
            )
        if "local" in loose | set(kwargs):
            raise ValueError("coiled: local is not an option here; use CoiledExecutor.open_local")
        minimum = options.get("minimum_workers")
        if minimum is not None and (
            not isinstance(minimum, int) or isinstance(minimum, bool) or minimum < 0
        ):
            raise ValueError(f"coiled: minimum_workers must be an int >= 0, got {minimum!r}")
        workers = options.get("max_workers")
        if workers is not None and (
            not isinstance(workers, int) or isinstance(workers, bool) or workers < 1
        ):
            raise ValueError(f"coiled: max_workers must be a positive int, got {workers!r}")
        self.coiled_kwargs: dict[str, Any] = {
            **{k: options[k] for k in loose},
            **kwargs,
        }
        self._worker_memory()  # a bad memory fails here, not in open

    def _worker_memory(self) -> tuple[int, str] | None:
        """Memory one call may use on a worker, and where it comes from; None if unknown."""
        memory = self.coiled_kwargs.get("memory")
        if memory is None:
            return None
        from dask.utils import parse_bytes  # Coiled depends on Dask

        sizes = memory if isinstance(memory, (list, tuple)) else [memory]
        try:
            smallest = min(parse_bytes(m) for m in sizes)
        except (TypeError, ValueError) as e:
            raise ValueError(f"coiled: cannot read memory={memory!r} as a size: {e}") from e
        threads = self.coiled_kwargs.get("threads_per_worker", 1) or 1
        if threads == -1:
            return None  # as many threads as cores: unknown here
        return smallest // threads, f"memory={memory!r} / threads_per_worker={threads}"

    def build(self, allowed_mem: int) -> Any:
        """The memory check, then the Coiled Function; no cluster starts yet."""
        worker = self._worker_memory()
        if worker is not None:
            check_worker_memory("coiled", worker[0], allowed_mem, worker[1])
        return _import_coiled().function(**self.coiled_kwargs)(_run_call)

    def _max_workers(self) -> int:
        if self.options.get("max_workers") is not None:
            return self.options["max_workers"]
        n_workers = self.coiled_kwargs.get("n_workers")
        if n_workers is None:
            n_workers = 500  # coiled.function's default: adapt between 0 and 500
        elif isinstance(n_workers, (list, tuple)):
            n_workers = max(n_workers)
        threads = self.coiled_kwargs.get("threads_per_worker", 1)
        return max(1, n_workers * (threads if threads and threads > 0 else 1))

    def open(self, allowed_mem: int) -> CoiledSession:
        """Build the Coiled Function; with ``minimum_workers``, start its cluster now."""
        function = self.build(allowed_mem)
        minimum = self.options.get("minimum_workers")
        if minimum is not None:
            function.cluster.adapt(minimum=minimum)
        return CoiledSession(function, max_workers=self._max_workers())

    def open_local(self, allowed_mem: int, client: Any) -> CoiledSession:
        """As :meth:`open`, but calls go to *client* (a ``distributed.Client`` of
        your own, left open by ``close``) instead of the Function's Coiled cluster."""
        function = self.build(allowed_mem)
        workers = self.options.get("max_workers") or sum(client.nthreads().values()) or 1
        return CoiledSession(function, max_workers=workers, client=client)


class CoiledSession(Session):
    """A :class:`Session` on a Coiled Function.

    Calls go to the Function's own Coiled cluster (``Function.submit``), or to
    *client* when given. ``close()`` cancels the calls still running and
    closes the connection to the Coiled cluster, which Coiled then shuts down
    after the Function's ``keepalive`` (30 s by default) unless another
    session reuses it; a *client* of yours is left open.
    """

    def __init__(self, function: Any, *, max_workers: int, client: Any = None):
        self.function = function
        self.max_workers = max_workers
        self._client = client
        self._lock = threading.Lock()
        self._pending: dict[Any, tuple[Any, concurrent.futures.Future]] = {}
        self._connected = False
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        future.set_running_or_notify_cancel()
        with self._lock:
            if self._closed:
                raise RuntimeError("coiled: submit on a closed session")
            if self._client is None:
                self._connected = True
                dask_future = self.function.submit(fn, args, pure=False, retries=0)
            else:
                dask_future = self._client.submit(
                    self.function.function, fn, args, pure=False, retries=0
                )
            # Dask forgets a call whose future is dropped: hold it until it settles.
            self._pending[dask_future.key] = (dask_future, future)
        dask_future.add_done_callback(functools.partial(self._settle, future))
        return future

    def _settle(self, future: concurrent.futures.Future, dask_future: Any) -> None:
        with self._lock:
            self._pending.pop(dask_future.key, None)
        try:
            result = dask_future.result()
        except BaseException as e:  # noqa: BLE001 - the call's own exception goes to its future
            settle, value = future.set_exception, _worker_failure(e)
        else:
            settle, value = future.set_result, result
        try:
            settle(value)
        except concurrent.futures.InvalidStateError:
            pass  # close() failed it meanwhile

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pending = list(self._pending.values())
            self._pending.clear()
        for dask_future, future in pending:
            # Fail the call before cancelling it: the cancellation settles the Dask
            # future at once on the client's thread, whose callback would otherwise
            # win with Dask's own FutureCancelledError.
            try:
                future.set_exception(
                    RuntimeError("coiled: the session was closed while the call ran")
                )
            except concurrent.futures.InvalidStateError:
                pass  # it settled meanwhile
            dask_future.cancel()
        if self._client is None and self._connected:
            self.function.client.close()


def _worker_failure(error: BaseException) -> BaseException:
    """A call's exception as its future gets it: Dask's ``KilledWorker`` (the call's
    workers kept dying) becomes a ``RuntimeError``; the function's own is kept."""
    if type(error).__name__ == "KilledWorker":
        failure = RuntimeError(f"coiled: the workers running the call died: {error}")
        failure.__cause__ = error
        return failure
    return error
