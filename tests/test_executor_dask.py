"""The executor conformance suite on a Dask LocalCluster (2 worker processes on loopback)."""

import distributed  # noqa: E402 - an engine missing makes this module fail, not skip
import numpy as np
import pytest

import cubego
from cubego.runtime.create import create_executor
from cubego.runtime.executors.dask import DaskExecutor
from executor_suite import *  # noqa: F403
from executor_suite import check_killed_worker


@pytest.fixture(scope="module")
def cluster():
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            memory_limit="2GiB",
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield cluster, client


@pytest.fixture(scope="module")
def executor(cluster):
    return DaskExecutor(client=cluster[1])


@pytest.fixture
def work(work_on_disk_and_s3):
    return work_on_disk_and_s3


def test_killed_dask_worker_costs_only_its_batch(executor, tmp_path):
    check_killed_worker(executor, {"work_dir": str(tmp_path / "work")}, tmp_path)


def test_calls_spread_over_workers_and_address_option(cluster, tmp_path):
    import os

    session = DaskExecutor(client=cluster[1]).open(100_000_000)
    pids = {session.submit(os.getpid).result(timeout=60) for _ in range(4)}
    assert os.getpid() not in pids  # the calls ran in the workers
    assert session.max_workers >= 1
    with pytest.raises(ZeroDivisionError):
        session.submit(divmod, 1, 0).result(timeout=60)
    session.close()
    assert cluster[1].status == "running"  # a user's client stays open
    # By name, with compute_kwargs: a client of the executor's own, closed after.
    spec = cubego.Spec(work_dir=str(tmp_path / "w"), allowed_mem="100MB")
    x = cubego.asarray(np.arange(20.0), chunks=5, spec=spec)
    ex = create_executor("dask", {"compute_kwargs": {"address": cluster[0].scheduler_address}})
    np.testing.assert_array_equal((x + 1).compute(executor=ex), np.arange(20.0) + 1)


def test_refuses_workers_smaller_than_allowed_mem(cluster):
    with pytest.raises(ValueError, match=r"memory_limit / nthreads.*allowed_mem of 4000000000"):
        DaskExecutor(client=cluster[1]).open(4_000_000_000)
