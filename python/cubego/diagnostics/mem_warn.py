"""``MemoryWarningCallback``: warn when measured memory passed the budget."""

from __future__ import annotations

import warnings

from cubego.runtime.types import Callback, ComputeEndEvent, ComputeStartEvent, TaskEndEvent

__all__ = ["MemoryWarningCallback"]


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


class MemoryWarningCallback(Callback):
    """Warn (``UserWarning``) after a computation whose measured memory passed its budget.

    Two measurements are checked when the computation ends:

    * a task's memory, ``reserved_mem`` plus the most chunk-buffer bytes it held at
      once, against ``allowed_mem``;
    * the process's peak resident memory against the budget of all its workers
      together, ``allowed_mem × max_workers`` (the whole process when one task runs
      at a time): passing it usually means ``reserved_mem`` is too small for this
      process; measure it with ``cubego.measure_reserved_mem()``.

    It also warns when the executor measured no memory at all.
    """

    def on_compute_start(self, event: ComputeStartEvent) -> None:
        plan = event.plan
        self.allowed_mem = plan.allowed_mem
        self.reserved_mem = plan.reserved_mem
        self.process_budget = plan.process_budget or plan.allowed_mem
        self.task_peaks: dict[str, int] = {}
        self.process_peak = 0
        self.measured = False

    def on_task_end(self, event: TaskEndEvent) -> None:
        if event.peak_allocated is not None:
            peak = self.reserved_mem + event.peak_allocated
            self.task_peaks[event.name] = max(self.task_peaks.get(event.name, 0), peak)
        if event.peak_measured_mem_end:
            self.measured = True
            self.process_peak = max(self.process_peak, event.peak_measured_mem_end)

    def on_compute_end(self, event: ComputeEndEvent) -> None:
        over = {name: peak for name, peak in self.task_peaks.items() if peak > self.allowed_mem}
        if over:
            ops = ", ".join(f"{name} ({_mb(peak)})" for name, peak in sorted(over.items()))
            warnings.warn(
                f"Peak memory usage exceeded allowed_mem ({_mb(self.allowed_mem)}) when "
                f"running tasks: {ops}",
                UserWarning,
                stacklevel=2,
            )
        if self.process_peak > self.process_budget:
            warnings.warn(
                f"Peak measured memory of the process ({_mb(self.process_peak)}) exceeded "
                f"allowed_mem × max_workers ({_mb(self.process_budget)}); reserved_mem "
                f"({_mb(self.reserved_mem)}) is probably too small for this process: measure "
                "it with cubego.measure_reserved_mem()",
                UserWarning,
                stacklevel=2,
            )
        if self.task_peaks and not self.measured:
            warnings.warn(
                "the executor did not measure memory, so it could not be checked",
                UserWarning,
                stacklevel=2,
            )
