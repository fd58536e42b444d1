"""The FFT extension against numpy.fft."""

from __future__ import annotations

import numpy as np
import pytest

import cubego
from cubego import fft

from helpers import assert_matches, make_data

SPEC = cubego.Spec(allowed_mem="100MB")


def _close(got, want, dtype):
    atol = 1e-4 if dtype in ("complex64", "float32") else 1e-11
    np.testing.assert_allclose(got.compute(), want, rtol=atol, atol=atol)


@pytest.mark.parametrize(
    ("dtype", "norm"),
    [("complex128", "backward"), ("complex128", "ortho"), ("complex64", "forward")],
)
def test_one_dimensional(dtype, norm):
    a = make_data((5, 6), dtype, seed=1)
    r = a.real.copy()
    x = cubego.asarray(a, chunks=(2, 4), spec=SPEC)
    y = cubego.asarray(r, chunks=(3, 5), spec=SPEC)
    got, want = [], []
    for n, axis in ((None, -1), (3, 0), (8, -1)):
        kw = {"n": n, "axis": axis, "norm": norm}
        for name, arg, data in (
            ("fft", x, a),
            ("ifft", x, a),
            ("irfft", x, a),
            ("hfft", x, a),
            ("rfft", y, r),
            ("ihfft", y, r),
        ):
            got.append(getattr(fft, name)(arg, **kw))
            want.append(getattr(np.fft, name)(data, **kw))
    atol = 1e-4 if dtype == "complex64" else 1e-11
    for g, w, value in zip(got, want, cubego.compute(*got), strict=True):
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        np.testing.assert_allclose(value, w, rtol=atol, atol=atol)


def test_n_dimensional():
    a = make_data((3, 4, 5), "complex128", seed=2)
    x = cubego.asarray(a, chunks=2, spec=SPEC)
    for kw in ({}, {"axes": (0, 2)}, {"s": (2, 6), "axes": (2, 0)}):
        _close(fft.fftn(x, **kw), np.fft.fftn(a, **kw), "complex128")
        _close(fft.ifftn(x, **kw), np.fft.ifftn(a, **kw), "complex128")
        _close(fft.irfftn(x, **kw), np.fft.irfftn(a, **kw), "complex128")
        _close(fft.rfftn(cubego.real(x), **kw), np.fft.rfftn(a.real, **kw), "complex128")


@pytest.mark.parametrize("n", [1, 2, 7, 8])
def test_frequencies_and_shifts(n):
    assert_matches(fft.fftfreq(n, d=0.25, spec=SPEC), np.fft.fftfreq(n, d=0.25))
    assert_matches(fft.rfftfreq(n, spec=SPEC), np.fft.rfftfreq(n))
    assert fft.fftfreq(n, dtype=cubego.float32, spec=SPEC).dtype == cubego.float32
    a = make_data((n, 3), "float64", seed=3)
    x = cubego.asarray(a, chunks=2, spec=SPEC)
    assert_matches(fft.fftshift(x), np.fft.fftshift(a))
    assert_matches(fft.ifftshift(x, axes=0), np.fft.ifftshift(a, axes=0))
    assert_matches(fft.ifftshift(fft.fftshift(x)), a)


def test_errors():
    x = cubego.ones((4,), dtype=cubego.complex128, spec=SPEC)
    with pytest.raises(ValueError, match="norm"):
        fft.fft(x, norm="both")
    with pytest.raises(ValueError):
        fft.fft(x, n=0)
    with pytest.raises(TypeError):
        fft.rfft(x)
    with pytest.raises(ValueError):
        fft.fft(cubego.asarray(1j, spec=SPEC))
    assert cubego.array_api.fft.fft is fft.fft
