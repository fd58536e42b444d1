"""``create_executor``: an executor from its name and options (Cubed's factory)."""

from __future__ import annotations

import importlib
from typing import Any

from cubego.runtime.types import DagExecutor

__all__ = ["create_executor"]

#: Executor classes by name, as ``"module:Class"``: a module is imported only
#: when its executor is asked for, so this table costs nothing and needs no
#: engine package (Ray, Spark, Beam, ...) installed until one is used.
EXECUTORS: dict[str, str] = {
    "single-threaded": "cubego.runtime.executors.local:SingleThreadedExecutor",
    "threads": "cubego.runtime.executors.local:ThreadsExecutor",
    "beam": "cubego.runtime.executors.beam:BeamExecutor",
    "ray": "cubego.runtime.executors.ray:RayExecutor",
    "spark": "cubego.runtime.executors.spark:SparkExecutor",
}


def executor_class(name: str) -> type[DagExecutor]:
    """The class of the executor called *name*, importing its module.

    Raises ``ValueError`` naming the known executors for an unknown name, and
    ``ModuleNotFoundError`` naming the pip extra when the engine's package is missing.
    """
    if not isinstance(name, str):
        raise TypeError(f"create_executor: name must be a string, got {name!r}")
    path = EXECUTORS.get(name)
    if path is None:
        raise ValueError(
            f"create_executor: unknown executor {name!r}; known: {', '.join(EXECUTORS)}"
        )
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def create_executor(name: str, executor_options: dict | None = None) -> DagExecutor:
    """The executor called *name* (``"threads"``, ``"ray"``, ...), with *executor_options*.

    Raises ``ValueError`` naming the known executors for an unknown name, and
    the executor's own ``TypeError``/``ValueError`` for bad options; an engine
    executor whose package is missing raises ``ModuleNotFoundError`` naming the
    pip extra that installs it.
    """
    cls = executor_class(name)
    options: dict[str, Any] = dict(executor_options or {})
    return cls(**options)
