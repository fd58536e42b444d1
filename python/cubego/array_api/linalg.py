"""The Array API linear algebra extension of ``cubego.array_api`` (see :mod:`cubego.linalg`)."""

from cubego.linalg import *  # noqa: F403
from cubego.linalg import __all__  # noqa: F401
