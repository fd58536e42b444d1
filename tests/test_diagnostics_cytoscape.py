"""visualize(engine="cytoscape"): the plan as an ipycytoscape widget, as Cubed's."""

from __future__ import annotations

import ipycytoscape  # the diagnostics extra: a missing ipycytoscape fails these tests
import numpy as np
import pytest

import cubego


def _plan(spec):
    a = cubego.asarray(np.arange(16.0).reshape(4, 4), chunks=2, spec=spec)
    b = cubego.ones((4, 4), chunks=2, spec=spec)  # virtual: generated where read
    c = cubego.sum(a + b, axis=0)
    return c


def _nodes(widget):
    return {n.data["id"]: n.data for n in widget.graph.nodes}


def test_widget_has_the_plans_nodes_edges_and_labels(tmp_path, spec):
    c = _plan(spec)
    plan = c.plan()
    widget = cubego.visualize(c, filename=tmp_path / "plan", engine="cytoscape")
    assert isinstance(widget, ipycytoscape.CytoscapeWidget)
    nodes = _nodes(widget)
    dag = plan.dag
    assert set(nodes) == set(dag.nodes)
    assert len(widget.graph.edges) == dag.number_of_edges()
    assert sorted((e.data["source"], e.data["target"]) for e in widget.graph.edges) == sorted(
        (u, v) for u, v, _ in dag.edges(keys=True)
    )
    for op in plan.ops:
        label = nodes[op.name]["label"]
        assert label.splitlines()[:3] == [op.name, op.func, f"tasks: {op.num_tasks}"]
        assert f"{op.projected_mem / 1e6:.1f} MB" in label
        assert nodes[op.name]["shape"] == "round-rectangle"
    for a in plan.arrays:
        data = nodes[a.name]
        assert data["label"].splitlines()[0] == a.name
        assert f"chunks: {a.chunksize}" in data["label"]
        assert data["role"] == a.role
        assert data["borderstyle"] == ("dashed" if a.role == "virtual" else "solid")
    assert "virtual" in {a.role for a in plan.arrays}
    assert widget.cytoscape_layout["name"] == "dagre"
    assert widget.cytoscape_layout["rankDir"] == "TB"
    # an HTML page embedding the widget, as Cubed writes
    html = (tmp_path / "plan.html").read_text()
    assert "cytoscape" in html.lower() and plan.ops[0].name in html


def test_plan_and_array_visualize_take_the_engine(tmp_path, spec):
    c = _plan(spec)
    from_plan = c.plan().visualize(filename=None, engine="cytoscape", rankdir="LR")
    from_array = c.visualize(filename=tmp_path / "a", engine="cytoscape")
    assert set(_nodes(from_plan)) == set(_nodes(from_array))
    assert from_plan.cytoscape_layout["rankDir"] == "LR"
    assert not list(tmp_path.glob("*.dot"))


def test_unoptimized_plan_has_more_operations(spec):
    c = _plan(spec)
    fused = cubego.visualize(c, filename=None, engine="cytoscape")
    unfused = cubego.visualize(c, filename=None, engine="cytoscape", optimize_graph=False)
    count = lambda w: sum(n.data["type"] == "op" for n in w.graph.nodes)  # noqa: E731
    assert count(unfused) > count(fused) >= 1


def test_over_memory_operation_is_red_and_warned(tmp_path):
    spec = cubego.Spec(allowed_mem="1kB")
    y = cubego.ones((100, 100), chunks=50, spec=spec) + 1
    with pytest.warns(UserWarning, match="exceed allowed memory"):
        widget = cubego.visualize(y, filename=None, engine="cytoscape")
    ops = [n.data for n in widget.graph.nodes if n.data["type"] == "op"]
    assert ops and all(d["fillcolor"] == "#ff8080" for d in ops)
