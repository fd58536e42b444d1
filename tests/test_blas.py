"""The BLAS behind matrix products: OpenBLAS from scipy-openblas64 by default,
the built-in Go kernels when it is missing or switched off ($CUBEGO_BLAS), and
transposed operands read without storing the transpose."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import cubego
from cubego.binding import libcubego

from helpers import assert_matches, make_data

ROOT = Path(__file__).resolve().parents[1]


def _scipy_openblas_path() -> str | None:
    try:
        import scipy_openblas64
    except ImportError:
        return None
    return os.path.join(scipy_openblas64.get_lib_dir(), scipy_openblas64.get_library(fullname=True))


needs_openblas = pytest.mark.skipif(
    _scipy_openblas_path() is None or os.environ.get("CUBEGO_BLAS"),
    reason="scipy-openblas64 not installed, or $CUBEGO_BLAS overrides it",
)


@needs_openblas
def test_openblas_by_default():
    info = cubego.blas_info()
    assert info["name"].startswith("OpenBLAS"), info
    assert info["error"] == ""
    # scipy-openblas64's own copy, never numpy's bundled one
    assert os.path.samefile(info["path"], _scipy_openblas_path())
    assert "numpy.libs" not in info["path"]


@needs_openblas
def test_openblas_single_threaded_and_numpy_untouched():
    path = cubego.blas_info()["path"]
    # dlopen of the same path returns the library cubego opened
    ours = ctypes.CDLL(path)
    assert ours.scipy_openblas_get_num_threads64_() == 1
    numpy_copies = [
        line.split()[-1]
        for line in Path("/proc/self/maps").read_text().splitlines()
        if "openblas" in line and "numpy" in line and line.split()[-1].endswith(".so")
    ]
    if not numpy_copies:
        pytest.skip("numpy does not bundle OpenBLAS here")
    theirs = ctypes.CDLL(numpy_copies[0])
    get = getattr(theirs, "scipy_openblas_get_num_threads64_", None)
    if get is None:
        pytest.skip("numpy's OpenBLAS has other symbol names")
    before = get()
    # Opening the library again (as at every load) sets only our copy's threads.
    status = libcubego.library().cg_blas(
        path.encode(), ctypes.byref(ctypes.c_void_p()), ctypes.byref(ctypes.c_void_p())
    )
    assert status == 0
    assert get() == before
    assert ours.scipy_openblas_get_num_threads64_() == 1


TRANSPOSE_CASES = {
    "a.T @ b": (lambda a, b: a.T @ b, (9, 7), (9, 5)),
    "a @ b.T": (lambda a, b: a @ b.T, (7, 9), (5, 9)),
    "a.T @ b.T": (lambda a, b: a.T @ b.T, (9, 7), (5, 9)),
    "a @ a.T": (lambda a, b: a @ a.T, (11, 6), (1, 1)),
    "mT batched": (lambda a, b: a.mT @ b, (3, 8, 5), (3, 8, 4)),
    "swapaxes": (
        lambda a, b: cubego.matmul(a, cubego.permute_dims(b, (0, 2, 1))),
        (2, 5, 6),
        (2, 3, 6),
    ),
}


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "complex64", "int32"])
@pytest.mark.parametrize("case", list(TRANSPOSE_CASES))
def test_transposed_operands(spec, case, dtype):
    f, shape_a, shape_b = TRANSPOSE_CASES[case]
    a = make_data(shape_a, dtype, seed=11, low=-3, high=3)
    b = make_data(shape_b, dtype, seed=12, low=-3, high=3)
    # odd chunks, different along each axis, so blocks are not square
    x = cubego.asarray(a, chunks=tuple(max(1, s // 2 - 1) for s in shape_a), spec=spec)
    y = cubego.asarray(b, chunks=tuple(max(1, s // 2 - 1) for s in shape_b), spec=spec)
    got = f(x, y)
    want = f(a, b) if case != "swapaxes" else a @ np.swapaxes(b, 1, 2)
    rtol = 1e-4 if dtype in ("float32", "complex64") else 1e-12
    assert_matches(got, want, rtol=rtol)


def test_transpose_not_stored(spec):
    a = make_data((40, 30), "float64", seed=13)
    x = cubego.asarray(a, chunks=(16, 12), spec=spec)
    r = cubego.sum(x @ x.T)
    p = cubego.plan(r)
    assert "permute_dims" not in [op.func for op in p.ops]
    # only the product is stored before the sum
    assert p.total_intermediate_nbytes == 40 * 40 * 8
    np.testing.assert_allclose(float(r.compute()), (a @ a.T).sum(), rtol=1e-12)
    # a transpose that must be rechunked along the contracted axis still works
    y = cubego.asarray(make_data((25, 30), "float64", seed=14), chunks=(7, 5), spec=spec)
    assert_matches(x @ y.T, a @ np.asarray(y.compute()).T, rtol=1e-12)


def test_matmul_memory_within_projection(spec):
    a = make_data((300, 260), "float64", seed=15)
    x = cubego.asarray(a, chunks=(100, 90), spec=spec)
    (x @ x.T).compute(max_workers=2)
    stats = cubego._last_stats()
    for op in stats["ops"]:
        assert op["peak_allocated"] <= op["projected_mem"], op


def _run(env: dict[str, str], code: str) -> str:
    full_env = {
        **os.environ,
        **env,
        "PYTHONPATH": str(ROOT / "python") + os.pathsep + str(ROOT / "tests"),
    }
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout


FALLBACK = """
    import json, numpy as np, cubego
    a = np.arange(35.0).reshape(7, 5) / 7
    x = cubego.asarray(a, chunks=(3, 2))
    got = (x @ x.T).compute()
    np.testing.assert_allclose(got, a @ a.T, rtol=1e-12)
    c = (np.arange(12) + 1j).reshape(3, 4)
    z = cubego.asarray(c, chunks=2)
    np.testing.assert_allclose((z.T @ z).compute(), c.T @ c, rtol=1e-12)
    print(json.dumps(cubego.blas_info()))
"""


@pytest.mark.parametrize(
    ("value", "error"),
    [("go", ""), ("/nonexistent/libopenblas.so", "cannot open"), ("libm.so.6", "no CBLAS")],
)
def test_fallback_to_go(value, error):
    import json

    info = json.loads(_run({"CUBEGO_BLAS": value}, FALLBACK).strip().splitlines()[-1])
    assert info["name"] == "go", info
    assert error in info["error"]
    if not error:
        assert info["error"] == ""


@needs_openblas
def test_cubego_blas_path():
    import json

    info = json.loads(
        _run({"CUBEGO_BLAS": _scipy_openblas_path()}, FALLBACK).strip().splitlines()[-1]
    )
    assert info["name"].startswith("OpenBLAS") and info["error"] == "", info


def _run_shadowed(tmp_path: Path, code: str, env: dict[str, str | None]) -> dict:
    """Run code in a fresh interpreter that imports the scipy_openblas64
    package written under tmp_path, with env's variables set (None: unset),
    and return the JSON its last line prints."""
    import json

    full_env = {**os.environ}
    for k, v in env.items():
        if v is None:
            full_env.pop(k, None)
        else:
            full_env[k] = v
    full_env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT / "python")])
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_fallback_without_scipy_openblas(tmp_path):
    """A scipy_openblas64 package without its library (a broken or partial
    install) leaves the built-in kernels in use, and blas_info says why."""
    shadow = tmp_path / "scipy_openblas64"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('not to be imported (test)')\n")
    info = _run_shadowed(tmp_path, FALLBACK, {"CUBEGO_BLAS": ""})
    assert info["name"] == "go", info
    assert "scipy-openblas64 is not usable" in info["error"], info
    assert "no library directory" in info["error"] and str(shadow) in info["error"], info
    (shadow / "lib").mkdir()
    info = _run_shadowed(tmp_path, FALLBACK, {"CUBEGO_BLAS": ""})
    assert info["name"] == "go" and "no libscipy_openblas" in info["error"], info


LOAD_AND_REPORT_ENV = """
    import json, os, sys, numpy as np, cubego
    a = np.arange(12.0).reshape(3, 4)
    x = cubego.asarray(a, chunks=2)
    np.testing.assert_allclose((x @ x.T).compute(), a @ a.T)
    print(json.dumps({"imported": "scipy_openblas64" in sys.modules,
                      "after": os.environ.get("OPENBLAS_NUM_THREADS"), "blas": cubego.blas_info()}))
"""


@needs_openblas
@pytest.mark.parametrize("user_value", [None, "3"])
def test_scipy_openblas_found_without_import(tmp_path, user_value):
    """cubego finds scipy-openblas64's library without importing the package:
    its import looks its version up with importlib.metadata and loads the
    library (some 60 ms, which the first computation of every process waited
    for), and a library Python loads starts a spinning thread per core unless
    OPENBLAS_NUM_THREADS is 1. The Go library opens it single-threaded and
    leaves the variable as it was."""
    real = _scipy_openblas_path()
    shadow = tmp_path / "scipy_openblas64"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('not to be imported (test)')\n")
    (shadow / "lib").symlink_to(os.path.dirname(real))
    got = _run_shadowed(
        tmp_path, LOAD_AND_REPORT_ENV, {"CUBEGO_BLAS": "", "OPENBLAS_NUM_THREADS": user_value}
    )
    assert got["imported"] is False, got
    assert got["after"] == user_value, got
    want = str(shadow / "lib" / os.path.basename(real))
    assert got["blas"]["name"].startswith("OpenBLAS") and got["blas"]["path"] == want, got
