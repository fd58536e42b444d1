"""The Beam executor's session, on the DirectRunner with 2 worker processes.

Calls are standard-library functions, importable in every worker. Each pipeline
starts its own SDK worker processes (``apache_beam.runners.worker.sdk_worker_main``)
in a pipeline process of its own; a "killed worker" is one of those.
"""

from __future__ import annotations

import operator
import os
import signal
import subprocess
import sys
import tempfile
import time

import apache_beam  # noqa: F401 - a missing Beam fails this module, as it must
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from cubego.runtime.create import create_executor
from cubego.runtime.executors.beam import BeamExecutor, BeamPipelineSession, _parallelism
from cubego.runtime.remote import machine_memory

from helpers import descendants

GiB = 2**30

#: The DirectRunner with 2 SDK worker processes.
MULTI_PROCESSING = {"direct_num_workers": 2, "direct_running_mode": "multi_processing"}


def sdk_workers() -> dict[int, int]:
    """This process's Beam SDK worker processes: pid → how many of its threads are in time.sleep."""
    workers = {}
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if not f.read().startswith(sys.executable.encode() + b"\0-m\0apache_beam"):
                    continue
            sleeping = 0
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                    sleeping += f.read() == "hrtimer_nanosleep"
        except FileNotFoundError:
            continue
        workers[pid] = sleeping
    return workers


def test_create_executor_returns_the_beam_executor_with_its_options():
    ex = create_executor("beam", {"runner": "DirectRunner", "pipeline_options": MULTI_PROCESSING})
    assert type(ex) is BeamExecutor
    assert ex.name == "beam"
    assert ex.options == {"runner": "DirectRunner", "pipeline_options": MULTI_PROCESSING}
    assert ex == BeamExecutor(runner="DirectRunner", pipeline_options=MULTI_PROCESSING)


def test_bad_options():
    with pytest.raises(TypeError, match="runner must be a runner's name"):
        BeamExecutor(runner=object())
    with pytest.raises(TypeError, match="pipeline_options must be a dict or a PipelineOptions"):
        BeamExecutor(pipeline_options=["--direct_num_workers=2"])
    with pytest.raises(ValueError, match="max_workers must be a positive int"):
        BeamExecutor(max_workers=0)
    with pytest.raises(ValueError, match="allowed_mem must be a positive number"):
        BeamExecutor().open(allowed_mem=None)


def test_create_needs_no_engine_and_a_missing_beam_names_the_pip_extra():
    code = (
        "import sys, cubego.runtime.create as c\n"
        "c.create_executor('threads')\n"
        "assert 'apache_beam' not in sys.modules, 'create imported apache_beam'\n"
        "sys.modules['apache_beam'] = None  # as if Beam were not installed\n"
        "try:\n"
        "    c.create_executor('beam')\n"
        "except ModuleNotFoundError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert "pip install 'cubego[beam]'" in out.stdout


def test_pipeline_options_and_parallelism():
    given = PipelineOptions(runner="DataflowRunner", direct_num_workers=3)
    options = BeamExecutor(runner="DirectRunner", pipeline_options=given).pipeline_options()
    assert options.get_all_options()["runner"] == "DirectRunner"  # the runner option wins
    assert given.get_all_options()["runner"] == "DataflowRunner"  # the user's are not changed
    assert _parallelism(options) == 1  # in_memory runs one bundle at a time
    assert _parallelism(PipelineOptions(**MULTI_PROCESSING)) == 2
    assert (
        _parallelism(PipelineOptions(direct_num_workers=0, direct_running_mode="multi_threading"))
        == os.cpu_count()
    )
    dataflow = {"runner": "DataflowRunner", "max_num_workers": 5, "machine_type": "n1-highmem-4"}
    assert _parallelism(PipelineOptions(**dataflow)) == 20
    assert _parallelism(PipelineOptions(**{**dataflow, "machine_type": "custom-8-30720"})) == 40
    assert _parallelism(PipelineOptions(runner="DataflowRunner")) == 1


def test_a_remote_runner_needs_a_temp_location(tmp_path):
    dataflow = BeamExecutor(runner="DataflowRunner", pipeline_options={"project": "p"})
    with pytest.raises(ValueError, match="DataflowRunner needs pipeline_options' temp_location"):
        dataflow.open(allowed_mem=GiB)
    # (gs:// needs apache-beam[gcp]; a local directory stands in for it here.)
    options = {"temp_location": str(tmp_path), "num_workers": 3, "machine_type": "e2-standard-2"}
    with BeamExecutor(runner="PortableRunner", pipeline_options=options).open(GiB) as session:
        assert session.result_dir.startswith(f"{tmp_path}/cubego-")
        assert session.max_workers == 6  # nothing ran: pipelines start with the first call


def test_memory_check_of_the_direct_runner():
    per_worker = machine_memory() // 2
    executor = BeamExecutor(pipeline_options=MULTI_PROCESSING)
    with pytest.raises(ValueError) as info:
        executor.open(allowed_mem=per_worker + 1)
    message = str(info.value)
    assert f"{per_worker} bytes" in message and f"{per_worker + 1} bytes" in message
    assert "total RAM / 2 DirectRunner workers" in message
    executor.open(allowed_mem=per_worker).close()


@pytest.fixture(scope="module")
def session():
    with BeamExecutor(pipeline_options=MULTI_PROCESSING).open(allowed_mem=GiB) as s:
        yield s
    assert not os.path.exists(s.result_dir)  # close removed the outcomes


def test_results_come_back_from_two_workers_in_one_pipeline(session):
    assert isinstance(session, BeamPipelineSession)
    before = session.pipelines
    futures = [session.submit(operator.add, i, 1) for i in range(10)]
    pid_futures = [session.submit(os.getpid) for _ in range(20)]
    assert [f.result(timeout=300) for f in futures] == list(range(1, 11))
    pids = {f.result(timeout=300) for f in pid_futures}
    assert session.pipelines == before + 1  # 30 calls submitted together: one pipeline
    assert len(pids) == 2
    assert os.getpid() not in pids
    assert sdk_workers() == {}  # a pipeline's workers end with it


def test_a_remote_exception_fails_only_its_own_call(session):
    failing = session.submit(operator.truediv, 1, 0)
    fine = session.submit(operator.truediv, 1, 4)
    with pytest.raises(ZeroDivisionError) as info:
        failing.result(timeout=300)
    assert type(info.value) is ZeroDivisionError
    assert "Traceback" in str(info.value.__cause__)  # the worker's traceback
    assert fine.result(timeout=300) == 0.25


def test_calls_submitted_while_a_pipeline_runs_share_the_next_one(session):
    before = session.pipelines
    first = session.submit(time.sleep, 1)
    time.sleep(0.5)  # the first pipeline has started
    later = []
    for i in range(5):
        later.append(session.submit(operator.neg, i))
        time.sleep(0.1)
    assert first.result(timeout=300) is None
    assert [f.result(timeout=300) for f in later] == [0, -1, -2, -3, -4]
    assert session.pipelines == before + 2


def test_max_workers_is_the_runners_parallelism_and_beam_runs_no_more(session):
    assert session.max_workers == 2
    start = time.monotonic()
    futures = [session.submit(time.sleep, 1.5) for _ in range(4)]
    for f in futures:
        f.result(timeout=300)
    assert time.monotonic() - start >= 3.0  # at most two at a time
    wide = BeamExecutor(max_workers=6).open(allowed_mem=GiB)
    try:
        assert wide.max_workers == 6
    finally:
        wide.close()


def test_a_session_leaves_no_temporary_files(tmp_path, monkeypatch):
    # Beam's runner and SDK workers make temporary directories they do not
    # remove (beam-temp*, beam-pipeline-temp*, tmp*); the session's own go
    # there too here, and close removes them all.
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with BeamExecutor(pipeline_options=MULTI_PROCESSING).open(allowed_mem=GiB) as s:
        futures = [s.submit(operator.add, i, 1) for i in range(3)]
        assert [f.result(timeout=300) for f in futures] == [1, 2, 3]
        assert s.pipelines >= 1
    assert os.listdir(tmp_path) == []


def test_close_stops_the_running_pipeline_and_cancels_the_waiting_calls():
    session = BeamExecutor(pipeline_options=MULTI_PROCESSING).open(allowed_mem=GiB)
    running = session.submit(time.sleep, 120)
    deadline = time.monotonic() + 120
    while not any(sdk_workers().values()):  # the sleep has started
        assert time.monotonic() < deadline, "the pipeline did not start"
        time.sleep(0.2)
    waiting = session.submit(operator.add, 1, 2)
    start = time.monotonic()
    session.close()
    assert time.monotonic() - start < 30
    with pytest.raises(RuntimeError, match="beam: .*the session was closed"):
        running.result(timeout=0)
    assert waiting.cancelled()
    assert sdk_workers() == {}
    assert not os.path.exists(session.result_dir)
    with pytest.raises(RuntimeError, match="closed session"):
        session.submit(operator.add, 1, 2)


def test_a_killed_worker_fails_its_pipelines_unfinished_calls_only(session):
    sleeping = session.submit(time.sleep, 8)
    others = [session.submit(operator.mul, i, 10) for i in range(8)]

    # The worker running the sleep: an SDK worker with a thread in time.sleep, twice in a row.
    deadline = time.monotonic() + 120
    busy: set[int] = set()
    while True:
        now = {pid for pid, sleeping_threads in sdk_workers().items() if sleeping_threads}
        if len(now) == 1 and now == busy:
            break
        busy = now
        assert time.monotonic() < deadline, "no worker runs the sleep"
        time.sleep(0.5)
    os.kill(busy.pop(), signal.SIGKILL)

    with pytest.raises(RuntimeError, match="beam: .*SDK worker process died.*code 137"):
        sleeping.result(timeout=120)
    # Calls of the same pipeline that had finished keep their results; the others fail.
    for i, f in enumerate(others):
        try:
            assert f.result(timeout=120) == i * 10
        except RuntimeError as err:
            assert "SDK worker process died" in str(err)
    assert sdk_workers() == {}  # the pipeline's other worker was ended too
    # The session still works.
    assert session.submit(operator.add, 20, 22).result(timeout=300) == 42
