"""Shared pieces of the matplotlib diagnostics."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cubego.diagnostics._optional import require
from cubego.runtime.types import Callback, ComputeEndEvent, ComputeStartEvent, TaskEndEvent

_FORMATS = ("svg", "png", "pdf")


class PlotCallback(Callback):
    """Collects task events and writes one matplotlib figure per computation.

    Subclasses name the file (``stem``) and draw the figure (``draw``).
    """

    stem = ""

    def __init__(self, format: str | None = None, directory: str | Path = "history"):
        require("matplotlib", type(self).__name__)
        self.format = (format or "svg").lower().lstrip(".")
        if self.format not in _FORMATS:
            raise ValueError(f"{type(self).__name__}: format must be one of {_FORMATS}")
        self.directory = Path(directory)
        self.events: list[TaskEndEvent] = []

    def on_compute_start(self, event: ComputeStartEvent) -> None:
        self.start_tstamp = event.start_tstamp or time.time()
        self.plan = event.plan
        self.events = []

    def on_task_end(self, event: TaskEndEvent) -> None:
        if not event.dropped:
            self.events.append(event)

    def on_compute_end(self, event: ComputeEndEvent) -> None:
        from matplotlib.figure import Figure

        end_tstamp = event.end_tstamp or time.time()
        fig = Figure(figsize=(10, 5), layout="constrained")
        self.draw(fig, end_tstamp)
        history = self.directory / event.compute_id
        history.mkdir(parents=True, exist_ok=True)
        self.dst = history / f"{self.stem}.{self.format}"
        fig.savefig(self.dst)

    def draw(self, fig: Any, end_tstamp: float) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def colors(self) -> dict[str, Any]:
        """A colour per operation, in plan order."""
        from matplotlib import colormaps

        cmap = colormaps["tab10"]
        return {op.name: cmap(i % 10) for i, op in enumerate(self.plan.ops)}

    def op_label(self, name: str) -> str:
        for op in self.plan.ops:
            if op.name == name:
                return f"{op.name} {op.func}"
        return name
