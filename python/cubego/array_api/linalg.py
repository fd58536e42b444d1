"""The Array API linear algebra extension (``cubego.linalg``), on chunked arrays.

Functions of whole matrices (``cholesky, det, eig, eigh, eigvals, eigvalsh, inv,
qr, slogdet, solve, svd, svdvals``) run LAPACK (through gonum, in float64) on one matrix at
a time: the library gathers the last two dimensions of the input into one chunk
and keeps the batch dimensions chunked, or refuses with a ``ValueError`` naming
the sizes when a single matrix does not fit ``allowed_mem`` — except that the
reduced ``qr``, ``svd`` and ``svdvals`` of a 2-D matrix too large for one task
run by tall-and-skinny QR (TSQR, as Cubed's: one row block per task, the small
R factors stacked and factorized again, recursively), which needs a single
chunk along the columns (docs/api_status.md). Decompositions
with several outputs (``qr``, ``svd``, ``eig``, ``eigh``, ``slogdet``) are one library op
per output, and each op factorizes: computing all outputs factorizes as many
times as there are outputs. The factors' signs follow LAPACK (numpy's).

The rest compose other ops and stay chunked throughout: ``diagonal, trace``
(a strided slice of the flattened matrices), ``outer, cross, vecdot,
tensordot, matmul, matrix_transpose, matrix_power, vector_norm`` and
``matrix_norm`` (``"nuc"``, 2 and -2 through ``svdvals``); ``pinv`` and
``matrix_rank`` build on ``svd``.

Integer inputs compute in float64; single precision stays single. Complex
matrices use the library's own complex128 algorithms (LU, Cholesky,
Householder QR, Jacobi eigen- and singular value solvers, Hessenberg QR for
``eig``), since gonum's LAPACK is real-only. ``eig`` and ``eigvals`` give complex
results for every input dtype, as the standard says.
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any, NamedTuple

import numpy as np

from cubego.array_api.creation_functions import asarray, eye, zeros
from cubego.array_api.data_type_functions import result_type
from cubego.array_api.linear_algebra_functions import matmul, matrix_transpose, tensordot, vecdot
from cubego.array_api.manipulation_functions import (
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    reshape,
    stack,
)
from cubego.array_api.searching_functions import where
from cubego.array_api.statistical_functions import max as max_
from cubego.array_api.statistical_functions import min as min_
from cubego.array_api.statistical_functions import sum as sum_
from cubego.core import dtypes as _dtypes
from cubego.core.array import Array, apply, elemwise

__all__ = [
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


def _check(x: Any, what: str, ndim: int = 2) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a cubego Array, got {type(x).__name__}")
    if x.ndim < ndim:
        raise ValueError(
            f"{what} needs an array with at least {ndim} dimensions, got shape {x.shape}"
        )
    return x


def _floating(x: Array) -> Array:
    return x.astype(_dtypes.float64) if x.dtype.kind in "biu" else x


def _square(x: Array, what: str) -> None:
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{what} needs square matrices, got shape {x.shape}")


def _matrix_function(func: str, x: Array, b: Array | None = None) -> Array:
    """The library's whole-matrix function *func* of the matrices of *x* (see ops.Linalg)."""
    inputs = [_floating(x)] + ([] if b is None else [_floating(b)])
    if any(a.size == 0 for a in inputs):
        return _empty_matrix_function(func, inputs)
    return apply("linalg", {"func": func}, inputs)


def _empty_matrix_function(func: str, inputs: list[Array]) -> Array:
    """Results for empty stacks or matrices, from numpy's on empty data (no data to read)."""
    # Identity matrices (never singular) standing in for the data, which is empty anyway.
    data = [np.zeros(a.shape, dtype=a.dtype) for a in inputs]
    if data[0].shape[-1] == data[0].shape[-2]:
        data[0] = data[0] + np.eye(data[0].shape[-1], dtype=data[0].dtype)
    results = {
        "cholesky": lambda: np.linalg.cholesky(data[0]),
        "cholesky_upper": lambda: np.linalg.cholesky(data[0], upper=True),
        "det": lambda: np.linalg.det(data[0]),
        "slogdet_sign": lambda: np.linalg.slogdet(data[0]).sign,
        "slogdet_logabsdet": lambda: np.linalg.slogdet(data[0]).logabsdet,
        "inv": lambda: np.linalg.inv(data[0]),
        "solve": lambda: np.linalg.solve(data[0], data[1]),
        "qr_q": lambda: np.linalg.qr(data[0]).Q,
        "qr_r": lambda: np.linalg.qr(data[0]).R,
        "qr_complete_q": lambda: np.linalg.qr(data[0], mode="complete").Q,
        "qr_complete_r": lambda: np.linalg.qr(data[0], mode="complete").R,
        "svd_u": lambda: np.linalg.svd(data[0], full_matrices=False).U,
        "svd_s": lambda: np.linalg.svd(data[0], compute_uv=False),
        "svd_vh": lambda: np.linalg.svd(data[0], full_matrices=False).Vh,
        "svd_full_u": lambda: np.linalg.svd(data[0]).U,
        "svd_full_vh": lambda: np.linalg.svd(data[0]).Vh,
        "eigh_values": lambda: np.linalg.eigvalsh(data[0]),
        "eigh_vectors": lambda: np.linalg.eigh(data[0]).eigenvectors,
        "eig_values": lambda: np.linalg.eigvals(data[0]),
        "eig_vectors": lambda: np.linalg.eig(data[0]).eigenvectors,
    }

    out = np.asarray(results[func]())
    dtype = result_type(*inputs)
    if func in _REAL_OUTPUTS and dtype.kind == "c":
        dtype = _dtypes.float32 if dtype == _dtypes.complex64 else _dtypes.float64
    if func in _COMPLEX_OUTPUTS:
        single = dtype in (_dtypes.float32, _dtypes.complex64)
        dtype = _dtypes.complex64 if single else _dtypes.complex128
    return asarray(out.astype(dtype), spec=inputs[0].spec)


# Functions whose results are real for complex matrices.
_REAL_OUTPUTS = ("svd_s", "eigh_values", "slogdet_logabsdet")
# Functions whose results are complex for real matrices.
_COMPLEX_OUTPUTS = ("eig_values", "eig_vectors")


def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """Cholesky factor of symmetric positive-definite matrices: L (``x = L Lᵀ``) or U if *upper*.

    Reads the lower (or, with *upper*, the upper) triangle. A matrix that is not
    positive definite makes the computation raise ``ValueError``.
    """
    _check(x, "cholesky")
    _square(x, "cholesky")
    return _matrix_function("cholesky_upper" if upper else "cholesky", x)


def det(x: Array, /) -> Array:
    """Determinant of each square matrix (LU factorization)."""
    _check(x, "det")
    _square(x, "det")
    return _matrix_function("det", x)


def slogdet(x: Array, /) -> SlogdetResult:
    """Sign and natural logarithm of the absolute determinant (sign 0, -inf when singular)."""
    _check(x, "slogdet")
    _square(x, "slogdet")
    return SlogdetResult(
        _matrix_function("slogdet_sign", x), _matrix_function("slogdet_logabsdet", x)
    )


def inv(x: Array, /) -> Array:
    """Inverse of each square matrix; a singular matrix makes the computation raise ValueError."""
    _check(x, "inv")
    _square(x, "inv")
    return _matrix_function("inv", x)


def solve(x1: Array, x2: Array, /) -> Array:
    """Solution X of ``x1 @ X = x2`` for square *x1*; *x2* is (M,) or a stack (..., M, K)."""
    _check(x1, "solve")
    _square(x1, "solve")
    if not isinstance(x2, Array):
        raise TypeError(f"solve: expected a cubego Array, got {type(x2).__name__}")
    m = x1.shape[-1]
    if x2.ndim == 1:
        if x2.shape[0] != m:
            raise ValueError(f"solve: x2 of shape {x2.shape} does not match x1 of shape {x1.shape}")
        b = broadcast_to(x2[:, None], x1.shape[:-2] + (m, 1))
        return _matrix_function("solve", x1, b)[..., 0]
    if x2.ndim < 2 or x2.shape[-2] != m:
        raise ValueError(f"solve: x2 of shape {x2.shape} does not match x1 of shape {x1.shape}")
    batch = broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    a = broadcast_to(x1, batch + x1.shape[-2:])
    b = broadcast_to(x2, batch + x2.shape[-2:])
    return _matrix_function("solve", a, b)


def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    """QR factorization: Q with orthonormal columns and upper-triangular R (``x = Q R``).

    *mode* "reduced" gives Q (..., M, K), R (..., K, N) with K = min(M, N);
    "complete" gives Q (..., M, M), R (..., M, N).
    """
    _check(x, "qr")
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    prefix = "qr_" if mode == "reduced" else "qr_complete_"
    return QRResult(_matrix_function(prefix + "q", x), _matrix_function(prefix + "r", x))


def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    """Singular value decomposition ``x = U diag(S) Vh`` with S descending."""
    _check(x, "svd")
    full = "full_" if full_matrices else ""
    return SVDResult(
        _matrix_function(f"svd_{full}u", x),
        _matrix_function("svd_s", x),
        _matrix_function(f"svd_{full}vh", x),
    )


def svdvals(x: Array, /) -> Array:
    """Singular values of each matrix, descending."""
    _check(x, "svdvals")
    return _matrix_function("svd_s", x)


def eigh(x: Array, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices (lower triangle)."""
    _check(x, "eigh")
    _square(x, "eigh")
    return EighResult(_matrix_function("eigh_values", x), _matrix_function("eigh_vectors", x))


def eigvalsh(x: Array, /) -> Array:
    """Eigenvalues (ascending) of symmetric matrices (lower triangle)."""
    _check(x, "eigvalsh")
    _square(x, "eigvalsh")
    return _matrix_function("eigh_values", x)


def eig(x: Array, /) -> EigResult:
    """Eigenvalues and right eigenvectors (columns) of general square matrices.

    Both are complex for every input dtype (complex64 for float32 and complex64
    input, else complex128). Real matrices use LAPACK's algorithm (gonum's
    Dgeev), so the eigenvalues come in numpy's order; complex matrices use a
    Hessenberg QR iteration of cubego's own, whose order may differ from numpy's.
    Each eigenvector has unit norm and its largest component real. A matrix with
    an infinite or NaN entry gives NaN results (numpy raises).
    """
    _check(x, "eig")
    _square(x, "eig")
    return EigResult(_matrix_function("eig_values", x), _matrix_function("eig_vectors", x))


def eigvals(x: Array, /) -> Array:
    """Eigenvalues of general square matrices, complex (see :func:`eig`)."""
    _check(x, "eigvals")
    _square(x, "eigvals")
    return _matrix_function("eig_values", x)


def _default_rtol(x: Array) -> float:
    dtype = _dtypes.float32 if x.dtype in (_dtypes.float32, _dtypes.complex64) else _dtypes.float64
    return builtins.max(x.shape[-2:]) * float(np.finfo(dtype).eps)


def _max_magnitude(a: Array, axis: Any, keepdims: bool = False) -> Array:
    """The maximum of non-negative values along *axis*: 0 over no values (as numpy's norms)."""
    axes = {d % a.ndim for d in ((axis,) if isinstance(axis, int) else axis)}
    if any(a.shape[d] == 0 for d in axes):
        if keepdims:
            shape = tuple(1 if d in axes else n for d, n in enumerate(a.shape))
        else:
            shape = tuple(n for d, n in enumerate(a.shape) if d not in axes)
        return zeros(shape, dtype=a.dtype, spec=a.spec)
    return max_(a, axis=axis, keepdims=keepdims)


def _rtol_cutoff(x: Array, s: Array, rtol: Any) -> Array:
    """The singular values below which a matrix of *x* is treated as rank-deficient."""
    largest = _max_magnitude(s, -1, keepdims=True)
    if rtol is None:
        rtol = _default_rtol(x)
    elif isinstance(rtol, Array):
        rtol = rtol[..., None]
    return elemwise("multiply", largest, rtol)


def matrix_rank(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """Number of singular values above ``rtol * largest singular value`` (int64)."""
    _check(x, "matrix_rank")
    s = svdvals(x)
    above = elemwise("greater", s, _rtol_cutoff(x, s, rtol))
    return sum_(above, axis=-1, dtype="int64")


def pinv(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """Moore-Penrose pseudo-inverse from the reduced SVD, small singular values dropped."""
    _check(x, "pinv")
    u, s, vh = svd(x, full_matrices=False)
    keep = elemwise("greater", s, _rtol_cutoff(x, s, rtol))
    inverse = where(keep, elemwise("reciprocal", where(keep, s, 1)), 0)
    if inverse.dtype != s.dtype:
        inverse = inverse.astype(s.dtype)
    if u.dtype.kind == "c":
        u, vh = elemwise("conj", u), elemwise("conj", vh)
    # pinv = V · diag(1/s) · Uᴴ
    scaled = elemwise("multiply", matrix_transpose(vh), inverse[..., None, :])
    return matmul(scaled, matrix_transpose(u))


def matrix_power(x: Array, n: int, /) -> Array:
    """*x* multiplied by itself *n* times (the identity for 0, powers of the inverse below 0)."""
    _check(x, "matrix_power")
    _square(x, "matrix_power")
    if isinstance(n, (bool, np.bool_)):
        raise TypeError("matrix_power: n must be an integer")
    n = operator.index(n)
    if n == 0:
        identity = eye(x.shape[-1], dtype=x.dtype, chunks=x.chunks[-2:], spec=x.spec)
        return broadcast_to(identity, x.shape)
    if n < 0:
        x = inv(x)
        n = -n
    result = None
    power = x
    while n:
        if n & 1:
            result = power if result is None else matmul(result, power)
        n >>= 1
        if n:
            power = matmul(power, power)
    return result


def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """The *offset*-th diagonal of each matrix: a strided slice of the flattened matrices."""
    _check(x, "diagonal")
    offset = operator.index(offset)
    m, n = x.shape[-2:]
    if offset >= 0:
        start, count = offset, builtins.max(0, builtins.min(m, n - offset))
    else:
        start, count = -offset * n, builtins.max(0, builtins.min(m + offset, n))
    flat = reshape(x, x.shape[:-2] + (m * n,))
    if count == 0:
        return flat[..., 0:0]
    return flat[..., start : start + (count - 1) * (n + 1) + 1 : n + 1]


def trace(x: Array, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """Sum of the *offset*-th diagonal of each matrix (integers sum as the default integer)."""
    return sum_(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1: Array, x2: Array, /) -> Array:
    """Outer product of two 1-d arrays."""
    for x in (x1, x2):
        _check(x, "outer", 1)
        if x.ndim != 1:
            raise ValueError(f"outer needs one-dimensional arrays, got shape {x.shape}")
    return elemwise("multiply", x1[:, None], x2[None, :])


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Cross product of 3-element vectors along *axis*, broadcasting the other dimensions."""
    _check(x1, "cross", 1)
    _check(x2, "cross", 1)
    a, b = broadcast_arrays(x1, x2)
    axis = operator.index(axis)
    if not -builtins.min(x1.ndim, x2.ndim) <= axis < builtins.min(x1.ndim, x2.ndim):
        raise ValueError(
            f"cross: axis {axis} is out of bounds for shapes {x1.shape} and {x2.shape}"
        )
    axis %= a.ndim
    if a.shape[axis] != 3 or x1.shape[axis - a.ndim] != 3 or x2.shape[axis - a.ndim] != 3:
        raise ValueError(
            f"cross: axis {axis} must have length 3, got shapes {x1.shape} and {x2.shape}"
        )
    lead = (slice(None),) * axis

    def part(v: Array, i: int) -> Array:
        return v[lead + (i,)]

    def term(i: int, j: int) -> Array:
        return elemwise(
            "subtract",
            elemwise("multiply", part(a, i), part(b, j)),
            elemwise("multiply", part(a, j), part(b, i)),
        )

    return stack([term(1, 2), term(2, 0), term(0, 1)], axis=axis)


def _real_float(x: Array) -> Array:
    """|x| in the real floating dtype of the result (integers as float64)."""
    return elemwise("abs", _floating(x))


def vector_norm(
    x: Array,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    keepdims: bool = False,
    ord: int | float = 2,  # noqa: A002 - the Array API name
) -> Array:
    """The *ord*-norm of vectors along *axis* (all elements if None)."""
    if not isinstance(x, Array):
        raise TypeError(f"vector_norm: expected a cubego Array, got {type(x).__name__}")
    a = _real_float(x)
    if ord == math.inf:
        out = _max_magnitude(a, tuple(range(a.ndim)) if axis is None else axis, keepdims)
    elif ord == -math.inf:
        out = min_(a, axis=axis, keepdims=keepdims)
    elif ord == 0:
        nonzero = elemwise("not_equal", a, 0)
        out = sum_(nonzero, axis=axis, keepdims=keepdims, dtype=a.dtype)
    elif ord == 1:
        out = sum_(a, axis=axis, keepdims=keepdims)
    elif ord == 2:
        out = elemwise("sqrt", sum_(elemwise("multiply", a, a), axis=axis, keepdims=keepdims))
    else:
        p = float(ord)
        total = sum_(elemwise("pow", a, p), axis=axis, keepdims=keepdims)
        out = elemwise("pow", total, 1.0 / p)
    return out if out.dtype == a.dtype else out.astype(a.dtype)


def matrix_norm(
    x: Array,
    /,
    *,
    keepdims: bool = False,
    ord: int | float | str | None = "fro",  # noqa: A002 - the Array API name
) -> Array:
    """The *ord*-norm of each matrix: "fro", "nuc", 1, -1, 2, -2, inf or -inf."""
    _check(x, "matrix_norm")
    if ord is None:
        ord = "fro"
    a = _real_float(x)
    if ord == "fro":
        out = elemwise("sqrt", sum_(elemwise("multiply", a, a), axis=(-2, -1), keepdims=keepdims))
    elif ord in ("nuc", 2, -2):
        s = svdvals(_floating(x))
        reduce = {"nuc": sum_, 2: _max_magnitude, -2: min_}[ord]
        out = reduce(s, axis=-1)
        if keepdims:
            out = out[..., None, None]
    elif ord in (1, -1, math.inf, -math.inf):
        sum_axis, reduce_axis = (-2, -1) if ord in (1, -1) else (-1, -2)
        reduce = _max_magnitude if ord in (1, math.inf) else min_
        sums = sum_(a, axis=sum_axis, keepdims=True)
        out = reduce(sums, axis=reduce_axis, keepdims=True)
        if not keepdims:
            out = out[..., 0, 0]
    else:
        raise ValueError(f"matrix_norm: unsupported ord {ord!r}")
    return out if out.dtype == a.dtype else out.astype(a.dtype)
