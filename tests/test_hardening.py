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
        c.compute(resume=resume)


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
