"""``cubego.linalg``: the Array API linear algebra extension (:mod:`cubego.array_api.linalg`)."""

from cubego.array_api.linalg import *  # noqa: F403
from cubego.array_api.linalg import __all__  # noqa: F401
