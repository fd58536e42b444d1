"""Dask runner: one benchmark case with Dask's threaded scheduler (the peers' venv).

Usage: ``python dask_runner.py job.json``; prints one ``BENCH_RESULT`` line
(see ``common.py``). The job's engine is ``dask`` or ``dask-zarrs`` (the same,
with zarr-python's codec pipeline replaced by zarrs-python's, for W8).
Dask has no intermediates on disk and no memory projection; ``num_tasks``
counts the optimised task graph.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402
import zarr  # noqa: E402
from common import Outcome, main, shard_shape  # noqa: E402
from zarr_output import create_output  # noqa: E402

JOB: dict = {}


def _graph_size(arrays) -> int:
    """Tasks in the optimised graph (dask >= 2025.1 builds it from expressions)."""
    try:
        from dask.base import collections_to_expr
    except ImportError:  # older dask (2024.x, which Cubed's Dask executor needs)
        from dask.base import collections_to_dsk

        return len(collections_to_dsk(arrays, optimize_graph=True))
    return len(collections_to_expr(arrays, optimize_graph=True).__dask_graph__())


def graph_stats(*arrays):
    def stats():
        try:
            n = _graph_size(arrays)
        except Exception:  # noqa: BLE001 - the count is informative only
            n = None
        return {"num_tasks": n}

    return stats


def scheduler() -> dict:
    return {"scheduler": "threads", "num_workers": JOB["workers"]}


def inputs(job):
    return {k: da.from_zarr(p) for k, p in job["inputs"].items()}


def compute(*arrays) -> Outcome:
    values = dask.compute(*arrays, **scheduler())
    return Outcome(values, graph_stats(*arrays))


def store(x, job) -> Outcome:
    target = create_output(job)
    out = job["output_spec"]
    shards = shard_shape(out["codec"], out["shape"], out["chunks"])
    if shards is not None:
        # One task per shard: tasks writing parts of one shard would race.
        x = x.rechunk(shards)
    da.store(x, target, lock=False, **scheduler())
    return Outcome(None, graph_stats(x))


def w1_add(job):
    x = inputs(job)
    return store(x["a"] + x["b"], job)


def w1_chain(job):
    x = inputs(job)
    a, b = x["a"], x["b"]
    return store((-(a + b) * 0.5 + a * b).astype(np.float32), job)


def w2_qm(job):
    x = inputs(job)
    u, v = x["u"], x["v"]
    return compute((u * u).mean(axis=0), (v * v).mean(axis=0), (u * v).mean(axis=0))


def w3_mean(job):
    return compute(inputs(job)["x"].mean(axis=0))


def w3_anom(job):
    x = inputs(job)["x"]
    return compute((x - x.mean(axis=0)).sum())


def w4_swap(job):
    x = inputs(job)["x"]
    return compute(x.rechunk(tuple(job["params"]["target_chunks"])).sum())


def w5_matmul(job):
    a = inputs(job)["a"]
    b = a.T if job["transpose"] else a
    return compute((a @ b).sum())


def w6_diff(job):
    x = inputs(job)
    d = x["a"][1:, 1:] - x["b"][:-1, :-1]
    return store(d.rechunk(tuple(job["output_spec"]["chunks"])), job)


def w7_small(job):
    n, c = job["params"]["n"], job["params"]["chunk"]
    return compute((da.ones((n, n), chunks=c) + 1).sum())


def w8_read(job):
    return compute(inputs(job)["x"].sum())


def w8_copy(job):
    return store(inputs(job)["x"], job)


CASES = {
    "W1.add": w1_add,
    "W1.chain": w1_chain,
    "W2.qm": w2_qm,
    "W3.mean": w3_mean,
    "W3.anom": w3_anom,
    "W4.swap": w4_swap,
    "W5.matmul": w5_matmul,
    "W6.diff": w6_diff,
    "W7.small": w7_small,
    "W8.read": w8_read,
    "W8.copy": w8_copy,
}


def versions() -> dict:
    out = {"dask": dask.__version__, "zarr": zarr.__version__}
    if JOB.get("engine") == "dask-zarrs":
        import zarrs

        out["zarrs"] = getattr(zarrs, "__version__", "installed")
    return out


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        JOB.update(json.load(f))
    if JOB["engine"] == "dask-zarrs":
        zarr.config.set({"codec_pipeline.path": "zarrs.ZarrsCodecPipeline"})
    main(JOB["engine"], CASES, versions)
