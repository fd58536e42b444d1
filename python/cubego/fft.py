"""``cubego.fft``: the Array API FFT extension (:mod:`cubego.array_api.fft`)."""

from cubego.array_api.fft import *  # noqa: F403
from cubego.array_api.fft import __all__  # noqa: F401
