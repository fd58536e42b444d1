"""Bad input raises the right Python exception; nothing kills the interpreter."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import cubego
from cubego.binding import libcubego as _lib

PYTHON_DIR = str(Path(cubego.__file__).resolve().parent.parent)


def run_python(code: str, *, env=None, cwd=None, timeout=60) -> subprocess.CompletedProcess:
    """Run *code* in a fresh interpreter that imports the same cubego."""
    env = dict(os.environ, **(env or {}))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PYTHON_DIR, env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_mismatched_shapes(spec):
    x = cubego.ones((3, 4), chunks=2, spec=spec)
    y = cubego.ones((4, 3), chunks=2, spec=spec)
    with pytest.raises(ValueError, match=r"\(3, 4\)|\[3 4\]|3, 4"):
        x + y
    with pytest.raises(ValueError):
        x @ x


@pytest.mark.parametrize(
    "chunks",
    [0, -2, (2, 0), (2, -1, 3), ((1, 1), (4,)), ((2, 2), (2, 1)), ((3,), (5,)), (2, 2, 2), (2,)],
    ids=repr,
)
def test_invalid_chunks(spec, chunks):
    with pytest.raises(ValueError, match="chunk"):
        cubego.ones((3, 4), chunks=chunks, spec=spec)


def test_invalid_rechunk(spec):
    x = cubego.ones((3, 4), chunks=2, spec=spec)
    with pytest.raises(ValueError, match="chunk"):
        x.rechunk(((1, 1), (4,)))
    with pytest.raises(ValueError, match="chunk"):
        cubego.rechunk(x, 0)


@pytest.mark.parametrize(
    "data",
    [
        np.array(["a", "b"]),
        np.array([b"a"]),
        np.array([object()]),
        np.array(["2020-01"], dtype="datetime64[M]"),  # datetimes need a fixed-length unit
        np.array([1], dtype="timedelta64[Y]"),
        np.array(["NaT"], dtype="datetime64"),
        np.zeros(2, dtype=[("a", "f8"), ("b", "i4")]),
        np.zeros(2, dtype=np.float16),
        np.zeros(2, dtype=np.longdouble),
    ],
    ids=lambda a: str(a.dtype),
)
def test_unsupported_dtype_in_asarray(spec, data):
    with pytest.raises(TypeError, match="unsupported dtype") as info:
        cubego.asarray(data, spec=spec)
    assert str(data.dtype) in str(info.value) or data.dtype.name in str(info.value)


@pytest.mark.parametrize("dtype", ["float16", "str", "object", "datetime64[M]", "not-a-dtype"])
def test_unsupported_dtype_argument(spec, dtype):
    with pytest.raises(TypeError, match="float16|<U0|object|datetime64|not-a-dtype"):
        cubego.zeros((2,), dtype=dtype, spec=spec)
    with pytest.raises(TypeError):
        cubego.ones((2,), spec=spec).astype(dtype)


def test_float16_is_named(spec):
    with pytest.raises(TypeError, match="float16"):
        cubego.asarray(np.ones(3, dtype=np.float16), spec=spec)


def test_out_of_bounds_index(spec):
    x = cubego.ones((4, 5), chunks=2, spec=spec)
    with pytest.raises(IndexError, match="4|bounds"):
        x[4]
    with pytest.raises(IndexError):
        x[0, -6]


def test_plan_over_allowed_mem(tmp_path):
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="1MB")
    x = cubego.ones((1000, 1000), chunks=(1000, 1000), spec=spec)  # 8 MB chunks
    y = x + 1
    with pytest.raises(ValueError) as info:
        y.compute()
    message = str(info.value)
    assert "allowed_mem" in message
    assert "1000000" in message or "1.0 MB" in message or "1 MB" in message
    assert "op-" in message or "add" in message


def test_plan_over_allowed_mem_with_reserved(tmp_path):
    spec = cubego.Spec(work_dir=tmp_path, allowed_mem="100MB", reserved_mem="100MB")
    with pytest.raises(ValueError, match="allowed_mem"):
        (cubego.ones((10,), chunks=5, spec=spec) * 2).compute()


def test_unequal_specs(tmp_path):
    x = cubego.ones((3,), spec=cubego.Spec(work_dir=tmp_path, allowed_mem="100MB"))
    y = cubego.ones((3,), spec=cubego.Spec(work_dir=tmp_path, allowed_mem="200MB"))
    with pytest.raises(ValueError, match="spec"):
        (x + y).compute()


def test_unequal_specs_when_combining(tmp_path):
    x = cubego.ones((3,), spec=cubego.Spec(work_dir=tmp_path, allowed_mem="100MB"))
    y = cubego.ones((3,), spec=cubego.Spec(work_dir=tmp_path, allowed_mem="200MB"))
    with pytest.raises(ValueError, match="spec"):
        x + y


def test_unknown_executor(spec):
    x = cubego.ones((3,), spec=spec)
    with pytest.raises(ValueError, match="no-such-executor"):
        x.compute(executor="no-such-executor")


def test_callbacks_must_be_callbacks(spec):
    with pytest.raises(TypeError, match="Callback"):
        cubego.ones((3,), spec=spec).compute(callbacks=[object()])


def test_compute_needs_arrays():
    with pytest.raises(TypeError):
        cubego.compute(np.ones(3))
    assert cubego.compute() == ()


def test_missing_library(tmp_path):
    proc = run_python(
        """
        import cubego
        try:
            cubego.ones((2,))
        except OSError as e:
            print("OSError:", e)
        """,
        env={"CUBEGO_LIB": str(tmp_path / "missing.so")},
    )
    assert proc.returncode == 0, proc.stderr
    assert "OSError:" in proc.stdout and "CUBEGO_LIB" in proc.stdout


def test_import_does_not_load_the_library():
    proc = run_python(
        """
        import cubego, cubego.array_api, cubego.random
        from cubego.binding import libcubego as _lib
        assert _lib.loaded_path() is None, _lib.loaded_path()
        print("not loaded")
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert "not loaded" in proc.stdout


def test_go_panic_becomes_runtime_error():
    proc = run_python(
        """
        import numpy as np
        import cubego
        from cubego.binding import libcubego as _lib
        try:
            _lib.debug_panic()
        except RuntimeError as e:
            print("RuntimeError:", str(e).splitlines()[0])
        x = cubego.asarray(np.arange(6.0), chunks=4)
        print("after:", float(cubego.sum(x * 2)))
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert "RuntimeError:" in proc.stdout
    assert "after: 30.0" in proc.stdout


def test_forked_child_gets_an_error_not_a_hang():
    proc = run_python(
        """
        import os, sys
        import cubego
        x = cubego.ones((4,), chunks=2)
        assert float(cubego.sum(x)) == 4.0   # the library is loaded and used
        pid = os.fork()
        if pid == 0:
            try:
                cubego.sum(cubego.ones((4,), chunks=2)).compute()
            except RuntimeError as e:
                print("child:", e, flush=True)
                os._exit(0)
            except BaseException as e:
                print("child: wrong exception", type(e), e, flush=True)
                os._exit(2)
            print("child: no exception", flush=True)
            os._exit(3)
        _, status = os.waitpid(pid, 0)
        print("child exit", os.waitstatus_to_exitcode(status))
        print("parent:", float(cubego.sum(x)))
        """,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "child: cubego cannot be used in a forked child process" in proc.stdout
    assert "'spawn'" in proc.stdout
    assert "child exit 0" in proc.stdout
    assert "parent: 4.0" in proc.stdout


def test_ctrl_c_cancels_compute():
    code = """
        import sys, time
        import cubego
        spec = cubego.Spec(allowed_mem="500MB", executor_options={"max_workers": 2})
        x = cubego.random.random((40_000, 40_000), chunks=(2_000, 2_000), spec=spec)
        y = cubego.mean(x * x + 1, axis=0)
        print("computing", flush=True)
        start = time.monotonic()
        try:
            y.compute()
        except KeyboardInterrupt:
            print(f"KeyboardInterrupt after {time.monotonic() - start:.2f}s", flush=True)
            raise
        print("finished without interruption", flush=True)
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PYTHON_DIR, env.get("PYTHONPATH")]))
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "computing"
        time.sleep(1.5)
        assert proc.poll() is None, "the computation finished before it could be interrupted"
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "KeyboardInterrupt" in err, err
    assert "KeyboardInterrupt after" in out
    assert proc.returncode != 0
    assert elapsed < 2.5, f"took {elapsed:.2f}s to stop after SIGINT"


def test_library_status_table():
    assert _lib._EXCEPTIONS == {
        1: ValueError,
        2: TypeError,
        3: IndexError,
        4: FileNotFoundError,
        5: NotImplementedError,
        6: ValueError,
        7: OSError,
        8: KeyboardInterrupt,
        9: RuntimeError,
        10: TimeoutError,
        11: ConnectionError,
        12: PermissionError,
    }
