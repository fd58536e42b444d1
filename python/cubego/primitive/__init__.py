"""Chunk functions: Python callables applied block by block (Dask's and Cubed's semantics).

:mod:`~cubego.primitive.blockwise` (``blockwise``, ``map_blocks``, lazy
``from_array``, and ``python_op``, which describes such an op to the library),
:mod:`~cubego.primitive.reduction` (``reduction``, ``arg_reduction``),
:mod:`~cubego.primitive.scan` (``scan``, ``cumreduction``),
:mod:`~cubego.primitive.overlap` (``map_overlap``) and
:mod:`~cubego.primitive.gufunc` (``apply_gufunc``). See docs/chunk_functions.md.
"""
