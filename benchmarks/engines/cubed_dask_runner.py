"""Cubed on a Dask cluster: one distributed benchmark case, in the peers' venv.

Cubed's DaskExecutor needs ``dask<2024.12`` (Cubed #638), so it cannot share an
interpreter or a cluster with the project venv's dask.distributed: this runner
starts its own 2-worker ``LocalCluster`` with the same settings as
``scale_out.py`` (processes, one thread each, 127.0.0.1, 4 GiB), builds the
case with Cubed, and times the compute alone (not the cluster's start), as
``scale_out.py`` does for the other engines.

Usage: ``benchmarks/.venv-peers/bin/python cubed_dask_runner.py job.json``;
prints one JSON line: ``{"wall", "worker_peak_rss", "tasks", "values"}``.
"""

from __future__ import annotations

import json
import resource
import sys
import time


def _worker_peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _tasks(dag) -> int:
    return sum(d["primitive_op"].num_tasks for _, d in dag.nodes(data=True) if "primitive_op" in d)


def main() -> None:
    import cubed
    from cubed.runtime.executors.dask import DaskExecutor
    from distributed import Client, LocalCluster

    job = json.load(open(sys.argv[1]))
    spec = cubed.Spec(work_dir=job["work_dir"], allowed_mem=job["allowed_mem"])
    workload, params, paths = job["workload"], job["params"], job["paths"]
    if workload == "W2":
        u, v = (cubed.from_zarr(p, spec=spec) for p in paths)
        outs = (cubed.mean(u * u, axis=0), cubed.mean(v * v, axis=0), cubed.mean(u * v, axis=0))
    elif workload == "W4":
        x = cubed.from_zarr(paths[0], spec=spec)
        outs = (cubed.sum(cubed.rechunk(x, tuple(params["target_chunks"]))),)
    else:
        n, c = params["n"], params["chunk"]
        outs = (cubed.sum(cubed.ones((n, n), chunks=c, spec=spec) + 1),)

    class Count(cubed.Callback):
        tasks = 0

        def on_compute_start(self, event):
            Count.tasks = _tasks(event.dag)

    with LocalCluster(
        n_workers=job["workers"],
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        memory_limit="4GiB",
    ) as cluster, Client(cluster) as client:
        start = time.perf_counter()
        values = cubed.compute(
            *outs,
            executor=DaskExecutor(compute_kwargs={"address": cluster.scheduler_address}),
            callbacks=[Count()],
        )
        wall = time.perf_counter() - start
        peak = max(client.run(_worker_peak).values())
    print(
        json.dumps(
            {
                "wall": wall,
                "worker_peak_rss": peak,
                "tasks": Count.tasks,
                "values": [v.tolist() for v in values],
            }
        )
    )


if __name__ == "__main__":
    main()
