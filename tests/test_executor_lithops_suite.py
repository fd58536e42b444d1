"""The executor conformance suite end to end on Lithops' localhost back end (version 2):
each batch of tasks runs as a Lithops call in a fresh process importing cubego."""

import pytest

from cubego.runtime.executors.lithops import LithopsExecutor
from executor_suite import *  # noqa: F403
from executor_suite import check_killed_worker
from test_executor_lithops import localhost_config

# Each call starts a process that imports cubego (about a second here), more than
# the straggler's delay: the suite checks the backup runs, not that it wins in time.
backup_wins = False


@pytest.fixture(scope="module")
def executor():
    # runtime_memory is what the memory check reads: these tests allow 100 MB a task.
    return LithopsExecutor(config=localhost_config(2), runtime_memory=256, log_level=None)


def test_killed_lithops_worker_costs_only_its_batch(executor, work, tmp_path):
    check_killed_worker(executor, work, tmp_path)
