"""xarray rolling means on cubego and on Dask: wall time and cubego's projected memory.

A 24 MB float64 variable (365 days x 90 x 92), either one chunk along time or
chunks of 30 days, reduced with ``rolling(time=7).mean()`` and
``rolling(time=30).mean()``. Run it with the checkout to measure on
``PYTHONPATH`` (``python benchmarks/rolling_window.py``); the figures of
issue #18 before and after the moving-window path are in docs/xarray.md.
"""

from __future__ import annotations

import time

import numpy as np
import xarray as xr

import cubego


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> None:
    rng = np.random.default_rng(0)
    da = xr.DataArray(rng.random((365, 90, 92)), dims=("time", "y", "x"))
    spec = cubego.Spec(allowed_mem="4GB")
    print(f"variable: {da.nbytes / 1e6:.1f} MB")
    print(f"{'case':<32} {'cubego s':>9} {'projected':>10} {'dask s':>7}")
    for chunks in ({"time": -1}, {"time": 30}):
        lazy = da.chunk(chunks, chunked_array_type="cubego", from_array_kwargs={"spec": spec})
        dask_lazy = da.chunk(chunks, chunked_array_type="dask")
        for window in (7, 30):
            label = f"rolling(time={window}).mean() {chunks['time']}"
            with xr.set_options(use_bottleneck=False, use_numbagg=False):
                result = lazy.rolling(time=window).mean()
                projected = result.data.plan().max_projected_mem
                _, cubego_s = _timed(result.compute)
                _, dask_s = _timed(dask_lazy.rolling(time=window).mean().compute)
            print(f"{label:<32} {cubego_s:9.2f} {projected / 1e6:8.1f}MB {dask_s:7.2f}")


if __name__ == "__main__":
    main()
