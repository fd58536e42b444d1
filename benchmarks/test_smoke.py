"""Smoke test of the benchmark driver: tiny sizes, cubego only, one round.

Runs ``run.py --sizes T --engines cubego`` and checks the shape of the raw
results and that a report was written. The driver needs zarr, psutil and
matplotlib: it runs with ``benchmarks/.venv-peers`` if that exists, else with
this interpreter if it has them (the ``bench`` extra); otherwise the test is
skipped. cubego runs with the project's ``.venv``. A few seconds.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CUBEGO_PYTHON = os.path.join(REPO, ".venv", "bin", "python")


def _driver_python() -> str | None:
    peers = os.path.join(HERE, ".venv-peers", "bin", "python")
    if os.path.exists(peers):
        return peers
    if all(importlib.util.find_spec(m) for m in ("zarr", "psutil", "matplotlib")):
        return sys.executable
    return None


DRIVER_PYTHON = _driver_python()

RUN_FIELDS = {
    "size",
    "variant",
    "workload",
    "case",
    "engine",
    "round",
    "status",
    "error",
    "wall_s",
    "cpu_s",
    "peak_rss",
    "sampled_peak_rss",
    "rss_hwm",
    "io_write_bytes",
    "intermediate_written",
    "num_ops",
    "num_tasks",
    "ops",
    "timeline",
}
OP_FIELDS = {"name", "func", "num_tasks", "projected_mem", "measured_mem"}

pytestmark = pytest.mark.skipif(
    DRIVER_PYTHON is None or not os.path.exists(CUBEGO_PYTHON),
    reason="needs zarr, psutil and matplotlib (benchmarks/.venv-peers or the bench extra) "
    "and the project's .venv (see benchmarks/README.md)",
)


def test_driver_tiny_cubego(tmp_path):
    cmd = [
        DRIVER_PYTHON,
        os.path.join(HERE, "run.py"),
        "--sizes",
        "T",
        "--engines",
        "cubego",
        "--rounds",
        "1",
        "--timeout",
        "120",
        "--cubego-python",
        CUBEGO_PYTHON,
        "--label",
        "smoke",
        "--data-dir",
        str(tmp_path / "data"),
        "--work-dir",
        str(tmp_path / "work"),
        "--results-dir",
        str(tmp_path / "results"),
        "--results-md",
        str(tmp_path / "RESULTS.md"),
        "--plots-dir",
        str(tmp_path / "plots"),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    with open(tmp_path / "results" / "smoke.json") as f:
        doc = json.load(f)
    meta = doc["meta"]
    assert meta["sizes"] == ["T"] and meta["engines"] == ["cubego"]
    assert {"machine", "versions", "cubego", "io"} <= set(meta)
    runs = doc["runs"]
    cases = {r["case"] for r in runs}
    assert {"W1.add", "W2.qm", "W3.mean", "W7.small", "W8.copy"} <= cases
    assert {r["engine"] for r in runs} == {"cubego"}
    for r in runs:
        assert RUN_FIELDS <= set(r), sorted(RUN_FIELDS - set(r))
        assert r["status"] in ("ok", "not_supported", "refused"), (r["case"], r["error"])
        if r["status"] != "ok":
            continue
        assert r["wall_s"] > 0 and r["peak_rss"] > 0
        assert r["num_tasks"] >= 1 and r["ops"]
        for op in r["ops"]:
            assert OP_FIELDS <= set(op)
            assert op["measured_mem"] <= op["projected_mem"], (r["case"], op)
        if r["case"] in ("W1.add", "W1.chain", "W6.diff", "W8.copy"):
            # Stored outputs are summarised by the driver for the comparison between engines.
            assert {"sum", "sumsq", "shape", "codecs"} <= set(r["checksum"])
    ok = [r for r in runs if r["status"] == "ok"]
    assert len(ok) >= len(runs) - 2  # blosc (W8) is the only expected "not supported"
    assert (tmp_path / "RESULTS.md").read_text().startswith("# cubego benchmark results")
    assert list((tmp_path / "plots").glob("memory_smoke_T_*.png"))
