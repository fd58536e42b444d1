"""``ProgressBar``: one tqdm progress bar per operation."""

from __future__ import annotations

from typing import Any

from cubego.diagnostics._optional import require
from cubego.runtime.types import Callback, ComputeEndEvent, ComputeStartEvent, TaskEndEvent

__all__ = ["ProgressBar", "TqdmProgressBar"]


class TqdmProgressBar(Callback):
    """Show a tqdm progress bar per operation: ``op-003 add: 100%|███| 4/4``.

    Positional and keyword arguments go to every ``tqdm.tqdm`` bar (e.g.
    ``file=sys.stdout``, ``leave=False``, ``mininterval=1``).

    Raises
    ------
    ImportError
        If tqdm is not installed (``pip install 'cubego[diagnostics]'``).
    """

    def __init__(self, *args: Any, **kwargs: Any):
        self._tqdm = require("tqdm", type(self).__name__).tqdm
        self.args = args
        self.kwargs = kwargs
        self.pbars: dict[str, Any] = {}

    def on_compute_start(self, event: ComputeStartEvent) -> None:
        self.pbars = {}
        for i, op in enumerate(event.plan.ops):
            self.pbars[op.name] = self._tqdm(
                *self.args,
                desc=f"{op.name} {op.func}",
                total=op.num_tasks,
                position=i,
                **self.kwargs,
            )

    def on_task_end(self, event: TaskEndEvent) -> None:
        pbar = self.pbars.get(event.name)
        if pbar is not None:
            pbar.update(event.num_tasks)

    def on_compute_end(self, event: ComputeEndEvent) -> None:
        for pbar in self.pbars.values():
            pbar.close()


ProgressBar = TqdmProgressBar
