"""Diagnostics: callbacks that show, record and check a running computation.

* :class:`ProgressBar` (tqdm): one progress row per operation, e.g. ``op-003 add 4/4``;
  ``cubego.diagnostics.rich.RichProgressBar`` is Cubed's rich display of the same.
* :class:`HistoryCallback`: CSV files of the plan, every task and per-operation
  memory statistics under ``history/<compute_id>/``.
* :class:`TimelineVisualizationCallback`, :class:`MemoryVisualizationCallback`
  (matplotlib): ``timeline.svg`` and ``memory.svg`` (or ``.png``) there too.
* :class:`MemoryWarningCallback`: warns when measured memory passed the budget.
* ``cubego.diagnostics.widgets``: ``LivePlanViewer``, ``LiveMemoryViewer`` and
  ``LiveTimelineViewer``, live Jupyter widgets (ipywidgets), at Cubed's module path.
* ``cubego.diagnostics.memray.MemrayCallback``: a memray trace of each operation's
  first task and its statistics, at Cubed's module path.
* ``cubego.diagnostics.cytoscape``: the plan as an ipycytoscape widget, what
  ``visualize(engine="cytoscape")`` returns.

The optional dependencies come with ``pip install 'cubego[diagnostics]'``; they
are imported when a callback is created, never by ``import cubego``.

>>> from cubego.diagnostics import ProgressBar
>>> x.compute(callbacks=[ProgressBar()])  # doctest: +SKIP
"""

from cubego.diagnostics.history import HistoryCallback
from cubego.diagnostics.mem_warn import MemoryWarningCallback
from cubego.diagnostics.memory import MemoryVisualizationCallback
from cubego.diagnostics.progress import ProgressBar, TqdmProgressBar
from cubego.diagnostics.timeline import TimelineVisualizationCallback

__all__ = [
    "HistoryCallback",
    "MemoryVisualizationCallback",
    "MemoryWarningCallback",
    "ProgressBar",
    "TimelineVisualizationCallback",
    "TqdmProgressBar",
]
