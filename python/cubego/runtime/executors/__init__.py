"""Executors, one module per engine, at Cubed's module paths.

:mod:`~cubego.runtime.executors.local`: ``ThreadsExecutor`` (the default: the Go
engine's goroutines, in this process) and ``SingleThreadedExecutor`` (one task
at a time, for debugging).
"""
