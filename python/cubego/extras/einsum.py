"""``einsum``: Einstein summation over cubego arrays (xarray's ``dot``).

Operands are combined pairwise, left to right. Before each product, indices
that no later operand and not the output need are summed out of the operand
that alone has them; the pair is then arranged as a batched matrix product,
``(batch, free1, contracted) @ (batch, contracted, free2)``, and computed by
``matmul`` (blocked, bounded memory). The result is permuted to the output
order at the end.
"""

from __future__ import annotations

import math
import string
from typing import Any

from cubego.array_api.creation_functions import asarray
from cubego.array_api.data_type_functions import result_type
from cubego.array_api.linear_algebra_functions import matmul
from cubego.array_api.manipulation_functions import broadcast_view, permute_dims, reshape
from cubego.array_api.statistical_functions import sum as sum_
from cubego.core.array import Array

__all__ = ["einsum"]

_LETTERS = set(string.ascii_letters)


def _parse(subscripts: str, operands: list[Array]) -> tuple[list[str], str]:
    """Each operand's indices and the output's, with ``...`` expanded to unused letters."""
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a string, got {type(subscripts).__name__}")
    text = subscripts.replace(" ", "")
    if "->" in text:
        inputs_text, output = text.split("->", 1)
        explicit = True
    else:
        inputs_text, output, explicit = text, "", False
    inputs = inputs_text.split(",")
    if len(inputs) != len(operands):
        raise ValueError(f"einsum: {len(inputs)} operand subscripts for {len(operands)} operands")
    for part in inputs + [output]:
        bad = set(part.replace("...", "")) - _LETTERS
        if bad or part.count("...") > 1:
            raise ValueError(f"einsum: invalid subscripts {part!r}")
    used = set(inputs_text + output) & _LETTERS
    spare = [c for c in string.ascii_letters if c not in used]
    ell_ndim = 0
    for part, x in zip(inputs, operands, strict=True):
        named = len(part.replace("...", ""))
        if "..." in part:
            ell_ndim = max(ell_ndim, x.ndim - named)
        elif named != x.ndim:
            raise ValueError(
                f"einsum: subscripts {part!r} have {named} indices for an operand of dimension "
                f"{x.ndim}"
            )
    ell = "".join(spare[:ell_ndim])
    expanded = []
    for part, x in zip(inputs, operands, strict=True):
        if "..." in part:
            k = x.ndim - len(part.replace("...", ""))
            if k < 0:
                raise ValueError(f"einsum: subscripts {part!r} have too many indices")
            part = part.replace("...", ell[ell_ndim - k :])
        expanded.append(part)
    if explicit:
        if "..." in output:
            output = output.replace("...", ell)
        elif ell and any("..." in p for p in inputs):
            # numpy: ellipsis dimensions not in an explicit output are summed
            pass
    else:
        counts: dict[str, int] = {}
        for part in expanded:
            for c in part:
                counts[c] = counts.get(c, 0) + 1
        output = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    if len(set(output)) != len(output):
        raise ValueError(f"einsum: output subscripts {output!r} repeat an index")
    for c in output:
        if not any(c in part for part in expanded):
            raise ValueError(f"einsum: output index {c!r} appears in no operand")
    for part in expanded:
        if len(set(part)) != len(part):
            raise NotImplementedError(
                f"einsum: an index repeated within one operand ({part!r}: a diagonal or trace) "
                "is not supported; use cubego.linalg.diagonal or trace"
            )
    return expanded, output


def _sum_out(x: Array, idx: str, keep: set[str]) -> tuple[Array, str]:
    drop = tuple(i for i, c in enumerate(idx) if c not in keep)
    if not drop:
        return x, idx
    return sum_(x, axis=drop), "".join(c for c in idx if c in keep)


def _arrange(x: Array, idx: str, order: str) -> Array:
    axes = tuple(idx.index(c) for c in order)
    return x if axes == tuple(range(x.ndim)) else permute_dims(x, axes)


def _pair(a: Array, ai: str, b: Array, bi: str, keep: set[str], sizes: dict) -> tuple[Array, str]:
    a, ai = _sum_out(a, ai, keep | set(bi))
    b, bi = _sum_out(b, bi, keep | set(ai))
    batch = "".join(c for c in ai if c in bi and c in keep)
    contract = "".join(c for c in ai if c in bi and c not in keep)
    free_a = "".join(c for c in ai if c not in bi)
    free_b = "".join(c for c in bi if c not in ai)
    nb = [sizes[c] for c in batch]
    fa = math.prod(sizes[c] for c in free_a)
    fb = math.prod(sizes[c] for c in free_b)
    nc = math.prod(sizes[c] for c in contract)
    left = reshape(_arrange(a, ai, batch + free_a + contract), (*nb, fa, nc))
    right = reshape(_arrange(b, bi, batch + contract + free_b), (*nb, nc, fb))
    product = matmul(left, right)
    out_idx = batch + free_a + free_b
    return reshape(product, tuple(sizes[c] for c in out_idx)), out_idx


def einsum(subscripts: str, /, *operands: Array, dtype: Any = None) -> Array:
    """Einstein summation, as ``numpy.einsum`` (``"ij,jk->ik"``, ``"...i,...i->..."``).

    Implicit output (no ``->``) is the indices that appear once, in
    alphabetical order. Indices repeated within one operand (diagonals,
    traces) raise ``NotImplementedError``. Index sizes must match across
    operands (ellipsis dimensions broadcast). *dtype* casts the operands first.
    """
    if not operands:
        raise ValueError("einsum: at least one operand is required")
    spec = next((x.spec for x in operands if isinstance(x, Array)), None)
    ops = [x if isinstance(x, Array) else asarray(x, spec=spec) for x in operands]
    inputs, output = _parse(subscripts, ops)
    target = result_type(*ops) if dtype is None else dtype
    ops = [x if x.dtype == target else x.astype(target) for x in ops]
    sizes: dict[str, int] = {}
    for part, x in zip(inputs, ops, strict=True):
        for c, n in zip(part, x.shape, strict=True):
            if sizes.get(c, 1) == 1:
                sizes[c] = n
            elif n not in (1, sizes[c]):
                raise ValueError(
                    f"einsum: index {c!r} has sizes {sizes[c]} and {n} in different operands"
                )
    # broadcast length-1 dimensions (numpy allows them for ellipsis dimensions)
    ops = [
        broadcast_view(x, tuple(sizes[c] for c in part))
        if tuple(sizes[c] for c in part) != x.shape
        else x
        for part, x in zip(inputs, ops, strict=True)
    ]
    result, idx = ops[0], inputs[0]
    for k in range(1, len(ops)):
        later = set(output).union(*inputs[k + 1 :])
        result, idx = _pair(result, idx, ops[k], inputs[k], later, sizes)
    result, idx = _sum_out(result, idx, set(output))
    return _arrange(result, idx, output)
