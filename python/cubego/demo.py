"""Out-of-core demo: ``python -m cubego.demo`` (what ``make demo`` runs).

Writes ``c = a * b + 1`` for two random arrays whose combined size is many
times the memory the computation may use (``allowed_mem`` per task times
``max_workers`` tasks) to a Zarr array on disk, reads it back to compute
``mean(c, axis=0)``, checks a sample of the result against numpy, and prints
the projected memory of each stage next to the memory measured while it ran.

The statistics come from ``cubego._last_stats()``: the ``cg_job_stats`` of the
most recent computation (see docs/capi.md). The exit status is non-zero if the
result is wrong or a measured peak exceeds its projection.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np

import cubego


def _fmt(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError  # pragma: no cover


def _stage(title: str, arrays, budget: int) -> tuple[tuple, dict, list[str]]:
    """Compute arrays in one plan, print its projected and measured memory."""
    start = time.perf_counter()
    values = cubego.compute(*arrays)
    elapsed = time.perf_counter() - start
    stats = cubego._last_stats() or {}
    projected = stats.get("max_projected_mem", 0)
    process_budget = stats.get("process_budget") or budget
    peak_allocated = stats.get("peak_allocated", 0)
    growth = stats.get("peak_rss", 0) - stats.get("rss_start", 0)
    print(f"{title}")
    print(
        f"  computed in     {elapsed:.1f} s, {stats.get('num_tasks', '?')} tasks in"
        f" {stats.get('num_ops', '?')} ops"
    )
    print(
        f"  projected       {_fmt(projected)} per task (max over ops),"
        f" {_fmt(process_budget)} for the process"
    )
    print(f"  peak allocated  {_fmt(peak_allocated)} (chunk buffers of all running tasks)")
    print(f"  peak RSS growth {_fmt(growth)} (the process's high-water mark during the job)")
    failures = []
    if peak_allocated > process_budget:
        failures.append(
            f"{title}: peak allocated {peak_allocated} > process budget {process_budget}"
        )
    for op in stats.get("ops", []):
        if op.get("peak_allocated", 0) > op.get("projected_mem", 0):
            failures.append(
                f"{title}: {op.get('name')} ({op.get('func')}): peak allocated"
                f" {op['peak_allocated']} > projected {op.get('projected_mem')}"
            )
    if growth > process_budget:
        failures.append(f"{title}: peak RSS growth {growth} > process budget {process_budget}")
    return values, stats, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20_000, help="rows and columns of a and b")
    parser.add_argument("--chunk-rows", type=int, default=2_000, help="rows of a chunk")
    parser.add_argument("--chunk-cols", type=int, default=1_000, help="columns of a chunk")
    parser.add_argument("--allowed-mem", default="200MB", help="memory one task may use")
    parser.add_argument("--workers", type=int, default=2, help="tasks running at once")
    parser.add_argument(
        "--work-dir", default=None, help="directory for intermediates and the Zarr output"
    )
    args = parser.parse_args(argv)

    work_dir = args.work_dir or tempfile.mkdtemp(prefix="cubego-demo-")
    spec = cubego.Spec(
        work_dir=work_dir,
        allowed_mem=args.allowed_mem,
        executor_name="threads",
        executor_options={"max_workers": args.workers},
    )
    n, chunks = args.size, (args.chunk_rows, args.chunk_cols)
    a = cubego.random.random((n, n), chunks=chunks, spec=spec)
    b = cubego.random.random((n, n), chunks=chunks, spec=spec)
    budget = spec.allowed_mem * args.workers
    data = a.nbytes + b.nbytes
    chunk_bytes = a.itemsize * chunks[0] * chunks[1]
    print("cubego demo: c = a * b + 1 written to Zarr on disk, then mean(c, axis=0) read back")
    print(f"  a, b            {a.shape} float64, chunks {a.chunksize} ({_fmt(chunk_bytes)})")
    print(f"  data size       {_fmt(data)} in, {_fmt(a.nbytes)} written and read back")
    print(
        f"  allowed_mem     {_fmt(spec.allowed_mem)} per task x {args.workers} workers"
        f" = {_fmt(budget)} ({data / budget:.1f}x smaller than the data)"
    )
    target = os.path.join(work_dir, "c.zarr")
    failures: list[str] = []
    try:
        stored = cubego.to_zarr(a * b + 1, target, compute=False)
        _, _, f1 = _stage(f"stage 1: write c to {target}", (stored,), budget)
        c = cubego.from_zarr(target, spec=spec)
        mean = cubego.mean(c, axis=0)
        (values,), _, f2 = _stage("stage 2: mean(c, axis=0) from Zarr", (mean,), budget)
        failures += f1 + f2

        # Check a sample against numpy: the first columns of a and b are small.
        k = min(5, n)
        a_cols, b_cols = cubego.compute(a[:, :k], b[:, :k])
        expected = np.mean(a_cols * b_cols + 1, axis=0)
        correct = np.allclose(values[:k], expected, rtol=1e-10, atol=0)
        print(f"sample check      {'ok' if correct else 'WRONG'}: result[:{k}] = {values[:k]}")
        if not correct:
            failures.append(f"result[:{k}] = {values[:k]} but numpy gives {expected}")
    finally:
        if args.work_dir is None:
            shutil.rmtree(work_dir, ignore_errors=True)
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    if not failures:
        print("memory            every measured peak is within its projection")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
