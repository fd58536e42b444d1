"""``visualize``: draw the plan of arrays as a graph (Graphviz)."""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

from ._compute import FinalizedPlan, plan_info
from .array import Array

__all__ = ["visualize"]

_IMAGE_FORMATS = ("svg", "png", "pdf", "jpg", "jpeg", "gif")


def visualize(
    *arrays: Array,
    filename: str | os.PathLike = "cubego",
    format: str | None = None,
    optimize_graph: bool = True,
    show_hidden: bool = False,
    engine: str | None = None,
    **fusion: Any,
) -> Any:
    """Write the plan that computing *arrays* would run as a graph.

    Operations are boxes labelled with their function, number of tasks and projected
    memory, filled red when over ``allowed_mem``; arrays are ellipses, dashed when
    virtual (generated where they are read, never stored) and bold when outputs.

    The graph is always written as Graphviz DOT text to ``<filename>.dot``; when the
    ``dot`` program is installed it is also rendered to ``<filename>.<format>``.

    Parameters
    ----------
    *arrays : Array
    filename : str or os.PathLike, default "cubego"
        Path without extension.
    format : str, optional
        ``"svg"`` (default), ``"png"``, ``"pdf"``, or ``"dot"`` for the DOT text only.
    optimize_graph : bool, default True
        Show the fused plan that ``compute`` runs.
    show_hidden : bool, default False
        Accepted for Cubed compatibility; cubego's plans have no hidden operations.
    engine : {None, "graphviz"}
        Only Graphviz is supported.
    **fusion
        The fusion bounds ``max_total_source_arrays`` and ``max_total_num_input_blocks``,
        as for ``compute``.

    Returns
    -------
    IPython.display.SVG or Image, or str
        The rendered image for a notebook when IPython is installed, else the path of
        the file written (the image, or the DOT file without ``dot``).
    """
    if engine not in (None, "graphviz"):
        raise NotImplementedError(f"visualize: engine {engine!r} is not supported; use 'graphviz'")
    fmt = (format or "svg").lower().lstrip(".")
    if fmt != "dot" and fmt not in _IMAGE_FORMATS:
        raise ValueError(f"visualize: unsupported format {format!r}; use svg, png, pdf or dot")
    info = plan_info(*arrays, optimize_graph=optimize_graph, dot=True, **fusion)
    finalized = FinalizedPlan(info)
    if finalized.exceeds_memory:
        names = ", ".join(op.name for op in finalized.ops_exceeding_memory)
        warnings.warn(
            f"the projected memory of {names} exceeds allowed_mem "
            f"({finalized.allowed_mem} bytes); computing this plan will fail",
            UserWarning,
            stacklevel=2,
        )
    base = os.fspath(filename)
    dot_path = Path(base + ".dot")
    dot_path.write_text(info["dot"], encoding="utf-8")
    if fmt == "dot":
        return str(dot_path)
    dot = shutil.which("dot")
    if dot is None:
        if format is not None:
            warnings.warn(
                f"visualize: Graphviz's `dot` program was not found, so only {dot_path} was "
                f"written, not a {fmt} image",
                UserWarning,
                stacklevel=2,
            )
        return str(dot_path)
    image = Path(f"{base}.{fmt}")
    proc = subprocess.run(
        [dot, f"-T{fmt}", "-o", str(image), str(dot_path)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"visualize: dot failed: {proc.stderr.strip()}")
    return _display(image, fmt)


def _display(image: Path, fmt: str) -> Any:
    try:
        from IPython.display import SVG, Image
    except ImportError:
        return str(image)
    return SVG(filename=str(image)) if fmt == "svg" else Image(filename=str(image))
