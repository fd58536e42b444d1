"""A basic index of an integer-array index result composes into one index of the source.

``x[i, j][k]`` reads only what ``k`` selects (issue #19, goal 6; docs/execution.md
"Small computations"): these tests check the composed results against numpy on
many random keys, that the composed plan no longer contains the gather, and that
the provenance is forgotten when an array is rebound.
"""

from __future__ import annotations

import numpy as np
import pytest

import cubego

SPEC = cubego.Spec(allowed_mem="100MB")


def _random_slice(rng, n):
    def bound():
        return None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3))

    step = None if rng.random() < 0.4 else int(rng.choice([-3, -2, -1, 1, 2, 3]))
    return slice(bound(), bound(), step)


def _random_fancy_key(rng, shape):
    """A key with at least one integer array (numpy or cubego), ints, slices and None."""
    shapes = [(), (3,), (2, 1), (1, 3), (2, 3)]
    b = shapes[int(rng.integers(len(shapes)))]
    key, n_arrays = [], 0
    for n in shape:
        r = rng.random()
        if r < 0.45:
            sub = tuple(s if rng.random() < 0.7 else 1 for s in b)[
                int(rng.integers(0, len(b) + 1)) :
            ]
            key.append(rng.integers(-n, n, size=sub))
            n_arrays += 1
        elif r < 0.6:
            key.append(int(rng.integers(-n, n)))
        else:
            key.append(_random_slice(rng, n))
        if rng.random() < 0.1:
            key.append(None)
    if n_arrays == 0:
        key[0] = rng.integers(-shape[0], shape[0], size=b)
    if rng.random() < 0.3:
        # a trailing part left to the implicit full slices, or an ellipsis
        cut = int(rng.integers(1, len(key) + 1))
        key = key[:cut] + ([Ellipsis] if rng.random() < 0.5 else [])
    return tuple(key)


def _random_basic_key(rng, shape):
    key = []
    for n in shape:
        r = rng.random()
        if r < 0.4 and n:
            key.append(int(rng.integers(-n, n)))
        elif r < 0.8:
            key.append(_random_slice(rng, n))
        else:
            key.append(slice(None))
    r = rng.random()
    if r < 0.3:  # an ellipsis standing for a run of items
        i = int(rng.integers(0, len(key) + 1))
        key = key[:i] + [Ellipsis] + key[int(rng.integers(i, len(key) + 1)) :]
    elif r < 0.5:  # trailing items left out
        key = key[: int(rng.integers(0, len(key) + 1))]
    if len(key) == 1 and rng.random() < 0.5:
        return key[0]
    return tuple(key)


def _to_cubego(key):
    return tuple(
        cubego.asarray(k, spec=SPEC) if isinstance(k, np.ndarray) and k.ndim else k for k in key
    )


@pytest.mark.parametrize("seed", range(8))
def test_random_basic_keys_of_fancy_results_match_numpy(seed):
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(40):
        shape = tuple(int(n) for n in rng.integers(1, 6, size=int(rng.integers(1, 4))))
        a = rng.integers(-1000, 1000, size=shape).astype(
            rng.choice(["int16", "float64", "bool", "complex64"])
        )
        x = cubego.asarray(a, chunks=tuple(max(1, n // 2) for n in shape), spec=SPEC)
        key = _random_fancy_key(rng, shape)
        try:
            want = a[key]
        except IndexError:
            continue
        y = x[_to_cubego(key)]
        assert y.shape == want.shape, key
        for _ in range(3):
            key2 = _random_basic_key(rng, want.shape)
            try:
                want2 = want[key2]
            except IndexError:
                with pytest.raises(IndexError):
                    y[key2]
                continue
            got = y[key2]
            assert got.shape == want2.shape and got.dtype == want2.dtype, (key, key2)
            np.testing.assert_array_equal(got.compute(), want2, err_msg=f"{key} then {key2}")
            checked += 1
    assert checked >= 60


@pytest.mark.parametrize(
    "key2",
    [3, -1, (2, 3), (slice(1, 3), 0), (slice(None, None, -1), -2), (Ellipsis, 1), (), (None, 1)],
)
def test_take_then_basic_index(key2):
    a = np.arange(42.0).reshape(6, 7)
    x = cubego.asarray(a, chunks=(4, 3), spec=SPEC)
    idx = np.array([5, -7, 0, 3])
    y = cubego.take(x, cubego.asarray(idx, spec=SPEC), axis=1)
    np.testing.assert_array_equal(y[key2].compute(), np.take(a, idx, axis=1)[key2])


def _ops(array):
    return [op.func for op in cubego.plan(array).ops]


def test_one_element_of_a_gather_reads_one_chunk():
    """The composed index of an element is a basic index: one task, no gather."""
    rng = np.random.default_rng(0)
    b = rng.random((50, 60, 40))
    i0, i1 = rng.integers(0, 50, size=2592), rng.integers(0, 60, size=2592)
    x = cubego.from_array(b, chunks=(10, 20, 20), spec=SPEC)
    y = x[cubego.asarray(i0, spec=SPEC), cubego.asarray(i1, spec=SPEC), 5]
    assert "take" in _ops(y)
    assert _ops(y[700]) == ["getitem"]
    assert cubego.plan(y[700]).num_tasks == 1
    assert float(y[700]) == b[i0[700], i1[700], 5]
    assert cubego._last_stats()["num_tasks"] == 1
    # a slice of the gather gathers the sliced indices only: 10 of 2,592
    part = y[10:20]
    assert part.shape == (10,)
    assert cubego.plan(part).num_tasks < cubego.plan(y).num_tasks
    np.testing.assert_array_equal(part.compute(), b[i0, i1, 5][10:20])


def test_composed_reads_only_the_chunks_selected(tmp_path):
    """From a Zarr store: the composed read of one element reads that element's bytes."""
    a = np.arange(40.0 * 30).reshape(40, 30)
    cubego.to_zarr(cubego.asarray(a, chunks=(10, 10), spec=SPEC), str(tmp_path / "a.zarr"))
    x = cubego.from_zarr(str(tmp_path / "a.zarr"), spec=SPEC)
    y = x[cubego.asarray(np.array([39, 0, 17]), spec=SPEC), :]
    whole = sum(op.nbytes_read for op in cubego.plan(y).ops)
    one = sum(op.nbytes_read for op in cubego.plan(y[2, 25]).ops)
    assert one == 8 < whole
    assert float(y[2, 25]) == a[17, 25]


def test_selecting_everything_returns_the_array_itself():
    x = cubego.asarray(np.arange(12.0).reshape(3, 4), chunks=2, spec=SPEC)
    y = x[cubego.asarray(np.array([2, 0]), spec=SPEC)]
    assert y[...] is y and y[:, :] is y


def test_rebinding_forgets_the_gather():
    a = np.arange(12.0).reshape(3, 4)
    x = cubego.asarray(a, chunks=2, spec=SPEC)
    y = x[cubego.asarray(np.array([2, 0]), spec=SPEC)]
    y[0, 1] = -5.0
    want = a[[2, 0]]
    want[0, 1] = -5.0
    assert float(y[0, 1]) == -5.0
    np.testing.assert_array_equal(y[:, 1:3].compute(), want[:, 1:3])
    y += 1
    np.testing.assert_array_equal(y[1].compute(), want[1] + 1)


def test_selection_goes_through_elementwise_functions_of_a_gather():
    """(f(y) + z)[k] is f(y[k]) + z[k] when y is a gather: the gather is not computed."""
    rng = np.random.default_rng(3)
    a = rng.random((30, 40))
    i0, i1 = rng.integers(-30, 30, size=50), rng.integers(0, 40, size=50)
    x = cubego.asarray(a, chunks=(7, 9), spec=SPEC)
    y = x[cubego.asarray(i0, spec=SPEC), cubego.asarray(i1, spec=SPEC)]
    z = cubego.asarray(np.arange(50.0), chunks=7, spec=SPEC)
    w = (cubego.sqrt(y) * 2 - y) / (z + 1)
    assert len(cubego.plan((y * y)[3]).ops) == 1  # y indexed once
    want = (np.sqrt(a[i0, i1]) * 2 - a[i0, i1]) / (np.arange(50.0) + 1)
    assert "take" not in _ops(w[17])
    assert float(w[17]) == pytest.approx(want[17], rel=1e-15)
    for key in [slice(3, 9), slice(None, None, -4), -1, (Ellipsis, 2)]:
        np.testing.assert_allclose(w[key].compute(), want[key], rtol=1e-15)
    assert w[...] is w and w[:] is w
    with pytest.raises(IndexError):
        w[50]
    v = y + cubego.asarray(np.ones((2, 50)), chunks=5, spec=SPEC)  # broadcasts y: not pushed
    np.testing.assert_array_equal(v[1, 4:6].compute(), a[i0, i1][4:6] + 1)


def test_large_gathers_keep_no_index_values(monkeypatch):
    """Gathers of more than FANCY_KEEP indices are indexed as they are (still right)."""
    from cubego.array_api import indexing_functions

    monkeypatch.setattr(indexing_functions, "FANCY_KEEP", 4)
    a = np.arange(20.0)
    x = cubego.asarray(a, chunks=6, spec=SPEC)
    small = x[cubego.asarray(np.array([3, 1, 4, 1]), spec=SPEC)]
    large = x[cubego.asarray(np.array([3, 1, 4, 1, 5]), spec=SPEC)]
    assert _ops(small[2]) == ["getitem"]
    assert "take" in _ops(large[2])
    assert float(large[2]) == 4.0
