"""compute(): one plan for several arrays, executor options, statistics."""

from __future__ import annotations

import numpy as np
import pytest

import cubego
from cubego.binding import libcubego as _lib
from cubego.core import compute as _compute

from helpers import assert_matches, make_data


def test_compute_several_arrays_in_one_plan(spec, monkeypatch):
    a = make_data((6, 5), "float64", seed=1)
    x = cubego.asarray(a, chunks=2, spec=spec)
    y = x * 2
    z = cubego.sum(y, axis=0)
    calls = []
    start = _lib.compute

    def counting(handles, options):
        calls.append((list(handles), options))
        return start(handles, options)

    monkeypatch.setattr(_lib, "compute", counting)
    results = cubego.compute(x, y, z, x)
    assert len(calls) == 1
    assert len(calls[0][0]) == 4
    assert isinstance(results, tuple) and len(results) == 4
    assert_matches(results[0], a)
    assert_matches(results[1], a * 2)
    assert_matches(results[2], np.sum(a * 2, axis=0))
    assert_matches(results[3], a)


class _NamedExecutor:
    name = "single-threaded"


def test_options():
    spec = cubego.Spec(executor_name="threads", executor_options={"max_workers": 3, "retries": 1})
    x = cubego.ones((2,), spec=spec)
    opts = _compute.options((x,), None, True, {})
    assert opts == {"executor": "threads", "max_workers": 3, "retries": 1, "optimize_graph": True}
    opts = _compute.options((x,), "single-threaded", False, {"max_workers": 1})
    assert opts == {
        "executor": "single-threaded",
        "max_workers": 1,
        "retries": 1,
        "optimize_graph": False,
    }
    assert _compute.options((x,), _NamedExecutor(), True, {})["executor"] == "single-threaded"
    plain = cubego.ones((2,), spec=cubego.Spec())
    assert _compute.options((plain,), None, True, {}) == {"optimize_graph": True}
    executor_spec = cubego.Spec(executor=_NamedExecutor(), executor_name="threads")
    y = cubego.ones((2,), spec=executor_spec)
    assert _compute.options((y,), None, True, {})["executor"] == "single-threaded"
    with pytest.raises(TypeError):
        _compute.options((x,), object(), True, {})


@pytest.mark.parametrize("executor", ["threads", "single-threaded", _NamedExecutor()])
@pytest.mark.parametrize("max_workers", [1, 2, 4])
def test_executors(tmp_path, executor, max_workers):
    spec = cubego.Spec(tmp_path, allowed_mem="100MB", executor_options={"max_workers": max_workers})
    a = make_data((30, 20), "float64", seed=2)
    x = cubego.asarray(a, chunks=(4, 3), spec=spec)
    result = cubego.mean(x * x + 1, axis=1).compute(executor=executor, retries=0)
    np.testing.assert_allclose(result, np.mean(a * a + 1, axis=1), rtol=1e-12)


def test_last_stats(spec):
    x = cubego.asarray(make_data((40, 40), "float64"), chunks=10, spec=spec)
    cubego.sum(x * 2, axis=0).compute(max_workers=2)
    stats = cubego._last_stats()
    for key in (
        "max_projected_mem",
        "allowed_mem",
        "num_ops",
        "num_tasks",
        "peak_allocated",
        "peak_rss",
        "process_budget",
        "ops",
    ):
        assert key in stats, key
    assert stats["allowed_mem"] == spec.allowed_mem
    assert stats["process_budget"] == 2 * spec.allowed_mem
    assert 0 < stats["max_projected_mem"] <= spec.allowed_mem
    assert stats["num_ops"] >= 1 and stats["num_tasks"] >= 4
    for op in stats["ops"]:
        assert op["peak_allocated"] <= op["projected_mem"], op


def test_plan_info(spec):
    x = cubego.asarray(np.ones((8, 8)), chunks=4, spec=spec)
    plan = cubego.core.plan.plan_info(cubego.sum(x + 1))
    assert plan["num_tasks"] > 0
    assert plan["max_projected_mem"] <= spec.allowed_mem
    assert any("add" in op["func"] for op in plan["ops"])


@pytest.mark.parametrize("optimize_graph", [True, False])
def test_plan_info_counts_match_the_full_statistics(spec, optimize_graph):
    x = cubego.asarray(np.ones((8, 8)), chunks=4, spec=spec)
    y = cubego.asarray(np.arange(64.0).reshape(8, 8), chunks=(2, 8), spec=spec)
    arrays = (cubego.sum(x + 1), cubego.mean(x * y, axis=0))
    full = cubego.core.plan.plan_info(*arrays, optimize_graph=optimize_graph)
    counts = cubego.core.plan.plan_info(*arrays, optimize_graph=optimize_graph, counts=True)
    assert counts == {k: full[k] for k in ("num_ops", "num_tasks", "num_arrays")}


def test_compute_returns_numpy(spec):
    x = cubego.arange(5, chunks=2, spec=spec)
    (result,) = cubego.compute(x)
    assert type(result) is np.ndarray
    scalar = cubego.sum(x).compute()
    assert type(scalar) is np.ndarray and scalar.shape == ()


def test_runtime_knobs():
    previous = cubego.set_max_procs(1)
    assert previous >= 1
    assert cubego.set_max_procs(0) == 1
    limit = cubego.set_memory_limit(-1)
    assert limit > 0
    assert cubego.set_memory_limit(limit) == limit
    gc = _lib.set_gc_percent(50)
    assert _lib.set_gc_percent(gc) == 50
    _lib.free_os_memory()


def test_library_version():
    info = _lib.version()
    assert info["version"] == cubego.__version__
    assert info["go"].startswith("go")
