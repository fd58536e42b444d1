"""Small computations (issue #19, goal 6): right results, no files, few fixed costs.

See docs/execution.md "Small computations" and benchmarks/small_computes.py.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import cubego


def _zarr_arrays_under(root) -> list[str]:
    return [d for d, _, files in os.walk(root) if "zarr.json" in files]


def _fancy(spec):
    rng = np.random.default_rng(1)
    a = rng.random((20, 30, 8))
    i0 = rng.integers(-20, 20, size=300)
    i1 = rng.integers(0, 30, size=300)
    x = cubego.from_array(a, chunks=(7, 11, 3), spec=spec)
    return a[i0, i1, 5], x[cubego.asarray(i0), cubego.asarray(i1), 5]


@pytest.mark.parametrize("key", [0, 7, 299, -1, slice(10, 13), slice(None, None, 37)])
def test_reads_of_a_fancy_index_result_match_numpy(spec, key):
    want, y = _fancy(spec)
    np.testing.assert_array_equal(y[key].compute(), want[key])
    if isinstance(key, int):
        assert float(y[key]) == want[key]


@pytest.mark.parametrize("intermediate_mem", [None, 0, 100])
def test_small_intermediates_stay_in_memory_by_default(tmp_path, intermediate_mem):
    """By default the intermediates of a small computation are never files; with
    ``intermediate_mem=0`` (or a budget they exceed) they are in the work dir."""
    work = tmp_path / "work"
    spec = cubego.Spec(work_dir=str(work), allowed_mem="100MB")
    seen: list[list[str]] = []

    def look(block):
        seen.append(_zarr_arrays_under(work))
        return block

    a = np.arange(64.0).reshape(8, 8)
    x = cubego.asarray(a, chunks=4, spec=spec)
    y = cubego.map_blocks(look, x + 1, dtype=x.dtype)  # x + 1 is stored (no fusion)
    kwargs = {} if intermediate_mem is None else {"intermediate_mem": intermediate_mem}
    np.testing.assert_array_equal(y.compute(optimize_graph=False, **kwargs), a + 1)
    stored = any(seen)
    assert stored == (intermediate_mem is not None), seen


def test_helper_threads_are_reused(spec):
    """Calls that Ctrl-C can interrupt run on helper threads kept between calls."""
    x = cubego.asarray(np.arange(10.0), chunks=5, spec=spec)
    float(x[3])

    def helpers():
        return [t for t in threading.enumerate() if t.name == "cubego-call"]

    before = {t.ident for t in helpers()}
    for i in range(20):
        assert float(x[i % 10]) == i % 10
    assert {t.ident for t in helpers()} == before  # no thread started for them


@pytest.mark.parametrize(
    "key, tasks",
    [((slice(5, 7), slice(5, 7)), 1), ((slice(95, 105), slice(5, 7)), 2), ((3, 250), 1)],
)
def test_a_small_slice_of_an_elementwise_result_runs_only_its_chunks(spec, key, tasks):
    """(x + 1)[key] fuses into one op whose tasks are the output's chunks only,
    not the 100 chunks of x + 1."""
    a = np.random.default_rng(2).random((1000, 1000))
    x = cubego.from_array(a, chunks=(100, 100), spec=spec)
    np.testing.assert_array_equal((x + 1)[key].compute(), (a + 1)[key])
    assert cubego._last_stats()["num_tasks"] == tasks
