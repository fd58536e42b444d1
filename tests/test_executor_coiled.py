"""The Coiled executor, tested up to the Coiled cluster (no Coiled account here).

What is checked: the arguments that reach ``coiled.function`` and the cluster
settings Coiled derives from them, the memory check, ``minimum_workers``, and
the session itself, with the Coiled Function's calls sent to a local Dask
cluster (``open_local``): results, exceptions, calls in flight, a killed
worker (Dask re-runs its call), close.
"""

from __future__ import annotations

import functools
import operator
import os
import signal
import sys
import time
import types

import coiled
import pytest
from coiled.function import Function
from distributed import Client, LocalCluster
from distributed.scheduler import KilledWorker

from cubego.runtime.create import create_executor
from cubego.runtime.executors.coiled import CoiledExecutor, _run_call, _worker_failure

ALLOWED_MEM = 100_000_000


@pytest.fixture(scope="module")
def client():
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            host="127.0.0.1",
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def session(client):
    executor = CoiledExecutor(coiled_kwargs={"memory": "4 GiB", "region": "us-east-2"})
    with executor.open_local(ALLOWED_MEM, client) as session:
        yield session


# Run by exec() in a worker: append this process's pid, sleep, then note when it ran.
RECORD_AND_SLEEP = """
import os, time
start = time.time()
with open(path + ".pids", "a") as f:
    f.write(f"{os.getpid()}\\n")
time.sleep(seconds)
with open(path, "w") as f:
    f.write(f"{start} {time.time()}")
"""


def record_and_sleep(session, path, seconds):
    return session.submit(exec, RECORD_AND_SLEEP, {"path": str(path), "seconds": seconds})


def pids(path):
    deadline = time.monotonic() + 60
    while not os.path.exists(f"{path}.pids"):
        assert time.monotonic() < deadline, f"{path} never started"
        time.sleep(0.05)
    with open(f"{path}.pids") as f:
        return [int(line) for line in f.read().split()]


def spans(tmp_path, n):
    return [tuple(map(float, (tmp_path / str(i)).read_text().split())) for i in range(n)]


def test_results_come_back(session):
    futures = [session.submit(operator.add, i, 10) for i in range(6)]
    assert [f.result(timeout=60) for f in futures] == list(range(10, 16))


def test_remote_exception_keeps_its_type(session):
    with pytest.raises(ZeroDivisionError):
        session.submit(operator.truediv, 1, 0).result(timeout=60)


def test_in_flight_calls_honour_max_workers_on_two_workers(session, tmp_path):
    assert session.max_workers == 2  # the client's threads
    futures = [record_and_sleep(session, tmp_path / str(i), 0.5) for i in range(5)]
    for f in futures:
        assert f.result(timeout=60) is None
    ran = spans(tmp_path, 5)
    assert max(sum(s <= start < e for s, e in ran) for start, _ in ran) == 2
    assert len({p for i in range(5) for p in pids(tmp_path / str(i))}) == 2
    assert os.getpid() not in {p for i in range(5) for p in pids(tmp_path / str(i))}


def test_killed_worker_is_rerun_by_dask(session, client, tmp_path):
    doomed = record_and_sleep(session, tmp_path / "doomed", 3)
    (pid,) = pids(tmp_path / "doomed")
    others = [session.submit(operator.add, i, 1) for i in range(3)]
    os.kill(pid, signal.SIGKILL)
    assert [f.result(timeout=60) for f in others] == [1, 2, 3]
    assert doomed.result(timeout=120) is None  # the scheduler ran it again elsewhere
    first, second = pids(tmp_path / "doomed")
    assert first == pid and second != pid
    assert session.submit(operator.add, 2, 3).result(timeout=60) == 5
    client.wait_for_workers(2, timeout=60)  # the nanny restarted the killed worker


def test_killed_worker_beyond_allowed_failures_is_a_runtime_error():
    worker = types.SimpleNamespace(address="tcp://127.0.0.1:40000")
    error = _worker_failure(KilledWorker("task-1", worker, 3))
    assert isinstance(error, RuntimeError) and isinstance(error.__cause__, KilledWorker)
    assert "coiled: the workers running the call died" in str(error)
    assert "tcp://127.0.0.1:40000" in str(error)
    own = ValueError("from the function")
    assert _worker_failure(own) is own


def test_close_cancels_calls_and_leaves_the_users_client_open(client, tmp_path):
    session = CoiledExecutor().open_local(ALLOWED_MEM, client)
    running = record_and_sleep(session, tmp_path / "long", 30)
    pids(tmp_path / "long")
    session.close()
    with pytest.raises(RuntimeError, match="closed while the call ran"):
        running.result(timeout=10)
    with pytest.raises(RuntimeError, match="closed session"):
        session.submit(operator.add, 1, 2)
    assert client.status == "running"
    assert client.submit(operator.add, 1, 2, pure=False).result(timeout=60) == 3
    session.close()  # twice is harmless


def test_decorated_function_options(monkeypatch):
    seen = []
    real = coiled.function

    @functools.wraps(real)  # keeps coiled.function's signature, which options are checked on
    def spy(**kwargs):
        seen.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(coiled, "function", spy)
    kwargs = {
        "memory": ["4 GiB", "8 GiB"],
        "region": "us-west-2",
        "spot_policy": "on-demand",
        "n_workers": [1, 20],
        "keepalive": "5 minutes",
        "threads_per_worker": 2,
    }
    executor = CoiledExecutor(coiled_kwargs=kwargs, retries=0, batch_size=8)
    function = executor.build(ALLOWED_MEM)
    assert seen == [kwargs]  # the engine's options stay out
    assert function.function is _run_call and not function._local
    cluster = function._cluster_kwargs  # what coiled.Cluster will be created with
    assert cluster["worker_memory"] == ["4 GiB", "8 GiB"]
    assert cluster["region"] == "us-west-2" and cluster["spot_policy"] == "on-demand"
    assert cluster["n_workers"] == [1, 20] and cluster["worker_options"] == {"nthreads": 2}
    assert function.keepalive == 300
    assert executor._max_workers() == 40
    # Cubed's way: coiled.function's arguments as options themselves
    assert CoiledExecutor(memory="8 GiB", region="r").coiled_kwargs == {
        "memory": "8 GiB",
        "region": "r",
    }
    assert CoiledExecutor()._max_workers() == 500


def test_minimum_workers_adapts_the_cluster_at_open(monkeypatch):
    class FakeCluster:
        def __init__(self):
            self.calls = []

        def adapt(self, **kwargs):
            self.calls.append(kwargs)

    fake = FakeCluster()
    monkeypatch.setattr(Function, "cluster", property(lambda self: fake))
    session = CoiledExecutor(minimum_workers=3, max_workers=16).open(ALLOWED_MEM)
    assert fake.calls == [{"minimum": 3}]
    assert session.max_workers == 16
    session.close()  # nothing was submitted: no client to close


def test_memory_check_before_anything_is_built(monkeypatch):
    def refuse(**kwargs):
        raise AssertionError("coiled.function called before the memory check")

    too_small = CoiledExecutor(
        coiled_kwargs={"memory": ["1 GiB", "8 GiB"], "threads_per_worker": 2}
    )
    monkeypatch.setattr(coiled, "function", refuse)
    with pytest.raises(ValueError) as e:
        too_small.open(600_000_000)
    message = str(e.value)
    assert "536870912 bytes" in message  # 1 GiB over 2 threads
    assert "threads_per_worker=2" in message and "allowed_mem of 600000000 bytes" in message
    monkeypatch.undo()
    assert too_small.build(500_000_000).function is _run_call
    assert CoiledExecutor(vm_type="m6i.large").build(10**12).function is _run_call  # unknown size


def test_create_executor_and_options():
    options = {"coiled_kwargs": {"memory": "4 GiB"}, "minimum_workers": 1, "retries": 2}
    executor = create_executor("coiled", options)
    assert isinstance(executor, CoiledExecutor) and executor.name == "coiled"
    assert executor.options == options
    with pytest.raises(TypeError, match="memry is not an argument of coiled.function"):
        CoiledExecutor(coiled_kwargs={"memry": "4 GiB"})
    with pytest.raises(TypeError, match="coiled_kwargs must be a dict"):
        CoiledExecutor(coiled_kwargs=["memory"])
    with pytest.raises(ValueError, match="memory given both"):
        CoiledExecutor(memory="2 GiB", coiled_kwargs={"memory": "4 GiB"})
    with pytest.raises(ValueError, match="use CoiledExecutor.open_local"):
        CoiledExecutor(coiled_kwargs={"local": True})
    with pytest.raises(ValueError, match="cannot read memory='lots'"):
        CoiledExecutor(memory="lots")
    with pytest.raises(ValueError, match="minimum_workers must be"):
        CoiledExecutor(minimum_workers=-1)


def test_missing_coiled_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "coiled", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'cubego\[coiled\]'"):
        create_executor("coiled")
