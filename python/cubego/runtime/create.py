"""``create_executor``: an executor from its name and options (Cubed's factory)."""

from __future__ import annotations

from typing import Any

from cubego.runtime.executors.local import SingleThreadedExecutor, ThreadsExecutor
from cubego.runtime.types import DagExecutor

__all__ = ["create_executor"]

#: Executor classes by name.
EXECUTORS: dict[str, type[DagExecutor]] = {
    cls.name: cls for cls in (ThreadsExecutor, SingleThreadedExecutor)
}


def create_executor(name: str, executor_options: dict | None = None) -> DagExecutor:
    """The executor called *name* (``"threads"``, ``"single-threaded"``), with *executor_options*.

    Raises ``ValueError`` naming the known executors for an unknown name.
    """
    if not isinstance(name, str):
        raise TypeError(f"create_executor: name must be a string, got {name!r}")
    cls = EXECUTORS.get(name)
    if cls is None:
        raise ValueError(
            f"create_executor: unknown executor {name!r}; known: {', '.join(sorted(EXECUTORS))}"
        )
    options: dict[str, Any] = dict(executor_options or {})
    return cls(**options)
