"""The Array API standard namespace of cubego (version 2025.12).

The same functions as the top-level ``cubego`` namespace, which
``Array.__array_namespace__()`` returns; the extensions are
``cubego.array_api.linalg`` and ``cubego.array_api.fft``.
"""

from cubego import *  # noqa: F403
from cubego import __all__ as _cubego_all

from . import fft, linalg  # noqa: F401 - the extensions, as submodules of this namespace

__array_api_version__ = "2025.12"

__all__ = list(_cubego_all)
