"""Hardening (issue #17): a lost intermediate is an error, never fill values;
computations of the same array at once, in threads or processes sharing a
work_dir, are all correct."""

import os
import pickle
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest

import cubego


def _plan(spec):
    """A sum over a rechunked intermediate: every task of the sum reads the
    intermediate from the work dir."""
    a = cubego.asarray(np.arange(60 * 8, dtype="f8").reshape(60, 8), chunks=(5, 8), spec=spec)
    b = (a + 1).rechunk((60, 1))
    return b, cubego.sum(b * 2, axis=0)


WANT = ((np.arange(60 * 8, dtype="f8").reshape(60, 8) + 1) * 2).sum(axis=0)


@pytest.mark.parametrize("resume", [False, True])
def test_work_dir_deleted_mid_compute_is_an_error_naming_the_chunk(tmp_path, resume):
    work = tmp_path / "work"
    spec = cubego.Spec(work_dir=str(work), allowed_mem="100MB", executor_name="single-threaded")
    b, _ = _plan(spec)
    calls = []

    def delete_work_dir_once(x):
        if not calls:
            shutil.rmtree(work)
        calls.append(1)
        return x * 2

    c = cubego.map_blocks(delete_work_dir_once, b, dtype=b.dtype)
    with pytest.raises(FileNotFoundError, match=r"chunk .*/c/0/\d+ .* not in the store"):
        c.compute(resume=resume, intermediate_mem=0)  # intermediates in the work dir


@pytest.mark.parametrize("resume", [False, True, "mixed"])
def test_threads_computing_the_same_array_are_all_correct(tmp_path, resume):
    spec = cubego.Spec(work_dir=str(tmp_path / "work"), allowed_mem="100MB")
    _, c = _plan(spec)
    results, errors = [], []

    def run(i):
        try:
            r = c.compute(resume=(i % 2 == 0) if resume == "mixed" else resume)
            results.append(r)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:2]
    assert len(results) == 10
    for r in results:
        np.testing.assert_array_equal(r, WANT)
    # The last computation to finish deleted the shared intermediates; a
    # resumed one's output stays, for d = -c.
    resume_dir = tmp_path / "work" / "cubego-resume"
    left = sorted(os.listdir(resume_dir)) if resume_dir.exists() else []
    assert len(left) <= 1, left


_WORKER = """
import pickle, sys
import numpy as np
import cubego
c = pickle.loads(sys.stdin.buffer.read())
for _ in range(3):
    np.save(sys.stdout.buffer, c.compute(resume=True))
"""


def test_processes_sharing_a_work_dir_are_all_correct(tmp_path):
    spec = cubego.Spec(work_dir=str(tmp_path / "work"), allowed_mem="100MB")
    _, c = _plan(spec)
    payload = pickle.dumps(c)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(4)
    ]
    for p in procs:
        p.stdin.write(payload)
        p.stdin.close()
    import io

    for p in procs:
        out, err = p.stdout.read(), p.stderr.read()
        assert p.wait(timeout=120) == 0, err.decode()[-2000:]
        buf = io.BytesIO(out)
        for _ in range(3):
            np.testing.assert_array_equal(np.load(buf), WANT)


_WRITER = """
import sys
import numpy as np
import cubego
from cubego.runtime.types import Callback

class Started(Callback):
    def on_task_end(self, event):
        if not getattr(self, "said", False):
            self.said = True
            print("started", flush=True)

target, work = sys.argv[1], sys.argv[2]
spec = cubego.Spec(work_dir=work, allowed_mem="200MB")
x = cubego.asarray(np.arange(800 * 800, dtype="f8").reshape(800, 800), chunks=(40, 40), spec=spec)
y = (x.rechunk((800, 10)) * 3).rechunk((20, 20))
# intermediate_mem=0: the intermediates go to the work dir, whose debris is checked
cubego.to_zarr(y, target, overwrite=True, callbacks=[Started()], intermediate_mem=0)
"""


def test_kill_9_writers_leave_only_whole_chunks_and_no_debris(tmp_path):
    """Kill a writer at random points: every chunk present decodes to the right
    values, and the next run completes and removes the dead run's temporary
    files and work directory."""
    import random
    import signal
    import time

    import zarr

    want = np.arange(800 * 800, dtype="f8").reshape(800, 800) * 3
    target, work = tmp_path / "out.zarr", tmp_path / "work"
    rng = random.Random(17)
    killed_mid_run = 0
    for _ in range(10):
        p = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(target), str(work)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert p.stdout.readline() == b"started\n", p.stderr.read().decode()[-2000:]
        time.sleep(rng.uniform(0, 0.15))
        p.send_signal(signal.SIGKILL)
        killed_mid_run += p.wait(timeout=60) == -signal.SIGKILL
        if not target.exists():
            continue
        z = zarr.open_array(str(target), mode="r")
        got = z[...]  # every stored chunk decodes (a partial one would raise)
        present = got != 0
        np.testing.assert_array_equal(got[present], want[present])
    assert killed_mid_run >= 5, f"only {killed_mid_run} of 10 writers were killed mid-run"

    # The next run completes and leaves no debris of the dead ones.
    out = subprocess.run(
        [sys.executable, "-c", _WRITER, str(target), str(work)], capture_output=True, timeout=120
    )
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    np.testing.assert_array_equal(zarr.open_array(str(target), mode="r")[...], want)
    tmp_files = [p for p in target.rglob("*") if p.name.endswith(".tmp")]
    assert not tmp_files, tmp_files[:5]
    dead_dirs = [p.name for p in work.iterdir() if p.name.startswith("cubego-2")]
    assert not dead_dirs, dead_dirs


@pytest.mark.parametrize(
    "option, value, match",
    [
        ("max_workers", 0, "Invalid value for max_workers: 0"),
        ("retries", -1, "Invalid value for retries: -1"),
        ("batch_size", 0, "Invalid value for batch_size: 0"),
    ],
)
def test_bad_executor_options_are_refused(spec, option, value, match):
    a = cubego.ones((4, 4), chunks=2, spec=spec) + 1
    with pytest.raises(ValueError, match=match):
        a.compute(**{option: value})
    in_spec = cubego.Spec(work_dir=spec.work_dir, executor_options={option: value})
    with pytest.raises(ValueError, match=match):
        cubego.compute(cubego.ones((4, 4), chunks=2, spec=in_spec) + 1)


_SIGINT = """
import os, signal, sys, threading, time
import cubego
a = cubego.ones((4, 4), chunks=(2, 2))
def f(x):
    t = time.time()
    if sys.argv[1] == "sleep":
        time.sleep(4)
    while time.time() - t < 30:
        pass
    return x
b = cubego.map_blocks(f, a, dtype=a.dtype)
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
t = time.time()
try:
    b.compute()
except KeyboardInterrupt:
    print(f"{time.time() - t:.1f}", flush=True)
"""


def test_ctrl_c_interrupts_a_running_python_function():
    out = subprocess.run(
        [sys.executable, "-c", _SIGINT, "loop"], capture_output=True, timeout=60, text=True
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout) < 5, out.stdout  # not the function's 30 s


def test_ctrl_c_says_which_python_functions_it_waits_for():
    """A function inside a C call (here a sleep) sees the interrupt only when the
    call returns; meanwhile the user is told what the computation waits for."""
    out = subprocess.run(
        [sys.executable, "-c", _SIGINT, "sleep"], capture_output=True, timeout=60, text=True
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "waiting for" in out.stderr and "__main__.f on block" in out.stderr, out.stderr
    assert "Ctrl-C again" in out.stderr
    assert float(out.stdout) < 10, out.stdout


def _sum(a):
    return float(cubego.sum(a).compute())


def test_fork_pool_given_arrays_fails_fast():
    """A fork-context pool's worker cannot use the library: the task fails with the
    fork error (it used to die unpickling, and the pool waited forever)."""
    import multiprocessing

    xs = [cubego.ones((4,), chunks=2) * i for i in range(3)]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        result = pool.map_async(_sum, xs, chunksize=1)
        with pytest.raises(RuntimeError, match="forked child process; use the 'spawn'"):
            result.get(timeout=60)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(_sum, xs) == [0.0, 4.0, 8.0]
