"""The executor conformance suite end to end on Apache Beam's DirectRunner (2 worker processes)."""

import pytest

from cubego.runtime.executors.beam import BeamExecutor
from executor_suite import *  # noqa: F403
from executor_suite import check_killed_worker
from test_executor_beam import MULTI_PROCESSING

# A pipeline starts its worker processes, which import cubego, for each group
# of calls: more than the straggler's delay, so the suite checks that the
# backup runs, not that it wins in time.
backup_wins = False


@pytest.fixture(scope="module")
def executor():
    # In-memory pipelines start fast; the killed-worker test needs worker processes.
    return BeamExecutor(
        runner="DirectRunner", pipeline_options={"direct_running_mode": "in_memory"}
    )


def test_killed_beam_worker_costs_only_its_batch(work, tmp_path):
    executor = BeamExecutor(runner="DirectRunner", pipeline_options=MULTI_PROCESSING)
    check_killed_worker(executor, work, tmp_path)
