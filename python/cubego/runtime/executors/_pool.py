"""A pool of worker processes where a dead worker costs only its own call.

``concurrent.futures.ProcessPoolExecutor`` marks the whole pool broken when one
worker dies, failing every pending future; Cubed's processes executor inherits
that. Here each worker is a fresh interpreter (``python -c``: never a fork,
and unlike multiprocessing's spawn it does not re-run the user's ``__main__``,
so scripts need no ``if __name__ == "__main__"`` guard) running one call at a
time over its own pair of pipes. One monitor thread waits on every worker's
pipe at once: a worker that exits without answering (end of file) fails
exactly the future of the call it held, and a new worker takes its place.
"""

from __future__ import annotations

import collections
import concurrent.futures
import multiprocessing.connection
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["ProcessPool"]


def serve(fd_in: int, fd_out: int) -> None:
    """A worker's loop: run each call received, send back its result or exception."""
    calls = multiprocessing.connection.Connection(fd_in, writable=False)
    replies = multiprocessing.connection.Connection(fd_out, readable=False)
    while True:
        try:
            message = calls.recv()
        except EOFError:
            return
        if message is None:
            return
        fn, args = message
        try:
            reply = ("ok", fn(*args))
        except BaseException as e:  # noqa: BLE001 - the caller's future gets it
            reply = ("error", e)
        try:
            replies.send(reply)
        except Exception as e:  # noqa: BLE001 - an unpicklable result or exception
            replies.send(("error", RuntimeError(f"worker could not send its result back: {e!r}")))


class _Worker:
    def __init__(self) -> None:
        call_r, call_w = os.pipe()
        reply_r, reply_w = os.pipe()
        code = f"from cubego.runtime.executors._pool import serve; serve({call_r}, {reply_w})"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code], pass_fds=(call_r, reply_w), stdin=subprocess.DEVNULL
        )
        os.close(call_r)
        os.close(reply_w)
        self.calls_conn = multiprocessing.connection.Connection(call_w, readable=False)
        self.conn = multiprocessing.connection.Connection(reply_r, writable=False)
        self.future: concurrent.futures.Future | None = None
        self.calls = 0

    def stop(self) -> None:
        """End the worker: at once if it is busy (its call is abandoned), else when it reads."""
        if self.future is not None:
            self.process.kill()
        try:
            self.calls_conn.send(None)
        except OSError:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.calls_conn.close()
        self.conn.close()


class ProcessPool:
    """*n* spawned workers, one call each at a time; see the module's docstring."""

    def __init__(self, n: int, max_tasks_per_child: int | None = None):
        self._max_tasks = max_tasks_per_child
        self._lock = threading.Lock()
        self._pending: collections.deque = collections.deque()
        self._wake_r, self._wake_w = os.pipe()
        self._closed = False
        self._workers = [_Worker() for _ in range(n)]
        self._monitor = threading.Thread(target=self._run, name="cubego-process-pool", daemon=True)
        self._monitor.start()

    @property
    def pids(self) -> list[int]:
        """The worker processes' ids (for tests and diagnostics)."""
        with self._lock:
            return [w.process.pid for w in self._workers]

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cubego: the process pool is closed")
            self._pending.append((future, fn, args))
        os.write(self._wake_w, b"x")
        return future

    def abandon(self) -> None:
        """Stop the calls running now (a computation ended without their results).

        Their workers are killed and replaced; the futures of calls not yet
        started are cancelled.
        """
        with self._lock:
            busy = [w for w in self._workers if w.future is not None]
            pending, self._pending = list(self._pending), collections.deque()
        for future, _, _ in pending:
            future.cancel()
        for w in busy:
            w.process.kill()  # the monitor sees it die and replaces it

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        os.write(self._wake_w, b"x")
        self._monitor.join()
        for w in self._workers:
            w.stop()
        for future, _, _ in self._pending:
            future.cancel()
        os.close(self._wake_r)
        os.close(self._wake_w)

    # ------------------------------------------------------------------ the monitor

    def _assign(self) -> None:
        with self._lock:
            for w in self._workers:
                while w.future is None and self._pending:
                    future, fn, args = self._pending.popleft()
                    if not future.set_running_or_notify_cancel():
                        continue
                    try:
                        w.calls_conn.send((fn, args))
                    except Exception as e:  # noqa: BLE001 - an unpicklable call fails alone
                        future.set_exception(e)
                        continue
                    w.future = future
                    w.calls += 1

    def _replace(self, w: _Worker) -> None:
        w.stop()
        with self._lock:
            self._workers[self._workers.index(w)] = _Worker()

    def _run(self) -> None:
        while True:
            self._assign()
            with self._lock:
                if self._closed:
                    return
                by_conn = {w.conn: w for w in self._workers}
            ready = multiprocessing.connection.wait([self._wake_r, *by_conn], timeout=1.0)
            for r in ready:
                if r == self._wake_r:
                    os.read(self._wake_r, 4096)
                else:
                    self._answer(by_conn[r])

    def _answer(self, w: _Worker) -> None:
        try:
            kind, value = w.conn.recv()
        except (EOFError, OSError):
            self._died(w)
            return
        future, w.future = w.future, None
        if future is not None:
            if kind == "ok":
                future.set_result(value)
            else:
                future.set_exception(value)
        if self._max_tasks is not None and w.calls >= self._max_tasks:
            self._replace(w)

    def _died(self, w: _Worker) -> None:
        future, w.future = w.future, None
        try:
            code = w.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            w.process.kill()
            code = w.process.wait()
        if future is not None:
            how = (
                f"was killed by {signal.Signals(-code).name}"
                if code < 0
                else f"exited with code {code}"
            )
            future.set_exception(
                OSError(f"cubego: worker process {w.process.pid} {how} while running a batch")
            )
        self._replace(w)
