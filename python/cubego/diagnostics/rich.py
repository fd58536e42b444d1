"""``RichProgressBar``: Cubed's default progress display, with rich.

One row per operation — a spinner while it runs, ``op-003 add``, done/total
tasks, a bar, the percentage and the elapsed time — refreshed at most ten
times a second, at Cubed's module path (``cubed.diagnostics.rich``). Log
records written to stderr while it shows go above the bars.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

from cubego.diagnostics._optional import require
from cubego.runtime.types import (
    Callback,
    ComputeEndEvent,
    ComputeStartEvent,
    OperationStartEvent,
    TaskEndEvent,
)

__all__ = ["RichProgressBar"]

REFRESH_PER_SECOND = 10


class RichProgressBar(Callback):
    """Show a rich progress bar per operation while a computation runs.

    Keyword arguments go to ``rich.progress.Progress`` (e.g. ``console=``,
    ``transient=True``).

    Raises
    ------
    ImportError
        If rich is not installed (``pip install rich``).
    """

    def __init__(self, **progress_kwargs: Any):
        self._rich = require("rich.progress", type(self).__name__)
        self.progress_kwargs = progress_kwargs
        self.progress: Any = None
        self.tasks: dict[str, Any] = {}
        self._handlers: list[tuple[logging.StreamHandler, Any]] = []

    def on_compute_start(self, event: ComputeStartEvent) -> None:
        rp = self._rich
        self.progress = rp.Progress(
            _SpinnerWhileRunning(),
            rp.TextColumn("[progress.description]{task.description}"),
            rp.MofNCompleteColumn(),
            # the pulse in the background colour: no pulsing of rows not started
            rp.BarColumn(bar_width=None, pulse_style="bar.back"),
            rp.TaskProgressColumn(text_format="[progress.percentage]{task.percentage:>3.1f}%"),
            rp.TimeElapsedColumn(),
            auto_refresh=False,
            **self.progress_kwargs,
        )
        self.progress.start()
        # Log records to stderr go through rich's console, above the bars.
        self._handlers = []
        for h in logging.getLogger().handlers:
            if type(h) is logging.StreamHandler:
                self._handlers.append((h, h.stream))
                h.setStream(self.progress.console.file if self.progress.console else sys.stderr)
        self.tasks = {
            op.name: self.progress.add_task(f"{op.name} {op.func}", start=False, total=op.num_tasks)
            for op in event.plan.ops
        }
        self._last = 0.0
        self.progress.refresh()

    def on_operation_start(self, event: OperationStartEvent) -> None:
        task = self.tasks.get(event.name)
        if task is not None:
            self.progress.start_task(task)
            self._refresh()

    def on_task_end(self, event: TaskEndEvent) -> None:
        task = self.tasks.get(event.name)
        if task is not None:
            self.progress.update(task, advance=event.num_tasks)
            self._refresh()

    def on_compute_end(self, event: ComputeEndEvent) -> None:
        self._stop()

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self._last >= 1.0 / REFRESH_PER_SECOND:
            self._last = now
            self.progress.refresh()

    def _stop(self) -> None:
        if self.progress is not None:
            self.progress.refresh()
            self.progress.stop()
            self.progress = None
        for h, stream in self._handlers:
            h.setStream(stream)
        self._handlers = []


def _SpinnerWhileRunning() -> Any:
    """A spinner column that shows only while an operation runs."""
    from rich.progress import SpinnerColumn

    class SpinnerWhileRunning(SpinnerColumn):
        def render(self, task: Any) -> Any:
            if not task.started or task.finished:
                return self.finished_text
            return self.spinner.render(task.get_time())

    return SpinnerWhileRunning()
