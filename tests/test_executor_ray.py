"""The Ray executor's session, on a local 2-CPU Ray bound to 127.0.0.1.

Calls are standard-library functions, importable on every worker. Ray is
started at most once per test (it takes seconds), and always shut down.
"""

from __future__ import annotations

import operator
import os
import signal
import subprocess
import sys
import time

# Ray resolves 127.0.0.1 to the machine's address on Linux unless "clusters" are
# off; this must be set before ray is imported (it is read at import).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import pytest  # noqa: E402
import ray  # noqa: E402  - a missing Ray fails this module, as it must
import ray.exceptions  # noqa: E402

from cubego.runtime.create import create_executor  # noqa: E402
from cubego.runtime.executors.ray import RayExecutor, RayTaskSession  # noqa: E402

from helpers import descendants

GiB = 2**30
NODE_MEM = 2 * GiB

#: A local Ray: 2 CPUs, 2 GiB of Ray 'memory' resource, no dashboard, loopback only.
RAY_INIT = dict(
    num_cpus=2,
    include_dashboard=False,
    log_to_driver=False,
    _node_ip_address="127.0.0.1",
    _memory=NODE_MEM,
    object_store_memory=100 * 2**20,
)


def process_titles() -> dict[int, str]:
    """This process's descendants' command lines (a Ray worker's is its title: ``ray::IDLE``)."""
    titles = {}
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                titles[pid] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except FileNotFoundError:
            pass
    return titles


def test_create_executor_returns_the_ray_executor_with_its_options():
    ex = create_executor("ray", {"ray_init": {"address": "auto"}, "max_workers": 3})
    assert type(ex) is RayExecutor
    assert ex.name == "ray"
    assert ex.options == {"ray_init": {"address": "auto"}, "max_workers": 3}
    assert ex == RayExecutor(ray_init={"address": "auto"}, max_workers=3)


def test_bad_options():
    with pytest.raises(TypeError, match="ray_init must be a dict"):
        RayExecutor(ray_init="auto")
    with pytest.raises(ValueError, match="max_workers must be a positive int"):
        RayExecutor(max_workers=0)
    with pytest.raises(ValueError, match="allowed_mem must be a positive number"):
        RayExecutor().open(allowed_mem=-1)


def test_create_needs_no_engine_and_a_missing_ray_names_the_pip_extra():
    code = (
        "import sys, cubego.runtime.create as c\n"
        "c.create_executor('threads')\n"
        "assert 'ray' not in sys.modules, 'create imported ray'\n"
        "sys.modules['ray'] = None  # as if Ray were not installed\n"
        "try:\n"
        "    c.create_executor('ray')\n"
        "except ModuleNotFoundError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert "pip install 'cubego[ray]'" in out.stdout


def test_open_starts_ray_and_close_shuts_it_down():
    assert not ray.is_initialized()
    ex = RayExecutor(ray_init=RAY_INIT)
    # Too small: refused before any call runs, and the Ray open started is shut down.
    with pytest.raises(ValueError) as info:
        ex.open(allowed_mem=3 * GiB)
    assert f"{NODE_MEM} bytes" in str(info.value)
    assert f"{3 * GiB} bytes" in str(info.value)
    assert not ray.is_initialized()

    session = ex.open(allowed_mem=GiB // 2)
    assert ray.is_initialized()
    assert session.submit(operator.add, 2, 3).result(timeout=60) == 5
    session.close()
    assert not ray.is_initialized()


@pytest.fixture(scope="module")
def user_ray():
    """A Ray the user initialised: sessions use it and leave it running."""
    assert not ray.is_initialized()
    ray.init(**RAY_INIT)
    yield
    ray.shutdown()


@pytest.fixture
def session(user_ray):
    with RayExecutor().open(allowed_mem=GiB // 2) as s:
        yield s


def test_results_come_back_from_two_workers(session):
    assert isinstance(session, RayTaskSession)
    assert session.submit(operator.add, 2, 3).result(timeout=60) == 5
    assert session.submit(sorted, [3, 1, 2]).result(timeout=60) == [1, 2, 3]
    pids = {f.result(timeout=60) for f in [session.submit(os.getpid) for _ in range(20)]}
    assert len(pids) == 2
    assert os.getpid() not in pids


def test_a_remote_exception_reaches_the_future_with_its_type(session):
    future = session.submit(operator.truediv, 1, 0)
    with pytest.raises(ZeroDivisionError) as info:
        future.result(timeout=60)
    assert type(info.value) is ZeroDivisionError
    assert isinstance(info.value.__cause__, ray.exceptions.RayTaskError)  # the remote traceback
    assert session.submit(operator.add, 1, 1).result(timeout=60) == 2


def test_max_workers_is_what_fits_and_ray_runs_no_more(user_ray):
    # 2 CPUs and 2 GiB: two calls of 512 MiB run together, two of 1.5 GiB one after the other.
    for allowed_mem, max_workers, at_least, below in (
        (GiB // 2, 2, 1.5, 3.0),
        (3 * GiB // 2, 1, 3.0, None),
    ):
        with RayExecutor().open(allowed_mem=allowed_mem) as session:
            assert session.max_workers == max_workers
            start = time.monotonic()
            futures = [session.submit(time.sleep, 1.5) for _ in range(2)]
            for f in futures:
                f.result(timeout=60)
            elapsed = time.monotonic() - start
            assert elapsed >= at_least
            if below is not None:
                assert elapsed < below
    with RayExecutor(max_workers=7).open(allowed_mem=GiB) as session:
        assert session.max_workers == 7


def test_memory_check_against_the_users_ray(user_ray):
    with pytest.raises(ValueError) as info:
        RayExecutor().open(allowed_mem=NODE_MEM + 1)
    message = str(info.value)
    assert f"{NODE_MEM} bytes" in message and f"{NODE_MEM + 1} bytes" in message
    assert "memory" in message
    RayExecutor().open(allowed_mem=NODE_MEM).close()  # exactly enough is enough
    assert ray.is_initialized()  # neither refusing nor closing shut down the user's Ray


def test_close_leaves_the_users_ray_running_and_refuses_new_calls(user_ray):
    session = RayExecutor(ray_init={"num_cpus": 1}).open(allowed_mem=GiB)  # ray_init: unused
    running = session.submit(time.sleep, 30)
    time.sleep(0.5)
    session.close()
    assert running.cancelled()  # close cancels the calls still running
    assert ray.is_initialized()
    assert ray.cluster_resources()["CPU"] == 2
    with pytest.raises(RuntimeError, match="closed session"):
        session.submit(operator.add, 1, 2)


def test_a_killed_worker_fails_only_its_call(session):
    others = [session.submit(operator.mul, i, 10) for i in range(4)]
    assert [f.result(timeout=60) for f in others] == [0, 10, 20, 30]
    sleeping = session.submit(time.sleep, 5)
    queued = [session.submit(operator.add, i, 1) for i in range(4)]

    # The worker running the sleep: Ray titles a busy worker "ray::<task name>", and
    # the session names its calls "cubego-call-<n>" in submission order.
    deadline = time.monotonic() + 30
    while True:
        busy = [pid for pid, title in process_titles().items() if title == "ray::cubego-call-4"]
        if busy:
            break
        assert time.monotonic() < deadline, f"no worker runs the sleep: {process_titles()}"
        time.sleep(0.1)
    os.kill(busy[0], signal.SIGKILL)

    with pytest.raises(RuntimeError, match="ray: .*WorkerCrashedError") as info:
        sleeping.result(timeout=60)
    assert isinstance(info.value.__cause__, ray.exceptions.WorkerCrashedError)
    assert [f.result(timeout=60) for f in queued] == [1, 2, 3, 4]
    # The session still works (Ray starts a new worker in place of the dead one).
    assert session.submit(operator.add, 20, 22).result(timeout=60) == 42
    pids = {f.result(timeout=60) for f in [session.submit(os.getpid) for _ in range(20)]}
    assert busy[0] not in pids
