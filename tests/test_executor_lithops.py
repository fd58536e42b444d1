"""The Lithops executor on Lithops' localhost back end (versions 1 and 2).

Calls are standard-library functions, importable on every worker; a call that
must run code of its own (write its pid, then sleep) is ``exec`` of a string.
"""

from __future__ import annotations

import operator
import os
import signal
import sys
import threading
import time

import lithops
import psutil
import pytest

from cubego.runtime.create import create_executor
from cubego.runtime.executors.lithops import LithopsExecutor, _run_call

ALLOWED_MEM = 100_000_000


def localhost_config(version: int) -> dict:
    return {
        "lithops": {"backend": "localhost", "storage": "localhost", "monitoring_interval": 0.1},
        "localhost": {"version": version, "runtime": sys.executable, "worker_processes": 2},
    }


@pytest.fixture(scope="module", params=[1, 2], ids=["localhost-v1", "localhost-v2"])
def session(request):
    executor = LithopsExecutor(config=localhost_config(request.param), log_level=None)
    with executor.open(ALLOWED_MEM) as session:
        yield session


# Run by exec() in a worker: note when the call ran and in which process, then sleep.
RECORD_AND_SLEEP = """
import os, time
start = time.time()
with open(path + ".pid", "w") as f:
    f.write(str(os.getpid()))
time.sleep(seconds)
with open(path, "w") as f:
    f.write(f"{start} {time.time()}")
"""


def record_and_sleep(session, path, seconds):
    return session.submit(exec, RECORD_AND_SLEEP, {"path": str(path), "seconds": seconds})


def wait_for(path, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path) or os.path.getsize(path) == 0:
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    with open(path) as f:
        return f.read()


def test_results_come_back(session):
    futures = [session.submit(operator.add, i, 10) for i in range(3)]
    getpids = [session.submit(os.getpid) for _ in range(3)]
    assert [f.result(timeout=120) for f in futures] == [10, 11, 12]
    pids = [f.result(timeout=120) for f in getpids]
    assert os.getpid() not in pids
    assert len(set(pids)) >= 2


def test_remote_exception_keeps_its_type(session):
    future = session.submit(operator.truediv, 1, 0)
    with pytest.raises(ZeroDivisionError):
        future.result(timeout=120)
    assert session.submit(operator.mul, 6, 7).result(timeout=120) == 42


def test_in_flight_calls_honour_max_workers(session, tmp_path):
    assert session.max_workers == 2
    futures = [record_and_sleep(session, tmp_path / str(i), 0.8) for i in range(5)]
    for f in futures:
        assert f.result(timeout=120) is None
    spans = [tuple(map(float, wait_for(tmp_path / str(i)).split())) for i in range(5)]
    overlap = max(sum(s <= start < e for s, e in spans) for start, _ in spans)
    assert overlap == 2  # two at a time: never more, and the two workers both used


def test_max_workers_option_bounds_calls_in_flight(tmp_path):
    # Lithops would run two at a time (worker_processes: 2); the session keeps one.
    executor = LithopsExecutor(config=localhost_config(2), max_workers=1, log_level=None)
    with executor.open(ALLOWED_MEM) as session:
        futures = [record_and_sleep(session, tmp_path / str(i), 0.5) for i in range(3)]
        for f in futures:
            assert f.result(timeout=120) is None
    spans = [tuple(map(float, wait_for(tmp_path / str(i)).split())) for i in range(3)]
    assert max(sum(s <= start < e for s, e in spans) for start, _ in spans) == 1


def test_killed_worker_costs_only_its_call(session, tmp_path):
    doomed = record_and_sleep(session, tmp_path / "doomed", 5)
    pid = int(wait_for(tmp_path / "doomed.pid"))
    others = [session.submit(operator.add, i, 1) for i in range(3)]
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(RuntimeError, match=r"lithops: the worker process .*MemoryError.*SIGKILL"):
        doomed.result(timeout=120)
    assert [f.result(timeout=120) for f in others] == [1, 2, 3]
    assert session.submit(operator.add, 2, 3).result(timeout=120) == 5


def _lithops_children():
    """Live processes this test process started, but Lithops' cleaner (it deletes
    job data, then exits by itself)."""
    live = []
    for p in psutil.Process().children(recursive=True):
        try:
            if "lithops.scripts.cleaner" not in " ".join(p.cmdline()):
                live.append(p)
        except (psutil.ZombieProcess, psutil.NoSuchProcess):
            pass  # exited already
    return live


def test_close_stops_what_open_started(tmp_path):
    before = {p.pid for p in _lithops_children()}
    session = LithopsExecutor(config=localhost_config(2), log_level=None).open(ALLOWED_MEM)
    running = record_and_sleep(session, tmp_path / "long", 30)
    wait_for(tmp_path / "long.pid")
    assert {p.pid for p in _lithops_children()} - before  # the worker of the running call
    session.close()
    assert not session._thread.is_alive()
    with pytest.raises(RuntimeError, match="closed while the call ran"):
        running.result(timeout=10)
    with pytest.raises(RuntimeError, match="closed session"):
        session.submit(operator.add, 1, 2)
    _, alive = psutil.wait_procs(
        [p for p in _lithops_children() if p.pid not in before], timeout=10
    )
    assert not alive
    session.close()  # twice is harmless


def test_close_leaves_a_users_function_executor_alone():
    fexec = lithops.FunctionExecutor(config=localhost_config(2), log_level=None)
    try:
        executor = LithopsExecutor(function_executor=fexec, max_workers=3)
        with executor.open(ALLOWED_MEM) as session:
            assert session.max_workers == 3
            assert session.submit(operator.add, 1, 2).result(timeout=120) == 3
        # the user's executor still works after the session closed
        again = fexec.call_async(
            _run_call, {"call_fn": pow, "call_args": (2, 5)}, include_modules=None
        )
        assert again.result() == 32
    finally:
        fexec.__exit__(None, None, None)


def test_memory_check_before_anything_runs(monkeypatch):
    def refuse(**kwargs):
        raise AssertionError("FunctionExecutor created before the memory check")

    too_small = LithopsExecutor(config=localhost_config(2), runtime_memory=64)
    monkeypatch.setattr(lithops, "FunctionExecutor", refuse)
    with pytest.raises(ValueError) as e:
        too_small.open(ALLOWED_MEM)
    message = str(e.value)
    assert "67108864 bytes" in message and "runtime_memory=64 MB" in message
    assert f"allowed_mem of {ALLOWED_MEM} bytes" in message
    monkeypatch.undo()
    with LithopsExecutor(config=localhost_config(2), runtime_memory=96).open(ALLOWED_MEM) as s:
        assert s.max_workers == 2  # 96 MiB > 100 MB: accepted


def test_memory_check_reads_the_backend_configuration():
    config = localhost_config(2)
    config["localhost"]["runtime_memory"] = 64
    threads = threading.active_count()
    with pytest.raises(ValueError, match="runtime_memory=64 MB of the localhost configuration"):
        LithopsExecutor(config=config).open(ALLOWED_MEM)
    assert threading.active_count() == threads  # nothing left running


def test_create_executor_and_options():
    options = {"config": localhost_config(2), "runtime_memory": 2048, "retries": 0}
    executor = create_executor("lithops", options)
    assert isinstance(executor, LithopsExecutor)
    assert executor.name == "lithops"
    assert executor.options == options
    assert executor == LithopsExecutor(**options)
    # the engine's own options and the per-call ones never reach FunctionExecutor
    executor = LithopsExecutor(backend="localhost", timeout=30, batch_size=4, include_modules=[])
    assert executor._function_executor_kwargs() == {
        "backend": "localhost",
        "runtime": sys.executable,
    }
    with pytest.raises(TypeError, match="config must be a dict"):
        LithopsExecutor(config="lithops.yaml")
    with pytest.raises(TypeError, match="runtime_memory must be an int of MB"):
        LithopsExecutor(runtime_memory="2GB")
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        LithopsExecutor(timeout=0)
    with pytest.raises(ValueError, match="cannot be given with it: backend"):
        LithopsExecutor(function_executor=object(), backend="localhost")


def test_missing_lithops_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "lithops", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'cubego\[lithops\]'"):
        create_executor("lithops")
