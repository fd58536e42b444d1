"""Cubed drop-in (issue #18): linalg in bounded memory, Spec, plans, optimizers, diagnostics.

Each test states Cubed's documented behaviour (Cubed 0.27/0.28) and checks cubego
against it, with numpy as the reference for numbers.
"""

from __future__ import annotations

import functools
import json
import os

import networkx as nx
import numpy as np
import pytest
import zarr

import cubego
from cubego.core.optimization import multiple_inputs_optimize_dag, simple_optimize_dag

# ----------------------------------------------------------------------------- TSQR


def _tall(shape=(64, 2), dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _assert_plan_fits(*arrays):
    p = cubego.plan(*arrays)
    assert not p.exceeds_memory, [(op.func, op.projected_mem) for op in p.ops_exceeding_memory]
    assert p.max_projected_mem <= p.allowed_mem
    return p


def _whole_matrix_refused(x):
    """True when the whole-matrix QR of *x* would not fit one task (so TSQR is needed)."""
    one_chunk = x.rechunk(x.shape)
    try:
        cubego.linalg.qr(one_chunk)
    except ValueError:
        return True
    return False


# A 64×2 float64 matrix chunked (8, 2): every block is 128 bytes. The budgets run from
# where one factorization of a row block fits (about 2 kB with LAPACK's work arrays;
# Cubed 0.27 succeeds from 1.5 kB, and both refuse 1 kB) to where the whole matrix
# (about 8 kB) fits in one task.
TSQR_BUDGETS = [2_000, 3_000, 4_000, 8_000, 16_000, 32_000]
# The SVD of the small R factor needs LAPACK's work arrays as well (about 3 kB).
SVD_BUDGETS = [4_000, 8_000, 16_000, 32_000]


@pytest.mark.parametrize("allowed", TSQR_BUDGETS)
def test_qr_tall_and_skinny_in_bounded_memory(tmp_path, allowed):
    a = _tall()
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem=allowed)
    x = cubego.asarray(a, chunks=(8, 2), spec=spec)
    q, r = cubego.linalg.qr(x)
    assert q.shape == (64, 2) and r.shape == (2, 2)
    if _whole_matrix_refused(x):  # TSQR: Q keeps the row blocks
        assert q.chunks == x.chunks
    _assert_plan_fits(q, r)
    qv, rv = cubego.compute(q, r)
    np.testing.assert_allclose(qv @ rv, a, atol=1e-12)
    np.testing.assert_allclose(qv.T @ qv, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(rv, np.triu(rv), atol=1e-12)
    # R is unique up to the signs of its rows.
    np.testing.assert_allclose(np.abs(rv), np.abs(np.linalg.qr(a).R), atol=1e-12)


def test_tsqr_is_used_below_the_whole_matrix(tmp_path):
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem=4_000)
    x = cubego.asarray(_tall(), chunks=(8, 2), spec=spec)
    assert _whole_matrix_refused(x)
    q, _ = cubego.linalg.qr(x)
    # A task per row block for the first step and for Q: every task holds one block.
    assert max(op.num_tasks for op in cubego.plan(q).ops) >= 8


@pytest.mark.parametrize("allowed", SVD_BUDGETS)
def test_svd_tall_and_skinny_in_bounded_memory(tmp_path, allowed):
    a = _tall(seed=1)
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem=allowed)
    x = cubego.asarray(a, chunks=(8, 2), spec=spec)
    u, s, vh = cubego.linalg.svd(x, full_matrices=False)
    _assert_plan_fits(u, s, vh)
    uv, sv, vhv = cubego.compute(u, s, vh)
    np.testing.assert_allclose(sv, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose(uv.T @ uv, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(vhv @ vhv.T, np.eye(2), atol=1e-12)
    np.testing.assert_allclose((uv * sv) @ vhv, a, atol=1e-12)
    np.testing.assert_allclose(cubego.linalg.svdvals(x).compute(), np.linalg.svdvals(a), rtol=1e-12)


def test_svd_short_and_wide_by_its_transpose(tmp_path):
    a = _tall(seed=2).T  # 2×64 in (2, 8) blocks
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem=4_000)
    x = cubego.asarray(a, chunks=(2, 8), spec=spec)
    u, s, vh = cubego.linalg.svd(x, full_matrices=False)
    assert vh.chunks == x.chunks
    _assert_plan_fits(u, s, vh)
    uv, sv, vhv = cubego.compute(u, s, vh)
    np.testing.assert_allclose(sv, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose(vhv @ vhv.T, np.eye(2), atol=1e-12)
    np.testing.assert_allclose((uv * sv) @ vhv, a, atol=1e-12)


def test_tsqr_recurses_when_the_stacked_factors_do_not_fit(tmp_path):
    # 256 row blocks: their stacked 4×4 factors (32 kB) do not fit one task of 40 kB,
    # so the factors are factorized by TSQR again, level after level.
    a = _tall((4096, 4), seed=3)
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem=40_000)
    x = cubego.from_array(
        a, chunks=(16, 4), spec=spec
    )  # larger than allowed_mem: asarray refuses it, as Cubed
    q, r = cubego.linalg.qr(x)
    p = _assert_plan_fits(q, r)
    assert sum(op.func == "qr" for op in p.ops) >= 4  # two levels of factors, and Q
    qv, rv = cubego.compute(q, r)
    np.testing.assert_allclose(qv @ rv, a, atol=1e-10)
    np.testing.assert_allclose(qv.T @ qv, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(np.abs(rv), np.abs(np.linalg.qr(a).R), atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_tsqr_dtypes(tmp_path, dtype):
    a = _tall((48, 3), dtype=dtype, seed=4)
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem=6_000)
    x = cubego.asarray(a, chunks=(5, 3), spec=spec)  # irregular: the last block has 3 rows
    assert _whole_matrix_refused(x)
    q, r = cubego.linalg.qr(x)
    assert q.dtype == dtype and r.dtype == dtype
    qv, rv = cubego.compute(q, r)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(qv @ rv, a, atol=tol * 10)
    np.testing.assert_allclose(qv.conj().T @ qv, np.eye(3), atol=tol)
    np.testing.assert_allclose(np.abs(rv), np.abs(np.linalg.qr(a).R), atol=tol * 10)


def test_tsqr_row_blocks_shorter_than_the_matrix_is_wide(tmp_path):
    # Blocks of 2 rows of a 5-column matrix: each block's factors are zero-padded.
    a = _tall((40, 5), seed=5)
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem=8_000)
    x = cubego.asarray(a, chunks=(2, 5), spec=spec)
    assert _whole_matrix_refused(x)
    q, r = cubego.linalg.qr(x)
    qv, rv = cubego.compute(q, r)
    np.testing.assert_allclose(qv @ rv, a, atol=1e-12)
    np.testing.assert_allclose(qv.T @ qv, np.eye(5), atol=1e-12)


def test_tsqr_needs_a_single_column_chunk(tmp_path):
    # As Cubed: "qr only supports tall-and-skinny (single column chunk) arrays".
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem=4_000)
    x = cubego.asarray(_tall((64, 4)), chunks=(8, 2), spec=spec)
    with pytest.raises(ValueError, match="single column chunk"):
        cubego.linalg.qr(x)
    with pytest.raises(ValueError, match="mode='reduced'"):
        cubego.linalg.qr(cubego.asarray(_tall(), chunks=(8, 2), spec=spec), mode="complete")
    with pytest.raises(ValueError, match="full_matrices=False"):
        cubego.linalg.svd(cubego.asarray(_tall(), chunks=(8, 2), spec=spec))


# ----------------------------------------------------------------------------- Spec


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (500, 500),
        (100_000, 100_000),
        (50.0, 50),
        ("500B", 500),
        ("1kB", 1000),
        ("1MB", 1000**2),
        ("1GB", 1000**3),
        ("1TB", 1000**4),
        ("1PB", 1000**5),
        ("100_000", 100_000),
        ("1.2MB", 1_200_000),
        ("1 MB", 1000**2),
        ("1.2 MB", 1_200_000),
        ("1e6", 1_000_000),
        ("1KiB", 1024),  # cubego's extension: binary units
    ],
)
def test_allowed_mem_as_cubed(value, expected):
    assert cubego.Spec(allowed_mem=value).allowed_mem == expected
    assert cubego.Spec(reserved_mem=value, allowed_mem=10**16).reserved_mem == expected


@pytest.mark.parametrize("value", ["1EB", "1kb", "invalid", -512, "kB", "1.1B", "1 mb"])
def test_allowed_mem_refused_as_cubed(value):
    with pytest.raises(ValueError, match="Invalid value"):
        cubego.Spec(allowed_mem=value)


def _intermediate_codecs(spec, root):
    """The codecs of the Zarr arrays under *root* while a task reads an intermediate.

    ``x + 1`` is stored (no fusion) and a Python chunk function reading it looks at
    the intermediates written so far (``intermediate_mem=0``: all in the work dir).
    """
    found: dict[str, list] = {}

    def look(block):
        for dirpath, _, files in os.walk(root):
            if "zarr.json" in files:
                with open(os.path.join(dirpath, "zarr.json")) as f:
                    meta = json.load(f)
                if meta.get("node_type") == "array":
                    found[dirpath] = meta["codecs"]
        return block

    a = np.arange(64.0).reshape(8, 8)
    x = cubego.asarray(a, chunks=4, spec=spec)
    y = cubego.map_blocks(look, x + 1, dtype=x.dtype)
    np.testing.assert_allclose(y.compute(optimize_graph=False, intermediate_mem=0), a + 1)
    assert found, "no intermediate was written"
    return found


def test_zarr_compressor_codec_configuration(tmp_path):
    codec = {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "shuffle"}}
    spec = cubego.Spec(work_dir=tmp_path, zarr_compressor=codec)
    assert spec.zarr_compressor == codec
    for codecs in _intermediate_codecs(spec, tmp_path).values():
        assert [c["name"] for c in codecs] == ["bytes", "blosc"]
        assert codecs[1]["configuration"]["cname"] == "zstd"
        assert codecs[1]["configuration"]["clevel"] == 3


def test_zarr_compressor_auto_and_none(tmp_path):
    # Cubed: "auto" is Zarr's default compressor (zstd for Zarr v3); None disables it.
    assert cubego.Spec(zarr_compressor="auto").zarr_compressor == "zstd"
    for compressor, names in (("auto", ["bytes", "zstd"]), (None, ["bytes"])):
        work = tmp_path / str(compressor)
        found = _intermediate_codecs(cubego.Spec(work_dir=work, zarr_compressor=compressor), work)
        assert all([c["name"] for c in v] == names for v in found.values())


def test_zarr_compressor_refused():
    with pytest.raises(ValueError, match="zarr_compressor"):
        cubego.Spec(zarr_compressor={"name": "lz77"})
    with pytest.raises(ValueError, match="zarr_compressor"):
        cubego.Spec(zarr_compressor="brotli")
    with pytest.raises(TypeError, match="configuration"):
        cubego.Spec(zarr_compressor={"name": "gzip", "configuration": 5})
    bad = cubego.Spec(zarr_compressor={"name": "gzip", "configuration": {"level": 99}})
    with pytest.raises(ValueError, match="zarr_compressor"):
        cubego.ones((4,), chunks=2, spec=bad)


@pytest.mark.parametrize("kind", ["path", "LocalStore"])
def test_intermediate_store_takes_precedence_over_work_dir(tmp_path, kind):
    where = tmp_path / "intermediates"
    store = str(where) if kind == "path" else zarr.storage.LocalStore(where)
    spec = cubego.Spec(work_dir=tmp_path / "work", intermediate_store=store)
    assert spec.intermediate_store is store
    found = _intermediate_codecs(spec, tmp_path)
    assert all(p.startswith(str(where)) for p in found)
    assert spec != cubego.Spec(work_dir=tmp_path / "work")


def test_intermediate_store_refused():
    with pytest.raises(TypeError, match="intermediate_store"):
        cubego.Spec(intermediate_store=zarr.storage.MemoryStore())


def test_arrays_with_different_specs(tmp_path):
    x = cubego.ones((3,), spec=cubego.Spec(work_dir=tmp_path, allowed_mem="100MB"))
    y = cubego.ones((3,), spec=cubego.Spec(work_dir=tmp_path, allowed_mem="200MB"))
    with pytest.raises(ValueError, match="Arrays must have same spec in single computation"):
        cubego.compute(x, y)


# ----------------------------------------------------------------------------- plans


def _stored(tmp_path, spec, n, shape=(8, 8), chunks=4):
    rng = np.random.default_rng(11)
    xs, ns = [], []
    for i in range(n):
        a = rng.random(shape)
        path = str(tmp_path / f"in{i}.zarr")
        cubego.to_zarr(cubego.asarray(a, chunks=chunks, spec=spec), path)
        xs.append(cubego.from_zarr(path, spec=spec))
        ns.append(a)
    return xs, ns


def test_finalized_plan_as_cubed(tmp_path, spec):
    (x, y), (a, b) = _stored(tmp_path, spec, 2)
    z = cubego.sum(x * 2 + y, axis=0)
    p = cubego.plan(z, optimize_graph=False)
    assert p.optimized is False and cubego.plan(z).optimized is True
    assert p.array_names == (z.name,)
    assert set(p.input_array_names) == {x.name, y.name}
    assert len(p.intermediate_array_names) == p.num_intermediate_arrays >= 2

    dag = p.dag
    assert isinstance(dag, nx.MultiDiGraph)
    ops = [n for n, d in dag.nodes(data=True) if d["type"] == "op"]
    arrays = [n for n, d in dag.nodes(data=True) if d["type"] == "array"]
    assert len(ops) == p.num_primitive_ops and len(arrays) == p.num_arrays
    assert sum(dag.nodes[n]["primitive_op"].num_tasks for n in ops) == p.num_tasks
    assert all(dag.nodes[n]["op_name"] in ("blockwise", "rechunk") for n in ops)
    assert nx.is_directed_acyclic_graph(dag)
    assert set(dag.predecessors(next(iter(dag.predecessors(z.name))))) <= set(arrays)
    assert {x.name, y.name} <= {n for n in arrays if dag.in_degree(n) == 0}

    # Cubed's statistics: inputs are read, intermediates written and read, outputs written.
    intermediate = [dag.nodes[n]["target"] for n in p.intermediate_array_names]
    assert p.total_input_narrays == 2 and p.total_input_nbytes == a.nbytes + b.nbytes
    assert p.total_input_nchunks == 8
    assert p.total_intermediate_narrays == len(intermediate)
    assert p.total_intermediate_nbytes == sum(t.nbytes for t in intermediate)
    assert p.total_output_narrays == 1 and p.total_output_nbytes == z.nbytes
    assert p.total_output_nchunks == 2
    assert p.total_narrays == 3 + len(intermediate)
    assert p.total_nbytes == p.total_input_nbytes + p.total_intermediate_nbytes + z.nbytes
    assert p.total_narrays_written == len(intermediate) + 1
    assert p.total_narrays_read == len(intermediate) + 2
    assert p.total_nchunks == p.total_input_nchunks + p.total_intermediate_nchunks + 2


class _Tasks(cubego.Callback):
    def __init__(self):
        self.tasks = 0

    def on_task_end(self, event):
        self.tasks += event.num_tasks


def test_finalized_plan_execute(tmp_path, spec):
    (x,), _ = _stored(tmp_path, spec, 1)
    p = cubego.plan(x * 3)
    counter = _Tasks()
    p.execute(callbacks=[counter])
    assert counter.tasks == p.num_tasks

    over = cubego.Spec(work_dir=tmp_path, allowed_mem="2MB")
    big = cubego.ones((1_000_000,), chunks=500_000, spec=over) + 1
    with pytest.raises(ValueError, match="exceeds allowed_mem"):
        cubego.plan(big).execute()


def test_finalized_plan_visualize(tmp_path, spec):
    y = cubego.sum(cubego.ones((8, 8), chunks=4, spec=spec) + 1, axis=0)
    p = cubego.plan(y)
    assert p.visualize(filename=tmp_path / "p", format="dot", rankdir="LR") == str(
        tmp_path / "p.dot"
    )
    dot = (tmp_path / "p.dot").read_text()
    assert "rankdir=LR;" in dot
    for op in p.ops:
        assert f'"{op.name}"' in dot


def test_ops_exceeding_memory_as_cubed(tmp_path):
    # Cubed: a list of (op_name, primitive_op), worst first, with the op's memory figures.
    over = cubego.Spec(work_dir=tmp_path, allowed_mem="2MB", reserved_mem="100kB")
    y = cubego.ones((1_000_000,), chunks=500_000, spec=over) + 1
    p = cubego.plan(y)
    name, op = p.ops_exceeding_memory[0]
    assert name == op.name and op in p.ops
    assert op.projected_mem > op.allowed_mem == 2_000_000 and op.reserved_mem == 100_000
    assert p.dag.nodes[name]["primitive_op"].projected_mem == op.projected_mem


def test_visualize_warns_as_cubed(tmp_path):
    over = cubego.Spec(work_dir=tmp_path, allowed_mem="2MB")
    y = cubego.ones((1_000_000,), chunks=500_000, spec=over) + 1
    with pytest.warns(UserWarning, match="exceed allowed memory"):
        cubego.visualize(y, filename=tmp_path / "v", format="dot")


# ----------------------------------------------------------------------------- optimizers


def test_optimize_functions(tmp_path, spec):
    (x, y), (a, b) = _stored(tmp_path, spec, 2)
    chain = -(x * 2)
    fan_in = x * 2 + y * 3
    tail = -(x * 2 + y * 3)  # a fan-in, then a single-input op
    arrays = {"chain": chain, "fan_in": fan_in, "tail": tail}
    expected = {"chain": -(a * 2), "fan_in": a * 2 + b * 3, "tail": -(a * 2 + b * 3)}
    unfused = {"chain": 2, "fan_in": 3, "tail": 4}
    assert {k: cubego.plan(z, optimize_graph=False).num_ops for k, z in arrays.items()} == unfused
    cases = [
        (None, {"chain": 1, "fan_in": 1, "tail": 1}),
        (multiple_inputs_optimize_dag, {"chain": 1, "fan_in": 1, "tail": 1}),
        # A fused operation may read one stored array: only the chain fuses.
        (
            functools.partial(multiple_inputs_optimize_dag, max_total_source_arrays=1),
            {"chain": 1, "fan_in": 3, "tail": 4},
        ),
        # Single-input operations absorb their producer: the tail's negation fuses
        # with the addition, which does not fuse with its two inputs.
        (simple_optimize_dag, {"chain": 1, "fan_in": 3, "tail": 3}),
        (lambda dag, array_names=None: dag, unfused),
    ]
    for fn, ops in cases:
        for k, z in arrays.items():
            p = cubego.plan(z, optimize_function=fn)
            assert p.num_ops == ops[k], (fn, k)
            assert p.optimized is (fn is None or ops is not unfused)
            (got,) = cubego.compute(z, optimize_function=fn)
            np.testing.assert_allclose(got, expected[k])
    # Called on a graph, Cubed's optimizers return a graph (here a marked copy).
    dag = cubego.plan(fan_in, optimize_graph=False).dag
    assert isinstance(simple_optimize_dag(dag, array_names=(fan_in.name,)), nx.MultiDiGraph)


def test_optimize_function_refusals(tmp_path, spec):
    (x,), _ = _stored(tmp_path, spec, 1)
    z = x + 1

    def rewrite(dag, array_names=None):
        out = dag.copy()
        out.add_node("extra", type="op")
        return out

    with pytest.raises(NotImplementedError, match="rewrote the plan's graph"):
        cubego.compute(z, optimize_function=rewrite)
    with pytest.raises(NotImplementedError, match="always_fuse"):
        cubego.plan(
            z,
            optimize_function=functools.partial(
                multiple_inputs_optimize_dag, always_fuse=["op-001"]
            ),
        )
    with pytest.raises(TypeError, match="callable"):
        cubego.plan(z, optimize_function="fast")
    with pytest.raises(NotImplementedError, match="compile_function"):
        cubego.compute(z, compile_function=lambda f: f)
    with pytest.raises(NotImplementedError, match="compile_function"):
        cubego.plan(z, compile_function=lambda f: f)


# ----------------------------------------------------------------------------- diagnostics


def test_live_widgets_follow_a_computation(tmp_path, spec):
    import ipywidgets

    from cubego.diagnostics.widgets import LiveMemoryViewer, LivePlanViewer, LiveTimelineViewer

    a = np.arange(64.0).reshape(8, 8)
    x = cubego.asarray(a, chunks=4, spec=spec)
    y = cubego.sum(x * 2, axis=0, split_every=2)
    p = cubego.plan(y)
    plan_viewer, memory_viewer, timeline_viewer = (
        LivePlanViewer(),
        LiveMemoryViewer(),
        LiveTimelineViewer(),
    )
    seen = {}

    class Dag(cubego.Callback):
        def on_compute_start(self, event):
            seen["dag"] = event.dag

    with memory_viewer:
        got = y.compute(callbacks=[plan_viewer, timeline_viewer, Dag()])
    np.testing.assert_allclose(got, (a * 2).sum(axis=0))
    assert isinstance(seen["dag"], nx.MultiDiGraph)

    # The plan viewer: a summary and one full, green progress bar per operation.
    box = plan_viewer.widget
    assert isinstance(box, ipywidgets.VBox)
    assert f"{p.num_tasks} tasks" in box.children[0].value
    assert [b.description for b in box.children[1:]] == [op.name for op in p.ops]
    for op in p.ops:
        bar = plan_viewer.bars[op.name]
        assert (bar.value, bar.max, bar.bar_style) == (op.num_tasks, op.num_tasks, "success")
    assert set(plan_viewer.progress.values()) == {1.0}

    # The memory viewer: every task counted, measured memory within the projection.
    assert isinstance(memory_viewer.widget, ipywidgets.HTML)
    for op in p.ops:
        row = memory_viewer.rows[op.name]
        assert row["tasks"] == op.num_tasks and row["projected_mem"] == op.projected_mem
        assert 0 < row["peak_allocated"] <= op.projected_mem
        assert row["peak_measured_mem"] > 0
        assert op.name in memory_viewer.widget.value

    # The timeline viewer: four times per task, in order, from the first task.
    values = timeline_viewer.values
    assert len(values) == 4 * p.num_tasks
    assert values[0] == {
        "name": values[0]["name"],
        "task_index": 0,
        "elapsed_time": 0,
        "event_type": "task create",
    }
    for i in range(p.num_tasks):
        times = [v["elapsed_time"] for v in values if v["task_index"] == i]
        assert times == sorted(times)
    assert all(op.name in timeline_viewer.widget.value for op in p.ops)

    # Given a widget, a viewer draws into it.
    box = ipywidgets.VBox()
    again = LivePlanViewer(box)
    y.compute(callbacks=[again])
    assert again.widget is box and len(box.children) == len(p.ops) + 1


def test_memory_viewer_warns_without_measurements(spec):
    from cubego.diagnostics.widgets import LiveMemoryViewer
    from cubego.runtime.types import ComputeStartEvent, TaskEndEvent

    viewer = LiveMemoryViewer()
    p = cubego.plan(cubego.ones((4,), chunks=2, spec=spec) + 1)
    viewer.on_compute_start(ComputeStartEvent("c", p))
    with pytest.warns(UserWarning, match="not measured"):
        viewer.on_task_end(TaskEndEvent(p.ops[0].name))
    assert viewer.rows[p.ops[0].name]["tasks"] == 1


# ----------------------------------------------------------------------------- apply_gufunc


def test_apply_gufunc_projection_against_cubed(tmp_path):
    """Two kept core dims, 240 kB chunks: Cubed 0.27 projects 4 chunks (960 kB + 16 B).

    cubego projects the same for an in-memory input, and one chunk more (the
    function's result beside the output block) for a stored one (docs/memory.md).
    """
    chunk = 3 * 100 * 100 * 8
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="1MB")
    src = cubego.asarray(np.ones((12, 100, 100)), chunks=(3, 100, 100), spec=spec)
    for x, chunks in ((src, 4), (src + 0, 5)):
        y = cubego.apply_gufunc(lambda a: a * 2, "(i,j)->(i,j)", x, output_dtypes=np.float64)
        (op,) = [op for op in cubego.plan(y).ops if op.func == "apply_gufunc"]
        assert op.projected_mem == chunks * chunk
    np.testing.assert_array_equal(
        cubego.apply_gufunc(
            lambda a: a * 2, "(i,j)->(i,j)", src, output_dtypes=np.float64
        ).compute(),
        np.full((12, 100, 100), 2.0),
    )
