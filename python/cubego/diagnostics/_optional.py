"""Imports of the optional dependencies of diagnostics."""

from __future__ import annotations

import importlib
from types import ModuleType


def require(module: str, what: str) -> ModuleType:
    """Import *module*, or raise ImportError saying how to install it for *what*."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        top = module.split(".")[0]
        raise ImportError(
            f"cubego.diagnostics.{what} needs {top}, which is not installed; install "
            f"cubego's diagnostics extra: pip install 'cubego[diagnostics]'"
        ) from e
