"""numpy runner: the "no chunking" reference (the peers' venv), where the data fits.

Usage: ``python numpy_runner.py job.json``; prints one ``BENCH_RESULT`` line
(see ``common.py``). The timed section loads every input whole with
zarr-python (``zarr.open_array(path)[:]``), computes in memory with numpy, and
stores outputs whole, so it includes the same I/O as the chunked engines.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import zarr  # noqa: E402
from common import Outcome, main  # noqa: E402
from zarr_output import create_output  # noqa: E402


def load(job, name):
    return zarr.open_array(job["inputs"][name], mode="r")[:]


def store(x, job) -> Outcome:
    target = create_output(job)
    target[:] = x
    return Outcome(None, {"num_ops": None, "num_tasks": None})


def result(*values) -> Outcome:
    return Outcome(values, {"num_ops": None, "num_tasks": None})


def w1_add(job):
    a, b = load(job, "a"), load(job, "b")
    return store(a + b, job)


def w1_chain(job):
    a, b = load(job, "a"), load(job, "b")
    return store((-(a + b) * 0.5 + a * b).astype(np.float32), job)


def w2_qm(job):
    u = load(job, "u")
    v = load(job, "v")
    return result(np.mean(u * u, axis=0), np.mean(v * v, axis=0), np.mean(u * v, axis=0))


def w3_mean(job):
    return result(np.mean(load(job, "x"), axis=0))


def w3_anom(job):
    x = load(job, "x")
    x -= np.mean(x, axis=0)
    return result(np.sum(x))


def w4_swap(job):
    # In memory, a rechunk is nothing: the sum of the whole array.
    return result(np.sum(load(job, "x")))


def w5_matmul(job):
    a = load(job, "a")
    b = a.T if job["transpose"] else a
    return result(np.sum(a @ b))


def w6_diff(job):
    a, b = load(job, "a"), load(job, "b")
    return store(a[1:, 1:] - b[:-1, :-1], job)


def w7_small(job):
    n = job["params"]["n"]
    return result(np.sum(np.ones((n, n)) + 1))


def w8_read(job):
    return result(np.sum(load(job, "x")))


def w8_copy(job):
    return store(load(job, "x"), job)


CASES = {
    "W1.add": w1_add,
    "W1.chain": w1_chain,
    "W2.qm": w2_qm,
    "W3.mean": w3_mean,
    "W3.anom": w3_anom,
    "W4.swap": w4_swap,
    "W5.matmul": w5_matmul,
    "W6.diff": w6_diff,
    "W7.small": w7_small,
    "W8.read": w8_read,
    "W8.copy": w8_copy,
}


def versions() -> dict:
    return {"zarr": zarr.__version__}


if __name__ == "__main__":
    main("numpy", CASES, versions)
