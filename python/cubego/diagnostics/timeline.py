"""``TimelineVisualizationCallback``: when each task waited and ran."""

from __future__ import annotations

from typing import Any

from cubego.diagnostics._plot import PlotCallback

__all__ = ["TimelineVisualizationCallback"]


class TimelineVisualizationCallback(PlotCallback):
    """Plot every task's life: submitted, admitted and running, result taken.

    Writes ``<directory>/<compute_id>/timeline.<format>`` (``svg`` by default, or
    ``png``/``pdf``) when the computation ends; the path is then in ``dst``. One
    horizontal line per task, in submission order: grey while it waits for a worker
    and for memory admission, coloured by operation while it runs.

    Raises
    ------
    ImportError
        If matplotlib is not installed (``pip install 'cubego[diagnostics]'``).
    """

    stem = "timeline"

    def draw(self, fig: Any, end_tstamp: float) -> None:
        ax = fig.add_subplot()
        t0 = self.start_tstamp
        colors = self.colors()
        events = sorted(
            (e for e in self.events if e.task_create_tstamp is not None),
            key=lambda e: e.task_create_tstamp,
        )
        seen: set[str] = set()
        for i, e in enumerate(events):
            ax.hlines(i, e.task_create_tstamp - t0, e.function_start_tstamp - t0, color="0.8", lw=1)
            label = None if e.name in seen else self.op_label(e.name)
            seen.add(e.name)
            ax.hlines(
                i,
                e.function_start_tstamp - t0,
                e.function_end_tstamp - t0,
                color=colors.get(e.name, "k"),
                lw=2,
                label=label,
            )
        ax.set_xlim(0, max(end_tstamp - t0, 1e-3))
        ax.set_xlabel("seconds since the computation started")
        ax.set_ylabel("task (in submission order)")
        ax.set_title(
            f"{len(events)} tasks of {self.plan.num_ops} operations "
            "(grey: waiting for a worker or memory; colour: running)"
        )
        if seen:
            ax.legend(loc="upper left", fontsize="small")
