"""``LiveTimelineViewer``: when each operation's tasks ran, live in a notebook."""

from __future__ import annotations

from typing import Any

from cubego.diagnostics.widgets._display import ipywidgets, show, table
from cubego.runtime.types import Callback

__all__ = ["LiveTimelineViewer"]

# The four times of a task, as Cubed's timeline shows them.
EVENT_TYPES = (
    ("task create", "task_create_tstamp"),
    ("function start", "function_start_tstamp"),
    ("function end", "function_end_tstamp"),
    ("task result", "task_result_tstamp"),
)


class LiveTimelineViewer(Callback):
    """Record each task's four times and show them per operation as tasks end.

    Parameters
    ----------
    widget : ipywidgets.HTML, optional
        Where to draw; by default a new one, displayed when the computation starts.
    width, height : str
        The widget's size (CSS).

    Attributes
    ----------
    values : list of dict
        Per task and time, as Cubed's: ``name``, ``task_index``, ``elapsed_time``
        (seconds since the first task was created) and ``event_type`` (``"task
        create"``, ``"function start"``, ``"function end"``, ``"task result"``).
    """

    def __init__(self, widget: Any = None, *, width: str = "100%", height: str = "300px"):
        self._widgets = ipywidgets("LiveTimelineViewer")
        self.widget = widget
        self.width = width
        self.height = height
        self.values: list[dict[str, Any]] = []
        self.task_index = 0
        self.t0: float | None = None

    def on_compute_start(self, event: Any) -> None:
        self.values, self.task_index, self.t0 = [], 0, None
        if self.widget is None:
            w = self._widgets
            self.widget = w.HTML(layout=w.Layout(width=self.width, max_height=self.height))
            show(self.widget)
        self._draw()

    def on_task_end(self, event: Any) -> None:
        if event.task_create_tstamp is None:
            return  # dropped events carry no times
        if self.t0 is None:
            self.t0 = event.task_create_tstamp
        for event_type, field in EVENT_TYPES:
            t = getattr(event, field)
            if t is not None:
                self.values.append(
                    {
                        "name": event.name,
                        "task_index": self.task_index,
                        "elapsed_time": t - self.t0,
                        "event_type": event_type,
                    }
                )
        self.task_index += 1
        self._draw()

    def _draw(self) -> None:
        spans: dict[str, dict[str, float]] = {}
        tasks: dict[str, set[int]] = {}
        for v in self.values:
            span = spans.setdefault(v["name"], {})
            key = v["event_type"]
            first = key in ("task create", "function start")
            old = span.get(key)
            if old is None or (v["elapsed_time"] < old if first else v["elapsed_time"] > old):
                span[key] = v["elapsed_time"]
            tasks.setdefault(v["name"], set()).add(v["task_index"])
        rows = [
            [name, len(tasks[name])]
            + [f"{span[k]:.3f}" if k in span else "–" for k, _ in EVENT_TYPES]
            for name, span in spans.items()
        ]
        header = [
            "op",
            "tasks",
            "first created (s)",
            "first started (s)",
            "last ended (s)",
            "last result (s)",
        ]
        self.widget.value = table(header, rows)
