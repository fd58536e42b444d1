"""The Python end of the engine's ``"python"`` kernel: the callback it calls per task.

Ops built by :mod:`cubego.primitive` (``map_blocks``, ``blockwise``,
``map_overlap``, ``apply_gufunc``, Python reductions and scans, lazy
``from_array``) carry a *task function*: an object called as
``fn(inputs, out, task)`` that computes one output block. The library stores
it as cloudpickle bytes and a key (their SHA-256); for each task step it calls
:func:`_run` through a ctypes function pointer (``cg_set_python_callback``,
docs/capi.md "Python functions") from one of its worker threads, which takes
the GIL only for that call. Tasks of other ops never enter Python.

Per call:

* the task function is looked up by key in a bounded cache, which holds the
  live objects of ops built in this process; anywhere else (an unpickled
  array, another process) it is unpickled from the payload on first use;
* the task description (int64s: block, regions, dtypes) becomes a
  :class:`Task`; ``inputs`` are numpy views of the engine's input buffers and
  ``out`` a view of its output buffer: nothing is copied in. The views are
  valid only during the call; a function that keeps a reference to an input
  block past its return is an error (the buffer is reused as soon as the task
  ends);
* an exception (the user's, or a block of the wrong shape or dtype) is kept in
  a registry with its traceback and a note naming the op and block; the
  library fails the task with a message carrying the exception's token, and
  :func:`pop_exception` (called by :mod:`cubego.binding.libcubego` when a computation fails) returns
  the original exception object so that ``compute()`` raises it.
"""

from __future__ import annotations

import ctypes
import gc
import itertools
import re
import sys
import threading
import time
import traceback
from collections import OrderedDict
from typing import Any

import numpy as np

__all__ = ["CALLBACK", "describe", "pop_exception", "register", "write_block"]

# int32_t cb(key, payload, payload_len, task, task_len, names, n_inputs, in_ptrs,
#            in_nbytes, out_ptr, out_nbytes, err_buf, err_cap)   (docs/capi.md)
_CALLBACK_TYPE = ctypes.CFUNCTYPE(
    ctypes.c_int32,
    ctypes.c_char_p,
    ctypes.c_void_p,
    ctypes.c_int64,
    ctypes.POINTER(ctypes.c_int64),
    ctypes.c_int64,
    ctypes.c_char_p,
    ctypes.c_int64,
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.POINTER(ctypes.c_int64),
    ctypes.c_void_p,
    ctypes.c_int64,
    ctypes.c_void_p,
    ctypes.c_int64,
)

# Callback statuses: the task function raised (or returned a wrong block), or
# this module itself failed.
_RAISED = 1
_BROKEN = 2

# Task functions by key: live objects registered when their op was built, or
# unpickled from a task's payload. Bounded: the longest registered go first.
MAX_FUNCTIONS = 1024
_functions: OrderedDict[bytes, Any] = OrderedDict()

# Exceptions raised by task functions, by token, until compute() takes them.
MAX_EXCEPTIONS = 64
_exceptions: OrderedDict[int, BaseException] = OrderedDict()
_tokens = itertools.count(1)
_TOKEN = re.compile(r"\[cubego-python-error (\d+)\]")

# The dtype codes of the task description (docs/capi.md).
_DTYPES = tuple(
    np.dtype(name)
    for name in "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 "
    "complex64 complex128".split()
)
_ndarray = np.ndarray
_buffer_types: dict[int, Any] = {}

# A ctypes callback on a thread Python has not seen creates a Python thread
# state and deletes it when it returns, which makes every call pay for a new
# thread state and cold per-thread caches. Taking one more GIL-state
# reference on the first call from each library thread keeps its thread state
# for the life of the thread (the library's worker threads are few and
# long-lived), as cffi callbacks do.
_PyGILState_Ensure = ctypes.pythonapi.PyGILState_Ensure
_PyGILState_Ensure.restype = ctypes.c_int
_thread_state = threading.local()

# The Python functions running now, by thread id: what Ctrl-C interrupts
# (interrupt_running) and names while it waits for them (running).
_running: dict[int, str] = {}
_PyThreadState_SetAsyncExc = ctypes.pythonapi.PyThreadState_SetAsyncExc
_PyThreadState_SetAsyncExc.argtypes = [ctypes.c_ulong, ctypes.py_object]


def running() -> list[str]:
    """The Python chunk functions running now, described for a message."""
    return list(_running.values())


def interrupt_running() -> None:
    """Raise ``KeyboardInterrupt`` in the threads running a Python chunk function.

    Python delivers it at the function's next bytecode: a pure-Python loop stops
    at once, a call into C (``time.sleep``, a numpy kernel) when that call returns.
    """
    for ident in list(_running):
        _PyThreadState_SetAsyncExc(ident, KeyboardInterrupt)


def register(key: str, fn: Any) -> None:
    """Make *fn* the task function of *key* in this process (the op was built here)."""
    k = key.encode("ascii")
    _functions[k] = fn
    _functions.move_to_end(k)
    while len(_functions) > MAX_FUNCTIONS:
        _functions.popitem(last=False)


def _function(key: bytes, payload: int, payload_len: int) -> Any:
    fn = _functions.get(key)
    if fn is not None:
        return fn
    import cloudpickle

    fn = cloudpickle.loads(ctypes.string_at(payload, payload_len))
    register(key.decode("ascii"), fn)
    return fn


class Task:
    """Which task a task function computes (decoded from the library's description)."""

    __slots__ = ("first", "block", "step", "out_start", "in_starts", "_names")

    def __init__(
        self,
        first: bool,
        block: tuple[int, ...],
        step: tuple[int, ...],
        out_start: list[int],
        in_starts: list[list[int]],
        names: bytes,
    ):
        self.first = first  # the task's first step: the output holds no partial result
        self.block = block  # the output block's coordinates
        self.step = step  # the iteration step (reduction rounds), else ()
        self.out_start = out_start  # the output block's first element
        self.in_starts = in_starts  # each input region's first element in its array
        self._names = names

    @property
    def op(self) -> str:
        return self._names.split(b"\n")[0].decode()

    @property
    def func(self) -> str:
        return self._names.split(b"\n")[1].decode()

    @property
    def array(self) -> str:
        return self._names.split(b"\n")[2].decode()


def _buffer(ptr: int, nbytes: int) -> Any:
    """A ctypes array over *nbytes* of engine memory at *ptr* (not a copy)."""
    t = _buffer_types.get(nbytes)
    if t is None:
        if len(_buffer_types) > 256:
            _buffer_types.clear()
        t = _buffer_types[nbytes] = ctypes.c_char * nbytes
    return t.from_address(ptr)


def describe(fn: Any) -> str:
    """A function's name for messages: ``module.qualname`` or its repr."""
    fn = getattr(fn, "func", fn)  # functools.partial
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if name is None:
        return repr(fn)
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module and module != "builtins" else name


def where(task: Task) -> str:
    return f"block {task.block} of {task.array} in {task.op} ({task.func})"


def same_dtype(a: np.dtype, b: np.dtype) -> bool:
    """Equal dtypes, in any byte order (``dtype.name`` is slow to compute)."""
    return a == b or (a.kind == b.kind and a.itemsize == b.itemsize and a.kind in "biufc")


def write_block(out: np.ndarray, result: Any, task: Task, name: str) -> None:
    """Copy a function's *result* into the output block *out*, checking shape and dtype.

    *name* names the function in the error raised for a block of the wrong
    shape or dtype.
    """
    if not isinstance(result, np.ndarray):
        lazy = type(result).__module__.startswith("cubego")
        if lazy or (hasattr(result, "__array_namespace__") and not hasattr(result, "__array__")):
            raise TypeError(
                f"{name} returned a {type(result).__name__} for {where(task)}; chunk functions "
                "return numpy arrays"
            )
        result = np.asarray(result)
    if result.shape != out.shape or not same_dtype(result.dtype, out.dtype):
        raise ValueError(
            f"{name} returned a block of shape {result.shape} and dtype {result.dtype} for "
            f"{where(task)}, which needs shape {out.shape} and dtype {out.dtype}"
        )
    if out.size:
        out[...] = result


#: Pauses before _escaped reports an input block as kept, seconds: a
#: profiler that samples the task threads' stacks (Dask's worker profiler
#: does, every 10 ms) holds the frame of a call that has just returned for
#: as long as it walks it, and with it the views the frame held.
ESCAPE_WAITS = (0.002, 0.005, 0.01, 0.02, 0.05)


def _escaped(buffers: list) -> int | None:
    """The index of an input buffer still referenced after the call, if any.

    Each buffer is referenced by the list and by getrefcount's argument; any
    more means some array viewing it is still alive. A reference found is
    looked at again after a garbage collection (views held only by
    reference cycles) and after each of ESCAPE_WAITS (views held for a
    moment by another thread), so only a reference that lasts is reported.
    """
    for pause in (0.0, *ESCAPE_WAITS, None):
        held = [
            i
            for i in range(len(buffers))
            if buffers[i] is not None and sys.getrefcount(buffers[i]) > 2
        ]
        if not held or pause is None:
            break
        if pause == 0.0:
            gc.collect()
        else:
            time.sleep(pause)
    return held[0] if held else None


def _fail(exc: BaseException, task: Task | None, fn: Any, err_buf: int, err_cap: int) -> None:
    """Keep *exc* for compute() and write its token and message into the error buffer."""
    if task is not None:
        exc.add_note(f"cubego: raised by {describe(fn)} computing {where(task)}")
    # Frames of the failed call refer to views of engine buffers that are
    # freed when the task ends: drop their locals, keep the traceback.
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        traceback.clear_frames(e.__traceback__)
        e = e.__cause__ or e.__context__
    token = next(_tokens)
    _exceptions[token] = exc
    while len(_exceptions) > MAX_EXCEPTIONS:
        _exceptions.popitem(last=False)
    text = f"{type(exc).__name__}: {exc}"
    message = f"[cubego-python-error {token}] {text}".encode("utf-8", "replace")[: err_cap - 1]
    ctypes.memmove(err_buf, message + b"\0", len(message) + 1)


def _run(
    key: bytes,
    payload: int,
    payload_len: int,
    desc: Any,
    desc_len: int,
    names: bytes,
    n_inputs: int,
    in_ptrs: Any,
    in_nbytes: Any,
    out_ptr: int,
    out_nbytes: int,
    err_buf: int,
    err_cap: int,
) -> int:
    try:
        if not getattr(_thread_state, "kept", False):
            _PyGILState_Ensure()
            _thread_state.kept = True
        task = fn = None
        try:
            fn = _functions.get(key) or _function(key, payload, payload_len)
            # The description: first, ndim, nstep, block, start, shape, dtype, step,
            # then per input: ndim, dtype, start, shape.
            d = desc[:desc_len]
            n, s = d[1], d[2]
            i = 3 + 3 * n
            shape = tuple(d[3 + 2 * n : i])
            dtype = _DTYPES[d[i]]
            step = tuple(d[i + 1 : i + 1 + s])
            i += 1 + s
            buffers, inputs, starts = [], [], []
            for k in range(n_inputs):
                m = d[i]
                start, in_shape = d[i + 2 : i + 2 + m], tuple(d[i + 2 + m : i + 2 + 2 * m])
                nbytes = in_nbytes[k]
                if nbytes > 0:
                    buf = _buffer(in_ptrs[k], nbytes)
                    inputs.append(_ndarray(in_shape, _DTYPES[d[i + 1]], buf))
                else:
                    buf = None
                    inputs.append(np.zeros(in_shape, dtype=_DTYPES[d[i + 1]]))
                buffers.append(buf)
                starts.append(start)
                i += 2 + 2 * m
            buf = None  # only the list refers to the buffers now (see _escaped)
            if out_nbytes > 0:
                out = _ndarray(shape, dtype, _buffer(out_ptr, out_nbytes))
            else:
                out = np.zeros(shape, dtype=dtype)
            task = Task(d[0] == 1, tuple(d[3 : 3 + n]), step, d[3 + n : 3 + 2 * n], starts, names)
            ident = threading.get_ident()
            _running[ident] = f"{describe(getattr(fn, 'func', fn))} on {where(task)}"
            try:
                fn(inputs, out, task)
            finally:
                del _running[ident]
            del inputs, out
            i = _escaped(buffers)
            if i is not None:
                raise RuntimeError(
                    f"{describe(fn)} kept a reference to input block {i} of {where(task)} "
                    "after returning; blocks are views of engine memory that is reused when the "
                    "task ends, so copy a block (numpy.array(block)) to keep it"
                )
            return 0
        except BaseException as exc:  # noqa: BLE001 - every error goes back to compute()
            _fail(exc, task, getattr(fn, "func", fn), err_buf, err_cap)
            return _RAISED
    except BaseException:  # noqa: BLE001 - never let an exception escape into the engine
        return _BROKEN


CALLBACK = _CALLBACK_TYPE(_run)


def pointer() -> int:
    """The address of the C callback, for ``cg_set_python_callback``."""
    return ctypes.cast(CALLBACK, ctypes.c_void_p).value


def pop_exception(message: str) -> BaseException | None:
    """The exception a task function raised, if *message* (a library error) carries its token."""
    m = _TOKEN.search(message)
    if m is None:
        return None
    return _exceptions.pop(int(m.group(1)), None)
