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
    "roofline",
}
ROOF_FIELDS = {"seconds", "bound", "io_s", "cpu_s", "numpy_cpu_s", "read_kind", "write_kind"}
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
        roof = r["roofline"]
        assert ROOF_FIELDS <= set(roof), sorted(ROOF_FIELDS - set(roof))
        assert roof["seconds"] == max(roof["io_s"], roof["cpu_s"]) > 0, (r["case"], roof)
        # No disk probe at size T: every read is charged the page cache's speed.
        assert roof["read_kind"] == "warm" and roof["write_kind"] == "page cache"
        if r["case"] != "W8.copy":  # a copy has no arithmetic
            assert roof["numpy_cpu_s"] > 0, (r["case"], roof)
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
    md = (tmp_path / "RESULTS.md").read_text()
    assert md.startswith("# cubego benchmark results")
    assert "### What limits each case now" in md and "% of roofline" in md
    assert "- **W1.add** (T, none-uniform): " in md and "no roofline in these results" not in md
    assert list((tmp_path / "plots").glob("memory_smoke_T_*.png"))

    # Results written before the roofline existed still render, with "–".
    old = tmp_path / "old-results"
    old.mkdir()
    for r in runs:
        r.pop("roofline", None)
    (old / "old.json").write_text(json.dumps(doc))
    cmd = [DRIVER_PYTHON, os.path.join(HERE, "run.py"), "--report-only", "--results-dir", str(old)]
    cmd += ["--results-md", str(tmp_path / "OLD.md"), "--plots-dir", str(tmp_path / "old-plots")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    md = (tmp_path / "OLD.md").read_text()
    assert "no roofline in these results" in md
    assert "| ≥ 75% of the roofline on every case | no roofline in these results | – |" in md


def test_update_replaces_only_the_engines_run(tmp_path):
    """``--update`` with some engines replaces their records of the cases
    re-run and keeps the other engines', noted as measured before."""
    results = tmp_path / "results"
    results.mkdir()
    old = {"case": "W1.add", "size": "T", "variant": "none-uniform", "round": 0, "status": "ok"}
    elsewhere = {**old, "case": "W3.mean", "engine": "cubego", "wall_s": 9.0}
    doc = {
        "meta": {"date": "2026-01-01T00:00:00"},
        "runs": [
            {**old, "engine": "dask", "wall_s": 7.0},
            {**old, "engine": "cubego", "wall_s": 8.0},
            elsewhere,
        ],
    }
    (results / "upd.json").write_text(json.dumps(doc))
    cmd = [DRIVER_PYTHON, os.path.join(HERE, "run.py"), "--sizes", "T", "--cases", "W1.add"]
    cmd += ["--variants", "none-uniform", "--engines", "cubego", "--rounds", "1", "--timeout", "120"]
    cmd += ["--cubego-python", CUBEGO_PYTHON, "--label", "upd", "--update", "--no-report"]
    cmd += ["--data-dir", str(tmp_path / "data"), "--work-dir", str(tmp_path / "work")]
    cmd += ["--results-dir", str(results)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    runs = json.loads((results / "upd.json").read_text())["runs"]
    w1 = {r["engine"]: r for r in runs if r["case"] == "W1.add"}
    assert set(w1) == {"dask", "cubego"}
    assert w1["dask"]["wall_s"] == 7.0
    assert any(n.endswith("which re-ran only cubego") for n in w1["dask"]["notes"])
    assert w1["cubego"]["wall_s"] != 8.0 and w1["cubego"]["status"] == "ok"
    assert elsewhere in runs


def test_warm_reads_inputs_twice(tmp_path):
    """warm() reads every input file twice: Linux activates a cached page on
    its second read, so the engine run after the first warm read of data
    just read from disk would pay that for all its input, and the engines
    after it would not."""
    data = tmp_path / "x.zarr"
    (data / "c").mkdir(parents=True)
    for name in ("zarr.json", "c/0", "c/1"):
        (data / name).write_bytes(b"x" * 100)
    code = f"""
import builtins, collections, json, sys
sys.path.insert(0, {HERE!r})
import run
opened = collections.Counter()
def counting_open(path, *a, **k):
    opened[path] += 1
    return builtins.open(path, *a, **k)
run.open = counting_open
run.warm([{str(data)!r}])
print(json.dumps(sorted(opened.values())))
"""
    out = subprocess.run(
        [DRIVER_PYTHON, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [2, 2, 2]


def test_further_passes_price_the_cache_fill():
    """A case that reads its inputs twice and cannot hold them is priced at
    the cheaper of keeping what the cache can hold (paid for where filling
    it is slower than the disk) and reading everything from disk again."""
    code = f"""
import json, sys
sys.path.insert(0, {HERE!r})
import run
GB = 1e9
def p(fill):
    s, held = run.cached_passes_s(30 * GB, 19 * GB, 1, 2 * GB, 16 * GB, fill)
    return [round(s, 3), round(held / GB, 3)]
print(json.dumps([
    p([]),
    p([{{"bytes": 3 * GB, "Bps": 2 * GB}}, {{"bytes": 3 * GB, "Bps": 0.7 * GB}}]),
    p([{{"bytes": 3 * GB, "Bps": 0.5 * GB}}]),
    p([{{"bytes": 3 * GB, "Bps": 1.6 * GB}}, {{"bytes": 3 * GB, "Bps": 2.5 * GB}}]),
]))
"""
    out = subprocess.run(
        [DRIVER_PYTHON or sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    free, slow_after_3, slow, fast = json.loads(out.stdout.strip().splitlines()[-1])
    # A fill at the disk's speed: all 19 GB from the cache, 11 from disk.
    assert free == pytest.approx([19 / 16 + 11 / 2, 19], abs=1e-3)
    # Fast for 3 GB, then at 0.7 GB/s: only the fast part pays.
    assert slow_after_3 == pytest.approx([3 / 16 + 27 / 2, 3], abs=1e-3)
    # Slower than the disk throughout: read everything again.
    assert slow == [15, 0]
    # Slower in the first part but made up by the rest: fill it all.
    assert fast == pytest.approx([3 * (1 / 1.6 - 1 / 2) + 19 / 16 + 11 / 2, 19], abs=1e-3)
