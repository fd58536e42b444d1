"""Live Jupyter widgets of a running computation, at Cubed's module path.

* :class:`LivePlanViewer`: the plan's operations, each a progress bar that fills
  as its tasks end (blue while running, green when done).
* :class:`LiveMemoryViewer`: per operation, its projected memory per task, the
  most memory measured after one of its tasks and the utilisation, against
  ``allowed_mem``.
* :class:`LiveTimelineViewer`: per operation, when its first task was created,
  its first function started, its last function ended and its tasks' results
  arrived, in seconds since the first task.

They are callbacks (``compute(callbacks=[LivePlanViewer()])`` or ``with
LivePlanViewer():``) built with ipywidgets (``pip install
'cubego[diagnostics]'``), shown in the notebook cell that starts the
computation; outside a notebook they are not displayed, but their ``widget``
(and the callback's records) follow the computation all the same. Cubed draws
the same information with anywidget and JavaScript; cubego's widgets are plain
ipywidgets (progress bars and HTML tables).
"""

from cubego.diagnostics.widgets.memory import LiveMemoryViewer
from cubego.diagnostics.widgets.plan import LivePlanViewer
from cubego.diagnostics.widgets.timeline import LiveTimelineViewer

__all__ = ["LiveMemoryViewer", "LivePlanViewer", "LiveTimelineViewer"]
