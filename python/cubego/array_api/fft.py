"""The Array API FFT extension of ``cubego.array_api`` (see :mod:`cubego.fft`)."""

from cubego.fft import *  # noqa: F403
from cubego.fft import __all__  # noqa: F401
