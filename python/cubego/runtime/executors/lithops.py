"""The Lithops executor: batches of tasks run as Lithops function calls.

Lithops runs Python functions on serverless back ends (AWS Lambda, Google
Cloud Functions, IBM Code Engine, ...) or, for testing, on this machine
(``localhost``). Each call the Go engine hands to the session becomes one
Lithops call. One thread per session talks to Lithops: it sends every call
waiting for a free worker in one ``FunctionExecutor.map`` (a Lithops *job*),
and polls the calls in flight (``wait(..., return_when=ALWAYS)``) to settle
their futures.

Why ``map`` and not one ``call_async`` per call: a Lithops job has a fixed cost
(its function and data are stored, its calls invoked, its statuses monitored),
and the localhost back end of version 1 runs jobs one after another, so a job
per call there runs one call at a time. Measured on 2 cores, 8 calls of
``operator.add`` with ``worker_processes: 2``: localhost v1, 8 ``call_async``
2.62 s, one ``map`` 0.41 s; localhost v2, 1.53 s and 1.55 s (each call is a new
process there, so batching neither helps nor hurts).

Why poll and not ``wait(..., return_when=ANY_COMPLETED)``: such a wait blocks
on the set of calls it was given until one of them ends, so a call submitted
meanwhile would neither be sent nor have its result reported until then, and
Lithops' wait timeout is a ``SIGALRM``, which only the main thread can set.

Retries are off: the session uses a plain ``FunctionExecutor``, never Lithops'
``RetryingFunctionExecutor``; the Go engine decides what runs again. A call
whose worker process dies (killed, out of memory, past its ``timeout``) fails
its future with a ``RuntimeError`` naming Lithops' reason (Lithops reports a
``SIGKILL`` as a ``MemoryError``); the other calls go on.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from cubego.runtime.remote import (
    PASSED_OVER,
    RemoteExecutor,
    Session,
    check_worker_memory,
)

__all__ = ["LithopsExecutor", "LithopsSession"]

#: Options given to each ``map`` rather than to ``FunctionExecutor``.
_CALL_OPTIONS = ("include_modules", "exclude_modules", "timeout", "extra_env")

_MIB = 1 << 20


def _import_lithops() -> Any:
    try:
        return importlib.import_module("lithops")
    except ImportError as e:
        raise ModuleNotFoundError(
            f"the lithops executor needs the lithops package: pip install 'cubego[lithops]' ({e})",
            name="lithops",
        ) from e


def _run_call(call_fn: Callable[..., Any], call_args: tuple) -> Any:
    """What a Lithops worker runs: ``call_fn(*call_args)``.

    Lithops binds a call's data to the function's parameters by name, which
    built-in functions with positional-only parameters (``operator.add``) do
    not have, so every call goes through this wrapper.
    """
    return call_fn(*call_args)


class LithopsExecutor(RemoteExecutor):
    """Run tasks as Lithops function calls (``lithops.FunctionExecutor``).

    Options, as Cubed's ``LithopsExecutor``: everything but the engine's own
    options (``retries``, ``batch_size``, ``use_backups``, ...) and the ones
    below goes to ``lithops.FunctionExecutor``: ``config`` (a Lithops
    configuration dict), ``config_file``, ``backend``, ``storage``,
    ``runtime``, ``runtime_memory`` (MB; a worker must have at least
    ``allowed_mem``), ``log_level``, or any key of the back end's section of
    the configuration. Given to each call: ``include_modules`` (default
    ``None``: nothing is pickled with the function, cubego and the functions'
    modules must be installed in the runtime), ``exclude_modules``,
    ``timeout`` (seconds a call may run), ``extra_env``. Also:

    ``max_workers``
        Calls kept in flight (default: ``worker_processes`` on localhost, the
        back end's ``max_workers`` elsewhere).
    ``wait_dur_sec``
        Seconds between two polls of the calls in flight (default 0.1).
    ``function_executor``
        A ``lithops.FunctionExecutor`` of your own, used as it is (no other
        ``FunctionExecutor`` option may be given) and never shut down by the
        session.

    On localhost with a ``config`` that names no ``runtime``, the runtime is
    this interpreter (``sys.executable``): Lithops would otherwise look up
    ``python3`` on ``PATH``, which is not this venv's unless it is activated.
    """

    name = "lithops"

    def __init__(self, **options: Any):
        super().__init__(**options)
        config = options.get("config")
        if config is not None and not isinstance(config, dict):
            raise TypeError(f"lithops: config must be a dict, got {config!r}")
        memory = options.get("runtime_memory")
        if memory is not None and (not isinstance(memory, int) or isinstance(memory, bool)):
            raise TypeError(f"lithops: runtime_memory must be an int of MB, got {memory!r}")
        if memory is not None and memory <= 0:
            raise ValueError(f"lithops: runtime_memory must be positive, got {memory}")
        for key in ("include_modules", "exclude_modules"):
            value = options.get(key)
            if value is not None and not (
                isinstance(value, (list, tuple)) and all(isinstance(m, str) for m in value)
            ):
                raise TypeError(f"lithops: {key} must be a list of module names, got {value!r}")
        for key in ("timeout", "wait_dur_sec"):
            value = options.get(key)
            if value is not None and (
                not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0
            ):
                raise ValueError(
                    f"lithops: {key} must be a positive number of seconds, got {value!r}"
                )
        workers = options.get("max_workers")
        if workers is not None and (
            not isinstance(workers, int) or isinstance(workers, bool) or workers < 1
        ):
            raise ValueError(f"lithops: max_workers must be a positive int, got {workers!r}")
        _import_lithops()
        if options.get("function_executor") is not None:
            clash = sorted(self._function_executor_kwargs(localhost_runtime=False))
            if clash:
                raise ValueError(
                    "lithops: function_executor is used as it is, so FunctionExecutor "
                    f"options cannot be given with it: {', '.join(clash)}"
                )

    def _function_executor_kwargs(self, localhost_runtime: bool = True) -> dict[str, Any]:
        kwargs = {
            k: v
            for k, v in self.options.items()
            if k not in PASSED_OVER
            and k not in _CALL_OPTIONS
            and k not in ("wait_dur_sec", "function_executor")
        }
        config = kwargs.get("config") or {}
        backend = kwargs.get("backend") or config.get("lithops", {}).get("backend")
        if (
            localhost_runtime
            and backend == "localhost"
            and "runtime" not in kwargs
            and "runtime" not in (config.get("localhost") or {})
            and "config_file" not in kwargs
        ):
            kwargs["runtime"] = sys.executable
        return kwargs

    def open(self, allowed_mem: int) -> LithopsSession:
        """Create the ``FunctionExecutor`` and start the session's thread.

        The memory check uses ``runtime_memory`` from the options, else from
        the resolved Lithops configuration of the back end (AWS Lambda and
        Google Cloud Functions default to 256 MB); localhost has none.
        """
        memory = self.options.get("runtime_memory")
        if memory is not None:
            check_worker_memory(
                "lithops", memory * _MIB, allowed_mem, f"runtime_memory={memory} MB"
            )
        lithops = _import_lithops()
        fexec = self.options.get("function_executor")
        owned = fexec is None
        if owned:
            fexec = lithops.FunctionExecutor(**self._function_executor_kwargs())
        try:
            backend_config = fexec.config.get(fexec.backend) or {}
            if memory is None and backend_config.get("runtime_memory") is not None:
                memory = int(backend_config["runtime_memory"])
                check_worker_memory(
                    "lithops",
                    memory * _MIB,
                    allowed_mem,
                    f"runtime_memory={memory} MB of the {fexec.backend} configuration",
                )
            workers = self.options.get("max_workers")
            if workers is None and fexec.backend == "localhost":
                workers = backend_config.get("worker_processes") or os.cpu_count() or 1
            elif workers is None:
                workers = backend_config.get("max_workers") or 1
            call_options = {k: self.options[k] for k in _CALL_OPTIONS if k in self.options}
            call_options.setdefault("include_modules", None)
            return LithopsSession(
                fexec,
                max_workers=int(workers),
                call_options=call_options,
                wait_dur_sec=self.options.get("wait_dur_sec") or 0.1,
                owns_executor=owned,
            )
        except BaseException:
            if owned:
                _shutdown(fexec)
            raise


def _shutdown(fexec: Any) -> None:
    """Stop what a ``FunctionExecutor`` started: its monitor, invoker and workers."""
    fexec.__exit__(None, None, None)


class LithopsSession(Session):
    """A :class:`Session` on a ``lithops.FunctionExecutor``.

    One thread sends waiting calls (at most *max_workers* in flight) in one
    ``map`` and polls those in flight every *wait_dur_sec* seconds (at once
    when a call is submitted). *call_options* go to each ``map``. ``close()``
    shuts the executor down if the session created it (*owns_executor*).
    """

    def __init__(
        self,
        function_executor: Any,
        *,
        max_workers: int,
        call_options: dict[str, Any] | None = None,
        wait_dur_sec: float = 0.1,
        owns_executor: bool = False,
    ):
        from lithops.wait import ALWAYS

        self._always = ALWAYS
        self.function_executor = function_executor
        self.max_workers = max_workers
        self._call_options = dict(call_options or {})
        self._wait_dur_sec = wait_dur_sec
        self._owns_executor = owns_executor
        self._cond = threading.Condition()
        self._waiting: list[tuple[Callable[..., Any], tuple, concurrent.futures.Future]] = []
        self._running: dict[Any, concurrent.futures.Future] = {}  # Lithops future -> ours
        self._closing = False
        self._thread = threading.Thread(target=self._loop, name="cubego-lithops", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._cond:
            if self._closing:
                raise RuntimeError("lithops: submit on a closed session")
            self._waiting.append((fn, args, future))
            self._cond.notify()
        return future

    def close(self) -> None:
        with self._cond:
            if self._closing:
                return
            self._closing = True
            self._cond.notify()
        self._thread.join()
        for _, _, future in self._waiting:
            future.cancel()
        self._waiting.clear()
        for future in self._running.values():
            future.set_exception(RuntimeError("lithops: the session was closed while the call ran"))
        self._running.clear()
        if self._owns_executor:
            fexec = self.function_executor
            try:
                fexec.clean(clean_cloudobjects=False, force=True)
            finally:
                _shutdown(fexec)

    # The rest runs on the session's thread, the only one that calls Lithops.

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not (self._closing or self._waiting or self._running):
                    self._cond.wait()
                if self._closing:
                    return
                free = self.max_workers - len(self._running)
                batch, self._waiting[:free] = self._waiting[:free], []
            self._send(batch)
            settled = self._poll() if self._running else 0
            if not settled:
                with self._cond:
                    if not self._closing and not (
                        self._waiting and len(self._running) < self.max_workers
                    ):
                        self._cond.wait(self._wait_dur_sec)

    def _send(
        self, batch: list[tuple[Callable[..., Any], tuple, concurrent.futures.Future]]
    ) -> None:
        batch = [call for call in batch if call[2].set_running_or_notify_cancel()]
        if not batch:
            return
        data = [{"call_fn": fn, "call_args": args} for fn, args, _ in batch]
        try:
            sent = self.function_executor.map(_run_call, data, **self._call_options)
        except Exception as e:  # nothing was invoked: every call of the batch fails
            for _, _, future in batch:
                future.set_exception(e)
            return
        for lithops_future, (_, _, future) in zip(sent, batch, strict=True):
            self._running[lithops_future] = future

    def _poll(self) -> int:
        done, _ = self.function_executor.wait(
            list(self._running),
            throw_except=False,
            return_when=self._always,
            show_progressbar=False,
            wait_dur_sec=self._wait_dur_sec,
        )
        for lithops_future in done:
            future = self._running.pop(lithops_future)
            try:
                result = lithops_future.result(
                    throw_except=True,
                    internal_storage=self.function_executor.internal_storage,
                    wait_dur_sec=self._wait_dur_sec,
                )
            except BaseException as e:  # noqa: BLE001 - the call's own exception goes to its future
                future.set_exception(_worker_failure(lithops_future, e))
            else:
                future.set_result(result)
        return len(done)


def _worker_failure(lithops_future: Any, error: BaseException) -> BaseException:
    """The exception a call's future gets: the function's own, or a ``RuntimeError``
    when Lithops' handler reports the worker process died (killed, out of
    memory, timed out)."""
    if getattr(lithops_future, "_handler_exception", False):
        failure = RuntimeError(
            f"lithops: the worker process running the call failed: {type(error).__name__}: {error}"
        )
        failure.__cause__ = error
        return failure
    return error
