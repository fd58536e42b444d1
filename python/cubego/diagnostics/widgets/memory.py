"""``LiveMemoryViewer``: measured against projected memory per operation, live."""

from __future__ import annotations

import warnings
from typing import Any

from cubego.diagnostics.widgets._display import ipywidgets, megabytes, show, table
from cubego.runtime.types import Callback

__all__ = ["LiveMemoryViewer"]


class LiveMemoryViewer(Callback):
    """Show, per operation, projected and measured memory as tasks end.

    For each operation: its projected memory per task, the largest process peak
    measured after one of its tasks (``TaskEndEvent.peak_measured_mem_end``), the
    most chunk memory one task allocated plus ``reserved_mem``, and that figure
    over the projection (utilisation), with ``allowed_mem`` in the caption.

    Parameters
    ----------
    widget : ipywidgets.HTML, optional
        Where to draw; by default a new one, displayed when the computation starts.
    width, height : str
        The widget's size (CSS).

    Attributes
    ----------
    rows : dict
        Per operation name: ``projected_mem``, ``peak_measured_mem``,
        ``peak_allocated`` (plus ``reserved_mem``) and ``tasks`` ended.
    """

    def __init__(self, widget: Any = None, *, width: str = "100%", height: str = "300px"):
        self._widgets = ipywidgets("LiveMemoryViewer")
        self.widget = widget
        self.width = width
        self.height = height
        self.rows: dict[str, dict[str, Any]] = {}
        self.allowed_mem = 0
        self.reserved_mem = 0
        self._warned = False

    def on_compute_start(self, event: Any) -> None:
        plan = event.plan
        self.allowed_mem, self.reserved_mem = plan.allowed_mem, plan.reserved_mem
        self.rows = {
            op.name: {
                "func": op.func,
                "projected_mem": op.projected_mem,
                "peak_measured_mem": None,
                "peak_allocated": None,
                "tasks": 0,
                "num_tasks": op.num_tasks,
            }
            for op in plan.ops
        }
        if self.widget is None:
            w = self._widgets
            self.widget = w.HTML(layout=w.Layout(width=self.width, max_height=self.height))
            show(self.widget)
        self._draw()

    def on_task_end(self, event: Any) -> None:
        row = self.rows.get(event.name)
        if row is None:
            return
        row["tasks"] += event.num_tasks
        if event.peak_measured_mem_end is None and not event.dropped and not self._warned:
            self._warned = True
            warnings.warn(
                "Not displaying actual memory usage since it is not measured by the "
                "current executor",
                UserWarning,
                stacklevel=2,
            )
        if event.peak_measured_mem_end is not None:
            peak = max(row["peak_measured_mem"] or 0, event.peak_measured_mem_end)
            row["peak_measured_mem"] = peak
        if event.peak_allocated is not None:
            used = self.reserved_mem + event.peak_allocated
            row["peak_allocated"] = max(row["peak_allocated"] or 0, used)
        self._draw()

    def _draw(self) -> None:
        rows = []
        for name, r in self.rows.items():
            used = r["peak_allocated"]
            utilisation = "–" if used is None else f"{used / max(r['projected_mem'], 1):.0%}"
            rows.append(
                [
                    name,
                    r["func"],
                    f"{r['tasks']}/{r['num_tasks']}",
                    megabytes(r["projected_mem"]),
                    megabytes(used),
                    utilisation,
                    megabytes(r["peak_measured_mem"]),
                ]
            )
        header = [
            "op",
            "function",
            "tasks",
            "projected",
            "reserved + allocated",
            "utilisation",
            "process peak",
        ]
        self.widget.value = (
            f"<b>allowed_mem {megabytes(self.allowed_mem)}, reserved_mem "
            f"{megabytes(self.reserved_mem)}</b>" + table(header, rows)
        )
