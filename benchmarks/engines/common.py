"""What every engine runner shares: the job/result protocol and self-measurement.

A runner is started as ``python <engine>_runner.py job.json`` in its own
process. It runs one case of one workload, measures itself around the timed
section, and prints exactly one line ``BENCH_RESULT {json}`` on stdout (also
when the case fails). Standard library and numpy only: the cubego runner runs
in the project's virtual environment, the others in the peers' one.

Result fields (all runners)
---------------------------
ok, error, error_kind ("not_supported", "refused", "memory", "error"),
wall_s (timed section: building the plan, computing, storing), cpu_s (user +
sys of this process over the timed section), t_start/t_end (epoch seconds of
the timed section, to align the parent's memory samples), rss_start
(RSS before the timed section), rss_hwm (the kernel's high-water mark
``VmHWM`` over the timed section when it can be reset, else over the whole
process), rss_hwm_process (over the whole process). Not ``ru_maxrss``: Linux
carries the parent's peak across fork and exec into it, so a child of a big
driver would report the driver's size.
io_read_bytes/io_write_bytes (``/proc/self/io`` over the timed section: bytes
this process sent to storage), output_bytes (the stored output on disk),
intermediate_written (write_bytes less output_bytes: what went to
intermediates, even if the engine deleted them already),
intermediate_bytes/intermediate_files (what is left in the work dir),
num_ops/num_tasks, ops ([{name, func, num_tasks, projected_mem, measured_mem}]),
result_files (the small results, saved as .npz for the driver to compare),
versions, warnings, notes.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import sys
import time
import traceback
import warnings
from collections.abc import Callable

import numpy as np

MARKER = "BENCH_RESULT "


class NotSupported(Exception):
    """The engine cannot run this case (a missing feature, not a failure)."""


def read_status(field: str) -> int | None:
    """A ``/proc/self/status`` size field (``VmRSS``, ``VmHWM``) in bytes."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def reset_hwm() -> bool:
    """Reset the kernel's peak-RSS mark of this process (Linux ``clear_refs`` 5)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def read_io() -> dict:
    out = {}
    try:
        with open("/proc/self/io") as f:
            for line in f:
                k, _, v = line.partition(":")
                out[k.strip()] = int(v)
    except OSError:
        pass
    return out


def cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def du(path: str | None) -> tuple[int, int]:
    total = files = 0
    if not path or not os.path.exists(path):
        return 0, 0
    for root, _, names in os.walk(path):
        for n in names:
            try:
                total += os.lstat(os.path.join(root, n)).st_size
                files += 1
            except OSError:
                pass
    return total, files


def save_results(job: dict, arrays) -> list[str]:
    """Save small results for the driver to compare between engines."""
    if arrays is None or not job.get("result_path"):
        return []
    arrays = [np.asarray(a) for a in arrays]
    np.savez(job["result_path"], *arrays)
    return [job["result_path"]]


def classify(exc: BaseException) -> str:
    if isinstance(exc, NotSupported | NotImplementedError):
        return "not_supported"
    if isinstance(exc, MemoryError):
        return "memory"
    text = str(exc)
    if "allowed_mem" in text or "exceeds" in text and "mem" in text:
        return "refused"
    return "error"


class Outcome:
    """What a case function returns: results to compare and the engine's plan stats."""

    def __init__(self, results=None, stats=None, notes: list[str] | None = None):
        self.results = results
        # A dict, or a function returning one, called after the timed section.
        self.stats = stats or {}
        self.notes = notes or []


def main(engine: str, cases: dict[str, Callable[[dict], Outcome]], versions: Callable[[], dict]):
    """Run the job named on the command line and print its result line."""
    with open(sys.argv[1]) as f:
        job = json.load(f)
    result: dict = {"engine": engine, "case": job["case_key"], "ok": False, "error": None}
    caught: list[warnings.WarningMessage] = []
    try:
        result["versions"] = versions()
        result["versions"]["python"] = platform.python_version()
        result["versions"]["numpy"] = np.__version__
    except Exception as e:  # noqa: BLE001 - versions are informative only
        result["versions"] = {"error": repr(e)}
    fn = cases.get(job["case_key"])
    try:
        if fn is None:
            raise NotSupported(f"{engine} has no implementation of {job['case_key']}")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            hwm_before = read_status("VmHWM") or 0
            reset = reset_hwm()
            rss0 = read_status("VmRSS")
            io0 = read_io()
            cpu0 = cpu_seconds()
            t0 = time.time()
            p0 = time.perf_counter()
            outcome = fn(job)
            p1 = time.perf_counter()
            t1 = time.time()
            cpu1 = cpu_seconds()
            io1 = read_io()
            hwm = read_status("VmHWM")
        inter_bytes, inter_files = du(job.get("work_dir"))
        out_bytes, _ = du(job.get("output"))
        written = io1.get("write_bytes", 0) - io0.get("write_bytes", 0)
        result.update(
            ok=True,
            wall_s=p1 - p0,
            cpu_s=cpu1 - cpu0,
            t_start=t0,
            t_end=t1,
            rss_start=rss0,
            rss_hwm=hwm,
            rss_hwm_reset=reset,
            rss_hwm_process=max(hwm_before, hwm or 0),
            io_read_bytes=io1.get("read_bytes", 0) - io0.get("read_bytes", 0),
            io_write_bytes=written,
            io_wchar=io1.get("wchar", 0) - io0.get("wchar", 0),
            io_rchar=io1.get("rchar", 0) - io0.get("rchar", 0),
            output_bytes=out_bytes,
            intermediate_written=max(0, written - out_bytes),
            intermediate_bytes=inter_bytes,
            intermediate_files=inter_files,
            result_files=save_results(job, outcome.results),
            notes=outcome.notes,
        )
        stats = outcome.stats() if callable(outcome.stats) else outcome.stats
        result.update(stats)
    except BaseException as e:  # noqa: BLE001 - every failure becomes a result line
        result["error"] = f"{type(e).__name__}: {e}"[:2000]
        result["error_kind"] = classify(e)
        result["traceback"] = traceback.format_exc()[-3000:]
    result["warnings"] = sorted({f"{w.category.__name__}: {w.message}"[:300] for w in caught})
    sys.stdout.write(MARKER + json.dumps(result, default=_json_default) + "\n")
    sys.stdout.flush()


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


# A shard of the ``shard`` codec holds this many chunks along each dimension.
SHARD_CHUNKS = 2


def shard_shape(codec: str, shape, chunks) -> tuple | None:
    """The shard shape for a codec name: ``None`` unless the codec is ``shard``
    (zstd inside ``sharding_indexed``, up to ``SHARD_CHUNKS`` chunks a side)."""
    if codec != "shard":
        return None
    return tuple(c * min(SHARD_CHUNKS, -(-s // c)) for s, c in zip(shape, chunks, strict=True))
