"""Out-of-core demo: ``python -m cubego.demo`` (what ``make demo`` runs).

Computes ``mean(a * b + 1, axis=0)`` for two random arrays whose combined size is
many times the memory the computation may use (``allowed_mem`` per task times
``max_workers`` tasks), checks a sample of the result against numpy, and prints
the projected memory of the plan next to the memory measured while it ran.

The statistics come from ``cubego._last_stats()``: the ``cg_job_stats`` of the
most recent computation (see docs/capi.md). The exit status is non-zero if the
result is wrong or a measured peak exceeds its projection.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import cubego


def _fmt(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError  # pragma: no cover


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark (VmHWM) of this process, where Linux allows it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20_000, help="rows and columns of a and b")
    parser.add_argument("--chunk-rows", type=int, default=2_000, help="rows of a chunk")
    parser.add_argument("--chunk-cols", type=int, default=1_000, help="columns of a chunk")
    parser.add_argument("--allowed-mem", default="200MB", help="memory one task may use")
    parser.add_argument("--workers", type=int, default=2, help="tasks running at once")
    parser.add_argument("--work-dir", default=None, help="directory for intermediates")
    args = parser.parse_args(argv)

    spec = cubego.Spec(
        work_dir=args.work_dir,
        allowed_mem=args.allowed_mem,
        executor_name="threads",
        executor_options={"max_workers": args.workers},
    )
    n, chunks = args.size, (args.chunk_rows, args.chunk_cols)
    a = cubego.random.random((n, n), chunks=chunks, spec=spec)
    b = cubego.random.random((n, n), chunks=chunks, spec=spec)
    result = cubego.mean(a * b + 1, axis=0)

    data = a.nbytes + b.nbytes
    budget = spec.allowed_mem * args.workers
    print("cubego demo: mean(a * b + 1, axis=0) of two random arrays")
    chunk_bytes = a.itemsize * chunks[0] * chunks[1]
    print(f"  a, b            {a.shape} float64, chunks {a.chunksize} ({_fmt(chunk_bytes)})")
    print(f"  data size       {_fmt(data)}")
    print(
        f"  allowed_mem     {_fmt(spec.allowed_mem)} per task x {args.workers} workers"
        f" = {_fmt(budget)} ({data / budget:.1f}x smaller than the data)"
    )

    rss_before = _status_kb("VmRSS")
    reset = _reset_peak_rss()
    start = time.perf_counter()
    (values,) = cubego.compute(result)
    elapsed = time.perf_counter() - start
    stats = cubego._last_stats() or {}
    rss_peak = _status_kb("VmHWM") if reset else None

    # Check a sample against numpy: the first columns of a and b are small.
    k = min(5, n)
    a_cols, b_cols = cubego.compute(a[:, :k], b[:, :k])
    expected = np.mean(a_cols * b_cols + 1, axis=0)
    correct = np.allclose(values[:k], expected, rtol=1e-10, atol=0)

    projected = stats.get("max_projected_mem", 0)
    process_budget = stats.get("process_budget") or budget
    peak_allocated = stats.get("peak_allocated", 0)
    print(
        f"  computed in     {elapsed:.1f} s, {stats.get('num_tasks', '?')} tasks in"
        f" {stats.get('num_ops', '?')} ops"
    )
    print(
        f"  projected       {_fmt(projected)} per task (max over ops),"
        f" {_fmt(process_budget)} for the process"
    )
    print(f"  peak allocated  {_fmt(peak_allocated)} (chunk buffers, all tasks at once)")
    growth = None
    if stats.get("peak_rss") and stats.get("rss_start"):
        growth = stats["peak_rss"] - stats["rss_start"]
        print(f"  peak RSS growth {_fmt(growth)} (measured by the engine during the job)")
    if rss_before is not None and rss_peak is not None:
        python_growth = rss_peak - rss_before
        print(f"  peak RSS growth {_fmt(python_growth)} (kernel's high-water mark, this process)")
        growth = max(growth or 0, python_growth)
    print(f"  sample check    {'ok' if correct else 'WRONG'}: result[:{k}] = {values[:k]}")

    failures = []
    if not correct:
        failures.append(f"result[:{k}] = {values[:k]} but numpy gives {expected}")
    if peak_allocated > process_budget:
        failures.append(f"peak allocated {peak_allocated} > process budget {process_budget}")
    for op in stats.get("ops", []):
        if op.get("peak_allocated", 0) > op.get("projected_mem", 0):
            failures.append(
                f"{op.get('name')} ({op.get('func')}): peak allocated {op['peak_allocated']}"
                f" > projected {op.get('projected_mem')}"
            )
    if growth is not None and growth > process_budget:
        failures.append(f"peak RSS growth {growth} > process budget {process_budget}")
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    if not failures:
        print("  memory          measured peaks are within the projection")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
