"""Engine scale from Python: build, plan and compute times from 1,000 to 1,000,000 tasks.

Issue #19, goal 4: building and fusing a plan of 1,000,000 tasks takes under a
second, and the engine's time per task stays flat from 1,000 to 1,000,000
tasks. This is ``BenchmarkScale`` (``engine/scale_bench_test.go``) driven
through the Python API::

    x = cubego.ones((n, 16), chunks=(1, 16))
    y = cubego.sum(cubego.sum((x + 1) * 2, axis=1))

n blocks of one row, fused into n tasks, then a tree reduction: about 1.06·n
tasks whose kernels cost next to nothing, so compute time per task is the
engine's (and the C ABI's) overhead. For each n it times, in a fresh process:

* build: the five array operations above (one ``cg_op`` each);
* plan: ``y.plan()`` (``cg_plan``: the plan built, fused and summarised);
* compute: ``y.compute()`` with intermediates in memory
  (``intermediate_mem="4GB"``), and with the default store
  (``--default-max``: intermediates past 32 MiB go to the work dir).

Run from the repository root; give ``--build NAME=PYTHONPATH`` once per build
to compare builds side by side (each is a directory holding the ``cubego``
package and its ``libcubego.so``), runs alternating between builds::

    PYTHONPATH=python .venv/bin/python benchmarks/scale_python.py \\
        --build before=/tmp/base/python --build after=python --rounds 2

Prints a Markdown table: per n and build, the median over rounds of each time,
and the compute time per task in µs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SIZES = (1_000, 10_000, 100_000, 1_000_000)


def child(n: int, stores: list[str]) -> dict:
    """One measurement in this process (a fresh one per call)."""
    import cubego

    # One-off costs of a process's first computation (the library's worker
    # pools, helper threads) are not the engine's per-task time.
    cubego.sum(cubego.ones((4,), chunks=2)).compute()
    t0 = time.perf_counter()
    x = cubego.ones((n, 16), chunks=(1, 16))
    y = cubego.sum(cubego.sum((x + 1) * 2, axis=1))
    t1 = time.perf_counter()
    plan = y.plan()
    t2 = time.perf_counter()
    out = {"build": t1 - t0, "plan": t2 - t1, "tasks": plan.num_tasks}
    for store in stores:
        kwargs = {"intermediate_mem": "4GB"} if store == "mem" else {}
        t0 = time.perf_counter()
        value = float(y.compute(**kwargs))
        out[f"compute_{store}"] = time.perf_counter() - t0
        if value != 64.0 * n:
            raise AssertionError(f"sum is {value}, expected {64.0 * n}")
    return out


def run(pythonpath: str, n: int, stores: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=pythonpath)
    env.pop("CUBEGO_LIB", None)
    cmd = [sys.executable, __file__, "--child", str(n), "--stores", ",".join(stores)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{cmd} with PYTHONPATH={pythonpath} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:.1f}" if ms < 100 else f"{ms:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", action="append", default=[], metavar="NAME=PYTHONPATH")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--default-max",
        type=int,
        default=100_000,
        help="largest n also computed with the default intermediate store (0: never)",
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--stores", default="mem", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.stores.split(","))))
        return

    builds = [b.split("=", 1) for b in args.build] or [
        ["current", os.environ.get("PYTHONPATH", "")]
    ]
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[tuple[int, str], list[dict]] = {}
    for n in sizes:
        stores = ["mem"] + (["default"] if n <= args.default_max else [])
        for r in range(args.rounds):
            # Alternate the builds' order every round, so neither always runs first.
            order = builds if r % 2 == 0 else builds[::-1]
            for name, path in order:
                res = run(path, n, stores)
                results.setdefault((n, name), []).append(res)
                print(f"# n={n} {name} round {r + 1}: {json.dumps(res)}", file=sys.stderr)

    print(
        "| tasks | build | build ms | plan ms | compute (mem) s | µs/task (mem) "
        "| compute (default) s | µs/task (default) |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        for name, _ in builds:
            rows = results[(n, name)]
            tasks = rows[0]["tasks"]

            def med(key: str, rows: list[dict] = rows) -> float | None:
                values = [row[key] for row in rows if key in row]
                return statistics.median(values) if values else None

            mem, default = med("compute_mem"), med("compute_default")
            cells = [
                f"{tasks:,}",
                name,
                _ms(med("build")),
                _ms(med("plan")),
                f"{mem:.2f}",
                f"{mem / tasks * 1e6:.1f}",
                "—" if default is None else f"{default:.2f}",
                "—" if default is None else f"{default / tasks * 1e6:.1f}",
            ]
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
