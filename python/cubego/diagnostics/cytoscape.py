"""The plan as an interactive ipycytoscape graph: ``visualize(engine="cytoscape")``.

Operations are lavender boxes labelled with their name, function, number of
tasks and projected memory (red when over ``allowed_mem``); arrays are ellipses
labelled with their name, shape, dtype and chunk shape: mint when stored,
grey and dashed when virtual (generated where they are read), with a thick
border when they are outputs. Edges run from each input array to the operation
reading it (one per read) and from an operation to the array it writes, as in
``FinalizedPlan.dag``; the layout is dagre's, top to bottom by default.
"""

from __future__ import annotations

from typing import Any

from cubego.diagnostics._optional import require

__all__ = ["plan_elements", "plan_widget"]

LAVENDER = "#dcbeff"
MINT = "#aaffc3"
GREY = "#dddddd"
RED = "#ff8080"
BLACK = "#000000"
BEIGE = "#fffac8"


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def plan_elements(plan: Any) -> dict[str, list[dict]]:
    """Cytoscape's ``{"nodes": [...], "edges": [...]}`` of *plan* (a ``FinalizedPlan``)."""
    nodes: list[dict] = []
    dag = plan.dag
    for name, d in dag.nodes(data=True):
        if d["type"] == "op":
            op = d["primitive_op"]
            over = op.exceeds_memory
            label = (
                f"{name}\n{op.func}\ntasks: {op.num_tasks}\n"
                f"projected memory: {_mb(op.projected_mem)}"
            )
            data = {
                "type": "op",
                "fillcolor": RED if over else LAVENDER,
                "linecolor": BLACK,
                "borderstyle": "solid",
                "borderwidth": 2,
                "shape": "round-rectangle",
                "tooltip": (
                    f"{op.kind} {op.func}: {op.num_tasks} tasks, projected memory "
                    f"{_mb(op.projected_mem)} of allowed {_mb(op.allowed_mem)}"
                ),
            }
        else:
            a = d["target"]
            virtual = a.role == "virtual"
            chunks = str(a.chunksize)
            label = f"{name}\nshape: {a.shape} {a.dtype}\nchunks: {chunks}"
            data = {
                "type": "array",
                "role": a.role,
                "fillcolor": GREY if virtual else MINT,
                "linecolor": BLACK,
                "borderstyle": "dashed" if virtual else "solid",
                "borderwidth": 4 if a.role == "output" else 2,
                "shape": "ellipse",
                "tooltip": f"{a.role} array {name}: shape {a.shape}, {a.dtype}, chunks {chunks}",
            }
        nodes.append({"data": {"id": name, "label": label, **data}})
    edges = [
        {"data": {"id": f"{source}->{target}#{key}", "source": source, "target": target}}
        for source, target, key in dag.edges(keys=True)
    ]
    return {"nodes": nodes, "edges": edges}


STYLE = [
    {
        "selector": "node",
        "style": {
            "font-family": "helvetica",
            "font-size": "12",
            "color": "black",
            "label": "data(label)",
            "text-wrap": "wrap",
            "text-valign": "center",
            "text-halign": "center",
            "shape": "data(shape)",
            "background-color": "data(fillcolor)",
            "border-color": "data(linecolor)",
            "border-style": "data(borderstyle)",
            "border-width": "data(borderwidth)",
            "width": "label",
            "height": "label",
            "padding": "10px",
        },
    },
    {
        "selector": "edge",
        "style": {
            "width": 2,
            "line-color": BLACK,
            "target-arrow-shape": "triangle",
            "target-arrow-color": BLACK,
            "curve-style": "bezier",
        },
    },
    {"selector": "node:selected", "style": {"underlay-color": BEIGE, "underlay-opacity": 0.5}},
]


def plan_widget(plan: Any, rankdir: str = "TB") -> Any:
    """An ``ipycytoscape.CytoscapeWidget`` drawing *plan*; *rankdir* as Graphviz's.

    Raises
    ------
    ImportError
        If ipycytoscape is not installed (``pip install ipycytoscape``).
    """
    ipycytoscape = require("ipycytoscape", "cytoscape")
    widget = ipycytoscape.CytoscapeWidget()
    widget.graph.add_graph_from_json(plan_elements(plan), directed=True, multiple_edges=True)
    widget.set_style(STYLE)
    widget.set_layout(name="dagre", rankDir=rankdir, rankSep=36, nodeDimensionsIncludeLabels=True)
    widget.set_tooltip_source("tooltip")
    return widget
