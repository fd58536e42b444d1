"""The executor conformance suite end to end on a local Ray (2 CPUs, 127.0.0.1)."""

import pytest
import ray

from cubego.runtime.executors.ray import RayExecutor
from executor_suite import *  # noqa: F403
from executor_suite import check_killed_worker
from test_executor_ray import RAY_INIT


@pytest.fixture(scope="module")
def executor():
    ray.init(**RAY_INIT)
    yield RayExecutor()
    ray.shutdown()


def test_killed_ray_worker_costs_only_its_batch(executor, work, tmp_path):
    check_killed_worker(executor, work, tmp_path)
