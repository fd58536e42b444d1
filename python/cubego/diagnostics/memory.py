"""``MemoryVisualizationCallback``: measured against projected memory over time."""

from __future__ import annotations

from typing import Any

from cubego.diagnostics._plot import PlotCallback

__all__ = ["MemoryVisualizationCallback"]


class MemoryVisualizationCallback(PlotCallback):
    """Plot memory over the computation: measured, allocated, projected, allowed.

    Writes ``<directory>/<compute_id>/memory.<format>`` (``svg`` by default, or
    ``png``/``pdf``) when the computation ends; the path is then in ``dst``. For
    every task, at the time it ended: the process's peak measured memory (black
    dots), and ``reserved_mem`` plus the chunk buffers the task allocated at its
    peak (coloured by operation) below the operation's projected memory (a
    coloured line over the task's run). The spec's ``allowed_mem`` is the red
    dashed line.

    Raises
    ------
    ImportError
        If matplotlib is not installed (``pip install 'cubego[diagnostics]'``).
    """

    stem = "memory"

    def draw(self, fig: Any, end_tstamp: float) -> None:
        ax = fig.add_subplot()
        t0 = self.start_tstamp
        mb = 1e6
        colors = self.colors()
        plan = self.plan
        seen: set[str] = set()
        measured_x, measured_y = [], []
        for e in self.events:
            if e.function_end_tstamp is None:
                continue
            end = e.function_end_tstamp - t0
            color = colors.get(e.name, "k")
            label = None if e.name in seen else self.op_label(e.name)
            seen.add(e.name)
            if e.projected_mem is not None:
                ax.hlines(
                    e.projected_mem / mb, e.function_start_tstamp - t0, end, color=color, lw=1
                )
            if e.peak_allocated is not None:
                allocated = (plan.reserved_mem + e.peak_allocated) / mb
                ax.plot([end], [allocated], "o", color=color, ms=3, label=label)
            if e.peak_measured_mem_end:
                measured_x.append(end)
                measured_y.append(e.peak_measured_mem_end / mb)
        if measured_x:
            ax.plot(measured_x, measured_y, ".", color="k", ms=3, label="process peak measured")
        ax.axhline(plan.allowed_mem / mb, color="red", ls="--", lw=1, label="allowed_mem")
        if plan.reserved_mem:
            ax.axhline(plan.reserved_mem / mb, color="0.5", ls=":", lw=1, label="reserved_mem")
        ax.set_xlim(0, max(end_tstamp - t0, 1e-3))
        ax.set_ylim(bottom=0)
        ax.set_xlabel("seconds since the computation started")
        ax.set_ylabel("memory (MB)")
        ax.set_title("per task: projected (lines), reserved + allocated (dots), process peak")
        ax.legend(loc="upper left", fontsize="small")
