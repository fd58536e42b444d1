"""The runtime: callbacks and their events, and the executors that run a plan.

:mod:`~cubego.runtime.types` holds ``Callback`` and the events it receives
(Cubed's ``cubed.runtime.types``); :mod:`~cubego.runtime.executors` the executors,
at Cubed's module paths; :func:`~cubego.runtime.create.create_executor` makes one
by name.
"""
