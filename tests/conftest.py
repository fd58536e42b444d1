"""Shared fixtures."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request

import pytest

import cubego


@pytest.fixture
def spec(tmp_path):
    """A spec with intermediates under the test's temporary directory."""
    return cubego.Spec(work_dir=tmp_path, allowed_mem="100MB")


@pytest.fixture
def work(tmp_path):
    """Where a computation keeps its intermediates: Spec keyword arguments."""
    return {"work_dir": str(tmp_path / "work")}


@pytest.fixture(params=["local", "s3"])
def work_on_disk_and_s3(request, tmp_path):
    """``work`` on local disk, then on S3 (the moto server of ``s3``): a module
    runs the executor suite on both with ``work = work_on_disk_and_s3``."""
    if request.param == "local":
        return {"work_dir": str(tmp_path / "work")}
    _, options = request.getfixturevalue("s3")
    return {"work_dir": f"s3://cubego-test/{tmp_path.name}", "storage_options": options}


# ----------------------------------------------------------------------------- S3 on moto


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def s3():
    """A moto S3 server on loopback for the test session, stopped afterwards."""
    if not _has_moto():
        pytest.fail("moto[server] is not installed: pip install -e '.[test]'")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(endpoint, timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("moto server did not start")
        import boto3

        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="test",
            aws_secret_access_key="test",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket="cubego-test")
        options = {
            "endpoint_url": endpoint,
            "key": "test",
            "secret": "test",
            "region": "us-east-1",
        }
        yield client, options
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _has_moto():
    try:
        import moto.server  # noqa: F401

        return True
    except ImportError:
        return False
