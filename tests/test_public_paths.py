"""Import paths users and Cubed code rely on stay valid across the package's layout."""

import importlib

import pytest

import cubego

MODULES = [
    "cubego.array_api",
    "cubego.array_api.linalg",
    "cubego.array_api.fft",
    "cubego.linalg",
    "cubego.fft",
    "cubego.random",
    "cubego.lib",
    "cubego.lib.stride_tricks",
    "cubego.diagnostics",
    "cubego.diagnostics.history",
    "cubego.diagnostics.mem_warn",
    "cubego.diagnostics.memory",
    "cubego.diagnostics.progress",
    "cubego.diagnostics.timeline",
    "cubego.diagnostics.widgets",
    "cubego.diagnostics.widgets.memory",
    "cubego.diagnostics.widgets.plan",
    "cubego.diagnostics.widgets.timeline",
    "cubego.core.optimization",
    "cubego.runtime.types",
    "cubego.runtime.create",
    "cubego.runtime.executors.local",
    "cubego.xarray_chunkmanager",
]


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name):
    assert importlib.import_module(name) is not None


def test_names():
    from cubego.diagnostics import HistoryCallback, ProgressBar  # noqa: F401
    from cubego.runtime.types import Callback, DagExecutor, TaskEndEvent  # noqa: F401

    assert cubego.linalg.qr is cubego.array_api.linalg.qr
    assert cubego.fft.fft is cubego.array_api.fft.fft
    assert callable(cubego.config.set)
    assert cubego.Callback is Callback
    for name in ("Spec", "Array", "map_blocks", "from_zarr", "to_zarr", "store", "nanmean", "pad"):
        assert hasattr(cubego, name), name
