"""``create_executor``: an executor from its name and options (Cubed's factory)."""

from __future__ import annotations

import importlib
from typing import Any

from cubego.runtime.types import DagExecutor

__all__ = ["EXECUTORS", "create_executor", "is_remote"]

#: Executor classes by name, as "module:Class": modules are imported on use, so
#: that no engine package is imported until its executor is asked for.
EXECUTORS: dict[str, str] = {
    "threads": "cubego.runtime.executors.local:ThreadsExecutor",
    "single-threaded": "cubego.runtime.executors.local:SingleThreadedExecutor",
    "processes": "cubego.runtime.executors.local:ProcessesExecutor",
    "dask": "cubego.runtime.executors.dask:DaskExecutor",
    "lithops": "cubego.runtime.executors.lithops:LithopsExecutor",
    "modal": "cubego.runtime.executors.modal:ModalExecutor",
    "coiled": "cubego.runtime.executors.coiled:CoiledExecutor",
    "ray": "cubego.runtime.executors.ray:RayExecutor",
    "spark": "cubego.runtime.executors.spark:SparkExecutor",
    "beam": "cubego.runtime.executors.beam:BeamExecutor",
}

#: The executors that run tasks in this process; every other one is distributed.
IN_PROCESS = ("threads", "single-threaded")


def is_remote(name: str) -> bool:
    """Whether the executor called *name* runs tasks outside this process."""
    return name in EXECUTORS and name not in IN_PROCESS


def executor_class(name: str) -> type[DagExecutor]:
    """The executor class called *name*; ``ValueError`` naming the known ones otherwise."""
    if not isinstance(name, str):
        raise TypeError(f"create_executor: name must be a string, got {name!r}")
    where = EXECUTORS.get(name)
    if where is None:
        raise ValueError(
            f"create_executor: unknown executor {name!r}; known: {', '.join(sorted(EXECUTORS))}"
        )
    module, _, cls = where.partition(":")
    return getattr(importlib.import_module(module), cls)


def create_executor(name: str, executor_options: dict | None = None) -> DagExecutor:
    """The executor called *name* (``"threads"``, ``"processes"``, ``"dask"``...), with options.

    Raises ``ValueError`` naming the known executors for an unknown name.
    """
    options: dict[str, Any] = dict(executor_options or {})
    return executor_class(name)(**options)
