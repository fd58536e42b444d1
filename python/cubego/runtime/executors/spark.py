"""The Spark executor: each call is a one-task Spark job (``cubed.runtime.executors.spark``).

>>> from cubego.runtime.executors.spark import SparkExecutor
>>> SparkExecutor(spark_conf={"spark.master": "local[2]"})
SparkExecutor(spark_conf={'spark.master': 'local[2]'})

:meth:`SparkExecutor.open` uses the caller's ``spark_session``, else the
SparkContext already running in this process, else starts a session from
``spark_conf`` (stopped again by :meth:`SparkJobSession.close`). Each call runs as
its own job, ``parallelize([args], 1).map(fn)``, from a pool of
``max_workers`` threads, so calls finish and fail independently. A call that
raises returns its exception to the driver as a value, so Spark never re-runs
it and its future gets the exception with its type; a call whose Python worker
dies fails its future with a ``RuntimeError`` naming Spark's reason ("Python
worker exited unexpectedly (crashed)").

Python workers run ``PYSPARK_PYTHON`` (default ``python3`` on the PATH): it must
be an interpreter with cubego installed. A session the executor starts in local
mode uses this interpreter unless ``PYSPARK_PYTHON`` or ``spark.pyspark.python`` says otherwise.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import math
import os
import re
import sys
import threading
import uuid
from collections.abc import Callable
from typing import Any

try:
    import pyspark
    from pyspark.sql import SparkSession
except ModuleNotFoundError as err:  # pragma: no cover - exercised in a test with pyspark hidden
    raise ModuleNotFoundError(
        "the spark executor needs PySpark: pip install 'cubego[spark]'", name=err.name
    ) from err

from cubego.runtime.remote import RemoteExecutor, Session, check_worker_memory, machine_memory

__all__ = ["SparkExecutor", "SparkJobSession"]

#: The least executor memory a session the executor starts asks for (Cubed's floor), in MiB.
MIN_MEMORY_MiB = 512

#: Settings of a session the executor starts, unless ``spark_conf`` sets them:
#: no task retries and no speculative copies (the Go engine decides both).
DEFAULT_CONF = {
    "spark.app.name": "cubego",
    "spark.task.maxFailures": "1",
    "spark.speculation": "false",
}


class SparkExecutor(RemoteExecutor):
    """Run calls as Spark jobs of one task each.

    Options:

    spark_session : pyspark.sql.SparkSession, optional
        A classic (not Spark Connect) session to run on; :meth:`SparkJobSession.close`
        leaves it running.
    spark_conf : dict, optional
        Settings of the session the executor starts when there is neither a
        ``spark_session`` nor a running SparkContext, e.g. ``{"spark.master":
        "spark://head:7077", "spark.executor.cores": "4"}``. The executor adds
        ``spark.task.maxFailures=1``, ``spark.speculation=false`` and (as Cubed
        does) ``spark.executor.memory`` of ``allowed_mem`` per task slot, at
        least 512 MiB, unless set here.
    max_workers : int, optional
        How many calls to keep in flight; default: the session's task slots
        (``defaultParallelism // spark.task.cpus``).
    """

    name = "spark"

    def __init__(self, **options: Any):
        session = options.get("spark_session")
        conf = options.get("spark_conf")
        if session is not None and not isinstance(session, SparkSession):
            raise TypeError(
                f"SparkExecutor: spark_session must be a pyspark.sql.SparkSession, got {session!r}"
            )
        if conf is not None and (
            not isinstance(conf, dict) or not all(isinstance(k, str) for k in conf)
        ):
            raise TypeError(
                f"SparkExecutor: spark_conf must be a dict of Spark settings, got {conf!r}"
            )
        if session is not None and conf is not None:
            raise ValueError(
                "SparkExecutor: spark_conf configures a session the executor starts; "
                "set it on your spark_session instead"
            )
        max_workers = options.get("max_workers")
        if max_workers is not None and (
            isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1
        ):
            raise ValueError(
                f"SparkExecutor: max_workers must be a positive int, got {max_workers!r}"
            )
        super().__init__(**options)

    def open(self, allowed_mem: int) -> SparkJobSession:
        """Get or start a Spark session, check its workers' memory and return a session.

        Raises ``ValueError`` (after stopping a session it started) if a task
        slot has less than *allowed_mem* bytes of memory: in local mode the
        machine's RAM divided by the task slots; on a cluster
        ``spark.executor.pyspark.memory`` (else ``spark.executor.memory``)
        divided by an executor's task slots.
        """
        if isinstance(allowed_mem, bool) or not isinstance(allowed_mem, int) or allowed_mem <= 0:
            raise ValueError(f"allowed_mem must be a positive number of bytes, got {allowed_mem!r}")
        spark = self.options.get("spark_session")
        stop = False
        if spark is None and pyspark.SparkContext._active_spark_context is not None:
            spark = SparkSession.builder.getOrCreate()  # the one running in this process
        elif spark is None:
            spark = _start_session(self.options.get("spark_conf") or {}, allowed_mem)
            stop = True
        try:
            try:
                sc = spark.sparkContext
            except Exception as err:
                raise TypeError(
                    "spark: the executor runs RDD jobs, which need a classic SparkSession, "
                    "not a Spark Connect one"
                ) from err
            conf = dict(sc.getConf().getAll())
            slots = task_slots(sc.master, conf, sc.defaultParallelism)
            worker_mem, what = worker_memory(sc.master, conf, slots, machine_memory())
            check_worker_memory("spark", worker_mem, allowed_mem, what)
        except BaseException:
            if stop:
                spark.stop()
            raise
        task_cpus = int(conf.get("spark.task.cpus", "1"))
        max_workers = self.options.get("max_workers") or max(1, sc.defaultParallelism // task_cpus)
        return SparkJobSession(spark, max_workers, stop=stop)


class SparkJobSession(Session):
    """Calls as one-task Spark jobs of one SparkSession, run from a thread pool."""

    def __init__(self, spark: SparkSession, max_workers: int, stop: bool):
        self.spark = spark
        self.max_workers = max_workers
        self._stop = stop
        self._group = f"cubego-{uuid.uuid4().hex[:12]}"
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._closed = False
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers, thread_name_prefix="cubego-spark"
        )

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> concurrent.futures.Future:
        """Run ``fn(*args)`` as a Spark job of one task; a dead worker fails only this future."""
        with self._lock:
            if self._closed:
                raise RuntimeError("spark: submit on a closed session")
            return self._pool.submit(self._run, next(self._ids), fn, args)

    def _run(self, call_id: int, fn: Callable[..., Any], args: tuple) -> Any:
        sc = self.spark.sparkContext
        # Every job of this session is in one group, so close() can cancel them.
        sc.setJobGroup(self._group, f"cubego call {call_id}", interruptOnCancel=True)
        try:
            [outcome] = sc.parallelize([args], 1).map(_capturing(fn)).collect()
        except Exception as err:
            raise RuntimeError(f"spark: the call's job failed: {_reason(err)}") from err
        return _result(outcome)

    def close(self) -> None:
        """Cancel this session's calls, then stop the Spark session if :meth:`open` started it."""
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)
        with contextlib.suppress(Exception):  # a session stopped already runs nothing
            self.spark.sparkContext.cancelJobGroup(self._group)
        self._pool.shutdown(wait=True)
        if self._stop:
            self._stop = False
            self.spark.stop()


def _start_session(conf: dict, allowed_mem: int) -> SparkSession:
    """Start a session with *conf* on top of the executor's defaults."""
    settings = dict(DEFAULT_CONF)
    slots = int(conf.get("spark.executor.cores", "1")) // int(conf.get("spark.task.cpus", "1"))
    mib = max(MIN_MEMORY_MiB, math.ceil(allowed_mem * max(1, slots) / 2**20))
    settings["spark.executor.memory"] = f"{mib}m"
    settings.update({k: str(v) for k, v in conf.items()})
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    sc = spark.sparkContext
    if sc.master.startswith("local") and "PYSPARK_PYTHON" not in os.environ:
        # Local Python workers run this interpreter (pyspark's default is "python3" on the PATH).
        sc.pythonExec = settings.get("spark.pyspark.python", sys.executable)
    return spark


def task_slots(master: str, conf: dict, default_parallelism: int) -> int:
    """How many tasks one executor runs at once (local mode: the whole application)."""
    task_cpus = int(conf.get("spark.task.cpus", "1"))
    if master.startswith("local"):
        cores = default_parallelism
    else:
        cores = int(conf.get("spark.executor.cores", "1"))
    return max(1, cores // task_cpus)


def worker_memory(
    master: str, conf: dict, slots: int, total_ram: int | None
) -> tuple[int | None, str]:
    """The memory one task slot has, in bytes, and where that number comes from.

    Local mode: the machine's RAM divided by the task slots (Python workers are
    processes of this machine). On a cluster: ``spark.executor.pyspark.memory``
    (the Python workers' share, if set) else ``spark.executor.memory``,
    divided by an executor's task slots.
    """
    if master.startswith("local"):
        per_slot = None if total_ram is None else total_ram // slots
        return per_slot, f"total RAM / {slots} task slots of {master}"
    key = "spark.executor.pyspark.memory"
    if key not in conf:
        key = "spark.executor.memory"
    setting = conf.get(key, "1g")
    return parse_memory(setting) // slots, f"{key}={setting} / {slots} task slots"


def parse_memory(setting: str) -> int:
    """Bytes of a Spark memory setting: ``"512m"``, ``"2g"``, ``"100b"``; a bare number is MiB."""
    match = re.fullmatch(r"(\d+)([kmgtp]?)(b?)", str(setting).strip().lower())
    if match is None:
        raise ValueError(f"spark: cannot read the memory setting {setting!r}")
    number, unit, b = match.groups()
    if not unit:
        return int(number) if b else int(number) * 2**20
    return int(number) * 1024 ** ("kmgtp".index(unit) + 1)


def _capturing(fn: Callable[..., Any]) -> Callable[[tuple], tuple]:
    """``run(args)`` for the worker: ``(True, fn(*args))``, or ``(False, exception, traceback)``.

    Defined inside a function so that pyspark pickles it by value: the worker
    needs only *fn*'s module. Returning the exception instead of raising it
    keeps its type (pyspark turns a raised one into a ``PythonException``) and
    keeps Spark from re-running the call.
    """

    def run(args: tuple) -> tuple:
        try:
            return True, fn(*args)
        except Exception as err:
            import pickle
            import traceback

            remote_traceback = traceback.format_exc()
            try:
                pickle.loads(pickle.dumps(err))
            except Exception:
                err = RuntimeError(f"{type(err).__name__}: {err}")
            return False, err, remote_traceback

    return run


class RemoteTraceback(Exception):
    """The traceback of a call that raised on a worker (the ``__cause__`` of its exception)."""

    def __str__(self) -> str:
        return self.args[0]


def _result(outcome: tuple) -> Any:
    if outcome[0]:
        return outcome[1]
    _, err, remote_traceback = outcome
    err.__cause__ = RemoteTraceback(remote_traceback)
    raise err


def _reason(err: Exception) -> str:
    """Spark's reason for a failed job, in one line (a Py4JJavaError's message is a Java stack)."""
    java = getattr(err, "java_exception", None)
    text = str(java.getMessage()) if java is not None else str(err)
    lines = [line for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else type(err).__name__
    return first[:1000]
