"""Chunk functions: Python callables applied block by block (Dask's and Cubed's semantics).

:mod:`~cubego.primitive.blockwise` (``blockwise``, ``map_blocks``, lazy
``from_array``, and ``python_op``, which describes such an op to the library),
:mod:`~cubego.primitive.reduction` (``reduction``, ``arg_reduction``),
:mod:`~cubego.primitive.scan` (``scan``, ``cumreduction``),
:mod:`~cubego.primitive.overlap` (``map_overlap``),
:mod:`~cubego.primitive.gufunc` (``apply_gufunc``),
:mod:`~cubego.primitive.groupby` (Cubed's ``groupby_reduction`` and
``groupby_blockwise``, also ``cubego.core.groupby``),
:mod:`~cubego.primitive.window` (``moving_reduce``, ``sliding_window_view``) and
:mod:`~cubego.primitive.unify` (``unify_chunks``). See docs/chunk_functions.md.
"""
