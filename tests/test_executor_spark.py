"""The Spark executor's session, on a local[2] Spark bound to 127.0.0.1 without a UI.

Calls are standard-library functions, importable in every Python worker. In
local mode Spark's executors are threads of one JVM and its Python workers are
children of the ``pyspark.daemon`` process: a "killed worker" is one of those.
"""

from __future__ import annotations

import operator
import os
import signal
import subprocess
import sys
import sysconfig
import time

import pyspark  # a missing PySpark fails this module, as it must
import pytest
from pyspark.sql import SparkSession

from cubego.runtime.create import create_executor
from cubego.runtime.executors.spark import (
    SparkExecutor,
    SparkJobSession,
    parse_memory,
    task_slots,
    worker_memory,
)
from cubego.runtime.remote import machine_memory

from helpers import descendants

GiB = 2**30

#: A local Spark with 2 task slots, no UI, on the loopback interface only.
LOCAL_CONF = {
    "spark.master": "local[2]",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}


def sleeping_python_workers() -> list[int]:
    """Pids of this process's pyspark workers waiting in ``time.sleep`` (kernel wait channel)."""
    pids = []
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{pid}/wchan") as f:
                wchan = f.read()
        except FileNotFoundError:
            continue
        if b"pyspark.daemon" in cmdline and wchan == "hrtimer_nanosleep":
            pids.append(pid)
    return pids


def test_create_executor_returns_the_spark_executor_with_its_options():
    ex = create_executor("spark", {"spark_conf": {"spark.master": "local[2]"}, "max_workers": 3})
    assert type(ex) is SparkExecutor
    assert ex.name == "spark"
    assert ex.options == {"spark_conf": {"spark.master": "local[2]"}, "max_workers": 3}
    assert ex == SparkExecutor(spark_conf={"spark.master": "local[2]"}, max_workers=3)


def test_bad_options():
    with pytest.raises(TypeError, match="spark_session must be a pyspark.sql.SparkSession"):
        SparkExecutor(spark_session="local[2]")
    with pytest.raises(TypeError, match="spark_conf must be a dict"):
        SparkExecutor(spark_conf=[("spark.master", "local")])
    with pytest.raises(ValueError, match="max_workers must be a positive int"):
        SparkExecutor(max_workers=-2)
    with pytest.raises(ValueError, match="allowed_mem must be a positive number"):
        SparkExecutor().open(allowed_mem=0)


def test_create_needs_no_engine_and_a_missing_pyspark_names_the_pip_extra():
    code = (
        "import sys, cubego.runtime.create as c\n"
        "c.create_executor('threads')\n"
        "assert 'pyspark' not in sys.modules, 'create imported pyspark'\n"
        "sys.modules['pyspark'] = None  # as if PySpark were not installed\n"
        "try:\n"
        "    c.create_executor('spark')\n"
        "except ModuleNotFoundError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert "pip install 'cubego[spark]'" in out.stdout


def test_memory_settings_of_a_cluster():
    assert parse_memory("512m") == 512 * 2**20
    assert parse_memory("2g") == 2 * GiB
    assert parse_memory("2GB") == 2 * GiB
    assert parse_memory("1024") == GiB  # no unit: MiB, as Spark reads it
    assert parse_memory("100b") == 100
    with pytest.raises(ValueError, match="cannot read the memory setting 'lots'"):
        parse_memory("lots")
    conf = {"spark.executor.cores": "4", "spark.executor.memory": "8g"}
    assert task_slots("yarn", conf, 64) == 4
    assert task_slots("yarn", {**conf, "spark.task.cpus": "2"}, 64) == 2
    assert task_slots("local[3]", conf, 3) == 3  # local: the application's slots
    assert worker_memory("yarn", conf, 4, total_ram=0) == (
        2 * GiB,
        "spark.executor.memory=8g / 4 task slots",
    )
    # The Python workers' own share wins when it is set.
    with_pyspark = {**conf, "spark.executor.pyspark.memory": "4g"}
    assert worker_memory("k8s://x", with_pyspark, 4, 0)[0] == GiB
    assert worker_memory("spark://h:7077", {}, 1, 0)[0] == GiB  # Spark's default 1g
    assert worker_memory("local[2]", conf, 2, total_ram=10 * GiB) == (
        5 * GiB,
        "total RAM / 2 task slots of local[2]",
    )


def test_open_starts_a_session_and_close_stops_it(monkeypatch):
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    assert pyspark.SparkContext._active_spark_context is None
    ex = SparkExecutor(spark_conf=LOCAL_CONF)
    # Too small: refused before any call runs, and the session open started is stopped.
    too_big = machine_memory() // 2 + 1
    with pytest.raises(ValueError) as info:
        ex.open(allowed_mem=too_big)
    assert f"{machine_memory() // 2} bytes" in str(info.value)
    assert f"{too_big} bytes" in str(info.value)
    assert pyspark.SparkContext._active_spark_context is None

    session = ex.open(allowed_mem=GiB)
    conf = session.spark.sparkContext.getConf()
    assert conf.get("spark.task.maxFailures") == "1"
    assert conf.get("spark.speculation") == "false"
    assert conf.get("spark.executor.memory") == "1024m"
    assert session.max_workers == 2
    assert session.submit(operator.add, 2, 3).result(timeout=120) == 5
    # Python workers run this interpreter, not whatever "python3" is on the PATH.
    assert session.submit(sysconfig.get_path, "purelib").result(timeout=120) == (
        sysconfig.get_path("purelib")
    )
    session.close()
    assert pyspark.SparkContext._active_spark_context is None


@pytest.fixture(scope="module")
def user_spark():
    """A SparkSession the user started: sessions use it and leave it running."""
    assert pyspark.SparkContext._active_spark_context is None
    saved = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = sys.executable  # Python workers run this interpreter
    builder = SparkSession.builder
    for key, value in LOCAL_CONF.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    yield spark
    spark.stop()
    if saved is None:
        del os.environ["PYSPARK_PYTHON"]
    else:
        os.environ["PYSPARK_PYTHON"] = saved


@pytest.fixture
def session(user_spark):
    with SparkExecutor(spark_session=user_spark).open(allowed_mem=GiB) as s:
        yield s


def test_results_come_back_from_two_workers(session):
    assert isinstance(session, SparkJobSession)
    assert session.submit(operator.add, 2, 3).result(timeout=120) == 5
    assert session.submit(sorted, [3, 1, 2]).result(timeout=120) == [1, 2, 3]
    pids = {f.result(timeout=120) for f in [session.submit(os.getpid) for _ in range(20)]}
    assert len(pids) == 2
    assert os.getpid() not in pids


def test_a_remote_exception_reaches_the_future_with_its_type(session):
    future = session.submit(operator.truediv, 1, 0)
    with pytest.raises(ZeroDivisionError) as info:
        future.result(timeout=120)
    assert type(info.value) is ZeroDivisionError
    assert "Traceback" in str(info.value.__cause__)  # the worker's traceback
    assert session.submit(operator.add, 1, 1).result(timeout=120) == 2


def test_max_workers_is_the_task_slots_and_spark_runs_no_more(session, user_spark):
    assert session.max_workers == 2
    start = time.monotonic()
    futures = [session.submit(time.sleep, 1.5) for _ in range(4)]
    for f in futures:
        f.result(timeout=120)
    elapsed = time.monotonic() - start
    assert 3.0 <= elapsed < 6.0  # two at a time
    with SparkExecutor(spark_session=user_spark, max_workers=5).open(allowed_mem=GiB) as s:
        assert s.max_workers == 5


def test_memory_check_against_the_users_session(user_spark):
    per_slot = machine_memory() // 2
    with pytest.raises(ValueError) as info:
        SparkExecutor(spark_session=user_spark).open(allowed_mem=per_slot + 1)
    message = str(info.value)
    assert f"{per_slot} bytes" in message and f"{per_slot + 1} bytes" in message
    assert "total RAM / 2 task slots of local[2]" in message
    SparkExecutor(spark_session=user_spark).open(allowed_mem=per_slot).close()
    assert user_spark.sparkContext._jsc is not None  # neither refusing nor closing stopped it


def test_close_leaves_the_users_session_running(user_spark):
    session = SparkExecutor(spark_session=user_spark).open(allowed_mem=GiB)
    running = session.submit(time.sleep, 60)
    time.sleep(2)
    start = time.monotonic()
    session.close()  # cancels this session's jobs
    assert time.monotonic() - start < 30
    with pytest.raises(RuntimeError, match="spark: the call's job failed: .*cancelled"):
        running.result(timeout=0)
    with pytest.raises(RuntimeError, match="closed session"):
        session.submit(operator.add, 1, 2)
    deadline = time.monotonic() + 60
    while sleeping_python_workers():  # Spark kills the cancelled task's Python worker
        assert time.monotonic() < deadline, "the cancelled call's worker still sleeps"
        time.sleep(0.2)
    # The session keeps working, also for an executor that finds it running by itself.
    with SparkExecutor().open(allowed_mem=GiB) as found:
        assert found.spark.sparkContext is user_spark.sparkContext
        assert found.submit(operator.add, 1, 2).result(timeout=120) == 3
    assert user_spark.sparkContext.parallelize([1, 2]).sum() == 3


def test_a_killed_worker_fails_only_its_call(session):
    others = [session.submit(operator.mul, i, 10) for i in range(4)]
    assert [f.result(timeout=120) for f in others] == [0, 10, 20, 30]
    sleeping = session.submit(time.sleep, 5)
    queued = [session.submit(operator.add, i, 1) for i in range(4)]

    deadline = time.monotonic() + 30
    while not (busy := sleeping_python_workers()):
        assert time.monotonic() < deadline, "no Python worker runs the sleep"
        time.sleep(0.1)
    assert len(busy) == 1
    os.kill(busy[0], signal.SIGKILL)

    with pytest.raises(RuntimeError, match="spark: .*Python worker exited unexpectedly"):
        sleeping.result(timeout=120)
    assert [f.result(timeout=120) for f in queued] == [1, 2, 3, 4]
    # The session still works (the daemon forks a new worker).
    assert session.submit(operator.add, 20, 22).result(timeout=120) == 42
    pids = {f.result(timeout=120) for f in [session.submit(os.getpid) for _ in range(10)]}
    assert busy[0] not in pids
