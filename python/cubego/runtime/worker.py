"""The function every distributed executor runs in its workers: one batch of tasks.

:func:`run_batch` is imported by reference on the worker (it is part of the
installed cubego), so a call carries only its arguments: the computation's
array graph (the same bytes for every call of a computation: engines that can
broadcast it, or cache it by content, send it once), its fusion options, and
the batch. The library rebuilds the plan once per process and runs the batch's
tasks one after another through the C ABI, against the intermediates'
directory the batch names, and reports each task's timings and memory as
measured here.
"""

from __future__ import annotations

import base64
import traceback
from pathlib import Path
from typing import Any

from cubego.binding import libcubego

__all__ = ["run_batch", "run_batch_traced"]

#: Errors that may pass if the batch runs again (storage and network hiccups,
#: which are OSErrors, timeouts and lost connections included; a worker short
#: of memory); any other error would only repeat.
TRANSIENT = (OSError, MemoryError)


def run_batch(graph: str | bytes, options: dict, batch: dict) -> dict[str, Any]:
    """Run *batch* of the plan of *graph*; return ``{"stats": [...]}`` or the error.

    Never raises for a failed task: the error goes back as ``{"error": message,
    "permanent": bool, "exception": base64 cloudpickle or None}`` so that every
    engine delivers it the same way, and the coordinator re-raises the original
    exception (a chunk function's own) when the computation fails.
    """
    try:
        return {"stats": libcubego.run_tasks(graph, options, batch)}
    except Exception as e:  # noqa: BLE001 - every failure is reported, typed
        return {
            "error": "".join(traceback.format_exception_only(type(e), e)).strip(),
            "permanent": not isinstance(e, TRANSIENT),
            "exception": _pickled(e),
        }


def _pickled(e: BaseException) -> str | None:
    try:
        import cloudpickle

        return base64.b64encode(cloudpickle.dumps(e)).decode()
    except Exception:  # noqa: BLE001 - an unpicklable exception travels as its message
        return None


def run_batch_traced(graph: str, options: dict, batch: dict, memray_dir: str) -> dict[str, Any]:
    """:func:`run_batch`, tracing the operation's first task with memray.

    The task of block ``(0, ..., 0)`` (the first block, as Cubed traces) runs
    alone inside ``memray.Tracker`` writing ``<memray_dir>/<op>.bin`` (native
    frames included), after the process's pooled chunk buffers are released so
    that the task's own buffers are new C allocations in the trace; the batch's
    other tasks run untraced. A retry overwrites the trace.
    """
    blocks = batch.get("blocks") or []
    first = next((b for b in blocks if not any(b)), None)
    if first is None:
        return run_batch(graph, options, batch)
    import memray  # the caller checked it is installed

    stats: list[dict] = []
    rest = [b for b in blocks if b is not first]
    directory = Path(memray_dir)
    directory.mkdir(parents=True, exist_ok=True)
    destination = memray.FileDestination(directory / f"{batch['op']}.bin", overwrite=True)
    # Chunk buffers an earlier task freed are kept for reuse: release them, so
    # that the traced task's buffers are fresh mallocs memray sees.
    libcubego.free_os_memory()
    # Encoded and decoded (the library caches the plan) before tracing: the
    # graph holds in-memory inputs, and the trace is of the task alone.
    encoded = graph.encode()
    warm = run_batch(encoded, options, dict(batch, blocks=[]))
    if "error" in warm:
        return warm
    with memray.Tracker(destination=destination, native_traces=True):
        result = run_batch(encoded, options, dict(batch, blocks=[first]))
    if "error" in result:
        return result
    stats.extend(result["stats"])
    if rest:
        result = run_batch(graph, options, dict(batch, blocks=rest))
        if "error" in result:
            return result
        stats.extend(result["stats"])
    return {"stats": stats}
