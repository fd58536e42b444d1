"""Functions beyond the Array API standard that Cubed, numpy and xarray users call.

:mod:`~cubego.extras.nan_functions` (``nanmean``, ``nansum``, ...),
:mod:`~cubego.extras.pad`, :mod:`~cubego.extras.quantile` (``quantile``,
``median``), :mod:`~cubego.extras.einsum` and :mod:`~cubego.extras.numpy_names`
(``concatenate``, ``cumsum``, ... that xarray calls on the namespace). They are
written with the Array API functions.
"""
