"""The core: ``Array``, ``Spec`` and configuration, chunk rules, plans, compute, Zarr I/O.

Lowest first: :mod:`~cubego.core.spec`, :mod:`~cubego.core.config`,
:mod:`~cubego.core.dtypes`, :mod:`~cubego.core.chunks`,
:mod:`~cubego.core.optimization` (Cubed's optimizer names, selecting the engine's
fusion), :mod:`~cubego.core.plan` (``FinalizedPlan``, ``visualize``),
:mod:`~cubego.core.compute` (running a plan, events to callbacks),
:mod:`~cubego.core.array` (the ``Array`` and the op entry points every function
above builds on), :mod:`~cubego.core.io` (``from_zarr``,
``to_zarr``, ``store``) and :mod:`~cubego.core.measure`.
"""
