"""Executors at Cubed's module paths: create_executor, options, equality."""

import numpy as np
import pytest

import cubego
from cubego.runtime.create import create_executor
from cubego.runtime.executors.local import SingleThreadedExecutor, ThreadsExecutor
from cubego.runtime.types import Callback, DagExecutor


def test_create_executor_by_name():
    assert isinstance(create_executor("threads"), ThreadsExecutor)
    ex = create_executor("single-threaded", {"retries": 0})
    assert isinstance(ex, SingleThreadedExecutor)
    assert ex.options == {"retries": 0}
    assert create_executor("threads", {"max_workers": 2}) == ThreadsExecutor(max_workers=2)
    assert ThreadsExecutor(max_workers=2) != ThreadsExecutor(max_workers=3)
    assert isinstance(ex, DagExecutor)


def test_create_executor_bad_input():
    with pytest.raises(ValueError, match="unknown executor 'nope'; known: .*processes.*threads"):
        create_executor("nope")
    with pytest.raises(TypeError, match="name must be a string"):
        create_executor(3)


class _Workers(Callback):
    def on_compute_start(self, event):
        self.max_workers = event.plan.max_workers


def test_executor_object_options_reach_the_engine():
    spec = cubego.Spec(allowed_mem="100MB", executor_options={"max_workers": 3})
    x = cubego.ones((8, 8), chunks=2, spec=spec) + 1
    seen = _Workers()
    np.testing.assert_array_equal(
        x.compute(executor=ThreadsExecutor(max_workers=2), callbacks=[seen]), 2
    )
    assert seen.max_workers == 2  # the executor's option wins over the spec's
    x.compute(executor=ThreadsExecutor(max_workers=2), max_workers=1, callbacks=[seen])
    assert seen.max_workers == 1  # compute()'s keyword wins over both
    x.compute(executor=SingleThreadedExecutor(), callbacks=[seen])
    assert seen.max_workers == 1


def test_bad_executor_option_is_a_value_error():
    x = cubego.ones((4,), chunks=2, spec=cubego.Spec(allowed_mem="100MB"))
    with pytest.raises(ValueError, match="no_such_option"):
        x.compute(executor=ThreadsExecutor(no_such_option=1))
