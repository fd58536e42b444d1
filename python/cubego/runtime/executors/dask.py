"""The Dask executor: batches of tasks run on a ``distributed`` cluster."""

from __future__ import annotations

import concurrent.futures
import threading
import uuid
from typing import Any

from cubego.runtime.remote import RemoteExecutor, Session, check_worker_memory

__all__ = ["DaskExecutor", "DaskSession"]

#: Arguments at least this large (the computation's array graph) are scattered
#: to every worker once instead of travelling with each call.
BROADCAST_BYTES = 64 * 1024


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as e:
        raise ImportError(
            "the dask executor needs dask.distributed: pip install 'cubego[dask]'"
        ) from e
    return distributed


class DaskExecutor(RemoteExecutor):
    """Tasks run on a Dask ``distributed`` cluster (Cubed's ``dask`` executor).

    Options: ``client`` (a ``distributed.Client`` of yours, left open), or
    ``compute_kwargs`` (passed to ``distributed.Client``: ``address=`` of a
    scheduler; with no address Dask starts a local cluster for the computation).
    Each call is one Dask task with Dask's retries off: the engine retries. A
    worker killed mid-task is restarted by its nanny and Dask runs the lost task
    again (``distributed.scheduler.allowed-failures``).
    """

    name = "dask"

    def __init__(self, **options: Any):
        super().__init__(**options)
        kwargs = options.get("compute_kwargs") or {}
        if not isinstance(kwargs, dict):
            raise TypeError(f"dask executor: compute_kwargs must be a dict, got {kwargs!r}")
        self._compute_kwargs = kwargs
        self._client = options.get("client")

    def open(self, allowed_mem: int) -> Session:
        distributed = _distributed()
        own = self._client is None
        client = (
            distributed.Client(**self._compute_kwargs, set_as_default=False)
            if own
            else self._client
        )
        try:
            workers = client.scheduler_info(n_workers=-1)["workers"].values()
            if not workers:
                client.wait_for_workers(1, timeout=60)
                workers = client.scheduler_info(n_workers=-1)["workers"].values()
            limits = [
                w["memory_limit"] // max(w["nthreads"], 1) for w in workers if w.get("memory_limit")
            ]
            check_worker_memory(
                "dask", min(limits) if limits else None, allowed_mem, "memory_limit / nthreads"
            )
            threads = sum(w["nthreads"] for w in workers) or 1
        except BaseException:
            if own:
                client.close()
            raise
        return DaskSession(client, own, threads)


class DaskSession(Session):
    """Calls as Dask tasks, their results as ``concurrent.futures.Future``s."""

    def __init__(self, client: Any, own: bool, max_workers: int):
        self.client = client
        self.own = own
        self.max_workers = max_workers
        self._lock = threading.Lock()
        self._live: set = set()  # Dask forgets a task whose future is dropped
        self._broadcast: dict[int, tuple[Any, Any]] = {}

    def _arg(self, value: Any) -> Any:
        if not isinstance(value, (str, bytes)) or len(value) < BROADCAST_BYTES:
            return value
        with self._lock:
            held = self._broadcast.get(id(value))
            if held is None or held[0] is not value:
                held = (value, self.client.scatter(value, broadcast=True, hash=True))
                self._broadcast[id(value)] = held
        return held[1]

    def submit(self, fn: Any, /, *args: Any) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        future.set_running_or_notify_cancel()
        task = self.client.submit(
            fn,
            *(self._arg(a) for a in args),
            pure=False,
            retries=0,
            key=f"cubego-batch-{uuid.uuid4().hex}",
        )
        with self._lock:
            self._live.add(task)

        def done(t: Any) -> None:
            with self._lock:
                self._live.discard(t)
            try:
                future.set_result(t.result())
            except BaseException as e:  # noqa: BLE001 - the call's future carries it
                if not future.done():
                    future.set_exception(e)

        task.add_done_callback(done)
        return future

    def close(self) -> None:
        with self._lock:
            live, self._live = list(self._live), set()
            scattered = [f for _, f in self._broadcast.values()]
            self._broadcast.clear()
        if live or scattered:
            try:
                self.client.cancel(live + scattered)
            except Exception:  # noqa: BLE001, S110 - a closing client may refuse
                pass
        if self.own:
            self.client.close()
