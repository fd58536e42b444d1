"""Arrays pickle as the graph that computes them, never their values."""

import io
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import cubego


@pytest.fixture
def arrays(spec):
    a = cubego.random.random((30, 20), chunks=(7, 6), spec=spec)
    b = cubego.asarray(np.arange(20.0), chunks=7, spec=spec)
    c = cubego.mean(a * b + 1, axis=0)
    d = cubego.matmul(a[::2], cubego.ones((20, 3), chunks=5, spec=spec))
    return a, c, d


def test_round_trip_in_process(arrays):
    for x in arrays:
        y = pickle.loads(pickle.dumps(x))
        assert (y.shape, y.dtype, y.chunks, y.spec) == (x.shape, x.dtype, x.chunks, x.spec)
        np.testing.assert_array_equal(y.compute(), x.compute())


def test_pickling_does_not_compute(spec):
    x = cubego.random.random((10_000, 10_000), chunks=1000, spec=spec)
    blob = pickle.dumps(x + 1)
    assert len(blob) < 10_000  # the graph, not 800 MB of values


def test_round_trip_in_another_process(arrays):
    _, c, _ = arrays
    code = (
        "import pickle, sys, numpy as np, cubego\n"
        "x = pickle.loads(sys.stdin.buffer.read())\n"
        "np.save(sys.stdout.buffer, x.compute())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=pickle.dumps(c),
        capture_output=True,
        env=os.environ,
        timeout=120,
        check=True,
    )
    np.testing.assert_array_equal(np.load(io.BytesIO(out.stdout)), c.compute())


def test_corrupt_graph_is_a_value_error(spec):
    from cubego.core.array import _restore_array

    with pytest.raises(ValueError, match="graph"):
        _restore_array('{"version": 1, "arrays": [], "ops": [], "outputs": [3]}', spec)
    with pytest.raises(ValueError, match="version"):
        _restore_array('{"version": 999}', spec)
