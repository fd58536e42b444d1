"""The Array API standard namespace of cubego (version 2025.12).

The same functions as the top-level ``cubego`` namespace, which
``Array.__array_namespace__()`` returns.
"""

from cubego import *  # noqa: F403
from cubego import __all__ as _cubego_all

__array_api_version__ = "2025.12"

__all__ = list(_cubego_all)
