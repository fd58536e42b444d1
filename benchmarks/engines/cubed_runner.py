"""Cubed runner: one benchmark case with Cubed's threads executor (the peers' venv).

Usage: ``python cubed_runner.py job.json``; prints one ``BENCH_RESULT`` line
(see ``common.py``). Intermediates are uncompressed (``zarr_compressor=None``).

Projected vs measured memory per op comes from a callback like Cubed's
``HistoryCallback`` (which needs pandas): the plan's ``projected_mem`` per op
and the time window in which its tasks ran. Cubed's threads executor does not
measure task memory (only its processes and cloud executors record
``peak_measured_mem``), so the driver fills ``measured_mem`` with the process's
peak RSS sampled during that window: both workers and the interpreter, an upper
bound of one task's use.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cubed  # noqa: E402
import cubed.random  # noqa: E402, F401
import zarr  # noqa: E402
from common import Outcome, main, shard_shape  # noqa: E402
from cubed.runtime.pipeline import visit_nodes  # noqa: E402
from zarr_output import create_output  # noqa: E402


class OpHistory(cubed.Callback):
    """The plan's ops (projected memory, tasks) and the measured peaks of their tasks."""

    def __init__(self):
        self.plan: dict[str, dict] = {}

    def on_compute_start(self, event):
        for name, node in visit_nodes(event.dag):
            op = node["primitive_op"]
            self.plan[name] = {
                "name": name,
                "func": node.get("op_name"),
                "num_tasks": op.num_tasks,
                "projected_mem": op.projected_mem,
                "measured_mem": None,
                "measured_delta": None,
            }

    def on_task_end(self, event):
        op = self.plan.get(event.name)
        if op is None:
            return
        start, end = event.function_start_tstamp, event.function_end_tstamp
        if start is not None:
            op["t_start"] = min(op.get("t_start") or start, start)
        if end is not None:
            op["t_end"] = max(op.get("t_end") or end, end)
        if event.peak_measured_mem_end is not None:
            peak = event.peak_measured_mem_end
            delta = peak - (event.peak_measured_mem_start or peak)
            op["measured_mem"] = max(op["measured_mem"] or 0, peak)
            op["measured_delta"] = max(op["measured_delta"] or 0, delta)

    def stats(self) -> dict:
        ops = list(self.plan.values())
        return {
            "num_ops": len(ops),
            "num_tasks": sum(o["num_tasks"] or 0 for o in ops),
            "ops": ops,
            "measured_mem_kind": "process RSS sampled while the op ran (both workers)",
        }


def spec(job: dict) -> cubed.Spec:
    return cubed.Spec(
        work_dir=job["work_dir"],
        allowed_mem=job["allowed_mem"],
        reserved_mem=job["reserved_mem"],
        executor_name="threads",
        executor_options={"max_workers": job["workers"]},
        zarr_compressor=None,
    )


def inputs(job, sp):
    return {k: cubed.from_zarr(p, spec=sp) for k, p in job["inputs"].items()}


def compute(*arrays) -> Outcome:
    history = OpHistory()
    values = cubed.compute(*arrays, callbacks=[history])
    return Outcome(values, history.stats())


def store(x, job) -> Outcome:
    target = create_output(job)
    out = job["output_spec"]
    shards = shard_shape(out["codec"], out["shape"], out["chunks"])
    if shards is not None:
        # One task per shard: tasks writing parts of one shard would race.
        x = cubed.rechunk(x, shards)
    history = OpHistory()
    cubed.store(x, target, callbacks=[history])
    return Outcome(None, history.stats())


def w1_add(job):
    x = inputs(job, spec(job))
    return store(x["a"] + x["b"], job)


def w1_chain(job):
    x = inputs(job, spec(job))
    a, b = x["a"], x["b"]
    return store(cubed.astype(-(a + b) * 0.5 + a * b, cubed.float32), job)


def w2_qm(job):
    x = inputs(job, spec(job))
    u, v = x["u"], x["v"]
    return compute(cubed.mean(u * u, axis=0), cubed.mean(v * v, axis=0), cubed.mean(u * v, axis=0))


def w3_mean(job):
    x = inputs(job, spec(job))["x"]
    return compute(cubed.mean(x, axis=0))


def w3_anom(job):
    x = inputs(job, spec(job))["x"]
    return compute(cubed.sum(x - cubed.mean(x, axis=0)))


def w4_swap(job):
    x = inputs(job, spec(job))["x"]
    return compute(cubed.sum(cubed.rechunk(x, tuple(job["params"]["target_chunks"]))))


def w5_matmul(job):
    a = inputs(job, spec(job))["a"]
    b = a.T if job["transpose"] else a
    return compute(cubed.sum(cubed.matmul(a, b)))


def w6_diff(job):
    x = inputs(job, spec(job))
    d = x["a"][1:, 1:] - x["b"][:-1, :-1]
    # Zarr needs regular chunks: the output's, as the inputs'.
    return store(cubed.rechunk(d, tuple(job["output_spec"]["chunks"])), job)


def w7_small(job):
    sp = spec(job)
    n, c = job["params"]["n"], job["params"]["chunk"]
    return compute(cubed.sum(cubed.ones((n, n), chunks=c, spec=sp) + 1))


def w8_read(job):
    x = inputs(job, spec(job))["x"]
    return compute(cubed.sum(x))


def w8_copy(job):
    x = inputs(job, spec(job))["x"]
    return store(x, job)


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
    return {"cubed": cubed.__version__, "zarr": zarr.__version__}


if __name__ == "__main__":
    main("cubed", CASES, versions)
