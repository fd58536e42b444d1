"""Executors, one module per engine, at Cubed's module paths.

- :mod:`~cubego.runtime.executors.local`: ``ThreadsExecutor`` (the default: the
  Go engine's goroutines, in this process), ``SingleThreadedExecutor`` and
  ``ProcessesExecutor`` (worker processes on this machine);
- :mod:`~cubego.runtime.executors.dask`, :mod:`~cubego.runtime.executors.lithops`,
  :mod:`~cubego.runtime.executors.ray`, :mod:`~cubego.runtime.executors.spark`,
  :mod:`~cubego.runtime.executors.beam`, :mod:`~cubego.runtime.executors.modal`,
  :mod:`~cubego.runtime.executors.coiled`: distributed engines, each a
  ``RemoteExecutor`` whose session runs batches of tasks (docs/distributed.md).

Engine modules import their engine when imported; ``create_executor`` imports
them only when asked for one.
"""
