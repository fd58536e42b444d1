"""Benchmark driver: cubego side by side with Cubed, Dask and numpy (W1–W8).

Run it with the peers' interpreter (it needs zarr, psutil and matplotlib)::

    benchmarks/.venv-peers/bin/python benchmarks/run.py --quick
    benchmarks/.venv-peers/bin/python benchmarks/run.py --sizes M --workloads W1,W2,W3,W7

Inputs are written once per size and variant by zarr-python (untimed). Every
(case, engine, round) runs in its own process (``engines/<engine>_runner.py``
with a JSON job spec); rounds interleave the engines (A B C A B C …). Raw
results go to ``results/<label>.json``; ``RESULTS.md`` and ``plots/`` are
regenerated from every results file present. See README.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import datagen  # noqa: E402
import measure  # noqa: E402
import report  # noqa: E402
import workloads as wl  # noqa: E402

ENGINES = ("cubego", "cubed", "dask", "numpy")
RUNNER = {
    "cubego": "cubego_runner.py",
    "cubed": "cubed_runner.py",
    "dask": "dask_runner.py",
    "dask-zarrs": "dask_runner.py",
    "numpy": "numpy_runner.py",
}
# Failures that will not change from one round to the next: run them once.
DETERMINISTIC = ("not_supported", "refused", "timeout", "oom", "memory", "disk")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="cut-down sizes (size Q), a few minutes")
    p.add_argument(
        "--sizes",
        default=None,
        help="comma-separated sizes of T (tiny, tests only), Q, M, L (default M,L)",
    )
    p.add_argument("--workloads", default=",".join(wl.WORKLOADS), help="e.g. W1,W3")
    p.add_argument("--cases", default=None, help="only these cases, e.g. W1.add,W3.mean")
    p.add_argument("--engines", default=",".join(ENGINES), help="cubego,cubed,dask,numpy")
    p.add_argument(
        "--zarrs",
        choices=("auto", "yes", "no"),
        default="auto",
        help="also run dask with the zarrs codec pipeline on W8 (auto: if installed)",
    )
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument(
        "--variants",
        default=None,
        help="<codec>-<data>: codec none|zstd|blosc|shard, data uniform|compressible (default "
        f"{','.join(wl.DEFAULT_VARIANTS)}; --quick: none-uniform; W8 always adds the "
        "compressible zstd and blosc variants)",
    )
    p.add_argument("--constrained", action="store_true", help="cap each engine's memory")
    p.add_argument(
        "--mem-limit",
        default=None,
        help="memory cap in constrained mode (default 2 x allowed_mem + 2 GiB)",
    )
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--reserved-mem", default="100MB", help="reserved_mem of cubego and Cubed")
    p.add_argument("--data-dir", default=os.path.join(HERE, "data"))
    p.add_argument("--work-dir", default=os.path.join(HERE, "work"))
    p.add_argument("--results-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--label", default=None, help="results file name (default from the mode)")
    p.add_argument("--keep-data", action="store_true", help="keep M/L inputs after use")
    p.add_argument("--cold", action="store_true", help="drop the page cache before each run")
    p.add_argument(
        "--min-free-disk",
        default="5GB",
        help="kill a run (status 'disk') when the work dir's disk has less free space than this",
    )
    p.add_argument(
        "--cubego-python",
        default=os.path.join(REPO, ".venv", "bin", "python"),
        help="interpreter with cubego installed",
    )
    p.add_argument("--peers-python", default=sys.executable, help="interpreter with the peers")
    p.add_argument(
        "--update",
        action="store_true",
        help="re-run the selected cases into an existing results file (same --label), "
        "replacing the earlier records of the engines run (others keep theirs, noted as earlier)",
    )
    p.add_argument("--report-only", action="store_true", help="only regenerate RESULTS.md")
    p.add_argument("--no-report", action="store_true", help="do not write RESULTS.md and plots")
    p.add_argument("--results-md", default=os.path.join(HERE, "RESULTS.md"))
    p.add_argument("--plots-dir", default=os.path.join(HERE, "plots"))
    return p.parse_args(argv)


def parse_size(s: str) -> int:
    units = {
        "": 1,
        "b": 1,
        "kb": 10**3,
        "mb": 10**6,
        "gb": 10**9,
        "kib": 2**10,
        "mib": 2**20,
        "gib": 2**30,
    }
    s = s.strip().lower()
    num = s.rstrip("abcdefghijklmnopqrstuvwxyz")
    return int(float(num) * units[s[len(num) :]])


# ---------------------------------------------------------------- environment


def _run_text(cmd: list[str], timeout: float = 60) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine_info(data_dir: str) -> dict:
    import psutil

    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    os.makedirs(data_dir, exist_ok=True)
    usage = shutil.disk_usage(data_dir)
    fs = _run_text(["df", "-T", data_dir]).splitlines()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_bytes": psutil.virtual_memory().total,
        "disk_free_bytes": usage.free,
        "disk": fs[-1] if fs else "",
        "kernel": platform.release(),
        "cgroup": measure.cgroup_available(),
    }


PROBE = r"""
import json, warnings
warnings.simplefilter("ignore")
import cubego
out = {"cubego": cubego.__version__}
try:
    a = cubego.ones((4, 4), chunks=2)
    cubego.sum(cubego.matmul(a, a.T)).compute()
    out["transpose"] = True
except Exception as e:
    out["transpose"] = False
    out["transpose_error"] = f"{type(e).__name__}: {e}"
try:
    from cubego.binding import libcubego as _lib
    out["library"] = _lib.version() if hasattr(_lib, "version") else None
except Exception as e:
    out["library"] = repr(e)
print(json.dumps(out))
"""


def probe_cubego(python: str) -> dict:
    text = _run_text([python, "-c", PROBE], timeout=120)
    try:
        info = json.loads(text.splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": f"cubego probe failed with {python}"}
    info["git"] = _run_text(["git", "-C", REPO, "rev-parse", "--short", "HEAD"]) or "no commit"
    dirty = _run_text(["git", "-C", REPO, "status", "--porcelain"])
    info["git_dirty"] = bool(dirty)
    return info


def peer_versions() -> dict:
    import zarr

    out = {"python": platform.python_version(), "numpy": np.__version__, "zarr": zarr.__version__}
    for mod in ("cubed", "dask", "numcodecs", "zarrs", "psutil", "matplotlib"):
        try:
            m = __import__(mod)
            out[mod] = getattr(m, "__version__", "installed")
        except ImportError:
            out[mod] = None
    return out


def _read_file(path: str) -> None:
    """Read a file to its end in 16 MiB pieces, unbuffered (the probes' reader)."""
    block = bytearray(16 * 2**20)
    with open(path, "rb", buffering=0) as f:
        while f.readinto(block):
            pass


def measure_io(work_dir: str, total: int, files: int = 8, repeats: int = 5) -> dict:
    """Page-cache write and hot read bandwidth with 2 threads: the warm I/O roofline.

    The best of *repeats* passes (the machine is noisy; a roofline is the best
    it can do).
    """
    d = os.path.join(work_dir, "io-probe")
    os.makedirs(d, exist_ok=True)
    size = total // files
    buf = np.random.default_rng(0).random(size // 8).tobytes()
    paths = [os.path.join(d, f"f{i}") for i in range(files)]

    def write(path):
        with open(path, "wb") as f:
            f.write(buf)

    best_w = best_r = 0.0
    n = size * files
    with ThreadPoolExecutor(2) as pool:
        for _ in range(repeats):
            for p in paths:
                if os.path.exists(p):
                    os.remove(p)
            t0 = time.perf_counter()
            list(pool.map(write, paths))
            t1 = time.perf_counter()
            list(pool.map(_read_file, paths))
            t2 = time.perf_counter()
            best_w = max(best_w, n / (t1 - t0))
            best_r = max(best_r, n / (t2 - t1))
    shutil.rmtree(d, ignore_errors=True)
    return {"bytes": n, "write_Bps": best_w, "read_Bps": best_r, "repeats": repeats}


def measure_disk(work_dir: str, total: int, files: int = 8, repeats: int = 3) -> dict:
    """The disk's own speeds with 2 threads: the cold roofline.

    Write: *files* files of random bytes written and fsync'ed, timed to the end
    of the last fsync (the rate the disk sustains: engines do not fsync, but
    once their output passes the kernel's dirty-page limit they write at this
    rate). Read: the files *repeats* times, each after syncing and dropping the
    page cache (needs root; without it the result is the page cache's speed,
    and ``dropped`` says so). The best pass of each.
    """
    d = os.path.join(work_dir, "io-probe-cold")
    os.makedirs(d, exist_ok=True)
    size = total // files
    buf = np.random.default_rng(1).random(size // 8).tobytes()
    paths = [os.path.join(d, f"f{i}") for i in range(files)]

    def write(path):
        with open(path, "wb") as f:
            f.write(buf)
            f.flush()
            os.fsync(f.fileno())

    best_r = best_w = 0.0
    dropped = os.access("/proc/sys/vm/drop_caches", os.W_OK)
    with ThreadPoolExecutor(2) as pool:
        for i in range(repeats):
            if i < 2:
                for p in paths:
                    if os.path.exists(p):
                        os.remove(p)
                drop_caches()
                t0 = time.perf_counter()
                list(pool.map(write, paths))
                best_w = max(best_w, size * files / (time.perf_counter() - t0))
            drop_caches()
            t0 = time.perf_counter()
            list(pool.map(_read_file, paths))
            best_r = max(best_r, size * files / (time.perf_counter() - t0))
    shutil.rmtree(d, ignore_errors=True)
    return {
        "bytes": size * files,
        "read_Bps": best_r,
        "write_Bps": best_w,
        "repeats": repeats,
        "dropped": dropped,
    }


def measure_fill(paths, limit: int, segments: int = 4) -> dict:
    """How fast reads through the page cache fill it, as it fills: the case's
    own input files read with 2 threads after dropping the cache, in order,
    up to *limit* bytes, timed in *segments* equal parts.

    The disk probe reads 4 GiB; a pass that leaves much more than that in
    the cache may fill it slower. On a VM whose free memory goes back to its
    host (virtio-balloon free page reporting), each page the cache takes
    faults to the host on first touch: on the 2-core Intel VM of
    2026-12-07, reads through the cache ran at 1.9 GB/s for the first
    ~4 GB, then at 0.5-0.9 GB/s, while direct reads kept 1.8-2.0 GB/s.
    ``roofline`` uses the parts' rates to price the cache a later pass reads.
    """
    files = []
    for path in paths:
        for root, _, names in os.walk(path):
            files += [os.path.join(root, n) for n in names]
    files.sort()
    drop_caches()
    marks = []  # (bytes read, seconds) after each file, in order
    done, t0 = 0, time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        for i in range(0, len(files), 2):
            batch = files[i : i + 2]
            list(pool.map(_read_file, batch))
            done += sum(os.path.getsize(f) for f in batch)
            marks.append((done, time.perf_counter() - t0))
            if done >= limit:
                break
    drop_caches()
    parts = []
    if done > 0:
        step, last = done / segments, (0, 0.0)
        for k in range(1, segments + 1):
            b, t = next(m for m in marks if m[0] >= min(k * step, done))
            if b > last[0] and t > last[1]:
                parts.append({"bytes": b - last[0], "Bps": (b - last[0]) / (t - last[1])})
                last = (b, t)
    return {"bytes": done, "parts": parts}


def cached_passes_s(read: int, cached: int, passes: int, disk: float, cache: float, fill: list[dict]) -> tuple[float, int]:
    """The cheapest way to make *passes* further reads of *read* bytes after
    a first read from disk, with up to *cached* bytes left in the page cache
    by the first: the extra seconds, and the bytes the cache holds for it.

    Caching a byte costs the first read 1/fill - 1/disk more than reading
    it directly (the fill rate of the part of the cache it lands in:
    *fill*, measure_fill's parts, the last extended to the rest), and saves
    each further read 1/disk - 1/cache. The cache fills in order, so the
    choice is how far to fill it: every prefix is priced, and the cheapest
    taken (no fill probe: the cache fills at the disk's speed).
    """
    parts = fill or [{"bytes": cached, "Bps": disk}]
    best = (passes * read / disk, 0)
    held, extra = 0, 0.0
    for i, part in enumerate(parts):
        n = cached - held if i == len(parts) - 1 else min(part["bytes"], cached - held)
        if n <= 0:
            break
        extra += n * max(0.0, 1 / part["Bps"] - 1 / disk)
        held += n
        cost = extra + passes * (held / cache + (read - held) / disk)
        if cost < best[0]:
            best = (cost, held)
    return best


def dirty_limit(ram: int) -> int:
    """Bytes of dirty page cache before a writer must wait for the disk
    (``vm.dirty_bytes``, else ``vm.dirty_ratio`` % of RAM: an upper bound, as
    the kernel takes the ratio of free and reclaimable memory only)."""

    def read(name):
        try:
            with open(f"/proc/sys/vm/{name}") as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return 0

    return read("dirty_bytes") or int(ram * (read("dirty_ratio") or 20) / 100)


def drop_caches() -> None:
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3")
    except OSError:
        pass


# ---------------------------------------------------------------- runs


def numpy_fits(case: wl.Case, ram: int, mem_limit: int | None) -> bool:
    cap = min(0.6 * ram, mem_limit or ram)
    return case.numpy_mem <= cap


def job_for(case, engine, variant, size, inputs, work, round_, args, transpose) -> dict:
    codec = variant.split("-")[0] if variant != "virtual" else "none"
    job = {
        "engine": engine,
        "case_key": case.key,
        "size": size,
        "variant": variant,
        "round": round_,
        "inputs": inputs,
        "work_dir": os.path.join(work, "intermediates"),
        "allowed_mem": case.allowed_mem,
        "reserved_mem": parse_size(args.reserved_mem),
        "workers": args.workers,
        "params": case.params,
        "transpose": transpose,
        "output": None,
        "output_spec": None,
        "result_path": None,
    }
    if case.output is not None:
        job["output"] = os.path.join(work, "output.zarr")
        job["output_spec"] = {
            "shape": list(case.output.shape),
            "chunks": list(case.output.chunks),
            "dtype": case.output.dtype,
            "codec": codec,
        }
    elif round_ == 0:
        job["result_path"] = os.path.join(work, "result.npz")
    return job


def status_of(pr: measure.ProcRun) -> tuple[str, str | None]:
    res = pr.result or {}
    if pr.disk_low:
        return "disk", f"killed: {pr.disk_low}"
    if pr.timed_out:
        return "timeout", "killed at the time limit"
    if pr.cgroup and pr.cgroup.get("oom_kills"):
        return "oom", "killed by the cgroup's OOM killer"
    if pr.signal is not None and not res:
        return "crash", f"killed by signal {pr.signal}"
    if res.get("ok"):
        return "ok", None
    if res:
        return res.get("error_kind") or "error", res.get("error")
    return "crash", f"exit {pr.exit_code}, no result line: {pr.stderr_tail[-500:]}"


def run_one(case, engine, variant, size, inputs, round_, args, state) -> dict:
    tag = f"{size}-{variant}-{case.key}-{engine}-r{round_}"
    work = os.path.join(args.work_dir, tag)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    job = job_for(case, engine, variant, size, inputs, work, round_, args, state["transpose"])
    job_path = os.path.join(work, "job.json")
    with open(job_path, "w") as f:
        json.dump(job, f, indent=1)
    python = args.cubego_python if engine == "cubego" else args.peers_python
    cmd = [python, os.path.join(HERE, "engines", RUNNER[engine]), job_path]
    # Every engine starts with its inputs where the roofline counts them
    # read from, whatever the run before it left in the page cache or
    # evicted: on disk (cache dropped) for a cold run or inputs larger than
    # the cache, else in the cache.
    # And with no earlier writes pending: the output of the run before
    # (4.3 GB for W1.chain at L), or inputs just generated, still being
    # written back would make the kernel throttle this run's own writes to
    # the disk's speed once the dirty pages of both pass its dirty-page
    # limit, a cost of the run before; the roofline counts a write under
    # that limit at the page cache's speed.
    if args.cold or not fits_page_cache(case, inputs, args, state):
        drop_caches()
    else:
        warm(inputs.values())
        os.sync()
    logs = os.path.join(args.work_dir, "logs")
    os.makedirs(logs, exist_ok=True)
    pr = measure.run(
        cmd,
        measure.child_env(args.workers),
        args.timeout,
        os.path.join(logs, tag),
        mem_limit=state["mem_limit"] if args.constrained else None,
        disk_guard=(args.work_dir, parse_size(args.min_free_disk)),
    )
    status, error = status_of(pr)
    res = pr.result or {}
    _measure_ops_from_samples(res.get("ops") or [], pr.samples)
    t0 = res.get("t_start") or (pr.samples[0][0] if pr.samples else time.time())
    rec = {
        "size": size,
        "variant": variant,
        "workload": case.workload,
        "case": case.key,
        "engine": engine,
        "round": round_,
        "status": status,
        "error": error,
        "constrained": bool(args.constrained),
        "wall_s": res.get("wall_s"),
        "cpu_s": res.get("cpu_s"),
        "proc_wall_s": pr.proc_wall_s,
        "proc_cpu_s": pr.proc_cpu_s,
        "peak_rss": max(pr.sampled_peak_rss, res.get("rss_hwm_process") or 0) or None,
        "sampled_peak_rss": pr.sampled_peak_rss,
        "ru_maxrss": pr.ru_maxrss,
        "rss_hwm": res.get("rss_hwm"),
        "rss_start": res.get("rss_start"),
        "io_write_bytes": res.get("io_write_bytes"),
        "io_read_bytes": res.get("io_read_bytes"),
        "intermediate_bytes": res.get("intermediate_bytes"),
        "intermediate_written": res.get("intermediate_written"),
        "output_bytes": res.get("output_bytes"),
        "intermediate_files": res.get("intermediate_files"),
        "num_ops": res.get("num_ops"),
        "num_tasks": res.get("num_tasks"),
        "ops": res.get("ops") or [],
        "measured_mem_kind": res.get("measured_mem_kind"),
        "engine_stats": res.get("engine_stats"),
        "notes": res.get("notes") or [],
        "warnings": res.get("warnings") or [],
        "versions": res.get("versions"),
        "cgroup": pr.cgroup,
        "limit_kind": pr.limit_kind,
        "timeline": measure.downsample(pr.samples, t0),
        "timed": [0.0, round((res.get("t_end") or t0) - t0, 3)] if res.get("t_end") else None,
        "read_bytes": case.read_bytes,
        "write_bytes": case.write_bytes,
    }
    if status == "ok" and round_ == 0:
        if job["output"] and os.path.exists(job["output"]):
            rec["checksum"] = datagen.checksum(job["output"])
            codec = job["output_spec"]["codec"]
            want = (
                ["sharding_indexed"]
                if codec == "shard"
                else ["bytes"] + ([] if codec == "none" else [codec])
            )
            if rec["checksum"]["codecs"] != want:
                rec["notes"].append(
                    f"output written with codecs {rec['checksum']['codecs']}, not {want} as the "
                    "inputs (and the other engines' outputs)"
                )
        elif job["result_path"] and os.path.exists(job["result_path"]):
            keep = os.path.join(args.work_dir, "results", f"{tag}.npz")
            os.makedirs(os.path.dirname(keep), exist_ok=True)
            shutil.move(job["result_path"], keep)
            rec["result_file"] = keep
    shutil.rmtree(work, ignore_errors=True)
    return rec


def _measure_ops_from_samples(ops: list[dict], samples: list) -> None:
    """Measured memory of ops the engine does not measure itself (Cubed's threads executor).

    The process's peak RSS among the parent's samples while the op's tasks ran
    (``t_start``..``t_end`` from the task events); with no sample inside a short
    op, the nearest sample.
    """
    for op in ops:
        if op.get("measured_mem") is not None or op.get("t_start") is None or not samples:
            continue
        lo, hi = op["t_start"], op["t_end"]
        inside = [r for t, r in samples if lo <= t <= hi]
        if not inside:
            mid = (lo + hi) / 2
            inside = [min(samples, key=lambda s: abs(s[0] - mid))[1]]
        op["measured_mem"] = max(inside)
        op["measured_kind"] = "process RSS sampled while the op ran"


def agree(case: wl.Case, recs: list[dict]) -> None:
    """Compare round-0 results between engines (reference: numpy, dask, cubed, cubego)."""
    first = {r["engine"]: r for r in recs if r["round"] == 0 and r["status"] == "ok"}
    order = ["numpy", "dask", "dask-zarrs", "cubed", "cubego"]
    ref_engine = next((e for e in order if e in first and _has_result(first[e])), None)
    if ref_engine is None:
        return
    ref = first[ref_engine]
    ref_values = _values(ref)
    for r in first.values():
        if not _has_result(r):
            continue
        ok, detail = _compare(_values(r), ref_values, case.rtol, case.atol)
        r["agree"] = ok
        r["agree_ref"] = ref_engine
        r["agree_detail"] = detail
    for r in first.values():
        f = r.pop("result_file", None)
        if f and os.path.exists(f):
            os.remove(f)


def _has_result(r: dict) -> bool:
    return "checksum" in r or "result_file" in r


def _values(r: dict) -> list:
    if "checksum" in r:
        c = r["checksum"]
        return [np.float64(c["sum"]), np.float64(c["sumsq"])]
    with np.load(r["result_file"]) as z:
        return [z[k].astype(np.float64) for k in sorted(z.files, key=lambda k: int(k[4:]))]


def _compare(a: list, b: list, rtol: float, atol: float) -> tuple[bool, str]:
    if len(a) != len(b):
        return False, f"{len(a)} results vs {len(b)}"
    worst = worst_abs = 0.0
    for x, y in zip(a, b, strict=True):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            return False, f"shape {x.shape} vs {y.shape}"
        if not np.allclose(x, y, rtol=max(rtol, 1e-12), atol=atol, equal_nan=True):
            d = np.max(np.abs(x - y))
            return False, f"max abs diff {d:.3g} (rtol {rtol}, atol {atol:.3g})"
        scale = np.max(np.abs(y)) if y.size else 0.0
        diff = np.max(np.abs(x - y)) if x.size else 0.0
        worst_abs = max(worst_abs, float(diff))
        if scale:
            worst = max(worst, float(diff / scale))
    return True, f"max abs diff {worst_abs:.2g}, relative to the largest value {worst:.2g}"


# ---------------------------------------------------------------- roofline

# Page cache the inputs may not count on: the OS, the interpreters, the driver.
CACHE_MARGIN = 2 * 2**30
# The most bytes measure_fill reads to price the page cache a later pass
# reads (about 15 s on the 2-core Intel VM).
FILL_PROBE_MAX = 12 * 2**30


def cpu_probe(case: wl.Case, size: str, state: dict) -> dict:
    """numpy's single-core CPU seconds for *case*'s arithmetic (``workloads.cpu_probe``),
    timed in a child process with single-threaded BLAS, once per size and case."""
    cache = state.setdefault("cpu_probes", {})
    key = (size, case.key)
    if key not in cache:
        cmd = [
            state.get("peers_python") or sys.executable,
            os.path.join(HERE, "workloads.py"),
            "cpu-probe",
            size,
            case.key,
            json.dumps({"transpose": state["transpose"]}),
        ]
        try:
            p = subprocess.run(
                cmd, capture_output=True, text=True, env=measure.child_env(1), timeout=900
            )
            cache[key] = json.loads(p.stdout.strip().splitlines()[-1])[case.key]
        except (OSError, subprocess.SubprocessError, ValueError, IndexError, KeyError) as e:
            cache[key] = {"error": f"{type(e).__name__}: {e}"[:300]}
    return cache[key]


def _disk_bytes(path: str) -> int:
    """Bytes of the files under *path* (a stored array's size on disk)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def cache_room(case: wl.Case, args, state) -> int:
    """Page cache the inputs can count on: RAM less the engines' budget
    (``workers x allowed_mem``) less ``CACHE_MARGIN``."""
    return state["machine"]["ram_bytes"] - args.workers * case.allowed_mem - CACHE_MARGIN


def fits_page_cache(case: wl.Case, paths: dict, args, state) -> bool:
    return sum(_disk_bytes(p) for p in paths.values()) <= cache_room(case, args, state)


def warm(paths, passes: int = 2) -> None:
    """Read every file under *paths* *passes* times, so that they are in the
    page cache as any later read finds them.

    Twice, because Linux moves a cached page to its active list on the
    second read (an LRU move under a lock): after the disk probe had dropped
    the cache, the first engine run of a case paid that move for all its
    input (W4 at L, 17 GB: about 0.6 s of system CPU, 0.3 s of wall) and the
    engines after it did not. Two passes leave every engine the same state.
    """
    buf = bytearray(16 << 20)
    for _ in range(passes):
        for path in paths:
            for root, _, files in os.walk(path):
                for name in files:
                    try:
                        with open(os.path.join(root, name), "rb", buffering=0) as f:
                            while f.readinto(buf):
                                pass
                    except OSError:
                        pass


def roofline(case: wl.Case, paths: dict, recs: list[dict], cpu: dict, args, state) -> dict:
    """The case's roofline: max(I/O seconds, numpy CPU seconds / cores).

    I/O seconds = inputs' bytes on disk / read speed + output bytes on disk /
    write speed. Read speed: the disk's (the cold probe) when the run is
    ``--cold`` or the inputs do not fit in the page cache (more than RAM less
    the engines' budget, ``workers x allowed_mem``, less ``CACHE_MARGIN``);
    else the page cache's (the warm probe; ``run_one`` reads such inputs
    into the page cache before each engine's run). A case that must read its
    inputs more than once (``Case.passes``) and cannot hold them in the
    engines' memory pays each further read at the page cache's speed for
    the part the cache holds and the disk's for the rest. Write speed: the disk's when the
    output is larger than the kernel's dirty-page limit (a writer that does not
    fsync, as none of the engines does, then waits for the disk); else the page
    cache's. CPU: the case's ``Kernel`` timed on a sample by numpy on one core,
    scaled to the case, over the cores the engines get (``--workers``, at most
    the machine's).
    """
    io = state["meta"]["io"]
    disk = io.get("cold") or {}
    ram = state["machine"]["ram_bytes"]
    read = sum(_disk_bytes(p) for p in paths.values())
    outs = sorted(r["output_bytes"] for r in ok_records(recs) if r.get("output_bytes"))
    write = outs[len(outs) // 2] if outs else case.write_bytes
    room = cache_room(case, args, state)
    notes = []
    read_kind = "cold" if args.cold or read > room else "warm"
    if read_kind == "cold" and not (disk.get("read_Bps") and disk.get("dropped", True)):
        read_kind = "warm"
        notes.append("the inputs do not fit in the page cache, but this run has no disk probe")
    read_bps = disk["read_Bps"] if read_kind == "cold" else io["read_Bps"]
    limit = dirty_limit(ram)
    write_kind = "disk" if write > limit and disk.get("write_Bps") else "page cache"
    write_bps = disk["write_Bps"] if write_kind == "disk" else io["write_Bps"]
    io_s = read / read_bps + (write / write_bps if write else 0.0)
    # A computation that must read its inputs again (Case.passes) and
    # cannot hold them in the engines' memory: each further pass reads the
    # part the page cache can hold from there, the rest from disk.
    more_passes = case.passes - 1 if read > args.workers * case.allowed_mem else 0
    again_s = 0.0
    fill = None
    if more_passes:
        cached = read if read_kind == "warm" else max(0, min(read, room))
        if read_kind == "cold" and cached > 0:
            # What filling the cache costs on this machine, measured on the
            # case's own inputs (roofline runs once per case).
            fill = measure_fill(list(paths.values()), min(cached, FILL_PROBE_MAX))
            again_s, cached = cached_passes_s(read, cached, more_passes, read_bps, io["read_Bps"], fill["parts"])
            fill_note = ", ".join(f"{report.fmt_b(p['bytes'])} at {report.fmt_b(p['Bps'])}/s" for p in fill["parts"])
            notes.append(
                f"filling the page cache (read with 2 threads after dropping it, in parts): {fill_note}; "
                f"the cheapest further reads keep {report.fmt_b(cached)} of the inputs in the cache"
            )
        else:
            again_s = more_passes * (cached / io["read_Bps"] + (read - cached) / read_bps)
        where = f"{report.fmt_b(cached)} from the page cache" + (
            f" and {report.fmt_b(read - cached)} from disk" if read > cached else ""
        )
        notes.append(
            f"{1 + more_passes} reads of the inputs, which do not fit in the engines' memory "
            f"(the reads after the first: {where}, +{report.fmt_s(again_s)}; "
            f"one read only: {report.fmt_s(io_s)})"
        )
        io_s += again_s
    cores = max(1, min(args.workers, os.cpu_count() or 1))
    numpy_cpu = cpu.get("numpy_cpu_s")
    cpu_s = numpy_cpu / cores if numpy_cpu is not None else None
    if cpu.get("error"):
        notes.append(f"CPU probe failed: {cpu['error']}")
    if cpu_s is not None and cpu_s > io_s:
        bound = "CPU"
    elif read_kind == "cold":
        bound = "I/O cold"
    else:
        bound = "I/O warm" + (" (disk write)" if write_kind == "disk" else "")
    return {
        "seconds": max(io_s, cpu_s or 0.0) or None,
        "bound": bound,
        "io_s": io_s,
        "cpu_s": cpu_s,
        "numpy_cpu_s": numpy_cpu,
        "cores": cores,
        "read_bytes": read,
        "passes": 1 + more_passes,
        "again_s": again_s,
        "read_Bps": read_bps,
        "read_kind": read_kind,
        "write_bytes": write,
        "write_Bps": write_bps,
        "write_kind": write_kind,
        "cache_room": room,
        "fill": fill,
        "dirty_limit": limit,
        "notes": notes,
    }


def ok_records(recs: list[dict]) -> list[dict]:
    return [r for r in recs if r["status"] == "ok"]


def engines_for(case, variant, args, state) -> tuple[list[str], list[dict]]:
    """Engines that run *case*, and skip records for those that do not."""
    run, skipped = [], []
    for e in state["engines"]:
        if e == "numpy" and not numpy_fits(
            case, state["machine"]["ram_bytes"], state["mem_limit"] if args.constrained else None
        ):
            skipped.append(_skip(case, e, variant, "data does not fit in memory"))
            continue
        run.append(e)
    if case.workload == "W8" and state["zarrs"] and "dask" in run and "dask-zarrs" not in run:
        run.append("dask-zarrs")
    return run, skipped


def _skip(case, engine, variant, why) -> dict:
    return {
        "workload": case.workload,
        "case": case.key,
        "engine": engine,
        "variant": variant,
        "round": 0,
        "status": "skipped",
        "error": why,
        "ops": [],
        "timeline": [],
    }


def run_suite(args, state, out_path: str) -> dict:
    doc = {"meta": state["meta"], "runs": []}
    if args.update and os.path.exists(out_path):
        # Re-run some cases of an earlier run: keep its meta and its other cases.
        with open(out_path) as f:
            old = json.load(f)
        doc = {"meta": old["meta"], "runs": old["runs"]}
        doc["meta"].setdefault("updates", []).append(
            {k: state["meta"][k] for k in ("date", "command", "cubego", "io")}
        )
    requested = tuple(
        v.strip() for v in (args.variants or ",".join(wl.DEFAULT_VARIANTS)).split(",") if v.strip()
    )
    for v in requested:
        wl.parse_variant(v)
    only = set(args.cases.split(",")) if args.cases else None
    engines = {e.strip() for e in args.engines.split(",") if e.strip()}
    for size in state["sizes"]:
        for w in state["workloads"]:
            cases = [c for c in wl.cases(w, size) if only is None or c.key in only]
            variants: list[str] = []
            for c in cases:
                for v in wl.variants_for(c, requested):
                    if v not in variants:
                        variants.append(v)
            for variant in variants:
                vcases = [c for c in cases if variant in wl.variants_for(c, requested)]
                inputs = _prepare(vcases, size, variant, args, doc)
                for case in vcases:
                    # The engines run replace their own records of the case;
                    # an update that leaves an engine out keeps that engine's
                    # records, noted as such (Cubed's W4 at L needs 48 GB of
                    # disk for intermediates, which a re-run may not have).
                    here = (size, variant, case.key)
                    # The engines run include those a case adds (dask-zarrs
                    # beside dask on W8), whose earlier records go too.
                    replaced = engines | set(engines_for(case, variant, args, state)[0])
                    kept = []
                    for r in doc["runs"]:
                        if (r.get("size"), r.get("variant"), r["case"]) != here:
                            kept.append(r)
                        elif r["engine"] not in replaced:
                            note = (
                                f"measured before the update of {state['meta']['date']}, "
                                f"which re-ran only {', '.join(sorted(engines))}"
                            )
                            r["notes"] = [n for n in r.get("notes") or [] if "re-ran only" not in n] + [note]
                            kept.append(r)
                    doc["runs"] = kept
                    _run_case(case, size, variant, inputs, args, state, doc)
                    _save(doc, out_path)
                if size in ("M", "L") and not args.keep_data and variant != "virtual":
                    for c in vcases:
                        for a in c.inputs:
                            shutil.rmtree(
                                datagen.path_of(args.data_dir, size, variant, a), ignore_errors=True
                            )
    return doc


def _prepare(cases, size, variant, args, doc) -> dict:
    paths = {}
    if variant == "virtual":
        return paths
    t0 = time.perf_counter()
    written = 0
    for c in cases:
        for a in c.inputs:
            if a.name in paths:
                continue
            path, new = datagen.ensure_input(args.data_dir, size, variant, a)
            paths[a.name] = path
            written += a.nbytes if new else 0
    if written:
        took = time.perf_counter() - t0
        doc["meta"].setdefault("datagen", []).append(
            {"size": size, "variant": variant, "bytes": written, "seconds": took}
        )
        print(
            f"  inputs {size} {variant}: wrote {written / 1e9:.2f} GB in {took:.1f} s", flush=True
        )
    return paths


def _run_case(case, size, variant, paths, args, state, doc) -> None:
    engines, skipped = engines_for(case, variant, args, state)
    for s in skipped:
        s["size"] = size
        s["constrained"] = bool(args.constrained)
    recs = list(skipped)
    # Each input under its short name (a, b, u, v, x): the runners' vocabulary.
    inputs = {a.name.split("_", 1)[1]: paths[a.name] for a in case.inputs}
    cpu = cpu_probe(case, size, state) if engines else {}
    stopped: dict[str, str] = {}
    for r in range(args.rounds):
        for e in engines:
            if e in stopped:
                continue
            rec = run_one(case, e, variant, size, inputs, r, args, state)
            if rec["status"] == "crash":
                # A process that died without a result line (an import failing while the
                # package is being rebuilt, say) gets one more try; both are recorded.
                print(f"  {case.key} {e} r{r} crashed, retrying once: {rec['error'][:200]}")
                rec["status"] = "crash-retried"
                recs.append(rec)
                time.sleep(5)
                rec = run_one(case, e, variant, size, inputs, r, args, state)
            recs.append(rec)
            wall = f"{rec['wall_s']:.2f} s" if rec.get("wall_s") is not None else "-"
            rss = f"{(rec.get('peak_rss') or 0) / 1e9:.2f} GB"
            print(
                f"  {size} {variant:18s} {case.key:10s} {e:10s} r{r} {rec['status']:13s} "
                f"{wall:>9s} {rss:>8s}" + (f"  {rec['error'][:100]}" if rec["error"] else ""),
                flush=True,
            )
            if rec["status"] in DETERMINISTIC:
                stopped[e] = rec["status"]
    agree(case, recs)
    roof = roofline(case, inputs, recs, cpu, args, state) if engines else None
    for rec in recs:
        rec["roofline"] = roof
    if roof and roof["seconds"]:
        print(
            f"  {size} {variant:18s} {case.key:10s} roofline {roof['seconds']:.2f} s "
            f"({roof['bound']}; I/O {roof['io_s']:.2f} s, CPU {roof['cpu_s'] or 0:.2f} s)",
            flush=True,
        )
    doc["runs"].extend(recs)


def _save(doc: dict, path: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, default=float)
    os.replace(tmp, path)


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.report_only:
        if args.quick and args.sizes is None:
            sizes = ["Q"]
            if args.variants is None:
                args.variants = "none-uniform"
        else:
            sizes = [s.strip() for s in (args.sizes or "M,L").split(",") if s.strip()]
        for s in sizes:
            if s not in wl.SIZES:
                raise SystemExit(f"unknown size {s!r}; choose from {', '.join(wl.SIZES)}")
        workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
        for w in workloads:
            if w not in wl.WORKLOADS:
                raise SystemExit(f"unknown workload {w!r}")
        engines = [e.strip() for e in args.engines.split(",") if e.strip()]
        for e in engines:
            if e not in RUNNER:
                raise SystemExit(f"unknown engine {e!r}; choose from {', '.join(RUNNER)}")
        if "cubego" in engines and not os.path.exists(args.cubego_python):
            raise SystemExit(f"no interpreter at {args.cubego_python} (--cubego-python)")
        os.makedirs(args.work_dir, exist_ok=True)
        os.makedirs(args.results_dir, exist_ok=True)
        machine = machine_info(args.data_dir)
        versions = peer_versions()
        cubego_info = probe_cubego(args.cubego_python) if "cubego" in engines else {}
        zarrs = versions.get("zarrs") is not None if args.zarrs == "auto" else args.zarrs == "yes"
        allowed = 2 * wl.GB
        mem_limit = parse_size(args.mem_limit) if args.mem_limit else 2 * allowed + 2 * 2**30
        # One probe size for every mode, so that efficiencies compare across runs.
        io_bytes = 64 * 2**20 if sizes == ["T"] else 2**30
        print("measuring the I/O roofline ...", flush=True)
        io = measure_io(args.work_dir, io_bytes)
        if args.cold or not set(sizes) <= {"T", "Q"}:
            # 4 GiB: more than the disk's own cache, so the probe reads the disk.
            print("measuring the disk (page cache dropped) ...", flush=True)
            io["cold"] = measure_disk(args.work_dir, 4 * io_bytes)
        label = args.label or (
            ("quick" if sizes == ["Q"] else "tiny" if sizes == ["T"] else "full-" + "".join(sizes))
            + ("-constrained" if args.constrained else "")
        )
        meta = {
            "label": label,
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "command": " ".join(
                [
                    os.path.relpath(sys.executable, REPO),
                    "benchmarks/run.py",
                    *(argv if argv is not None else sys.argv[1:]),
                ]
            ),
            "machine": machine,
            "versions": versions,
            "cubego": cubego_info,
            "io": io,
            "sizes": sizes,
            "workloads": workloads,
            "engines": engines,
            "rounds": args.rounds,
            "workers": args.workers,
            "reserved_mem": parse_size(args.reserved_mem),
            "constrained": bool(args.constrained),
            "mem_limit": mem_limit if args.constrained else None,
            "timeout_s": args.timeout,
            "cold": bool(args.cold),
            "transpose": bool(cubego_info.get("transpose", True)),
        }
        state = {
            "sizes": sizes,
            "workloads": workloads,
            "engines": engines,
            "machine": machine,
            "mem_limit": mem_limit,
            "zarrs": zarrs,
            "meta": meta,
            "transpose": meta["transpose"],
            "peers_python": args.peers_python,
        }
        out_path = os.path.join(args.results_dir, f"{label}.json")
        t0 = time.perf_counter()
        print(f"writing {out_path}", flush=True)
        doc = run_suite(args, state, out_path)
        if not args.update:
            doc["meta"]["suite_seconds"] = time.perf_counter() - t0
        _save(doc, out_path)
        print(f"suite finished in {time.perf_counter() - t0:.0f} s", flush=True)
    if not args.no_report:
        report.write(args.results_dir, args.results_md, args.plots_dir)
        print(f"wrote {args.results_md} and {args.plots_dir}/", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
