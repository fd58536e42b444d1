"""cubego.plan and cubego.visualize: plan statistics and the plan as a graph."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import cubego
from cubego import FinalizedPlan

from helpers import make_data


def test_elementwise_chain_fuses(spec):
    x = cubego.random.random((100, 100), chunks=10, spec=spec)
    y = (x + 1) * 2
    fused = cubego.plan(y)
    assert isinstance(fused, FinalizedPlan)
    assert (fused.num_ops, fused.num_tasks, fused.num_stages) == (1, 100, 1)
    assert fused.num_intermediate_arrays == 0
    assert fused.total_nbytes_read == 0  # x is virtual: generated, never read
    assert fused.total_nbytes_written == 80_000
    (op,) = fused.ops
    assert op.func == "add+multiply" and op.outputs == (y.name,) and op.inputs == (x.name,)
    assert fused.max_projected_mem == op.projected_mem
    assert fused.allowed_mem == spec.allowed_mem and fused.reserved_mem == spec.reserved_mem
    assert not fused.exceeds_memory and fused.ops_exceeding_memory == []
    assert fused.array_role(x.name) == "virtual" and fused.array_role(y.name) == "output"

    unfused = y.plan(optimize_graph=False)
    assert (unfused.num_ops, unfused.num_tasks, unfused.num_stages) == (2, 200, 2)
    assert unfused.num_intermediate_arrays == 1
    assert unfused.total_nbytes_read == 80_000
    assert unfused.total_nbytes_written == 160_000
    assert [op.stage for op in unfused.ops] == [0, 1]


def _stored(spec, tmp_path, n, shape=(40, 40), chunks=10):
    """*n* stored (non-virtual) arrays with numpy copies."""
    rng = np.random.default_rng(7)
    xs, ns = [], []
    for i in range(n):
        a = rng.random(shape)
        path = tmp_path / f"in{i}.zarr"
        cubego.to_zarr(cubego.asarray(a, chunks=chunks, spec=spec), str(path))
        xs.append(cubego.from_zarr(str(path), spec=spec))
        ns.append(a)
    return xs, ns


def test_fusion_bounds_source_arrays(spec, tmp_path):
    import functools

    xs, ns = _stored(spec, tmp_path, 5)
    total = xs[0] + xs[1] + xs[2] + xs[3] + xs[4]
    # Cubed's default: a fused op reads at most 4 stored arrays.
    assert cubego.plan(total).num_ops == 2
    assert cubego.plan(total, max_total_source_arrays=5).num_ops == 1
    assert cubego.plan(total, max_total_source_arrays=0).num_ops == 1  # no bound

    from cubego.core.optimization import multiple_inputs_optimize_dag

    partial = functools.partial(multiple_inputs_optimize_dag, max_total_source_arrays=8)
    assert cubego.plan(total, optimize_function=partial).num_ops == 1
    (got,) = cubego.compute(total, max_total_source_arrays=8)
    np.testing.assert_allclose(got, sum(ns))

    def rewrite(dag, array_names=None):  # an optimizer cubego's engine cannot follow
        out = dag.copy()
        out.remove_node(xs[0].name)
        return out

    with pytest.raises(NotImplementedError, match="optimize_function"):
        cubego.plan(total, optimize_function=rewrite)
    with pytest.raises(ValueError, match="max_total_source_arrays"):
        cubego.plan(total, max_total_source_arrays=-1)


def test_fusion_bounds_input_blocks(spec, tmp_path):
    (x, y), (nx, ny) = _stored(spec, tmp_path, 2)
    # The difference is chunked like x[1:, 1:] (9, 10, 10, 10): a task reads one
    # block of x and, misaligned by one element along each axis, up to 2 × 2 of y.
    d = x[1:, 1:] - y[:-1, :-1]
    assert cubego.plan(d).num_ops == 1
    assert cubego.plan(d, max_total_num_input_blocks=5).num_ops == 1
    few = cubego.plan(d, max_total_num_input_blocks=4)
    assert few.num_ops > 1
    (got,) = cubego.compute(d, max_total_num_input_blocks=4)
    np.testing.assert_array_equal(got, nx[1:, 1:] - ny[:-1, :-1])


def test_reduction_rounds(spec):
    a = make_data((64, 8), "float64")
    x = cubego.asarray(a, chunks=(4, 8), spec=spec)  # 16 blocks along axis 0
    y = cubego.sum(x * 2, axis=0, split_every=4)  # 16 -> 4 -> 1
    p = y.plan()
    assert (p.num_ops, p.num_tasks, p.num_stages) == (2, 5, 2)
    assert p.num_intermediate_arrays == 1
    assert [op.num_tasks for op in p.ops] == [4, 1]
    assert p.ops[0].func == "multiply+sum"
    # and it computes what it plans
    np.testing.assert_allclose(y.compute(), np.sum(a * 2, axis=0))


def test_independent_arrays_share_stages(spec):
    x = cubego.ones((8, 8), chunks=4, spec=spec)
    y = cubego.ones((8, 8), chunks=4, spec=spec)
    p = cubego.plan(cubego.sum(x, axis=0), cubego.sum(y, axis=0), optimize_graph=False)
    assert p.num_ops == 2 and p.num_stages == 1
    assert [op.stage for op in p.ops] == [0, 0]
    assert p.num_intermediate_arrays == 0  # both are requested outputs


def test_ops_exceeding_memory_worst_first(tmp_path):
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="2MB")
    small = cubego.ones((100,), chunks=10, spec=spec) + 1
    big = cubego.ones((1_000_000,), chunks=200_000, spec=spec) + 1
    bigger = cubego.ones((1_000_000,), chunks=500_000, spec=spec) + 1
    p = cubego.plan(small, big, bigger)
    assert p.exceeds_memory
    assert [op.outputs[0] for op in p.ops_exceeding_memory] == [bigger.name, big.name]
    assert p.ops_exceeding_memory[0].projected_mem > p.ops_exceeding_memory[1].projected_mem
    assert p.max_projected_mem == p.ops_exceeding_memory[0].projected_mem
    with pytest.raises(ValueError, match="allowed_mem"):
        p.validate()
    with pytest.raises(ValueError, match="allowed_mem"):
        cubego.compute(small, big, bigger)


def test_plan_of_arrays_with_different_specs(tmp_path):
    x = cubego.ones((3,), spec=cubego.Spec(work_dir=tmp_path, allowed_mem="100MB"))
    y = cubego.ones((3,), spec=cubego.Spec(work_dir=tmp_path, allowed_mem="200MB"))
    with pytest.raises(ValueError, match="spec"):
        cubego.plan(x, y)


def test_visualize_writes_dot(tmp_path, spec):
    x = cubego.random.random((20, 20), chunks=10, spec=spec)
    y = cubego.sum(x + 1, axis=0)
    result = cubego.visualize(y, filename=tmp_path / "plan", format="dot")
    assert result == str(tmp_path / "plan.dot")
    dot = (tmp_path / "plan.dot").read_text()
    assert dot.startswith("digraph cubego {")
    p = y.plan()
    for op in p.ops:
        assert f'"{op.name}" [shape=box' in dot
        assert f"tasks: {op.num_tasks}" in dot
    assert f'"{x.name}" [shape=ellipse, style=dashed' in dot  # virtual
    assert "projected memory:" in dot and "red" not in dot


def test_visualize_marks_ops_over_budget(tmp_path):
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="2MB")
    y = cubego.ones((1_000_000,), chunks=500_000, spec=spec) + 1
    with pytest.warns(UserWarning, match="exceed allowed memory.*exceeds allowed_mem"):
        y.visualize(filename=tmp_path / "over", format="dot")
    assert "color=red" in (tmp_path / "over.dot").read_text()


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
@pytest.mark.parametrize("fmt", [None, "png"])
def test_visualize_renders_with_graphviz(tmp_path, spec, fmt):
    y = cubego.mean(cubego.ones((10, 10), chunks=5, spec=spec) * 3, axis=1)
    cubego.visualize(y, filename=tmp_path / "g", format=fmt)
    image = tmp_path / f"g.{fmt or 'svg'}"
    assert (tmp_path / "g.dot").is_file()
    data = image.read_bytes()
    assert b"<svg" in data[:500] if fmt is None else data[:4] == b"\x89PNG"


def test_visualize_without_graphviz(tmp_path, spec, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    y = cubego.ones((4,), chunks=2, spec=spec) + 1
    assert cubego.visualize(y, filename=tmp_path / "d") == str(tmp_path / "d.dot")
    with pytest.warns(UserWarning, match="dot"):
        cubego.visualize(y, filename=tmp_path / "e", format="svg")
    assert (tmp_path / "e.dot").is_file() and not (tmp_path / "e.svg").exists()


def test_visualize_rejects_unknown_format_and_engine(tmp_path, spec):
    y = cubego.ones((4,), chunks=2, spec=spec) + 1
    with pytest.raises(ValueError, match="format"):
        cubego.visualize(y, filename=tmp_path / "x", format="bmp-ish")
    with pytest.raises(ValueError, match="engine 'bokeh'"):
        cubego.visualize(y, filename=tmp_path / "x", engine="bokeh")
    with pytest.raises(ValueError, match="html"):
        cubego.visualize(y, filename=tmp_path / "x", engine="cytoscape", format="svg")
    with pytest.raises(ValueError, match="rankdir"):
        cubego.visualize(y, filename=tmp_path / "x", engine="cytoscape", rankdir="up")
