"""The one seam between Python and ``libcubego`` (the Go engine).

This is the only module that touches the shared library. It follows
``docs/capi.md`` exactly:

* the library is loaded lazily, on the first call, from ``$CUBEGO_LIB`` if set
  (a path to another build) or else ``libcubego.so`` beside this package;
* every export's ``argtypes``/``restype`` is declared once, in :data:`_SIGNATURES`;
* every non-zero status becomes a Python exception through one table,
  :data:`_EXCEPTIONS`, and every error and result string is freed with ``cg_free``;
* a call from a process other than the one that loaded the library (a forked
  child) raises :class:`RuntimeError` before it reaches Go, because the Go
  runtime's threads do not survive ``fork()``.

The library is opened with :class:`ctypes.CDLL`, which releases the GIL for the
duration of each call (``PyDLL`` would deadlock Go goroutines that call back).
"""

from __future__ import annotations

import atexit
import ctypes
import json
import math
import numbers
import os
import queue
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from cubego.binding import pyfunc

__all__ = [
    "CG_OK",
    "LibraryError",
    "Job",
    "array_release",
    "arrays_from_json",
    "arrays_to_json",
    "compute",
    "debug_panic",
    "encode_scalar",
    "free_os_memory",
    "from_buffer",
    "interruptible",
    "library",
    "op",
    "plan_info",
    "python_op",
    "python_stats",
    "set_gc_percent",
    "set_max_procs",
    "set_memory_limit",
    "run_tasks",
    "set_python_callback",
    "shutdown",
    "sync_environ",
    "version",
]

LIBRARY_NAME = "libcubego.so"
ENV_VAR = "CUBEGO_LIB"

# Status codes (docs/capi.md) and the exception each becomes: the one table.
CG_OK = 0
CG_VALUE = 1
CG_TYPE = 2
CG_INDEX = 3
CG_NOT_FOUND = 4
CG_NOT_IMPLEMENTED = 5
CG_MEMORY = 6
CG_IO = 7
CG_CANCELLED = 8
CG_INTERNAL = 9
CG_TIMEOUT = 10
CG_CONNECTION = 11
CG_PERMISSION = 12

_EXCEPTIONS: dict[int, type[BaseException]] = {
    CG_VALUE: ValueError,
    CG_TYPE: TypeError,
    CG_INDEX: IndexError,
    CG_NOT_FOUND: FileNotFoundError,
    CG_NOT_IMPLEMENTED: NotImplementedError,
    CG_MEMORY: ValueError,
    CG_IO: OSError,
    CG_CANCELLED: KeyboardInterrupt,
    CG_INTERNAL: RuntimeError,
    CG_TIMEOUT: TimeoutError,
    CG_CONNECTION: ConnectionError,
    CG_PERMISSION: PermissionError,
}

FORK_MESSAGE = (
    "cubego cannot be used in a forked child process; use the 'spawn' start method "
    "(multiprocessing.get_context('spawn')) for process pools"
)

_c_char_pp = ctypes.POINTER(ctypes.c_void_p)  # char ** (kept as a raw pointer so it can be freed)
_c_uint64_p = ctypes.POINTER(ctypes.c_uint64)
_i32, _i64, _u64 = ctypes.c_int32, ctypes.c_int64, ctypes.c_uint64

# name: (argtypes, restype). Every export, declared once.
_SIGNATURES: dict[str, tuple[list, Any]] = {
    "cg_free": ([ctypes.c_void_p], None),
    "cg_abi_version": ([], _i32),
    "cg_version": ([_c_char_pp], _i32),
    "cg_op": ([ctypes.c_char_p, ctypes.c_char_p, _c_uint64_p, _i64, _c_char_pp, _c_char_pp], _i32),
    "cg_from_buffer": ([ctypes.c_char_p, ctypes.c_void_p, _i64, _c_char_pp, _c_char_pp], _i32),
    "cg_array_release": ([_u64], _i32),
    "cg_compute_start": (
        [_c_uint64_p, _i64, ctypes.c_char_p, _c_uint64_p, _c_char_pp],
        _i32,
    ),
    "cg_job_wait": ([_u64, _i64, ctypes.POINTER(_i32), _c_char_pp], _i32),
    "cg_job_cancel": ([_u64], _i32),
    "cg_job_read": ([_u64, _i64, ctypes.c_void_p, _i64, _c_char_pp], _i32),
    "cg_job_stats": ([_u64, _c_char_pp, _c_char_pp], _i32),
    "cg_job_events": ([_u64, _c_char_pp, _c_char_pp], _i32),
    "cg_job_poll_batches": ([_u64, _i64, _c_char_pp, _c_char_pp], _i32),
    "cg_job_batch_done": ([_u64, _i64, ctypes.c_char_p, _c_char_pp], _i32),
    "cg_job_worker_options": ([_u64, _c_char_pp, _c_char_pp], _i32),
    "cg_run_tasks": (
        [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, _c_char_pp, _c_char_pp],
        _i32,
    ),
    "cg_setenv": ([ctypes.c_char_p, ctypes.c_char_p, _c_char_pp], _i32),
    "cg_unsetenv": ([ctypes.c_char_p, _c_char_pp], _i32),
    "cg_job_release": ([_u64], _i32),
    "cg_plan": ([_c_uint64_p, _i64, ctypes.c_char_p, _c_char_pp, _c_char_pp], _i32),
    "cg_arrays_to_json": ([_c_uint64_p, _i64, _c_char_pp, _c_char_pp], _i32),
    "cg_arrays_from_json": ([ctypes.c_char_p, _c_char_pp, _c_char_pp], _i32),
    "cg_set_max_procs": ([_i32, ctypes.POINTER(_i32)], _i32),
    "cg_set_memory_limit": ([_i64, ctypes.POINTER(_i64)], _i32),
    "cg_set_gc_percent": ([_i32, ctypes.POINTER(_i32)], _i32),
    "cg_free_os_memory": ([], _i32),
    "cg_blas": ([ctypes.c_char_p, _c_char_pp, _c_char_pp], _i32),
    "cg_shutdown": ([], _i32),
    "cg_debug_panic": ([_c_char_pp], _i32),
    # Cancelling calls that can block on storage (docs/capi.md "Cancelling blocking calls")
    "cg_call_new": ([_c_uint64_p], _i32),
    "cg_call_bind": ([_u64], _i32),
    "cg_call_cancel": ([_u64], _i32),
    "cg_call_release": ([_u64], _i32),
    # Python functions as chunk kernels (docs/capi.md "Python functions")
    "cg_set_python_callback": ([ctypes.c_void_p], _i32),
    "cg_python_stats": ([ctypes.POINTER(_i64), ctypes.POINTER(_i64)], _i32),
    "cg_python_op": (
        [ctypes.c_char_p, ctypes.c_void_p, _i64, _c_uint64_p, _i64, _c_char_pp, _c_char_pp],
        _i32,
    ),
}


class LibraryError(RuntimeError):
    """A status code outside the table of docs/capi.md."""


_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_lib_path: str | None = None
_pid: int | None = None
_forked = False


def _after_fork_in_child() -> None:
    global _forked
    if _lib is not None:
        _forked = True


os.register_at_fork(after_in_child=_after_fork_in_child)


# The ABI this module is written for (docs/capi.md, "ABI version"): a library
# is accepted when its major equals ABI_MAJOR and its minor is at least ABI_MINOR.
ABI_MAJOR, ABI_MINOR = 1, 4


def _check_abi(lib: ctypes.CDLL, path: Path) -> None:
    """Refuse a library that does not speak the ABI this module is written for.

    Called right after opening it, before any other export is looked up: a
    library of another ABI may lack them, and getattr would fail less helpfully.
    """
    fix = f"rebuild it with `make lib`, reinstall cubego, or point ${ENV_VAR} at a matching build"
    try:
        abi_version = lib.cg_abi_version
    except AttributeError:
        raise OSError(
            f"cubego: the Go library {path} predates ABI versioning (it has no "
            f"cg_abi_version) and this cubego needs ABI {ABI_MAJOR}.{ABI_MINOR}; {fix}"
        ) from None
    abi_version.argtypes, abi_version.restype = _SIGNATURES["cg_abi_version"]
    major, minor = divmod(abi_version(), 1000)
    if major != ABI_MAJOR or minor < ABI_MINOR:
        raise OSError(
            f"cubego: the Go library {path} has ABI {major}.{minor} and this cubego needs "
            f"ABI {ABI_MAJOR}.{ABI_MINOR} or a later {ABI_MAJOR}.x; {fix}"
        )


def _default_path() -> Path:
    # The library sits at the package's root (cubego/libcubego.so), above this module.
    return Path(__file__).resolve().parent.parent / LIBRARY_NAME


def _warn_if_stale(path: Path) -> None:
    """In an editable install, warn once if Go sources are newer than the library."""
    repo = path.parent.parent.parent
    if not ((repo / "go.mod").is_file() and (repo / "capi").is_dir()):
        return
    try:
        built = path.stat().st_mtime
    except OSError:
        return
    for dirpath, dirnames, filenames in os.walk(repo):
        # the directories the go command ignores, Python's, and those holding
        # no Go package (benchmarks/data can hold many thousands of chunk
        # directories)
        dirnames[:] = [
            d
            for d in dirnames
            if not d.startswith((".", "_"))
            and d not in ("testdata", "node_modules", "python")
            and not (dirpath == str(repo) and d in ("benchmarks", "tests", "docs"))
        ]
        for filename in filenames:
            is_go = filename.endswith(".go") and not filename.endswith("_test.go")
            if is_go or filename in ("go.mod", "go.sum"):
                source = os.path.join(dirpath, filename)
                try:
                    newer = os.stat(source).st_mtime > built
                except OSError:
                    continue
                if newer:
                    warnings.warn(
                        f"cubego: {path} is older than {source}; run `make lib` to rebuild the "
                        "Go library (this process uses the old build)",
                        RuntimeWarning,
                        stacklevel=4,
                    )
                    return


def in_forked_child() -> bool:
    """Whether this process is a fork of one that had loaded the library (which
    cannot be used here: see :data:`FORK_MESSAGE`)."""
    return _forked or (_pid is not None and os.getpid() != _pid)


def _check_process() -> None:
    if _forked or (_pid is not None and os.getpid() != _pid):
        raise RuntimeError(FORK_MESSAGE)


def library() -> ctypes.CDLL:
    """The loaded library, loading it on first use."""
    global _lib, _lib_path, _pid, _synced_environ
    if _lib is not None:
        _check_process()
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        override = os.environ.get(ENV_VAR)
        path = Path(override) if override else _default_path()
        if not path.is_file():
            if override:
                raise OSError(f"cubego: ${ENV_VAR} is set to {override!r}, which is not a file")
            raise OSError(
                f"cubego: the Go library {path} is missing; build it with `make lib` "
                f"(or reinstall with `pip install .`), or point ${ENV_VAR} at a build"
            )
        lib = ctypes.CDLL(str(path))
        _check_abi(lib, path)
        for name, (argtypes, restype) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.argtypes = argtypes
            fn.restype = restype
        if not override:
            _warn_if_stale(path)
        lib.cg_set_python_callback(pyfunc.pointer())
        _use_scipy_openblas(lib)
        # Go copied the C environment, which os.environ writes through to, as it loaded.
        _synced_environ = dict(os.environ)
        _pid = os.getpid()
        _lib_path = str(path)
        _lib = lib
        # At exit (last registered runs first): remove this process's intermediates,
        # then stop the library from calling into a finalising interpreter.
        atexit.register(set_python_callback, None)
        atexit.register(shutdown)
        return lib


#: Set by the Go library when it loads: a path to a shared OpenBLAS, or "go".
BLAS_ENV_VAR = "CUBEGO_BLAS"
#: Why scipy-openblas64 was not used, when the reason is on this side.
_blas_note = ""


def _use_scipy_openblas(lib: ctypes.CDLL) -> None:
    """Send matrix products to the OpenBLAS of the scipy-openblas64 wheel.

    Its own copy, not numpy's bundled one (numpy.libs): the library sets the
    copy it opens to one thread, which must not change numpy's behaviour.
    ``$CUBEGO_BLAS`` (a path, or ``go`` for the built-in kernels) overrides
    this; the Go library reads it as it loads. Any failure leaves the
    built-in kernels in use, and :func:`blas_info` says why.
    """
    global _blas_note
    if os.environ.get(BLAS_ENV_VAR, "").strip():
        return
    try:
        path = _scipy_openblas_library()
    except Exception as e:  # noqa: BLE001 - not installed, or a wheel without its library
        _blas_note = f"scipy-openblas64 is not usable: {type(e).__name__}: {e}"
        return
    info, err = ctypes.c_void_p(), ctypes.c_void_p()
    status = lib.cg_blas(path.encode(), ctypes.byref(info), ctypes.byref(err))
    if status != 0:
        _blas_note = f"cg_blas failed: {_take_string_from(lib, err)}"
        return
    _take_string_from(lib, info)


def _scipy_openblas_library() -> str:
    """The path of the shared library in the installed scipy-openblas64 wheel.

    Found without importing the package: its ``__init__`` looks its version
    up with ``importlib.metadata`` and loads the library (some 60 ms, which
    the first computation of every process would wait for), and a library
    Python loads starts a thread per core unless ``OPENBLAS_NUM_THREADS`` is
    1. The Go library opens it itself, single-threaded.
    """
    import importlib.util

    spec = importlib.util.find_spec("scipy_openblas64")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the scipy_openblas64 package is not installed")
    lib_dir = os.path.join(list(spec.submodule_search_locations)[0], "lib")
    suffix = {"win32": ".dll", "darwin": ".dylib"}.get(sys.platform, ".so")
    try:
        names = sorted(
            n for n in os.listdir(lib_dir) if n.startswith("libscipy_openblas") and suffix in n
        )
    except OSError as e:
        raise FileNotFoundError(f"no library directory {lib_dir}: {e.strerror}") from None
    if not names:
        raise FileNotFoundError(f"no libscipy_openblas*{suffix} in {lib_dir}")
    return os.path.join(lib_dir, names[0])


def _take_string_from(lib: ctypes.CDLL, ptr: ctypes.c_void_p) -> str:
    if not ptr.value:
        return ""
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", errors="replace")
    finally:
        lib.cg_free(ptr)


def blas_info() -> dict[str, str]:
    """Which BLAS the matrix products and linear algebra use.

    ``name`` is ``"go"`` (the built-in kernels) or ``"OpenBLAS (...)"``;
    ``path`` the shared library opened; ``error`` why the last attempt to
    use OpenBLAS failed ("" if none did).
    """
    lib = library()
    info, err = ctypes.c_void_p(), ctypes.c_void_p()
    status = lib.cg_blas(None, ctypes.byref(info), ctypes.byref(err))
    if status != 0:
        _raise(status, err, "cg_blas")
    result = json.loads(_take_string(info))
    if result["name"] == "go" and not result["error"] and _blas_note:
        result["error"] = _blas_note
    return result


def loaded_path() -> str | None:
    """Path of the loaded library, or None if it has not been loaded yet."""
    return _lib_path


# ----------------------------------------------------------------------------- plumbing


def _take_string(ptr: ctypes.c_void_p) -> str:
    """Decode a library-allocated C string and free it."""
    if not ptr.value:
        return ""
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", errors="replace")
    finally:
        _lib.cg_free(ptr)


def _exception(status: int, err: ctypes.c_void_p | None, what: str) -> BaseException:
    """The exception for a non-zero status, freeing the error message."""
    message = _take_string(err) if err is not None else ""
    if "[cubego-python-error " in message:
        # A Python function raised inside a task: its own exception object.
        original = pyfunc.pop_exception(message)
        if original is not None:
            return original
    exc_type = _EXCEPTIONS.get(status)
    if exc_type is None:
        return LibraryError(f"cubego: {what} returned unknown status {status}: {message}")
    if not message:
        message = f"cubego: {what} failed (status {status})"
    return exc_type(message)


def _raise(status: int, err: ctypes.c_void_p | None, what: str) -> None:
    raise _exception(status, err, what)


#: How long the main thread waits between chances for Ctrl-C, in seconds.
_SLICE = 0.05

#: ``cg_op`` names that read or write storage while they run; the others only
#: build arrays and never block.
_STORAGE_OPS = frozenset({"from_zarr", "store_into"})

_T = TypeVar("_T")


class _HelperThreads:
    """Daemon threads that run :func:`interruptible` calls, kept for the next call.

    Starting a thread costs about 0.3 ms, as much as a whole small computation
    (issue #19), so a helper that finished its call waits for the next one.
    A call that never returns (a stalled request after a second Ctrl-C) keeps
    its helper; the next call gets another. Daemon threads, so a stalled call
    never holds up the interpreter's exit; none survive a fork.
    """

    #: Idle helpers kept at most (the rest end).
    MAX_IDLE = 2

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[Any] = []  # the inboxes of idle helpers
        self._pid = os.getpid()

    def run(self, fn: Callable[[], None]) -> threading.Event:
        """Run *fn* on a helper; the event is set when it has returned."""
        done = threading.Event()
        with self._lock:
            if self._pid != os.getpid():  # forked: the parent's helpers are not here
                self._idle, self._pid = [], os.getpid()
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(
                target=self._serve, args=(inbox,), name="cubego-call", daemon=True
            ).start()
        inbox.put((fn, done))
        return done

    def _serve(self, inbox: Any) -> None:
        while True:
            fn, done = inbox.get()
            try:
                fn()  # reports its own outcome; never raises
            finally:
                # Idle again before the caller wakes, so its next call finds this helper.
                with self._lock:
                    keep = self._pid == os.getpid() and len(self._idle) < self.MAX_IDLE
                    if keep:
                        self._idle.append(inbox)
                done.set()
            if not keep:
                return


_HELPERS = _HelperThreads()


def interruptible(body: Callable[[], _T], discard: Callable[[_T], None] | None = None) -> _T:
    """Run *body*, a library call that can block on storage, so Ctrl-C interrupts it.

    Python raises ``KeyboardInterrupt`` only in the main thread, between bytecodes:
    a main thread inside a C call does not see it until the call returns, which a
    stalled storage request may never do. So on the main thread *body* runs on a
    helper thread bound to a cancellable call (``cg_call_new``/``cg_call_bind``,
    docs/capi.md "Cancelling blocking calls") while the main thread waits in short
    slices; on ``KeyboardInterrupt`` (or any exception there) it cancels the call,
    which makes Go abandon its storage requests and return at once, waits for the
    helper to finish, and re-raises; a result the call made all the same is handed
    to *discard* (to release its handles). A second Ctrl-C stops the wait. On
    other threads, which no signal reaches, *body* runs directly.
    """
    if threading.current_thread() is not threading.main_thread():
        return body()
    lib = library()
    call = ctypes.c_uint64(0)
    status = lib.cg_call_new(ctypes.byref(call))
    if status != CG_OK:
        _raise(status, None, "cg_call_new")
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            lib.cg_call_bind(call.value)
            try:
                outcome.append((True, body()))
            finally:
                lib.cg_call_bind(0)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            outcome.append((False, exc))
        finally:
            lib.cg_call_release(call.value)

    done = _HELPERS.run(run)
    try:
        while not done.wait(_SLICE):
            pass
    except BaseException:
        lib.cg_call_cancel(call.value)  # an error status once it has finished: nothing to cancel
        try:
            while not done.wait(_SLICE):
                pass
        except KeyboardInterrupt:
            pass
        else:
            if outcome and outcome[0][0] and discard is not None:
                discard(outcome[0][1])
        raise
    ok, value = outcome[0]
    if ok:
        return value
    raise value


def _handles(handles: list[int]) -> tuple[Any, int]:
    n = len(handles)
    array = (ctypes.c_uint64 * max(n, 1))(*handles)
    return array, n


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, allow_nan=False, separators=(",", ":")).encode("utf-8")


def encode_float(value: float) -> float | str:
    """A float as JSON: NaN and infinities become the strings of docs/capi.md."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def encode_scalar(value: Any) -> dict:
    """``{"scalar": V, "kind": K}`` for a Python or numpy scalar (docs/capi.md)."""
    if isinstance(value, (bool, np.bool_)):
        return {"scalar": bool(value), "kind": "bool"}
    if isinstance(value, (numbers.Integral, np.integer)):
        return {"scalar": int(value), "kind": "int"}
    if isinstance(value, (numbers.Real, np.floating)):
        return {"scalar": encode_float(float(value)), "kind": "float"}
    if isinstance(value, (numbers.Complex, np.complexfloating)):
        c = complex(value)
        return {"scalar": [encode_float(c.real), encode_float(c.imag)], "kind": "complex"}
    raise TypeError(
        f"cubego: expected a bool, int, float or complex scalar, got {type(value).__name__}"
    )


# ----------------------------------------------------------------------------- arrays


def version() -> dict:
    """``cg_version``: the library and Go versions."""
    lib = library()
    out = ctypes.c_void_p()
    status = lib.cg_version(ctypes.byref(out))
    if status != CG_OK:
        _raise(status, None, "cg_version")
    return json.loads(_take_string(out))


def op(name: str, args: dict, inputs: list[int]) -> list[dict]:
    """``cg_op``: build array operation *name*; returns the result arrays' infos
    (with ``chunk_runs``, not ``chunks``: docs/capi.md "Array results").

    Operations that touch storage (:data:`_STORAGE_OPS`) can be interrupted with Ctrl-C.
    """
    lib = library()
    handles, n = _handles(inputs)
    payload = _dumps({**args, "chunk_runs": True})

    def call() -> list[dict]:
        result, err = ctypes.c_void_p(), ctypes.c_void_p()
        status = lib.cg_op(
            name.encode("utf-8"), payload, handles, n, ctypes.byref(result), ctypes.byref(err)
        )
        if status != CG_OK:
            _take_string(result)
            _raise(status, err, f"cg_op({name!r})")
        return json.loads(_take_string(result))["arrays"]

    if name in _STORAGE_OPS:
        return interruptible(call, lambda infos: [array_release(i["handle"]) for i in infos])
    return call()


def from_buffer(args: dict, data: np.ndarray) -> list[dict]:
    """``cg_from_buffer``: copy a C-contiguous little-endian numpy array into a new array."""
    if not data.flags.c_contiguous:
        raise ValueError("cubego: from_buffer needs a C-contiguous array")
    lib = library()
    result, err = ctypes.c_void_p(), ctypes.c_void_p()
    status = lib.cg_from_buffer(
        _dumps({**args, "chunk_runs": True}),
        ctypes.c_void_p(data.ctypes.data),
        data.nbytes,
        ctypes.byref(result),
        ctypes.byref(err),
    )
    if status != CG_OK:
        _take_string(result)
        _raise(status, err, "cg_from_buffer")
    return json.loads(_take_string(result))["arrays"]


def array_release(handle: int) -> None:
    """``cg_array_release``; used by ``weakref.finalize``, so it never raises."""
    if _lib is None or _forked or os.getpid() != _pid:
        return
    _lib.cg_array_release(handle)


# ----------------------------------------------------------------------------- computation


class Job:
    """A running or finished computation (``cg_compute_start``)."""

    def __init__(self, handle: int):
        self.handle = handle
        self._released = False
        self._finished = False

    def wait(self, timeout_ms: int = 100, on_cycle: Callable[[], None] | None = None) -> None:
        """Wait until the job finishes, raising its error.

        Waits in slices of *timeout_ms* so that Ctrl-C lands between them, calling
        *on_cycle* (if given) after every slice, including the last one before the job's
        error is raised (this is where events are polled and callbacks run, on the
        calling thread). On ``KeyboardInterrupt``, or an exception from *on_cycle*, a
        running job is cancelled and waited for until it stops, and the exception
        re-raised.
        """
        try:
            while True:
                done, error = self._wait_once(timeout_ms)
                if on_cycle is not None:
                    on_cycle()
                if error is not None:
                    raise error
                if done:
                    return
        except BaseException as exc:
            if not self._finished:
                self.cancel()
                if isinstance(exc, KeyboardInterrupt):
                    pyfunc.interrupt_running()
                self._wait_stopped(timeout_ms)
            raise

    def _wait_once(self, timeout_ms: int) -> tuple[bool, BaseException | None]:
        """One ``cg_job_wait``: whether the job has finished, and its error if it failed."""
        lib = library()
        done, err = ctypes.c_int32(0), ctypes.c_void_p()
        status = lib.cg_job_wait(self.handle, timeout_ms, ctypes.byref(done), ctypes.byref(err))
        if done.value:
            self._finished = True
        if status != CG_OK:
            return True, _exception(status, err, "compute")
        _take_string(err)
        return bool(done.value), None

    def _wait_stopped(self, timeout_ms: int) -> None:
        """After a cancel: wait until the job has stopped, ignoring its (cancelled) status.

        A second Ctrl-C abandons the wait.
        """
        lib = library()
        said = False
        while True:
            done, err = ctypes.c_int32(0), ctypes.c_void_p()
            lib.cg_job_wait(self.handle, timeout_ms, ctypes.byref(done), ctypes.byref(err))
            _take_string(err)
            if done.value:
                return
            busy = pyfunc.running()
            if busy and not said:
                # Python delivers the interrupt to a function in C code (a sleep,
                # a long numpy call) only when that call returns: say what we wait for.
                said = True
                sys.stderr.write(
                    f"cubego: computation cancelled; waiting for {len(busy)} running Python "
                    f"function(s) to return ({'; '.join(busy[:3])}). "
                    "Press Ctrl-C again to stop waiting.\n"
                )
                sys.stderr.flush()

    def cancel(self) -> None:
        library().cg_job_cancel(self.handle)

    def read(self, index: int, out: np.ndarray) -> np.ndarray:
        """``cg_job_read``: copy the *index*-th requested array into *out* (C order)."""
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("cubego: job read needs a writeable C-contiguous buffer")
        lib = library()

        def call() -> np.ndarray:
            err = ctypes.c_void_p()
            status = lib.cg_job_read(
                self.handle, index, ctypes.c_void_p(out.ctypes.data), out.nbytes, ctypes.byref(err)
            )
            if status != CG_OK:
                _raise(status, err, "cg_job_read")
            return out

        # Reading a stored result can block on storage: Ctrl-C interrupts it.
        return interruptible(call)

    def stats(self) -> dict:
        """``cg_job_stats``: projected and measured memory, ops and tasks."""
        lib = library()
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        status = lib.cg_job_stats(self.handle, ctypes.byref(out), ctypes.byref(err))
        if status != CG_OK:
            _take_string(out)
            _raise(status, err, "cg_job_stats")
        return json.loads(_take_string(out))

    def events(self) -> list[dict]:
        """``cg_job_events``: the events since the previous call, oldest first (docs/capi.md)."""
        lib = library()
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        status = lib.cg_job_events(self.handle, ctypes.byref(out), ctypes.byref(err))
        if status != CG_OK:
            _take_string(out)
            _raise(status, err, "cg_job_events")
        return json.loads(_take_string(out))

    def poll_batches(self, timeout_ms: int = 0) -> list[dict]:
        """``cg_job_poll_batches``: the batches the engine queued for a remote runner.

        Waits up to *timeout_ms* for the first one; each is ``{"id", "op", "blocks",
        "dir", "attempt", "backup"}`` (docs/capi.md "Distributed execution").
        """
        lib = library()
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        status = lib.cg_job_poll_batches(
            self.handle, timeout_ms, ctypes.byref(out), ctypes.byref(err)
        )
        if status != CG_OK:
            _take_string(out)
            _raise(status, err, "cg_job_poll_batches")
        return json.loads(_take_string(out))

    def worker_options(self) -> dict:
        """``cg_job_worker_options``: what workers rebuild this job's plan with."""
        lib = library()
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        status = lib.cg_job_worker_options(self.handle, ctypes.byref(out), ctypes.byref(err))
        if status != CG_OK:
            _take_string(out)
            _raise(status, err, "cg_job_worker_options")
        return json.loads(_take_string(out))

    def batch_done(self, batch_id: int, result: dict) -> None:
        """``cg_job_batch_done``: report a batch (``{"stats"}`` or ``{"error", "permanent"}``)."""
        lib = library()
        err = ctypes.c_void_p()
        payload = json.dumps(result).encode()
        status = lib.cg_job_batch_done(self.handle, batch_id, payload, ctypes.byref(err))
        if status != CG_OK:
            _raise(status, err, "cg_job_batch_done")

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        if _lib is None or _forked or os.getpid() != _pid:
            return
        _lib.cg_job_release(self.handle)

    def __enter__(self) -> Job:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def compute(handles: list[int], options: dict) -> Job:
    """``cg_compute_start``: validate the plan of *handles* and start it in the background.

    Starting lists stored intermediates when resuming, so Ctrl-C interrupts it.
    """
    lib = library()
    array, n = _handles(handles)
    payload = _dumps(options)
    sync_environ()

    def call() -> Job:
        job, err = ctypes.c_uint64(0), ctypes.c_void_p()
        status = lib.cg_compute_start(array, n, payload, ctypes.byref(job), ctypes.byref(err))
        if status != CG_OK:
            _raise(status, err, "compute")
        return Job(job.value)

    return interruptible(call, Job.release)


def plan_info(handles: list[int], options: dict) -> dict:
    """``cg_plan``: the plan's ops, tasks and projected memory, without running it."""
    lib = library()
    array, n = _handles(handles)
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    status = lib.cg_plan(array, n, _dumps(options), ctypes.byref(out), ctypes.byref(err))
    if status != CG_OK:
        _take_string(out)
        _raise(status, err, "plan")
    return json.loads(_take_string(out))


def python_op(args: dict, payload: bytes, inputs: list[int]) -> list[dict]:
    """``cg_python_op``: an array whose blocks a Python function computes (docs/capi.md)."""
    lib = library()
    handles, n = _handles(inputs)
    result, err = ctypes.c_void_p(), ctypes.c_void_p()
    status = lib.cg_python_op(
        _dumps({**args, "chunk_runs": True}),
        payload,
        len(payload),
        handles,
        n,
        ctypes.byref(result),
        ctypes.byref(err),
    )
    if status != CG_OK:
        _take_string(result)
        _raise(status, err, "cg_python_op")
    return json.loads(_take_string(result))["arrays"]


def set_python_callback(pointer: int | None) -> None:
    """``cg_set_python_callback``: the function the library calls for Python tasks (or None)."""
    if _lib is None or _forked or os.getpid() != _pid:
        return
    _lib.cg_set_python_callback(pointer)


def python_stats() -> tuple[int, int]:
    """``cg_python_stats``: calls into Python functions so far, and their total nanoseconds."""
    calls, nanos = ctypes.c_int64(0), ctypes.c_int64(0)
    library().cg_python_stats(ctypes.byref(calls), ctypes.byref(nanos))
    return calls.value, nanos.value


def arrays_to_json(handles: list[int]) -> str:
    """``cg_arrays_to_json``: the versioned JSON graph that computes these arrays."""
    lib = library()
    array, n = _handles(handles)
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    status = lib.cg_arrays_to_json(array, n, ctypes.byref(out), ctypes.byref(err))
    if status != CG_OK:
        _take_string(out)
        _raise(status, err, "arrays_to_json")
    return _take_string(out)


def arrays_from_json(graph: str) -> list[dict]:
    """``cg_arrays_from_json``: new arrays from a graph written by :func:`arrays_to_json`."""
    lib = library()
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    status = lib.cg_arrays_from_json(graph.encode(), ctypes.byref(out), ctypes.byref(err))
    if status != CG_OK:
        _take_string(out)
        _raise(status, err, "arrays_from_json")
    return json.loads(_take_string(out))["arrays"]


def run_tasks(graph: str | bytes, options: dict, batch: dict) -> list[dict]:
    """``cg_run_tasks``: run a batch of tasks of a plan in this process (a worker's call).

    *graph* is :func:`arrays_to_json` of the computation's arrays, *options* its
    fusion options; the plan rebuilt from them is cached, so the batches of one
    computation decode it once per process. Returns each task's stats.
    *graph* may be given encoded (UTF-8), saving a copy per call.
    """
    lib = library()
    sync_environ()
    args = (
        graph if isinstance(graph, bytes) else graph.encode(),
        json.dumps(options).encode(),
        json.dumps(batch).encode(),
    )

    def call() -> list[dict]:
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        status = lib.cg_run_tasks(*args, ctypes.byref(out), ctypes.byref(err))
        if status != CG_OK:
            _take_string(out)
            _raise(status, err, "run_tasks")
        return json.loads(_take_string(out))

    return interruptible(call)


# ----------------------------------------------------------------------------- runtime knobs

#: The environment as the library last saw it (see :func:`sync_environ`).
_synced_environ: dict[str, str] | None = None
_environ_lock = threading.Lock()


def sync_environ() -> None:
    """Make the library see ``os.environ`` as it is now.

    Go copies the environment when the library loads, so variables set from
    Python later (credentials, ``AWS_ENDPOINT_URL``...) are invisible to its
    stores; this sets and unsets in Go what changed since the last call. Every
    computation and every worker call syncs first.
    """
    global _synced_environ
    lib = library()
    with _environ_lock:
        now = dict(os.environ)
        before = _synced_environ or {}
        changed = [(k, v) for k, v in now.items() if before.get(k) != v]
        removed = [k for k in before if k not in now]
        for name, value in changed:
            if not name or "=" in name or "\x00" in name + value:
                continue
            err = ctypes.c_void_p()
            status = lib.cg_setenv(name.encode(), value.encode(), ctypes.byref(err))
            if status != CG_OK:
                _raise(status, err, "cg_setenv")
        for name in removed:
            err = ctypes.c_void_p()
            status = lib.cg_unsetenv(name.encode(), ctypes.byref(err))
            if status != CG_OK:
                _raise(status, err, "cg_unsetenv")
        _synced_environ = now


def set_max_procs(n: int) -> int:
    """Set the Go runtime's GOMAXPROCS (``n <= 0`` restores the default).

    Returns the previous value.
    """
    previous = ctypes.c_int32(0)
    library().cg_set_max_procs(int(n), ctypes.byref(previous))
    return previous.value


def set_memory_limit(nbytes: int) -> int:
    """Set the Go runtime's soft memory limit (``< 0`` only queries); returns the previous limit."""
    previous = ctypes.c_int64(0)
    library().cg_set_memory_limit(int(nbytes), ctypes.byref(previous))
    return previous.value


def set_gc_percent(percent: int) -> int:
    """Set the Go garbage collector's GOGC percentage; returns the previous value."""
    previous = ctypes.c_int32(0)
    library().cg_set_gc_percent(int(percent), ctypes.byref(previous))
    return previous.value


def free_os_memory() -> None:
    """Force a garbage collection and return as much memory to the OS as possible."""
    library().cg_free_os_memory()


def shutdown() -> None:
    """Remove this process's intermediates (registered with ``atexit`` at load)."""
    if _lib is None or _forked or os.getpid() != _pid:
        return
    _lib.cg_shutdown()


def debug_panic() -> None:
    """Make the library panic inside Go; the panic must come back as RuntimeError."""
    lib = library()
    err = ctypes.c_void_p()
    status = lib.cg_debug_panic(ctypes.byref(err))
    if status != CG_OK:
        _raise(status, err, "cg_debug_panic")
    _take_string(err)
