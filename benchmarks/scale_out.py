"""Distributed benchmarks: the same plans on worker processes and on a Dask cluster.

Runs W2 (quadratic means), W4 (rechunk swap-axes, then sum) and W7 (many small
chunks) on:

- ``cubego-dask``: cubego's DaskExecutor on a 2-worker ``LocalCluster``
  (processes, one thread each, on 127.0.0.1);
- ``dask``: dask.array on the same cluster;
- ``cubego-processes``: cubego's processes executor with 2 workers;
- ``cubego-threads``: cubego in process, 2 workers (the reference);
- ``cubego-lithops`` (on request, ``--engines``): Lithops' localhost back end,
  2 worker processes, a new process per call.

The processes executor keeps its workers between rounds (they start in the
first), so with ``--rounds 3`` the median is a warm run. Each run reports its
wall time and the largest peak RSS of any worker process (each Dask run gets a
fresh cluster, so its workers' peak is the run's; cubego reports each task's
worker RSS in its task-end events). Results go to
``results/scale-out/<label>.json`` (apart from the results RESULTS.md is made
from) and a Markdown table on stdout.

Usage (the project venv, which has dask.distributed)::

    .venv/bin/python benchmarks/scale_out.py --size Q --rounds 2 --label distributed-Q

- ``cubed-dask`` (on request, ``--engines``): Cubed 0.27 with its DaskExecutor
  on a 2-worker ``LocalCluster`` of the same settings. Cubed's Dask executor
  needs ``dask<2024.12`` (Cubed #638), which cannot share an interpreter or a
  cluster with this dask.distributed, so it runs in the peers' venv
  (``--peers-python``, default ``benchmarks/.venv-peers/bin/python``; see
  README.md) through ``engines/cubed_dask_runner.py``, on its own cluster.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from datagen import ensure_input  # noqa: E402
from workloads import cases  # noqa: E402

import cubego  # noqa: E402
from cubego.runtime.executors.dask import DaskExecutor  # noqa: E402
from cubego.runtime.executors.local import ProcessesExecutor  # noqa: E402

WORKERS = 2
ALLOWED_MEM = "2GB"


def _worker_peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class _WorkerRSS(cubego.Callback):
    def on_compute_start(self, event):
        self.peak = 0

    def on_task_end(self, event):
        self.peak = max(self.peak, event.peak_measured_mem_end or 0)


def _inputs(case, size, data_dir):
    return [ensure_input(data_dir, size, "none-uniform", a)[0] for a in case.inputs]


def _lithops():
    """Lithops' localhost back end (version 2): a process per call, importing cubego."""
    from cubego.runtime.executors.lithops import LithopsExecutor

    config = {
        "lithops": {"backend": "localhost", "storage": "localhost", "log_level": None},
        "localhost": {"version": 2, "runtime": sys.executable, "worker_processes": WORKERS},
    }
    return LithopsExecutor(config=config, runtime_memory=4096, log_level=None)


def _cubego(case, paths, executor, work):
    spec = cubego.Spec(work_dir=work, allowed_mem=ALLOWED_MEM)
    if case.workload == "W2":
        u, v = (cubego.from_zarr(p, spec=spec) for p in paths)
        outs = (cubego.mean(u * u, axis=0), cubego.mean(v * v, axis=0), cubego.mean(u * v, axis=0))
    elif case.workload == "W4":
        x = cubego.from_zarr(paths[0], spec=spec)
        outs = (cubego.sum(x.rechunk(tuple(case.params["target_chunks"]))),)
    else:
        n, c = case.params["n"], case.params["chunk"]
        outs = (cubego.sum(cubego.ones((n, n), chunks=c, spec=spec) + 1),)
    rss = _WorkerRSS()
    values = cubego.compute(*outs, executor=executor, callbacks=[rss])
    stats = cubego._last_stats() or {}
    return values, rss.peak, stats.get("num_tasks")


def _dask(case, paths, client):
    import dask.array as da

    if case.workload == "W2":
        u, v = (da.from_zarr(p) for p in paths)
        outs = (da.mean(u * u, axis=0), da.mean(v * v, axis=0), da.mean(u * v, axis=0))
    elif case.workload == "W4":
        x = da.from_zarr(paths[0])
        outs = (da.sum(x.rechunk(tuple(case.params["target_chunks"]))),)
    else:
        n, c = case.params["n"], case.params["chunk"]
        outs = (da.sum(da.ones((n, n), chunks=c) + 1),)
    values = client.compute(list(outs), sync=True)
    peak = max(client.run(_worker_peak).values())
    return values, peak, sum(len(o.__dask_graph__()) for o in outs)


def _cubed_dask(case, paths, work, python):
    """One Cubed-on-Dask run in the peers' venv (engines/cubed_dask_runner.py)."""
    import subprocess

    job = {
        "workload": case.workload,
        "params": case.params,
        "paths": paths,
        "work_dir": work,
        "allowed_mem": ALLOWED_MEM,
        "workers": WORKERS,
    }
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(job, f)
    try:
        out = subprocess.run(
            [python, os.path.join(here, "engines", "cubed_dask_runner.py"), f.name],
            capture_output=True,
            text=True,
            timeout=3600,
        )
    finally:
        os.unlink(f.name)
    if out.returncode != 0:
        raise RuntimeError(f"cubed-dask failed:\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout.splitlines()[-1])
    return [np.asarray(v) for v in r["values"]], r["worker_peak_rss"], r["tasks"], r["wall"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--size", default="Q", choices=["T", "Q", "M"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workloads", default="W2,W4,W7")
    ap.add_argument("--engines", default="cubego-threads,cubego-processes,cubego-dask,dask")
    ap.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "cubego-bench-data"))
    ap.add_argument("--label", default=None)
    ap.add_argument(
        "--peers-python",
        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".venv-peers", "bin", "python"),
        help="the peers' venv interpreter, for cubed-dask",
    )
    args = ap.parse_args()
    engines = args.engines.split(",")
    from distributed import Client, LocalCluster

    def new_cluster():
        return LocalCluster(
            n_workers=WORKERS,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            memory_limit="4GiB",
        )

    results = []
    with tempfile.TemporaryDirectory() as work:
        for workload in args.workloads.split(","):
            for case in cases(workload, args.size):
                paths = _inputs(case, args.size, args.data_dir)
                reference = None
                for engine in engines:
                    walls, peaks = [], []
                    tasks = None
                    # One processes executor per case: its workers start in the
                    # first round and serve the later ones (the median is warm).
                    processes = ProcessesExecutor(max_workers=WORKERS)
                    for _ in range(args.rounds):
                        # A fresh cluster per run: its workers' peak RSS is the run's.
                        with contextlib.ExitStack() as stack:
                            client = None
                            if engine in ("dask", "cubego-dask"):
                                c = stack.enter_context(new_cluster())
                                client = stack.enter_context(Client(c))
                            start = time.perf_counter()
                            inner = None  # a wall the run measured itself
                            if engine == "dask":
                                values, peak, tasks = _dask(case, paths, client)
                            elif engine == "cubed-dask":
                                values, peak, tasks, inner = _cubed_dask(
                                    case, paths, work, args.peers_python
                                )
                            else:
                                executor = {
                                    "cubego-threads": "threads",
                                    "cubego-processes": processes,
                                    "cubego-dask": client and DaskExecutor(client=client),
                                    "cubego-lithops": "lithops" in engine and _lithops(),
                                }[engine]
                                values, peak, tasks = _cubego(case, paths, executor, work)
                            walls.append(inner if inner is not None else time.perf_counter() - start)
                            peaks.append(peak)
                    processes.close()
                    if reference is None:
                        reference = values
                    for a, b in zip(values, reference, strict=True):
                        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9)
                    results.append(
                        {
                            "case": case.key,
                            "size": args.size,
                            "engine": engine,
                            "wall": walls,
                            "wall_median": statistics.median(walls),
                            "worker_peak_rss": max(peaks),
                            "tasks": tasks,
                        }
                    )
                    r = results[-1]
                    print(
                        f"{r['case']:10} {engine:17} {r['wall_median']:8.2f} s "
                        f"peak RSS {r['worker_peak_rss'] / 2**20:7.0f} MiB  tasks {tasks}",
                        flush=True,
                    )
    label = args.label or f"scale-out-{args.size}"
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, "results", "scale-out", f"{label}.json")
    with open(out, "w") as f:
        json.dump({"label": label, "workers": WORKERS, "results": results}, f, indent=1)
    print("\n| case | engine | wall (median s) | worker peak RSS (MiB) | tasks |")
    print("|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['case']} | {r['engine']} | {r['wall_median']:.2f} | "
            f"{r['worker_peak_rss'] / 2**20:.0f} | {r['tasks']} |"
        )


if __name__ == "__main__":
    main()
