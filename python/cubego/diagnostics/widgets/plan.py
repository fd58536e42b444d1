"""``LivePlanViewer``: the plan's operations and their progress, live in a notebook."""

from __future__ import annotations

from typing import Any

from cubego.diagnostics.widgets._display import ipywidgets, megabytes, show
from cubego.runtime.types import Callback

__all__ = ["LivePlanViewer"]


class LivePlanViewer(Callback):
    """Show the plan as one progress bar per operation, updated as tasks end.

    Parameters
    ----------
    widget : ipywidgets.VBox, optional
        A box to draw into (for example one already displayed); by default a new
        one is created and displayed when the computation starts.
    height : str, default "600px"
        The height of the box (CSS).

    Attributes
    ----------
    widget : ipywidgets.VBox
        A summary (``children[0]``, HTML) and one ``IntProgress`` per operation,
        in the plan's order; ``bars`` maps operation names to them.
    progress : dict
        The fraction of each operation's tasks that have ended.
    """

    def __init__(self, widget: Any = None, *, height: str = "600px"):
        self._widgets = ipywidgets("LivePlanViewer")
        self.widget = widget
        self.height = height
        self.bars: dict[str, Any] = {}
        self.num_tasks: dict[str, int] = {}
        self.done: dict[str, int] = {}

    @property
    def progress(self) -> dict[str, float]:
        return {n: self.done[n] / max(self.num_tasks[n], 1) for n in self.num_tasks}

    def on_compute_start(self, event: Any) -> None:
        w = self._widgets
        plan = event.plan
        summary = w.HTML(
            f"<b>{plan.num_ops} operations, {plan.num_tasks} tasks</b>, max projected "
            f"memory {megabytes(plan.max_projected_mem)} of allowed "
            f"{megabytes(plan.allowed_mem)}"
        )
        self.bars, self.num_tasks, self.done = {}, {}, {}
        for op in plan.ops:
            self.num_tasks[op.name] = op.num_tasks
            self.done[op.name] = 0
            self.bars[op.name] = w.IntProgress(
                value=0,
                min=0,
                max=max(op.num_tasks, 1),
                description=op.name,
                tooltip=(
                    f"{op.func}: {op.num_tasks} tasks, projected memory "
                    f"{megabytes(op.projected_mem)}, reads {', '.join(op.inputs) or '-'}, "
                    f"writes {', '.join(op.outputs)}"
                ),
                layout=w.Layout(width="100%"),
            )
        children = [summary, *self.bars.values()]
        if self.widget is None:
            self.widget = w.VBox(children, layout=w.Layout(max_height=self.height))
            show(self.widget)
        else:
            self.widget.children = children

    def on_operation_start(self, event: Any) -> None:
        if event.name in self.bars:
            self.bars[event.name].bar_style = "info"

    def on_operation_end(self, event: Any) -> None:
        if event.name in self.bars:
            self.bars[event.name].bar_style = "success"

    def on_task_end(self, event: Any) -> None:
        if event.name not in self.bars:
            return
        self.done[event.name] += event.num_tasks
        self.bars[event.name].value = min(self.done[event.name], self.bars[event.name].max)
