"""The executor conformance suite end to end on Spark local[2] (127.0.0.1)."""

import pytest

from cubego.runtime.executors.spark import SparkExecutor
from executor_suite import *  # noqa: F403
from executor_suite import check_killed_worker
from test_executor_spark import user_spark  # noqa: F401 - the fixture


@pytest.fixture(scope="module")
def executor(user_spark):  # noqa: F811
    return SparkExecutor(spark_session=user_spark)


def test_killed_spark_worker_costs_only_its_batch(executor, work, tmp_path):
    check_killed_worker(executor, work, tmp_path)
