"""The Modal executor, tested up to the remote call (no Modal account here).

What is checked: the app and function definition (image with cubego, memory,
region, cloud, timeout, no Modal retries, secrets), that Modal would find the
function in the container by importing its module, the memory check, that the
payload survives pickling, and the function body run in this process through
``open_local`` (``function.local`` after a cloudpickle round trip). ``open``'s
own ``app.run()`` is checked with ``modal.App.run`` replaced by a recorder.
"""

from __future__ import annotations

import contextlib
import importlib
import operator
import os
import pickle
import sys
import time

import modal
import pytest

import cubego
from cubego.runtime.create import create_executor
from cubego.runtime.executors.modal import ModalExecutor, _run_call, cubego_requirement
from cubego.runtime.remote import Session

ALLOWED_MEM = 1_000_000_000


@pytest.fixture(scope="module")
def local_session():
    executor = ModalExecutor(region="us-east-1", max_workers=2, secrets=[])
    with executor.open_local(ALLOWED_MEM) as session:
        yield session


def test_function_definition():
    executor = ModalExecutor(region="eu-west-1", memory="4GB", timeout=600, retries=3)
    app, function = executor.build(ALLOWED_MEM)
    assert app.name == "cubego"
    assert function.app is app
    info = function.info()
    assert info.memory_mib == 3815  # 4 GB rounded up to whole MiB
    assert info.cpu == 1.0
    assert info.regions == ["eu-west-1"] and info.cloud == "aws"
    assert info.timeout == 600
    assert info.max_retries == 0  # the engine's retries=3 never reach Modal
    assert info.secrets == ["modal.Secret.from_name('my-aws-secret')"]  # Cubed's default
    # Cubed's defaults: 2GB of memory, 180 s, and the GCP secret on GCP
    info = ModalExecutor(region="us-east1", cloud="gcp").build(ALLOWED_MEM)[1].info()
    assert (info.memory_mib, info.timeout, info.cloud) == (1908, 180, "gcp")
    assert info.secrets == ["modal.Secret.from_name('my-googlecloud-secret')"]
    secret = modal.Secret.from_dict({"AWS_ACCESS_KEY_ID": "x"})
    info = ModalExecutor(region="r", secrets=["creds", secret]).build(ALLOWED_MEM)[1].info()
    assert info.secrets[0] == "modal.Secret.from_name('creds')" and len(info.secrets) == 2
    assert ModalExecutor(region="r", secret="s3").build(ALLOWED_MEM)[1].info().secrets == [
        "modal.Secret.from_name('s3')"
    ]


def test_the_container_finds_the_function_by_importing_its_module():
    _, function = ModalExecutor(region="us-east-1").build(ALLOWED_MEM)
    source = function._source_info_  # what Modal sends to find the function in the container
    assert not source.is_serialized()
    assert source.module_name == "cubego.runtime.executors.modal"
    module = importlib.import_module(source.module_name)
    assert getattr(module, source.function_name) is _run_call


def test_image_installs_this_cubego(monkeypatch):
    calls = []

    def spy(name):
        original = getattr(modal.Image, name)

        def record(self, *args, **kwargs):
            calls.append((name, args, kwargs))
            return original(self, *args, **kwargs)

        monkeypatch.setattr(modal.Image, name, record)

    spy("pip_install")
    spy("pip_install_from_requirements")
    assert cubego_requirement() == "cubego==" + importlib.metadata.version("cubego")
    image = ModalExecutor(region="r").image()
    assert isinstance(image, modal.Image)
    assert calls == [("pip_install", (cubego_requirement(),), {})]
    calls.clear()
    ModalExecutor(region="r", requirements_file="requirements.txt").image()
    assert calls == [("pip_install_from_requirements", ("requirements.txt",), {})]
    mine = modal.Image.debian_slim().pip_install("cubego", "s3fs")
    assert ModalExecutor(region="r", image=mine).image() is mine


def test_payload_and_result_survive_pickling():
    payload = (
        cubego.runtime.remote.check_worker_memory,
        (b"\x00plan" * 1000, [[0, 1], [2, 3]], {"inter_dir": "s3://bucket/wd"}),
    )
    fn, args = pickle.loads(pickle.dumps(payload))
    assert fn is payload[0] and args == payload[1]
    assert pickle.loads(pickle.dumps(_run_call)) is _run_call


def test_body_runs_locally(local_session):
    assert isinstance(local_session, Session)
    futures = [local_session.submit(operator.add, i, 10) for i in range(4)]
    assert [f.result(timeout=30) for f in futures] == [10, 11, 12, 13]
    assert local_session.submit(os.getpid).result(timeout=30) == os.getpid()


def test_remote_exception_keeps_its_type(local_session):
    with pytest.raises(ZeroDivisionError):
        local_session.submit(operator.truediv, 1, 0).result(timeout=30)


def test_modal_failures_become_runtime_errors(local_session):
    timeout = "import modal; raise modal.exception.FunctionTimeoutError('call exceeded 180 s')"
    future = local_session.submit(exec, timeout, {})
    with pytest.raises(RuntimeError, match="modal: .*FunctionTimeoutError: call exceeded 180 s"):
        future.result(timeout=30)
    assert local_session.submit(operator.add, 1, 1).result(timeout=30) == 2


RECORD_AND_SLEEP = """
import time
start = time.time()
time.sleep(seconds)
with open(path, "w") as f:
    f.write(f"{start} {time.time()}")
"""


def test_in_flight_calls_honour_max_workers(local_session, tmp_path):
    assert local_session.max_workers == 2
    futures = [
        local_session.submit(
            exec, RECORD_AND_SLEEP, {"path": str(tmp_path / str(i)), "seconds": 0.3}
        )
        for i in range(5)
    ]
    for f in futures:
        f.result(timeout=30)
    spans = [tuple(map(float, (tmp_path / str(i)).read_text().split())) for i in range(5)]
    assert max(sum(s <= start < e for s, e in spans) for start, _ in spans) == 2


def test_open_runs_the_app_and_close_stops_it(monkeypatch):
    events = []

    @contextlib.contextmanager
    def run(self, *args, **kwargs):
        events.append(("run", self.name))
        yield self
        events.append(("stopped", self.name))

    @contextlib.contextmanager
    def enable_output(*args, **kwargs):
        events.append("output on")
        yield
        events.append("output off")

    monkeypatch.setattr(modal.App, "run", run)
    monkeypatch.setattr(modal, "enable_output", enable_output)
    session = ModalExecutor(region="us-east-1", enable_output=True).open(ALLOWED_MEM)
    assert session.max_workers == 100
    assert events == ["output on", ("run", "cubego")]
    session.close()
    assert events == ["output on", ("run", "cubego"), ("stopped", "cubego"), "output off"]
    assert not any(t.is_alive() for t in session._pool._threads)
    with pytest.raises(RuntimeError, match="closed session"):
        session.submit(operator.add, 1, 2)
    session.close()  # twice is harmless


def test_close_waits_for_local_calls_and_stops_threads():
    session = ModalExecutor(region="r", max_workers=2).open_local(ALLOWED_MEM)
    future = session.submit(time.sleep, 0.2)
    session.close()
    assert future.done()
    assert session._pool._threads and not any(t.is_alive() for t in session._pool._threads)


def test_memory_check_before_anything_is_built(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("modal.App built before the memory check")

    too_small = ModalExecutor(region="us-east-1", memory="1GB")
    monkeypatch.setattr(modal, "App", refuse)
    with pytest.raises(ValueError) as e:
        too_small.open(2_000_000_000)
    message = str(e.value)
    assert "1000341504 bytes" in message and "memory='1GB'" in message  # 954 MiB
    assert "allowed_mem of 2000000000 bytes" in message
    monkeypatch.undo()
    _, function = ModalExecutor(region="us-east-1", memory="2GB").build(2_000_000_000)
    assert function.info().memory_mib == 1908


def test_create_executor_and_options():
    options = {"region": "us-east-1", "memory": "4GB", "retries": 2, "batch_size": 10}
    executor = create_executor("modal", options)
    assert isinstance(executor, ModalExecutor) and executor.name == "modal"
    assert executor.options == options
    with pytest.raises(TypeError, match="unknown option.*cpu"):
        ModalExecutor(region="us-east-1", cpu=4)
    with pytest.raises(ValueError, match="region option is required"):
        create_executor("modal")
    with pytest.raises(ValueError, match="cloud must be 'aws' or 'gcp'"):
        ModalExecutor(region="r", cloud="azure")
    with pytest.raises(ValueError, match="memory must be"):
        ModalExecutor(region="r", memory="lots")
    with pytest.raises(ValueError, match="timeout must be"):
        ModalExecutor(region="r", timeout=-1)
    with pytest.raises(ValueError, match="not both"):
        ModalExecutor(region="r", secret="a", secrets=["b"])
    with pytest.raises(TypeError, match="secrets must be a list"):
        ModalExecutor(region="r", secrets="a")


def test_missing_modal_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "modal", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'cubego\[modal\]'"):
        create_executor("modal", {"region": "us-east-1"})
