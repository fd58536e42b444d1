"""``apply_gufunc``: generalised ufuncs over blocks (Dask's semantics, several outputs included).

A signature such as ``"(i,j),(j)->(i)"`` names each argument's *core*
dimensions, its last ones (or those ``axes``/``axis`` name, moved there
first); the dimensions before them are *loop* dimensions, broadcast between
the arguments. One task per block of the loop dimensions calls the function
with whole core dimensions: a core dimension split into several chunks is an
error unless ``allow_rechunk=True``, in which case the engine reads it whole
(no rechunk op is needed, but the memory projection grows accordingly).

Several outputs (``"(i)->(),(i)"``) are computed by one op, so the function
runs once per block: its outputs are packed side by side into the bytes of
one ``uint8`` intermediate (one record of bytes per loop element), from which
each output array is then cut by its own small op.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from cubego.binding import pyfunc
from cubego.core import dtypes as _dtypes
from cubego.core.array import Array, apply
from cubego.primitive.blockwise import (
    _FULL,
    _as_array,
    _common_chunks,
    _first_spec,
    _own,
    _ranges,
    _ranges_map,
    python_op,
)

__all__ = ["apply_gufunc", "parse_signature"]

_NAME = r"\w+"
_CORE = rf"\((?:{_NAME}(?:,{_NAME})*)?\)"
_LIST = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^{_LIST}->{_LIST}$")


def parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]], bool]:
    """Core dimensions of the inputs and outputs of a gufunc signature, and whether it
    has several outputs (``"(i)->(),()"``) rather than one."""
    if not isinstance(signature, str):
        raise TypeError("`signature` has to be of type string")
    s = re.sub(r"\s+", "", signature)
    if not _SIGNATURE.match(s):
        raise ValueError(f"Not a valid gufunc signature: {signature}")
    lhs, rhs = s.split("->")

    def groups(side: str) -> list[tuple[str, ...]]:
        return [tuple(g.split(",")) if g else () for g in re.findall(r"\(([^)]*)\)", side)]

    outputs = groups(rhs)
    return groups(lhs), outputs, len(outputs) > 1


def _axes(
    axes: Any, axis: Any, keepdims: bool, ins: list[tuple], outs: list[tuple]
) -> tuple[list, list]:
    """Per input and output, the positions of its core dimensions (numpy's axes/axis rules)."""
    nin, nout = len(ins), len(outs)
    if axes is not None and axis is not None:
        raise ValueError("Only one of `axis` or `axes` keyword arguments should be given")
    if axes is not None and not isinstance(axes, list):
        raise ValueError("`axes` has to be of type list")
    present = [c for c in ins if c]
    if keepdims:
        if any(outs):
            raise ValueError("`keepdims` can only be used for scalar outputs")
        if any(c != ins[0] for c in ins):
            raise ValueError("To use `keepdims`, all core dimensions have to be equal")
    if axis is not None:
        if not isinstance(axis, numbers.Integral):
            raise ValueError("`axis` argument has to be an integer value")
        if present and (len(present[0]) != 1 or any(c != present[0] for c in present)):
            raise ValueError(
                "`axis` can be used only if all inputs have the same single core dimension"
            )
        in_axes = [(int(axis),) if c else () for c in ins]
        out_axes = [(int(axis),) if (c or keepdims) and present else () for c in outs]
    elif axes is None:
        in_axes = [tuple(range(-len(c), 0)) for c in ins]
        out_axes = [tuple(range(-len(c), 0)) for c in outs]
    else:
        given = [(a,) if isinstance(a, numbers.Integral) else tuple(a) for a in axes]
        if len(given) == nin and not any(outs):
            given += [()] * nout
        if len(given) != nin + nout:
            raise ValueError(
                "The number of `axes` entries is not equal the number of input and output arguments"
            )
        in_axes, out_axes = given[:nin], given[nin:]
    for k, (a, c) in enumerate(zip(in_axes, ins, strict=True)):
        if len(a) != len(c):
            raise ValueError(
                f"The number of `axes` entries for argument #{k} is not equal the number of "
                "respective input core dimensions in signature"
            )
    if keepdims:
        out_axes = [in_axes[0]] * nout
    else:
        for k, (a, c) in enumerate(zip(out_axes, outs, strict=True)):
            if len(a) != len(c):
                raise ValueError(
                    f"The number of `axes` entries for output #{k} is not equal the number of "
                    "respective output core dimensions in signature"
                )
    return in_axes, out_axes


def _to_end(x: Array, axes: tuple[int, ...]) -> Array:
    """*x* with the dimensions *axes* moved last, in that order."""
    if not axes:
        return x
    core = [a % x.ndim for a in axes]
    order = [d for d in range(x.ndim) if d not in core] + core
    if order == list(range(x.ndim)):
        return x
    return apply("permute_dims", {"axes": order}, [x])


def _from_end(x: Array, axes: tuple[int, ...]) -> Array:
    """Move the last ``len(axes)`` dimensions of *x* to the positions *axes*."""
    if not axes:
        return x
    n = x.ndim
    order: list[int | None] = [None] * n
    for j, a in enumerate(axes):
        order[a % n] = n - len(axes) + j
    rest = iter(range(n - len(axes)))
    order = [next(rest) if o is None else o for o in order]
    if order == list(range(n)):
        return x
    return apply("permute_dims", {"axes": order}, [x])


class _Gufunc:
    """The task function of ``apply_gufunc``: call once, store one or all outputs."""

    def __init__(self, func: Callable, kwargs: dict, outputs: list[tuple[np.dtype, tuple]] | None):
        self.func = func
        self.kwargs = kwargs
        self.outputs = outputs  # None: one output; else (dtype, core shape) per packed output
        self.name = pyfunc.describe(func)

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        result = self.func(*inputs, **self.kwargs)
        if self.outputs is None:
            pyfunc.write_block(out, result, task, self.name)
            return
        if not isinstance(result, (tuple, list)) or len(result) != len(self.outputs):
            raise ValueError(
                f"{self.name} returned {type(result).__name__} for {pyfunc.where(task)}, which "
                f"needs a tuple of {len(self.outputs)} arrays"
            )
        loop = out.shape[:-1]
        offset = 0
        for k, (value, (dtype, core)) in enumerate(zip(result, self.outputs, strict=True)):
            value = np.asarray(value)
            size = math.prod(core) * dtype.itemsize
            want = loop + core
            if value.shape != want or not pyfunc.same_dtype(value.dtype, dtype):
                raise ValueError(
                    f"{self.name} returned output {k} of shape {value.shape} and dtype "
                    f"{value.dtype} for {pyfunc.where(task)}, which needs shape {want} and "
                    f"dtype {dtype}"
                )
            if size and out.size:
                target = out[..., offset : offset + size].view(dtype)
                target[...] = value.reshape(loop + (math.prod(core),))
            offset += size


class _Unpack:
    """Cut one output of a multi-output ``apply_gufunc`` out of the packed bytes."""

    def __init__(self, offset: int, dtype: np.dtype, core: tuple[int, ...]):
        self.offset = offset
        self.dtype = dtype
        self.core = core

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: pyfunc.Task) -> None:
        packed = inputs[0]
        size = math.prod(self.core) * self.dtype.itemsize
        if out.size:
            part = packed[..., self.offset : self.offset + size].view(self.dtype)
            out[...] = part.reshape(out.shape)


def apply_gufunc(
    func: Callable,
    signature: str,
    *args: Any,
    axes: list | None = None,
    axis: int | None = None,
    keepdims: bool = False,
    output_dtypes: Any = None,
    output_sizes: dict | None = None,
    vectorize: bool | None = None,
    allow_rechunk: bool = False,
    extra_projected_mem: int = 0,
    **kwargs: Any,
) -> Any:
    """Apply a generalised ufunc (or a function like one) to arrays (Dask's ``apply_gufunc``).

    Parameters
    ----------
    func : callable
        Called once per block of the loop dimensions with whole core dimensions;
        returns an array, or a tuple of arrays for several outputs.
    signature : str
        e.g. ``"(i,j),(j)->(i)"``, ``"(i)->()"``, ``"(i)->(),(i)"`` (two outputs).
    *args : arrays
    axes : list of tuples, optional
        Positions of the core dimensions of each input and output.
    axis : int, optional
        The position of the single core dimension of every input.
    keepdims : bool, default False
        Keep reduced core dimensions as length-1 dimensions (scalar outputs only).
    output_dtypes : dtype or list of dtypes, optional
        Inferred from one-element inputs if omitted.
    output_sizes : dict, optional
        Lengths of output core dimensions that no input has.
    vectorize : bool, optional
        Wrap *func* in ``numpy.vectorize`` with the signature.
    allow_rechunk : bool, default False
        Allow core dimensions split into several chunks (read whole per task) and
        loop dimensions chunked differently in different inputs.
    extra_projected_mem : int, optional
        Bytes *func* allocates per call beyond its results.
    **kwargs
        Passed to every call.

    Returns
    -------
    Array or tuple of Array
    """
    ins, outs, several = parse_signature(signature)
    nout = len(outs)
    if not several and isinstance(output_dtypes, (tuple, list)) and len(output_dtypes) == 1:
        output_dtypes = output_dtypes[0]
    if several and output_dtypes is not None and not isinstance(output_dtypes, (tuple, list)):
        raise ValueError(
            f"Must specify tuple of dtypes for `output_dtypes` for function with {nout} outputs"
        )
    if vectorize:
        otypes = None
        if output_dtypes is not None:
            otypes = [np.dtype(d) for d in (output_dtypes if several else [output_dtypes])]
        func = np.vectorize(func, signature=signature, otypes=otypes)
    output_sizes = dict(output_sizes or {})
    for k in ("meta", "name"):
        kwargs.pop(k, None)

    spec = _first_spec(args)
    arrays = [_as_array(a, spec) for a in args]
    if len(arrays) != len(ins):
        raise ValueError(
            f"According to `signature`, `func` requires {len(ins)} arguments, "
            f"but {len(arrays)} given"
        )
    in_axes, out_axes = _axes(axes, axis, keepdims, ins, outs)
    arrays = [_to_end(x, a) for x, a in zip(arrays, in_axes, strict=True)]

    # Label every dimension: loop dimensions right-aligned across the inputs.
    nloop = [x.ndim - len(c) for x, c in zip(arrays, ins, strict=True)]
    if any(n < 0 for n in nloop):
        raise ValueError("an input has fewer dimensions than its core dimensions in the signature")
    max_loop = max(nloop, default=0)
    labels = [
        tuple(f"__loop{d}__" for d in range(max_loop - n, max_loop)) + core
        for n, core in zip(nloop, ins, strict=True)
    ]
    loop = tuple(f"__loop{d}__" for d in range(max_loop))
    sizes: dict[str, int] = {}
    found: dict[str, list] = {}
    for x, labs in zip(arrays, labels, strict=True):
        for label, n, c in zip(labs, x.shape, x.chunks, strict=True):
            seen = sizes.get(label)
            if seen is None or seen == 1:
                sizes[label] = n
            elif n not in (1, seen):
                raise ValueError(f"Dimension `'{label}'` with different lengths in arrays")
            found.setdefault(label, []).append((n, c))
    core_sizes = {label: sizes[label] for core in ins for label in core}
    core_sizes.update(output_sizes)
    loop_chunks = []
    for label in loop:
        relevant = [c for n, c in found[label] if n == sizes[label]]
        if len(set(relevant)) > 1 and not allow_rechunk:
            raise ValueError(f"Dimension `'{label}'` with different chunksize present")
        loop_chunks.append(_common_chunks(relevant))
    for label in core_sizes:
        if label in found and not allow_rechunk and any(len(c) > 1 for _, c in found[label]):
            raise ValueError(
                f"Core dimension `'{label}'` consists of multiple chunks. To fix, rechunk into a "
                "single chunk along this dimension or set `allow_rechunk=True`, but beware that "
                "this may increase memory usage significantly."
            )
    for core in outs:
        for label in core:
            if label not in core_sizes:
                raise ValueError(f"Output core dimension `'{label}'` needs a size in output_sizes")

    inputs = []
    for x, labs in zip(arrays, labels, strict=True):
        dims = []
        for label, n in zip(labs, x.shape, strict=True):
            if label in loop and n == sizes[label]:
                o = loop.index(label)
                dims.append(_ranges_map(o, _ranges(loop_chunks[o])))
            else:
                dims.append(_FULL)  # core dimensions whole; length-1 loop dimensions broadcast
        inputs.append((x, dims))

    if output_dtypes is None:
        sample = [np.ones((1,) * x.ndim, dtype=x.dtype) for x in arrays]
        try:
            result = func(*sample, **kwargs)
        except Exception as e:  # noqa: BLE001
            raise ValueError(
                "`dtype` inference failed in `apply_gufunc`. Please specify the dtype explicitly "
                "using the `output_dtypes` kwarg."
            ) from e
        output_dtypes = (
            [np.asarray(r).dtype for r in result] if several else np.asarray(result).dtype
        )
    dtypes = [_dtypes.normalize_any(d) for d in (output_dtypes if several else [output_dtypes])]
    cores = [tuple(core_sizes[label] for label in core) for core in outs]
    loop_shape = tuple(sizes[label] for label in loop)
    label = pyfunc.describe(func)

    if not several:
        chunks = list(loop_chunks) + [(n,) for n in cores[0]]
        results = [
            python_op(
                _Gufunc(func, kwargs, None),
                "apply_gufunc",
                inputs,
                loop_shape + cores[0],
                dtypes[0],
                chunks,
                extra_mem=extra_projected_mem,
                label=label,
            )
        ]
    else:
        record = sum(math.prod(c) * d.itemsize for c, d in zip(cores, dtypes, strict=True))
        packed = python_op(
            _Gufunc(func, kwargs, list(zip(dtypes, cores, strict=True))),
            "apply_gufunc",
            inputs,
            loop_shape + (record,),
            np.uint8,
            list(loop_chunks) + [(record,)],
            extra_mem=extra_projected_mem,
            label=label,
        )
        results, offset = [], 0
        for dtype, core in zip(dtypes, cores, strict=True):
            dims = [_own(d, c) for d, c in enumerate(loop_chunks)] + [_FULL]
            results.append(
                python_op(
                    _Unpack(offset, dtype, core),
                    "apply_gufunc_output",
                    [(packed, dims)],
                    loop_shape + core,
                    dtype,
                    list(loop_chunks) + [(n,) for n in core],
                    label=label,
                )
            )
            offset += math.prod(core) * dtype.itemsize

    final = []
    for x, oax in zip(results, out_axes, strict=True):
        if keepdims:
            x = x[(...,) + (None,) * len(oax)]
        final.append(_from_end(x, oax))
    return tuple(final) if several else final[0]
