"""``measure_reserved_mem``: the memory a worker uses before it holds any chunk data."""

from __future__ import annotations

from typing import Any

from cubego.binding import libcubego
from cubego.core.array import apply, elemwise, encode_chunks
from cubego.core.compute import compute
from cubego.core.spec import Spec
from cubego.runtime.types import Callback, TaskEndEvent

__all__ = ["measure_reserved_mem"]


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
    spec = Spec(work_dir=work_dir, allowed_mem=500_000_000)
    args = {
        "shape": [1],
        "dtype": "float64",
        "fill_value": libcubego.encode_scalar(1.0),
        "chunks": encode_chunks((1,)),
        "spec": spec._to_json(),
    }
    ones = apply("full", args, [], spec)
    x = elemwise("negative", ones)
    peak = _PeakMemory()
    compute(x, executor=executor, callbacks=[peak], optimize_graph=False, **kwargs)
    if peak.peak <= 0:
        raise NotImplementedError(
            "measure_reserved_mem: this platform does not report peak memory (Linux only)"
        )
    return peak.peak
