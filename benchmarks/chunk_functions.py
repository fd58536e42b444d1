"""Cost of Python functions per block (map_blocks), stand-alone: not part of ``make test``.

Run with ``.venv/bin/python benchmarks/chunk_functions.py [--tasks N] [--repeat R]``.

1. Per-task overhead: a trivial ``map_blocks`` (``lambda b: b``) against the same
   op done natively by the engine (``negative``), over N one-element blocks; the
   difference per task is what calling into Python costs (ctypes callback, task
   JSON, numpy views, result checks), beyond the user's own time.
2. Parallel speed-up: a numpy-heavy ``map_blocks`` (numpy releases the GIL in
   sorting and BLAS) on 2 workers against 1. BLAS runs single-threaded here so
   that the speed-up is the engine's.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads BLAS
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import cubego  # noqa: E402
from cubego.binding import libcubego as _lib  # noqa: E402


def best_of(repeat: int, fn) -> tuple[float, float]:
    """The least wall-clock and the least CPU seconds (all threads) of *repeat* runs.

    CPU time is the figure to trust on a busy machine: it does not count the
    time the process waits for a core.
    """
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return min(walls), min(cpus)


def overhead(spec: cubego.Spec, tasks: int, repeat: int, workers: int) -> dict:
    x = cubego.ones((tasks,), chunks=1, spec=spec)
    python = cubego.map_blocks(lambda b: b, x)
    native = cubego.negative(x)
    python.compute(max_workers=workers)  # warm up: load, unpickle
    native.compute(max_workers=workers)
    calls0, nanos0 = _lib.python_stats()
    py_wall, py_cpu = best_of(repeat, lambda: python.compute(max_workers=workers))
    calls1, nanos1 = _lib.python_stats()
    go_wall, go_cpu = best_of(repeat, lambda: native.compute(max_workers=workers))
    us = 1e6 / tasks
    return {
        "workers": workers,
        "tasks": tasks,
        "callback_us": (nanos1 - nanos0) / max(calls1 - calls0, 1) / 1e3,
        "python_wall_us": py_wall * us,
        "native_wall_us": go_wall * us,
        "overhead_wall_us": (py_wall - go_wall) * us,
        "python_cpu_us": py_cpu * us,
        "native_cpu_us": go_cpu * us,
        "overhead_cpu_us": (py_cpu - go_cpu) * us,
    }


def heavy(b: np.ndarray) -> np.ndarray:
    m = b.reshape(512, 512)
    for _ in range(3):
        m = np.sort(m @ m.T / 512.0, axis=1)
    return m.reshape(b.shape)


def speedup(spec: cubego.Spec, blocks: int, repeat: int) -> dict:
    x = cubego.random.random((blocks * 512, 512), chunks=(512, 512), spec=spec)
    y = cubego.map_blocks(heavy, x, dtype=np.float64)
    y.compute(max_workers=1)
    t1, _ = best_of(repeat, lambda: y.compute(max_workers=1))
    t2, _ = best_of(repeat, lambda: y.compute(max_workers=2))
    block = np.random.default_rng(0).random((512, 512))
    own, _ = best_of(repeat, lambda: heavy(block))
    # The control: the same work on plain Python threads, what this machine allows now.
    work = [block] * blocks

    def threads(n: int) -> None:
        pool = [
            threading.Thread(target=lambda part: [heavy(b) for b in part], args=(work[i::n],))
            for i in range(n)
        ]
        for t in pool:
            t.start()
        for t in pool:
            t.join()

    c1, _ = best_of(repeat, lambda: threads(1))
    c2, _ = best_of(repeat, lambda: threads(2))
    return {
        "blocks": blocks,
        "one_worker_s": t1,
        "two_workers_s": t2,
        "speedup": t1 / t2,
        "function_s_per_block": own,
        "threads_speedup": c1 / c2,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--blocks", type=int, default=16)
    parser.add_argument("--only", choices=["overhead", "speedup"], default=None)
    parser.add_argument(
        "--work-dir",
        default="/dev/shm" if os.path.isdir("/dev/shm") else None,
        help="where intermediates go (default: a RAM disk, so that I/O does not drown the figures)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.work_dir) as work_dir:
        spec = cubego.Spec(work_dir=work_dir, allowed_mem="500MB")
        print(f"cores: {os.cpu_count()}, numpy {np.__version__}")
        for workers in (1, 2) if args.only != "speedup" else ():
            r = overhead(spec, args.tasks, args.repeat, workers)
            print(
                f"trivial map_blocks, {r['workers']} worker(s), {r['tasks']} one-element blocks:\n"
                f"  one call into Python (Go-measured, mean): {r['callback_us']:.1f} µs\n"
                f"  per task, wall: map_blocks {r['python_wall_us']:.1f} µs, "
                f"native {r['native_wall_us']:.1f} µs -> {r['overhead_wall_us']:+.1f} µs\n"
                f"  per task, CPU:  map_blocks {r['python_cpu_us']:.1f} µs, "
                f"native {r['native_cpu_us']:.1f} µs -> {r['overhead_cpu_us']:+.1f} µs"
            )
        if args.only == "overhead":
            return
        r = speedup(spec, args.blocks, args.repeat)
        print(
            f"numpy-heavy map_blocks, {r['blocks']} blocks of 512x512 "
            f"({r['function_s_per_block'] * 1e3:.0f} ms each): 1 worker {r['one_worker_s']:.2f} s, "
            f"2 workers {r['two_workers_s']:.2f} s -> speed-up {r['speedup']:.2f}x "
            f"(plain Python threads, same work: {r['threads_speedup']:.2f}x)"
        )


if __name__ == "__main__":
    main()
