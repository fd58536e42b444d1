"""Run one engine job in its own process and measure it from the outside.

The parent samples the child's process tree RSS at 20 Hz with psutil, reaps the
child with ``os.wait4`` to get its CPU time (its ``ru_maxrss`` is kept for
reference only: Linux carries the parent's peak across fork and exec into it),
kills its process group at the time limit, and in constrained mode puts it in a
fresh cgroup (v1 memory controller, as root) or, without one, under an address
space limit (``RLIMIT_AS``).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

import psutil

MARKER = "BENCH_RESULT "
CGROUP_ROOT = "/sys/fs/cgroup/memory"

# Single-threaded BLAS and codecs in every child; the engines' own worker pools are 2.
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "BLIS_NUM_THREADS": "1",
}


def child_env(workers: int) -> dict:
    env = dict(os.environ)
    env.update(THREAD_ENV)
    env["GOMAXPROCS"] = str(workers)
    env["RAYON_NUM_THREADS"] = str(workers)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PYTHONPATH", None)
    return env


def cgroup_available() -> bool:
    return os.geteuid() == 0 and os.access(CGROUP_ROOT, os.W_OK)


class MemoryCgroup:
    """A cgroup v1 memory group with a hard limit, for one child process."""

    _count = 0

    def __init__(self, limit: int):
        MemoryCgroup._count += 1
        self.path = os.path.join(CGROUP_ROOT, f"cubego-bench-{os.getpid()}-{self._count}")
        os.makedirs(self.path, exist_ok=True)
        self._write("memory.limit_in_bytes", limit)
        if os.path.exists(os.path.join(self.path, "memory.memsw.limit_in_bytes")):
            try:
                self._write("memory.memsw.limit_in_bytes", limit)
            except OSError:
                pass
        self.limit = limit

    def _write(self, name: str, value) -> None:
        with open(os.path.join(self.path, name), "w") as f:
            f.write(str(value))

    def _read(self, name: str) -> str:
        try:
            with open(os.path.join(self.path, name)) as f:
                return f.read()
        except OSError:
            return ""

    def enter(self) -> None:
        """Move the calling process into the group (runs in the child before exec)."""
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def report(self) -> dict:
        oom_kills = 0
        for line in self._read("memory.oom_control").splitlines():
            k, _, v = line.partition(" ")
            if k == "oom_kill":
                oom_kills = int(v)
        return {
            "limit": self.limit,
            "max_usage": int(self._read("memory.max_usage_in_bytes").strip() or 0),
            "failcnt": int(self._read("memory.failcnt").strip() or 0),
            "oom_kills": oom_kills,
        }

    def remove(self) -> None:
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)


@dataclass
class ProcRun:
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    proc_wall_s: float = 0.0
    proc_cpu_s: float = 0.0
    ru_maxrss: int = 0
    sampled_peak_rss: int = 0
    samples: list = field(default_factory=list)  # [(epoch seconds, rss bytes)]
    cgroup: dict | None = None
    limit_kind: str | None = None
    result: dict | None = None
    stderr_tail: str = ""
    disk_low: str | None = None  # why the run was killed for lack of disk space


def _tree_rss(proc: psutil.Process) -> int:
    total = 0
    try:
        total += proc.memory_info().rss
        for c in proc.children(recursive=True):
            try:
                total += c.memory_info().rss
            except psutil.Error:
                pass
    except psutil.Error:
        return 0
    return total


def run(
    cmd: list[str],
    env: dict,
    timeout: float,
    log_prefix: str,
    mem_limit: int | None = None,
    hz: float = 20.0,
    disk_guard: tuple[str, int] | None = None,
) -> ProcRun:
    """Run *cmd*, sampling its memory, and parse its ``BENCH_RESULT`` line.

    With *disk_guard* ``(path, min_free)`` the child's process group is killed
    when the disk holding *path* has less than *min_free* bytes free (checked
    twice a second), so that a run's intermediates never fill the disk.
    """
    out = ProcRun()
    group = None
    preexec = None
    if mem_limit:
        if cgroup_available():
            group = MemoryCgroup(mem_limit)
            preexec = group.enter
            out.limit_kind = "cgroup v1 memory.limit_in_bytes"
        else:

            def preexec():
                resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))

            out.limit_kind = "RLIMIT_AS"
    stdout_path, stderr_path = log_prefix + ".out", log_prefix + ".err"
    start = time.time()
    with open(stdout_path, "w") as fo, open(stderr_path, "w") as fe:
        p = subprocess.Popen(
            cmd, stdout=fo, stderr=fe, env=env, preexec_fn=preexec, start_new_session=True
        )
    done = threading.Event()

    def sample():
        try:
            proc = psutil.Process(p.pid)
        except psutil.Error:
            return
        n = 0
        while not done.is_set():
            rss = _tree_rss(proc)
            if rss:
                out.samples.append((time.time(), rss))
            n += 1
            if disk_guard and n % max(1, int(hz / 2)) == 0 and out.disk_low is None:
                free = shutil.disk_usage(disk_guard[0]).free
                if free < disk_guard[1]:
                    out.disk_low = (
                        f"{free / 1e9:.1f} GB free on the work dir's disk, "
                        f"below the {disk_guard[1] / 1e9:.1f} GB floor (--min-free-disk)"
                    )
                    kill()
            done.wait(1.0 / hz)

    def kill():
        out.timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        _, status, ru = os.wait4(p.pid, 0)
    finally:
        timer.cancel()
        done.set()
        sampler.join()
    p.returncode = os.waitstatus_to_exitcode(status)
    out.proc_wall_s = time.time() - start
    out.proc_cpu_s = ru.ru_utime + ru.ru_stime
    out.ru_maxrss = ru.ru_maxrss * 1024
    out.sampled_peak_rss = max((r for _, r in out.samples), default=0)
    if os.WIFSIGNALED(status):
        out.signal = os.WTERMSIG(status)
    else:
        out.exit_code = os.WEXITSTATUS(status)
    if group is not None:
        out.cgroup = group.report()
        group.remove()
    with open(stdout_path) as f:
        for line in f:
            if line.startswith(MARKER):
                out.result = json.loads(line[len(MARKER) :])
    with open(stderr_path, errors="replace") as f:
        out.stderr_tail = f.read()[-2000:]
    return out


def downsample(samples: list, t0: float, n: int = 300) -> list:
    """At most *n* (seconds since *t0*, rss) points keeping each bucket's maximum."""
    if not samples:
        return []
    if len(samples) <= n:
        return [(round(t - t0, 3), r) for t, r in samples]
    step = len(samples) / n
    out = []
    for i in range(n):
        bucket = samples[int(i * step) : max(int((i + 1) * step), int(i * step) + 1)]
        t, r = max(bucket, key=lambda s: s[1])
        out.append((round(t - t0, 3), r))
    return out
