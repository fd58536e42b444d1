"""cubego runner: one benchmark case in its own process (the project's venv).

Usage: ``python cubego_runner.py job.json``; prints one ``BENCH_RESULT`` line
(see ``common.py``). Standard library, numpy and cubego only.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import NotSupported, Outcome, main, shard_shape  # noqa: E402

import cubego  # noqa: E402
import cubego.random  # noqa: E402, F401


def spec(job: dict) -> cubego.Spec:
    return cubego.Spec(
        work_dir=job["work_dir"],
        allowed_mem=job["allowed_mem"],
        reserved_mem=job["reserved_mem"],
        executor_name="threads",
        executor_options={"max_workers": job["workers"]},
    )


def stats() -> dict:
    """Plan and memory statistics of the last computation (``cg_job_stats``)."""
    s = cubego._last_stats() or {}
    ops = [
        {
            "name": o.get("name"),
            "func": o.get("func"),
            "num_tasks": o.get("num_tasks"),
            "projected_mem": o.get("projected_mem"),
            "measured_mem": o.get("peak_allocated"),
        }
        for o in s.get("ops", [])
    ]
    return {
        "num_ops": s.get("num_ops"),
        "num_tasks": s.get("num_tasks"),
        "ops": ops,
        "measured_mem_kind": "per-task peak of engine-allocated chunk buffers",
        "engine_stats": {
            k: s.get(k)
            for k in (
                "max_projected_mem",
                "allowed_mem",
                "reserved_mem",
                "process_budget",
                "peak_allocated",
                "rss_start",
                "peak_rss",
                "seconds",
            )
        },
    }


def inputs(job: dict, sp: cubego.Spec) -> dict:
    return {k: cubego.from_zarr(p, spec=sp) for k, p in job["inputs"].items()}


def codec_chain(codec: str, dtype: str) -> list | None:
    """``compressors=`` for a codec name, as the Zarr v3 codec dicts zarr-python writes."""
    if codec == "none":
        return None
    if codec in ("zstd", "shard"):
        return [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
    if codec == "blosc":
        conf = {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}
        conf["typesize"] = {"float64": 8, "float32": 4, "uint16": 2}[dtype]
        return [{"name": "blosc", "configuration": conf}]
    raise ValueError(f"unknown codec {codec!r}")


def store(x, job: dict) -> Outcome:
    """Write *x* to the job's output with the job's codec (when to_zarr can choose one)."""
    out = job["output_spec"]
    kwargs = {}
    if "compressors" in inspect.signature(cubego.to_zarr).parameters:
        kwargs["compressors"] = codec_chain(out["codec"], out["dtype"])
    shards = shard_shape(out["codec"], out["shape"], out["chunks"])
    if shards is not None:
        kwargs["shards"] = shards
    cubego.to_zarr(x, job["output"], overwrite=True, **kwargs)
    return Outcome(None, stats())


def compute(*arrays) -> Outcome:
    values = cubego.compute(*arrays)
    return Outcome(values, stats())


def w1_add(job):
    sp = spec(job)
    x = inputs(job, sp)
    return store(x["a"] + x["b"], job)


def w1_chain(job):
    sp = spec(job)
    x = inputs(job, sp)
    a, b = x["a"], x["b"]
    return store(cubego.astype(-(a + b) * 0.5 + a * b, cubego.float32), job)


def w2_qm(job):
    sp = spec(job)
    x = inputs(job, sp)
    u, v = x["u"], x["v"]
    return compute(
        cubego.mean(u * u, axis=0), cubego.mean(v * v, axis=0), cubego.mean(u * v, axis=0)
    )


def w3_mean(job):
    sp = spec(job)
    x = inputs(job, sp)["x"]
    return compute(cubego.mean(x, axis=0))


def w3_anom(job):
    sp = spec(job)
    x = inputs(job, sp)["x"]
    return compute(cubego.sum(x - cubego.mean(x, axis=0)))


def w4_swap(job):
    sp = spec(job)
    x = inputs(job, sp)["x"]
    y = cubego.rechunk(x, tuple(job["params"]["target_chunks"]))
    return compute(cubego.sum(y))


def w5_matmul(job):
    sp = spec(job)
    a = inputs(job, sp)["a"]
    b = a.T if job["transpose"] else a
    return compute(cubego.sum(cubego.matmul(a, b)))


def w6_diff(job):
    sp = spec(job)
    x = inputs(job, sp)
    return store(x["a"][1:, 1:] - x["b"][:-1, :-1], job)


def w7_small(job):
    sp = spec(job)
    n, c = job["params"]["n"], job["params"]["chunk"]
    return compute(cubego.sum(cubego.ones((n, n), chunks=c, spec=sp) + 1))


def w8_read(job):
    sp = spec(job)
    try:
        x = inputs(job, sp)["x"]
    except NotImplementedError as e:
        raise NotSupported(str(e)) from e
    return compute(cubego.sum(x))


def w8_copy(job):
    sp = spec(job)
    try:
        x = inputs(job, sp)["x"]
    except NotImplementedError as e:
        raise NotSupported(str(e)) from e
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
    here = os.path.dirname(os.path.abspath(cubego.__file__))
    try:
        rev = subprocess.run(
            ["git", "-C", here, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        rev = ""
    lib = os.path.join(here, "libcubego.so")
    try:
        built = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.stat(lib).st_mtime))
    except OSError:
        built = None
    # The library's build time shows when it was rebuilt in the middle of a run.
    return {"cubego": cubego.__version__, "cubego_git": rev or "no commit", "library_built": built}


if __name__ == "__main__":
    main("cubego", CASES, versions)
