"""Latency of small computes (interactive use), cubego vs dask.array, same data, same run.

Issue #19, goal 6: a scalar read, one element of a fancy-indexed result, a small
slice of a chunked array, a repr, and ``.values`` of a small ``isel`` of an
xarray DataArray should each take no longer than Dask.

Run from the repository root::

    PYTHONPATH=python python benchmarks/small_computes.py [--reps 15] [--only b,c]

Prints, per case, the median milliseconds per read of cubego and Dask (and
their ratio). Each case checks its result against numpy before timing.
"""

from __future__ import annotations

import argparse
import statistics
import time

import dask
import dask.array as da
import numpy as np

import cubego as cg


def _median_ms(fn, reps: int) -> float:
    fn()  # warm up (imports, caches, the first plan)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def cases() -> dict:
    """``{name: (cubego_fn, dask_fn, expected)}``; each fn returns the value read."""
    out = {}

    # (a) one element of a plain 10-element array
    a_np = np.arange(10, dtype="float64")
    a_cg = cg.asarray(a_np, chunks=5)
    a_da = da.from_array(a_np, chunks=5)
    out["a: float(x[3]), 10 elements"] = (
        lambda: float(a_cg[3]),
        lambda: float(a_da[3]),
        a_np[3],
    )

    # (b) one element of a 2,592-element multi-array fancy index of a 3-D array
    rng = np.random.default_rng(0)
    b_np = rng.random((50, 60, 40))
    i0 = rng.integers(0, 50, size=2592)
    i1 = rng.integers(0, 60, size=2592)
    b_cg = cg.from_array(b_np, chunks=(10, 20, 20))
    b_da = da.from_array(b_np, chunks=(10, 20, 20))
    fb_cg = b_cg[cg.asarray(i0), cg.asarray(i1), 5]
    fb_da = b_da.vindex[i0, i1, 5]  # numpy's pointwise rule
    assert fb_cg.size == 2592
    out["b: fancy-index result (2,592) [700]"] = (
        lambda: float(fb_cg[700]),
        lambda: float(fb_da[700]),
        b_np[i0, i1, 5][700],
    )

    # (c) a 2x2 slice of a 1000x1000 array in 100x100 chunks
    c_np = rng.random((1000, 1000))
    c_cg = cg.from_array(c_np, chunks=(100, 100))
    c_da = da.from_array(c_np, chunks=(100, 100))
    out["c: (x + 1)[5:7, 5:7].compute(), 1000x1000"] = (
        lambda: (c_cg + 1)[5:7, 5:7].compute(),
        lambda: (c_da + 1)[5:7, 5:7].compute(),
        (c_np + 1)[5:7, 5:7],
    )

    # (d) repr and _repr_html_ (must not compute)
    out["d: repr + _repr_html_"] = (
        lambda: (repr(c_cg), c_cg._repr_html_()) and None,
        lambda: (repr(c_da), c_da._repr_html_()) and None,
        None,
    )

    # (e) xarray: .values of a small isel
    import xarray as xr

    e_np = rng.random((100, 200, 50))
    dims = ("time", "y", "x")
    e_cg = xr.DataArray(e_np, dims=dims).chunk(
        {"time": 10, "y": 50, "x": 50}, chunked_array_type="cubego"
    )
    e_da = xr.DataArray(e_np, dims=dims).chunk({"time": 10, "y": 50, "x": 50})
    sel = {"time": 3, "y": slice(10, 12)}
    out["e: xarray .isel(time=3, y=10:12).values"] = (
        lambda: e_cg.isel(sel).values,
        lambda: e_da.isel(sel).values,
        e_np[3, 10:12],
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--only", default="", help="comma-separated case letters, e.g. b,c")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    dask.config.set(scheduler="threads")
    print(f"{'case':46s} {'cubego ms':>10s} {'dask ms':>10s} {'ratio':>7s}")
    for name, (f_cg, f_da, expected) in cases().items():
        if only and name[0] not in only:
            continue
        if expected is not None:
            np.testing.assert_array_equal(f_cg(), expected)
            np.testing.assert_array_equal(f_da(), expected)
        # interleave the engines so that noise falls on both alike
        t_cg, t_da = [], []
        for _ in range(3):
            t_cg.append(_median_ms(f_cg, args.reps))
            t_da.append(_median_ms(f_da, args.reps))
        m_cg, m_da = statistics.median(t_cg), statistics.median(t_da)
        print(f"{name:46s} {m_cg:10.2f} {m_da:10.2f} {m_cg / m_da:7.2f}")


if __name__ == "__main__":
    main()
