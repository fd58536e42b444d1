"""``sliding_window_view``, which xarray's ``rolling`` calls on the array's namespace.

The implementation is :func:`cubego.primitive.window.sliding_window_view`: a
copy of the windows whose blocks along the window's axis are cut so that each
output block is about the size of an input block.
"""

from __future__ import annotations

from cubego.primitive.window import sliding_window_view

__all__ = ["sliding_window_view"]
