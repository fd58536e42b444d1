"""The Array API FFT extension (``cubego.fft``), as discrete Fourier transforms by ``matmul``.

Each transform along an axis multiplies the array by the DFT matrix
``W[j, k] = exp(∓2πi·jk/n)``, which is generated chunk by chunk from two
``arange`` arrays (never stored, and never whole in memory: the library's
``matmul`` streams the contracted dimension block pair by block pair). Every
other function composes that with slicing, padding, ``concat`` and ``roll``:
``rfft`` keeps the non-negative frequencies, ``irfft`` rebuilds the Hermitian
spectrum before an inverse transform, ``hfft``/``ihfft`` are ``irfft``/``rfft``
of the conjugate, and the n-dimensional forms transform one axis after another.

Memory stays bounded by the chunks for any length, and the values match
numpy's to rounding; the work is O(n²) per lane rather than an FFT's
O(n log n), which suits axes up to a few thousand elements. A library FFT op
(the axis gathered into one chunk, as for ``sort``) would lift that limit.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

from cubego.array_api.creation_functions import _check_device, arange
from cubego.array_api.manipulation_functions import concat, flip, moveaxis, roll
from cubego.array_api.searching_functions import where
from cubego.core import dtypes as _dtypes
from cubego.core.array import Array, apply, elemwise
from cubego.core.spec import Spec

__all__ = [
    "fft",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifftn",
    "ifftshift",
    "irfft",
    "irfftn",
    "rfft",
    "rfftfreq",
    "rfftn",
]

_NORMS = ("backward", "ortho", "forward")


def _check(x: Any, what: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"fft.{what}: expected a cubego Array, got {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError(f"fft.{what} needs an array with at least one dimension")
    return x


def _axis(axis: int, ndim: int, what: str) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"fft.{what}: axis {axis} is out of bounds for dimension {ndim}")
    return axis % ndim


def _complex(x: Array) -> Array:
    if x.dtype.kind == "c":
        return x
    target = _dtypes.complex64 if x.dtype == _dtypes.float32 else _dtypes.complex128
    return x.astype(target)


def _real(x: Array) -> Array:
    if x.dtype.kind == "c":
        raise TypeError(f"this transform needs a real input, got {x.dtype}")
    return x if x.dtype.kind == "f" else x.astype(_dtypes.float64)


def _resize(x: Array, axis: int, n: int) -> Array:
    """*x* truncated or zero-padded to length *n* along *axis*."""
    size = x.shape[axis]
    if n == size:
        return x
    if n < size:
        return x[(slice(None),) * axis + (slice(0, n),)]
    widths = [[0, 0] for _ in range(x.ndim)]
    widths[axis][1] = n - size
    return apply(
        "pad_constant", {"pad_width": widths, "constant_value": {"scalar": 0, "kind": "int"}}, [x]
    )


def _scale(norm: str, n: int, inverse: bool) -> float:
    if norm not in _NORMS:
        raise ValueError(f"fft: norm must be one of {', '.join(_NORMS)}, got {norm!r}")
    if norm == "ortho":
        return 1 / math.sqrt(n)
    return 1 / n if (norm == "forward") != inverse else 1.0


def _dft_matrix(n: int, inverse: bool, dtype: Any, chunks: tuple[int, ...], spec: Spec) -> Array:
    """``exp(∓2πi·jk/n)`` (generated per chunk), with the phase reduced modulo n first."""
    j = arange(n, chunks=(chunks,), spec=spec)
    phase = elemwise("remainder", elemwise("multiply", j[:, None], j[None, :]), n)
    angle = elemwise("multiply", phase, (2 if inverse else -2) * math.pi / n)
    w = elemwise("add", elemwise("cos", angle), elemwise("multiply", elemwise("sin", angle), 1j))
    return w if w.dtype == dtype else w.astype(dtype)


def _transform(x: Array, n: int | None, axis: int, norm: str, inverse: bool, what: str) -> Array:
    x = _complex(_check(x, what))
    axis = _axis(axis, x.ndim, what)
    n = x.shape[axis] if n is None else operator.index(n)
    if n < 1:
        raise ValueError(f"fft.{what}: n must be at least 1, got {n}")
    scale = _scale(norm, n, inverse)
    x = _resize(x, axis, n)
    lanes = moveaxis(x, axis, -1)
    w = _dft_matrix(n, inverse, x.dtype, lanes.chunks[-1], x.spec)
    out = apply("matmul", {}, [lanes, w])
    if scale != 1.0:
        out = elemwise("multiply", out, scale)
    return moveaxis(out, -1, axis)


def fft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """One-dimensional discrete Fourier transform along *axis* (length *n*)."""
    return _transform(x, n, axis, norm, False, "fft")


def ifft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """One-dimensional inverse discrete Fourier transform along *axis*."""
    return _transform(x, n, axis, norm, True, "ifft")


def _axes_and_sizes(x: Array, s: Any, axes: Any, what: str) -> tuple[list[int], list[int | None]]:
    if axes is None:
        axes = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    axes = [_axis(a, x.ndim, what) for a in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"fft.{what}: repeated axes {axes}")
    sizes: list[int | None] = [None] * len(axes) if s is None else list(s)
    if len(sizes) != len(axes):
        raise ValueError(f"fft.{what}: s and axes must have the same length")
    return axes, sizes


def fftn(
    x: Array,
    /,
    *,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str = "backward",
) -> Array:
    """n-dimensional discrete Fourier transform over *axes* (all by default)."""
    axes_, sizes = _axes_and_sizes(_check(x, "fftn"), s, axes, "fftn")
    for axis, n in zip(axes_, sizes, strict=True):
        x = _transform(x, n, axis, norm, False, "fftn")
    return _complex(x)


def ifftn(
    x: Array,
    /,
    *,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str = "backward",
) -> Array:
    """n-dimensional inverse discrete Fourier transform over *axes*."""
    axes_, sizes = _axes_and_sizes(_check(x, "ifftn"), s, axes, "ifftn")
    for axis, n in zip(axes_, sizes, strict=True):
        x = _transform(x, n, axis, norm, True, "ifftn")
    return _complex(x)


def rfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Transform of a real input: the ``n // 2 + 1`` non-negative frequency terms."""
    x = _real(_check(x, "rfft"))
    axis = _axis(axis, x.ndim, "rfft")
    n = x.shape[axis] if n is None else operator.index(n)
    out = _transform(x, n, axis, norm, False, "rfft")
    return out[(slice(None),) * axis + (slice(0, n // 2 + 1),)]


def _hermitian(x: Array, axis: int, n: int) -> Array:
    """The full length-*n* spectrum whose non-negative half is *x* along *axis*."""
    half = _resize(x, axis, n // 2 + 1)
    lead = (slice(None),) * axis
    mirrored = elemwise("conj", flip(half[lead + (slice(1, n - n // 2),)], axis=axis))
    return concat([half, mirrored], axis=axis)


def irfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Inverse of :func:`rfft`: a real signal of length *n* (default ``2 * (m - 1)``)."""
    x = _complex(_check(x, "irfft"))
    axis = _axis(axis, x.ndim, "irfft")
    n = 2 * (x.shape[axis] - 1) if n is None else operator.index(n)
    if n < 1:
        raise ValueError(f"fft.irfft: n must be at least 1, got {n}")
    return elemwise("real", _transform(_hermitian(x, axis, n), n, axis, norm, True, "irfft"))


def rfftn(
    x: Array,
    /,
    *,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str = "backward",
) -> Array:
    """n-dimensional transform of a real input (half the last axis's frequencies)."""
    axes_, sizes = _axes_and_sizes(_check(x, "rfftn"), s, axes, "rfftn")
    out = rfft(x, n=sizes[-1], axis=axes_[-1], norm=norm)
    for axis, n in zip(axes_[:-1], sizes[:-1], strict=True):
        out = _transform(out, n, axis, norm, False, "rfftn")
    return out


def irfftn(
    x: Array,
    /,
    *,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str = "backward",
) -> Array:
    """Inverse of :func:`rfftn`."""
    axes_, sizes = _axes_and_sizes(_check(x, "irfftn"), s, axes, "irfftn")
    for axis, n in zip(axes_[:-1], sizes[:-1], strict=True):
        x = _transform(x, n, axis, norm, True, "irfftn")
    return irfft(x, n=sizes[-1], axis=axes_[-1], norm=norm)


_SWAPPED = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def hfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Transform of a signal with Hermitian symmetry (given by its first half): real output."""
    x = _complex(_check(x, "hfft"))
    if norm not in _NORMS:
        raise ValueError(f"fft: norm must be one of {', '.join(_NORMS)}, got {norm!r}")
    return irfft(elemwise("conj", x), n=n, axis=axis, norm=_SWAPPED[norm])


def ihfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Inverse of :func:`hfft`: the half spectrum of a real signal."""
    if norm not in _NORMS:
        raise ValueError(f"fft: norm must be one of {', '.join(_NORMS)}, got {norm!r}")
    return elemwise("conj", rfft(x, n=n, axis=axis, norm=_SWAPPED[norm]))


def _frequencies(values: Array, n: int, d: float, dtype: Any) -> Array:
    out = elemwise("divide", values, n * d)
    dtype = _dtypes.float64 if dtype is None else _dtypes.normalize(dtype)
    return out if out.dtype == dtype else out.astype(dtype)


def fftfreq(
    n: int,
    /,
    *,
    d: float = 1.0,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
    spec: Spec | None = None,
) -> Array:
    """Sample frequencies of :func:`fft`: ``[0, 1, ..., -(n // 2), ..., -1] / (d * n)``."""
    _check_device(device)
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"fft.fftfreq: n must be at least 1, got {n}")
    i = arange(n, chunks=chunks, spec=spec)
    signed = where(elemwise("less", i, (n + 1) // 2), i, elemwise("subtract", i, n))
    return _frequencies(signed, n, d, dtype)


def rfftfreq(
    n: int,
    /,
    *,
    d: float = 1.0,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
    spec: Spec | None = None,
) -> Array:
    """Sample frequencies of :func:`rfft`: ``[0, 1, ..., n // 2] / (d * n)``."""
    _check_device(device)
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"fft.rfftfreq: n must be at least 1, got {n}")
    return _frequencies(arange(n // 2 + 1, chunks=chunks, spec=spec), n, d, dtype)


def _shift(x: Array, axes: Any, sign: int, what: str) -> Array:
    _check(x, what)
    axes = list(range(x.ndim)) if axes is None else axes
    axes = [axes] if isinstance(axes, int) else [_axis(a, x.ndim, what) for a in axes]
    if not axes:
        return x
    shifts = [sign * (x.shape[a] // 2) for a in axes]
    return roll(x, tuple(shifts), axis=tuple(axes))


def fftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """*x* with the zero-frequency term moved to the centre of *axes* (all by default)."""
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """Inverse of :func:`fftshift`."""
    return _shift(x, axes, -1, "ifftshift")
