"""cubego.diagnostics: progress bars, history files, plots and memory warnings."""

from __future__ import annotations

import csv
import io
import sys
import warnings

import numpy as np
import pytest

import cubego
from cubego.diagnostics import (
    HistoryCallback,
    MemoryVisualizationCallback,
    MemoryWarningCallback,
    ProgressBar,
    TimelineVisualizationCallback,
)

from helpers import make_data


def _workload(spec):
    a = make_data((12, 8), "float64", seed=5)
    x = cubego.asarray(a, chunks=(3, 4), spec=spec)
    return cubego.mean(x * 2 + 1, axis=0, split_every=2), np.mean(a * 2 + 1, axis=0)


def _read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_progress_bar_rows(spec):
    pytest.importorskip("tqdm")
    y, expected = _workload(spec)
    out = io.StringIO()
    result = y.compute(callbacks=[ProgressBar(file=out, mininterval=0)])
    np.testing.assert_allclose(result, expected)
    text = out.getvalue()
    for op in y.plan().ops:
        assert f"{op.name} {op.func}" in text
        assert f"{op.num_tasks}/{op.num_tasks}" in text


def test_rich_progress_bar_rows(spec):
    """Cubed's default progress bar, at Cubed's module path: a row per op, with its
    name, function and done/total tasks."""
    from rich.console import Console

    from cubego.diagnostics.rich import RichProgressBar

    y, expected = _workload(spec)
    out = io.StringIO()
    bar = RichProgressBar(console=Console(file=out, width=120, force_terminal=False))
    np.testing.assert_allclose(y.compute(callbacks=[bar]), expected)
    text = out.getvalue()
    for op in y.plan().ops:
        assert f"{op.name} {op.func}" in text
        assert f"{op.num_tasks}/{op.num_tasks}" in text
    assert "100.0%" in text


def test_rich_progress_bar_needs_rich(monkeypatch):
    from cubego.diagnostics.rich import RichProgressBar

    monkeypatch.setitem(sys.modules, "rich.progress", None)
    with pytest.raises(ImportError, match="rich"):
        RichProgressBar()


def test_tqdm_progress_bar_at_cubeds_module_path():
    from cubego.diagnostics.tqdm import TqdmProgressBar

    assert TqdmProgressBar is ProgressBar


def test_progress_bar_needs_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    with pytest.raises(ImportError, match=r"cubego\[diagnostics\]"):
        ProgressBar()


def test_plots_need_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match="matplotlib"):
        TimelineVisualizationCallback()
    with pytest.raises(ImportError, match="matplotlib"):
        MemoryVisualizationCallback()


def test_history_csv_files(tmp_path, spec):
    y, expected = _workload(spec)
    history = HistoryCallback(directory=tmp_path / "history")
    np.testing.assert_allclose(y.compute(callbacks=[history]), expected)
    plan = y.plan()
    base = history.plan_df_path.parent
    assert base.parent == tmp_path / "history" and base.name.startswith("compute-")
    assert {p.name for p in base.iterdir()} == {"plan.csv", "events.csv", "stats.csv"}

    plan_rows = _read_csv(history.plan_df_path)
    assert [r["name"] for r in plan_rows] == [op.name for op in plan.ops]
    for row, op in zip(plan_rows, plan.ops, strict=True):
        assert int(row["num_tasks"]) == op.num_tasks
        assert int(row["projected_mem"]) == op.projected_mem
        assert int(row["reserved_mem"]) == spec.reserved_mem
        assert int(row["allowed_mem"]) == spec.allowed_mem

    events = _read_csv(history.events_df_path)
    assert len(events) == plan.num_tasks
    for e in events:
        assert float(e["task_create_tstamp"]) <= float(e["function_start_tstamp"])
        assert float(e["function_start_tstamp"]) <= float(e["function_end_tstamp"])
        assert int(e["peak_measured_mem_end"]) >= int(e["peak_measured_mem_start"]) > 0
        assert int(e["peak_allocated"]) <= int(e["projected_mem"])

    stats = _read_csv(history.stats_df_path)
    assert [r["name"] for r in stats] == [op.name for op in plan.ops]
    for row in stats:
        projected = int(row["projected_mem"])
        reserved = int(row["reserved_mem"])
        allocated = int(row["peak_allocated_max"])
        assert 0 < allocated <= projected
        assert float(row["allocated_mem_utilization"]) == pytest.approx(
            allocated / (projected - reserved)
        )
        assert float(row["allocated_mem_utilization"]) <= 1
        end = int(row["peak_measured_mem_end_max"])
        assert float(row["projected_mem_utilization"]) == pytest.approx(
            (end - reserved) / (projected - reserved)
        )


def test_history_default_directory(tmp_path, monkeypatch, spec):
    monkeypatch.chdir(tmp_path)
    history = HistoryCallback()
    (cubego.ones((4,), chunks=2, spec=spec) + 1).compute(callbacks=[history])
    assert history.stats_df_path.is_file()
    assert (tmp_path / history.stats_df_path).is_file()
    assert history.stats_df_path.parts[0] == "history"


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_timeline_and_memory_plots(tmp_path, spec, fmt):
    pytest.importorskip("matplotlib")
    y, expected = _workload(spec)
    timeline = TimelineVisualizationCallback(format=fmt, directory=tmp_path)
    memory = MemoryVisualizationCallback(format=fmt, directory=tmp_path)
    np.testing.assert_allclose(y.compute(callbacks=[timeline, memory]), expected)
    assert timeline.dst.name == f"timeline.{fmt}" and memory.dst.name == f"memory.{fmt}"
    assert timeline.dst.parent == memory.dst.parent
    assert timeline.dst.parent.name.startswith("compute-")
    for path in (timeline.dst, memory.dst):
        data = path.read_bytes()
        assert len(data) > 1000
        if fmt == "svg":
            assert b"<svg" in data[:1000]
        else:
            assert data[:8] == b"\x89PNG\r\n\x1a\n"


def test_memory_warning_when_the_process_outgrows_the_budget(tmp_path):
    # A budget far below what the interpreter itself occupies, with no reserved_mem:
    # the measured process memory passes allowed_mem even though every task fits.
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="2MB", reserved_mem=0)
    x = cubego.ones((100,), chunks=10, spec=spec)
    with pytest.warns(UserWarning, match=r"measured memory of the process .* reserved_mem"):
        (x + 1).compute(callbacks=[MemoryWarningCallback()], max_workers=1)


def test_no_memory_warning_within_budget(tmp_path):
    reserved = cubego.measure_reserved_mem(work_dir=tmp_path)
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem=2 * reserved, reserved_mem=reserved)
    x = cubego.ones((100,), chunks=10, spec=spec)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x + 1).compute(callbacks=[MemoryWarningCallback()], max_workers=1)


def test_memory_warning_for_a_task_over_allowed_mem():
    """A task that allocated more than allowed (impossible by design) is reported."""
    from cubego.runtime.types import ComputeEndEvent, ComputeStartEvent, TaskEndEvent

    plan = cubego.plan(cubego.ones((4,), chunks=2, spec=cubego.Spec(allowed_mem="1MB")) + 1)
    cb = MemoryWarningCallback()
    cb.on_compute_start(ComputeStartEvent("compute-x", plan))
    cb.on_task_end(
        TaskEndEvent(plan.ops[0].name, peak_allocated=2_000_000, peak_measured_mem_end=1)
    )
    with pytest.warns(UserWarning, match=f"exceeded allowed_mem .* {plan.ops[0].name}"):
        cb.on_compute_end(ComputeEndEvent("compute-x", plan))
