"""The executor conformance suite (tests/executor_suite.py) on this machine's executors,
with intermediates on local disk and on S3 (moto on loopback)."""

import os

import numpy as np
import pytest

import cubego
from cubego.runtime.executors.local import ProcessesExecutor
from executor_suite import *  # noqa: F403
from executor_suite import check_killed_worker


@pytest.fixture(params=["threads", "single-threaded", "processes"], scope="module")
def executor(request):
    if request.param == "processes":
        return ProcessesExecutor(max_workers=2)
    return request.param


@pytest.fixture
def work(work_on_disk_and_s3):
    return work_on_disk_and_s3


def test_killed_process_costs_only_its_batch(work, tmp_path):
    check_killed_worker(ProcessesExecutor(max_workers=2), work, tmp_path)


def test_environment_set_after_import_reaches_the_library(s3, tmp_path, monkeypatch):
    # Credentials set from Python after the library loaded reach its S3 client.
    _, options = s3
    endpoint_only = {"endpoint_url": options["endpoint_url"], "region": "us-east-1"}
    spec = cubego.Spec(work_dir=f"s3://cubego-test/{tmp_path.name}", storage_options=endpoint_only)
    x = cubego.asarray(np.arange(12.0), chunks=4, spec=spec).rechunk(6)
    cubego.ones(1).compute()  # the library is loaded
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    # (an I/O failure is a RuntimeError until the hardening issue types it OSError)
    # intermediate_mem=0: the rechunk's intermediate goes to S3, not to memory.
    with pytest.raises((OSError, RuntimeError), match="credentials"):
        (x + 1).compute(intermediate_mem=0)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    np.testing.assert_array_equal((x + 1).compute(intermediate_mem=0), np.arange(12.0) + 1)
    for executor in ("threads", ProcessesExecutor(max_workers=1)):
        np.testing.assert_array_equal((x * 2).compute(executor=executor), np.arange(12.0) * 2)
    assert os.environ["AWS_ACCESS_KEY_ID"] == "test"
