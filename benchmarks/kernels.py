"""Per-chunk kernel throughput: cubego's Go kernels next to numpy, in one run.

    .venv/bin/python benchmarks/kernels.py [--rounds 3] [--best [--reps 40]]

Runs the Go benchmarks of ops/internal/kernels (1M-element chunks, one core:
``go test -bench -cpu 1``) and times the same operation with numpy on the
same sizes in this process (single-threaded BLAS is irrelevant here: these
are elementwise loops and reductions), round after round, interleaved, and
prints the median throughput of each in millions of elements per second.
With --best, each round times every kernel as the fastest of --reps calls
(Go's TestKernelRates, then numpy) and the best round is printed: on a busy
machine the medians of means swing several-fold between runs, the best
calls much less.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import time

import numpy as np

N = 1 << 20  # the Go benchmarks' chunk size
SIDE = 1 << 10  # the reductions' chunks are SIDE x SIDE

# Go benchmark name -> a numpy function of fresh operands doing the same work.
CASES = {
    "Binary/add/float64/contiguous": lambda a, b, o: np.add(a, b, out=o),
    "Binary/add/float32/contiguous": lambda a, b, o: np.add(a, b, out=o),
    "Binary/add/int32/contiguous": lambda a, b, o: np.add(a, b, out=o),
    "Binary/multiply/float32/contiguous": lambda a, b, o: np.multiply(a, b, out=o),
    "Binary/less/float64/contiguous": lambda a, b, o: np.less(a, b, out=o),
    "Binary/less/float32/contiguous": lambda a, b, o: np.less(a, b, out=o),
    "Binary/less/int32/contiguous": lambda a, b, o: np.less(a, b, out=o),
    "Binary/maximum/float64/contiguous": lambda a, b, o: np.maximum(a, b, out=o),
    "Binary/maximum/float32/contiguous": lambda a, b, o: np.maximum(a, b, out=o),
    "Binary/maximum/int32/contiguous": lambda a, b, o: np.maximum(a, b, out=o),
    "Binary/minimum/float64/contiguous": lambda a, b, o: np.minimum(a, b, out=o),
    "Binary/minimum/float32/contiguous": lambda a, b, o: np.minimum(a, b, out=o),
    "Binary/minimum/int32/contiguous": lambda a, b, o: np.minimum(a, b, out=o),
    "Binary/floor_divide/int64/contiguous": lambda a, b, o: np.floor_divide(a, b, out=o),
    "Unary/sqrt/float64": lambda a, b, o: np.sqrt(a, out=o),
    "Unary/sqrt/float32": lambda a, b, o: np.sqrt(a, out=o),
    "Unary/exp/float64": lambda a, b, o: np.exp(a, out=o),
    "Unary/exp/float32": lambda a, b, o: np.exp(a, out=o),
    "Unary/log/float64": lambda a, b, o: np.log(a, out=o),
    "Unary/log/float32": lambda a, b, o: np.log(a, out=o),
    "Reduce/sum/float64/all": lambda a, b, o: a.sum(),
    "Reduce/max/float64/all": lambda a, b, o: a.max(),
    "Reduce/min/float64/all": lambda a, b, o: a.min(),
    "Reduce/max/float32/all": lambda a, b, o: a.max(),
    "Reduce/min/float32/all": lambda a, b, o: a.min(),
    "Reduce/max/int32/all": lambda a, b, o: a.max(),
    "Reduce/min/int32/all": lambda a, b, o: a.min(),
    # Over the first axis of a 1024 x 1024 chunk, into a preallocated row.
    "Reduce/max/float64/axis0": lambda a, b, o: np.max(a.reshape(SIDE, SIDE), axis=0, out=o[:SIDE]),
    "Reduce/min/float64/axis0": lambda a, b, o: np.min(a.reshape(SIDE, SIDE), axis=0, out=o[:SIDE]),
    "Reduce/max/float32/axis0": lambda a, b, o: np.max(a.reshape(SIDE, SIDE), axis=0, out=o[:SIDE]),
    "Reduce/min/float32/axis0": lambda a, b, o: np.min(a.reshape(SIDE, SIDE), axis=0, out=o[:SIDE]),
    "Reduce/max/int32/axis0": lambda a, b, o: np.max(a.reshape(SIDE, SIDE), axis=0, out=o[:SIDE]),
    "Reduce/min/int32/axis0": lambda a, b, o: np.min(a.reshape(SIDE, SIDE), axis=0, out=o[:SIDE]),
    "Reduce/max/float64/axis1": lambda a, b, o: np.max(a.reshape(SIDE, SIDE), axis=1, out=o[:SIDE]),
}

DTYPE = {"float64": np.float64, "float32": np.float32, "int32": np.int32, "int64": np.int64}


def operands(name: str):
    dt = next((DTYPE[k] for k in DTYPE if f"/{k}" in name), np.float64)
    rng = np.random.default_rng(0)
    if np.issubdtype(dt, np.floating):  # as the Go benchmarks' data: uniform in [0.5, 1.5)
        a, b = (rng.random(N) + 0.5).astype(dt), (rng.random(N) + 0.5).astype(dt)
    else:
        a = (rng.random(N) * 100 + 1).astype(dt)
        b = (rng.random(N) * 100 + 1).astype(dt)
    # Both sides write into preallocated outputs (comparisons into bools).
    return a, b, np.empty(N, dtype=bool if "/less/" in name else dt)


def numpy_rate(name: str) -> float:
    a, b, o = operands(name)
    f = CASES[name]
    f(a, b, o)
    reps, start = 0, time.perf_counter()
    while time.perf_counter() - start < 0.3:
        f(a, b, o)
        reps += 1
    return reps * N / (time.perf_counter() - start) / 1e6


def go_rates(repo: str) -> dict[str, float]:
    pattern = "^Benchmark(" + "|".join(sorted({c.split("/")[0] for c in CASES})) + ")$"
    out = subprocess.run(
        ["go", "test", "./ops/internal/kernels", "-run", "^$", "-bench", pattern, "-cpu", "1"],
        cwd=repo,
        # The library is built with the SIMD kernels (Makefile, _build/backend.py): measure those.
        env={**os.environ, "GOEXPERIMENT": "simd"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rates = {}
    for line in out.splitlines():
        m = re.match(r"Benchmark(\S+)\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) Melem/s", line)
        if m and m.group(1) in CASES:
            rates[m.group(1)] = float(m.group(2))
    return rates


def numpy_best_rate(name: str, reps: int) -> float:
    a, b, o = operands(name)
    f = CASES[name]
    f(a, b, o)
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        f(a, b, o)
        best = min(best, time.perf_counter() - start)
    return N / best / 1e6


def go_best_rates(repo: str, reps: int) -> dict[str, float]:
    """TestKernelRates (ops/internal/kernels/bench_test.go): best of reps."""
    out = subprocess.run(
        ["go", "test", "./ops/internal/kernels", "-run", "^TestKernelRates$", "-count", "1", "-cpu", "1", "-v"],
        cwd=repo,
        env={**os.environ, "GOEXPERIMENT": "simd", "CUBEGO_KERNEL_RATES": " ".join(CASES), "CUBEGO_KERNEL_REPS": str(reps)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^RATE (\S+) ([\d.]+)$", out, re.M)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--best",
        action="store_true",
        help="time each kernel as the fastest of --reps calls, Go and numpy in turn within each "
        "round, and report the best round: what each does when it has the core, steadier than "
        "means on a busy machine",
    )
    parser.add_argument("--reps", type=int, default=40, help="calls per kernel and round with --best")
    args = parser.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    go: dict[str, list[float]] = {c: [] for c in CASES}
    py: dict[str, list[float]] = {c: [] for c in CASES}
    for _ in range(args.rounds):
        for c, r in (go_best_rates(repo, args.reps) if args.best else go_rates(repo)).items():
            go[c].append(r)
        for c in CASES:
            py[c].append(numpy_best_rate(c, args.reps) if args.best else numpy_rate(c))
    stat = max if args.best else statistics.median
    header = ("kernel (1M elements, 1 core)", "cubego Melem/s", "numpy Melem/s", "ratio")
    print(f"{header[0]:42} {header[1]:>15} {header[2]:>14} {header[3]:>7}")
    for c in CASES:
        g, p = stat(go[c] or [float("nan")]), stat(py[c])
        print(f"{c:42} {g:15.0f} {p:14.0f} {g / p:7.2f}")


if __name__ == "__main__":
    main()
