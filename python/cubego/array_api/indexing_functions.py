"""Indexing with arrays: ``take``, ``take_along_axis``, integer-array keys and ``__setitem__``.

Basic indices (integers, slices, ``...``, ``None``) are the library's ``getitem``
op. Everything here composes library ops, so results stay lazy:

* ``take`` and integer-array keys compute the *index* arrays (they name which
  elements to read, and the library's ``take`` op needs them as a list), never
  the indexed array;
* ``take_along_axis`` compares each index with every position along the axis
  and folds the matching element out with a max: memory stays bounded by the
  chunks, work grows with (indices along the axis) x (axis length);
* ``__setitem__`` builds "the old array where the key does not select, the value
  where it does" from a mask and the value placed by ``pad``/``take``.

Boolean masks in ``__getitem__`` select a data-dependent number of elements and
raise ``NotImplementedError``; in ``__setitem__`` they are an elementwise ``where``.
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import numpy as np

from cubego.array_api.creation_functions import arange, asarray, full
from cubego.array_api.manipulation_functions import (
    broadcast_shapes,
    broadcast_view,
    expand_dims,
    flip,
    moveaxis,
    permute_dims,
    reshape,
)
from cubego.array_api.statistical_functions import max as max_
from cubego.array_api.statistical_functions import sum as sum_
from cubego.array_api.utility_functions import any as any_
from cubego.binding import libcubego
from cubego.core.array import (
    Array,
    _encode_key,
    apply,
    elemwise,
    install_indexing,
    is_scalar,
    select,
)

__all__ = ["getitem_arrays", "setitem", "take", "take_along_axis"]

BOOLEAN_INDEXING = (
    "boolean-mask indexing selects a data-dependent number of elements, which cubego's "
    "lazy plans cannot size; use cubego.where(mask, x, fill) to keep the shape, or compute "
    "the mask first"
)


def _check_array(x: Any, what: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a cubego Array, got {type(x).__name__}")
    return x


def _index_values(indices: Any, what: str) -> np.ndarray:
    """The values of an integer index array (computed: they choose what to read)."""
    if isinstance(indices, Array):
        if indices.dtype.kind not in "iu":
            raise IndexError(
                f"{what}: index arrays must have an integer dtype, got {indices.dtype}"
            )
        return np.asarray(indices.compute())
    raise TypeError(f"{what}: expected a cubego integer Array, got {type(indices).__name__}")


def _numpy_index(k: Any, n: int, axis: int) -> np.ndarray:
    """Positions chosen by a numpy integer array, list, or 1-D boolean mask (known data)."""
    values = np.asarray(k)
    if values.dtype.kind == "b":
        if values.ndim != 1 or values.shape[0] != n:
            raise IndexError(
                f"a boolean index must be 1-dimensional with the length {n} of axis {axis}, "
                f"got shape {values.shape}"
            )
        return np.flatnonzero(values)
    if values.size == 0:
        return values.astype(np.int64)
    if values.dtype.kind not in "iu":
        raise IndexError(f"index arrays must have an integer dtype, got {values.dtype}")
    return values


def _normalize_axis(axis: Any, ndim: int, what: str) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim


def _take_list(x: Array, indices: list[int], axis: int) -> Array:
    return apply("take", {"indices": indices, "axis": axis}, [x])


def take(x: Array, indices: Array, /, *, axis: int | None = None) -> Array:
    """Elements of *x* at *indices* (a 1-D integer array) along *axis*.

    *axis* may be omitted for a one-dimensional *x*. The index array is computed
    (it is the list of positions to read); *x* stays lazy.
    """
    _check_array(x, "take")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"take: axis is required for an array of dimension {x.ndim}")
        axis = 0
    if x.ndim == 0:
        raise ValueError("take: x must have at least one dimension")
    axis = _normalize_axis(axis, x.ndim, "take")
    idx = _index_values(indices, "take")
    if idx.ndim != 1:
        raise ValueError(f"take: indices must be one-dimensional, got shape {idx.shape}")
    out = _take_list(x, [int(i) for i in idx], axis)
    n = x.shape[axis]  # the library checked the bounds
    values = np.where(idx < 0, idx + n, idx).astype(np.int64)
    items = [slice(None)] * x.ndim
    items[axis] = values
    if values.size <= FANCY_KEEP:
        out._fancy = Fancy.of(x, items, [axis], [values], values.shape, True)
    return out


def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """Elements of *x* picked along *axis* by *indices*, lane by lane (numpy semantics).

    ``out[..., i, ...] = x[..., indices[..., i, ...], ...]``; the other dimensions
    of *x* and *indices* broadcast. Lazy in both arguments: each index is compared
    with every position along the axis and the matching element folded out (a max
    over the others replaced by -inf), so
    memory stays bounded by the chunk sizes while the work is proportional to
    ``indices.shape[axis] * x.shape[axis]`` per lane.
    """
    _check_array(x, "take_along_axis")
    _check_array(indices, "take_along_axis")
    if indices.dtype.kind not in "iu":
        raise IndexError(
            f"take_along_axis: indices must have an integer dtype, got {indices.dtype}"
        )
    if x.ndim == 0 or indices.ndim != x.ndim:
        raise ValueError(
            "take_along_axis: x and indices must have the same number of dimensions (at "
            f"least one), got shapes {x.shape} and {indices.shape}"
        )
    axis = _normalize_axis(axis, x.ndim, "take_along_axis")
    n = x.shape[axis]
    xm = moveaxis(x, axis, -1)
    im = moveaxis(indices, axis, -1)
    if indices.dtype.kind == "i":
        im = select(im < 0, im + n, im)
    positions = arange(n, chunks=(xm.chunks[-1],), spec=x.spec)
    matches = elemwise("equal", im[..., None], positions)
    # Every lane holds one matching element and fills that max (or, for complex
    # numbers, a sum) leaves unchanged: -inf, the integer minimum, False.
    kind = x.dtype.kind
    if kind == "b":
        out = any_(select(matches, xm[..., None, :], False), axis=-1)
    elif kind == "c":
        out = sum_(select(matches, xm[..., None, :], 0), axis=-1, dtype=x.dtype)
    else:
        fill = float("-inf") if kind == "f" else int(np.iinfo(x.dtype).min)
        out = max_(select(matches, xm[..., None, :], fill), axis=-1)
    return moveaxis(out, -1, axis)


# ---------------------------------------------------------------------- __getitem__


def _expand(key: Any, ndim: int) -> list[Any]:
    """The key as a list with its ellipsis expanded into full slices."""
    items = list(key) if isinstance(key, tuple) else [key]
    if builtins.sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    indexing = builtins.sum(1 for k in items if k is not None and k is not Ellipsis)
    if indexing > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {indexing} were indexed"
        )
    if any(k is Ellipsis for k in items):
        at = next(i for i, k in enumerate(items) if k is Ellipsis)
        return items[:at] + [slice(None)] * (ndim - indexing) + items[at + 1 :]
    return items + [slice(None)] * (ndim - indexing)


def getitem_arrays(x: Array, key: Any) -> Array:
    """``x[key]`` for a key with integer arrays (numpy's advanced indexing rules).

    Integers in such a key act as 0-d index arrays; the index arrays broadcast
    together, and their dimensions replace the indexed ones in place when the
    array indices are adjacent, else go first.
    """
    items = _expand(key, x.ndim)
    for k in items:
        if isinstance(k, Array) and k.dtype.kind == "b":
            raise NotImplementedError(BOOLEAN_INDEXING)
    # Integers count as advanced indices when any array is present.
    basic: list[Any] = []
    advanced: list[tuple[int, np.ndarray]] = []  # (axis of the basic result, index values)
    key_positions: list[int] = []
    axis = 0  # axis of x that the next indexing item indexes
    for position, k in enumerate(items):
        if k is None or isinstance(k, slice):
            basic.append(k)
            axis += k is not None
            continue
        if isinstance(k, Array):
            values = _index_values(k, "__getitem__")
        elif isinstance(k, (np.ndarray, list)):
            values = _numpy_index(k, x.shape[axis], axis)
        elif isinstance(k, (bool, np.bool_)):
            raise IndexError("boolean scalars are not supported as indices by cubego")
        else:
            try:
                values = np.asarray(operator.index(k))
            except TypeError:
                raise IndexError(
                    "only integers, slices, ellipsis, None and integer arrays are valid indices, "
                    f"got {type(k).__name__}"
                ) from None
        n = x.shape[axis]
        if values.size and (values.min() < -n or values.max() >= n):
            bad = values[(values < -n) | (values >= n)].flat[0]
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
        advanced.append((len(basic), np.where(values < 0, values + n, values).astype(np.int64)))
        key_positions.append(position)
        basic.append(slice(None))
        axis += 1
    try:
        shapes = np.broadcast_shapes(*(v.shape for _, v in advanced))
    except ValueError:
        raise IndexError(
            "shape mismatch: index arrays could not be broadcast together with shapes "
            + ", ".join(str(v.shape) for _, v in advanced)
        ) from None
    # The gather reads only the box that the indices span along each indexed axis.
    boxed = []
    for a, values in advanced:
        if values.size:
            lo, hi = int(values.min()), int(values.max()) + 1
            basic[a] = slice(lo, hi)
            values = values - lo
        boxed.append((a, values))
    y = apply("getitem", {"key": _encode_key(tuple(basic))}, [x])
    axes = [a for a, _ in advanced]
    adjacent = key_positions == list(range(key_positions[0], key_positions[0] + len(axes)))
    out = _gather(y, boxed, shapes, adjacent)
    if builtins.sum(v.size for _, v in advanced) <= FANCY_KEEP:
        out._fancy = Fancy.of(x, items, key_positions, [v for _, v in advanced], shapes, adjacent)
    return out


def _gather(
    y: Array, advanced: list[tuple[int, np.ndarray]], shapes: tuple[int, ...], adjacent: bool
) -> Array:
    """*y* indexed along the axes of *advanced* by their (non-negative) index arrays."""
    axes = [a for a, _ in advanced]
    if len(advanced) == 1:
        ((a, values),) = advanced
        out = _take_list(y, [int(i) for i in values.ravel()], a)
        return reshape(out, y.shape[:a] + values.shape + y.shape[a + 1 :])
    # Several index arrays: gather from the indexed axes flattened into one.
    others = [d for d in range(y.ndim) if d not in axes]
    moved = permute_dims(y, tuple(axes + others))
    sizes = tuple(y.shape[a] for a in axes)
    rest = tuple(y.shape[d] for d in others)
    flat_axis = reshape(moved, (math.prod(sizes),) + rest)
    flat = np.ravel_multi_index(
        tuple(np.broadcast_to(v, shapes) for _, v in advanced), sizes
    ).ravel()
    out = reshape(_take_list(flat_axis, [int(i) for i in flat], 0), tuple(shapes) + rest)
    if adjacent and axes[0] > 0:
        nb = len(shapes)
        order = (
            list(range(nb, nb + axes[0])) + list(range(nb)) + list(range(nb + axes[0], out.ndim))
        )
        out = permute_dims(out, tuple(order))
    return out


#: Index values a gather result keeps (8 bytes each) so that basic indices of it
#: compose with its key (``Fancy``); larger gathers are indexed as they are.
FANCY_KEEP = 1 << 22


class Fancy:
    """How ``y = source[key]`` was made by an integer-array key, kept on ``y``.

    A basic index of ``y`` (integers, slices, ``...``) composes with *key* into
    one integer-array key of *source* (``x[[1, 5, 9], :][1, 3]`` is ``x[5, 3]``,
    ``x[i, j][2:4]`` is ``x[i[2:4], j[2:4]]``), so reading a few elements of a
    large gather reads those elements only, not the whole gather. The index
    arrays are known (they were computed to build ``y``), so composing them is
    numpy work on the index values at graph-building time.

    *items* has one entry per item of the expanded key: ``None`` (a new axis),
    ``("s", start, step, count)`` for a slice, or ``("a", j)`` for the *j*-th
    index array; *arrays* are the index arrays (non-negative, int64), which broadcast
    to *shape*. *dims* says what each dimension of ``y`` is: ``("item", p)``
    for the basic item *p*, ``("b", j)`` for dimension *j* of *shape*.
    """

    __slots__ = ("source", "items", "arrays", "shape", "dims")

    def __init__(self, source: Array, items: list, arrays: list, shape: tuple, dims: list):
        self.source = source
        self.items = items
        self.arrays = arrays
        self.shape = shape
        self.dims = dims

    @classmethod
    def of(
        cls,
        source: Array,
        key_items: list[Any],
        key_positions: list[int],
        arrays: list[np.ndarray],
        shape: tuple[int, ...],
        adjacent: bool,
    ) -> Fancy:
        items: list[Any] = []
        dims: list[tuple[str, int]] = []
        axis = 0
        for position, k in enumerate(key_items):
            if position in key_positions:
                items.append(("a", key_positions.index(position)))
                axis += 1
            elif k is None:
                dims.append(("item", len(items)))
                items.append(None)
            else:
                n = source.shape[axis]
                start, stop, step = k.indices(n)
                dims.append(("item", len(items)))
                items.append(("s", start, step, len(range(start, stop, step))))
                axis += 1
        # numpy's rule: the broadcast dimensions replace the indexed ones when the
        # index arrays are adjacent in the key, else they go first.
        at = sum(1 for p in range(key_positions[0]) if p not in key_positions) if adjacent else 0
        dims[at:at] = [("b", j) for j in range(len(shape))]
        return cls(source, items, arrays, shape, dims)

    def compose(self, y: Array, key: Any) -> Array | None:
        """``y[key]`` as one index of the source, or None to index *y* itself
        (keys with ``None`` or booleans, keys selecting everything, bad keys,
        which then raise numpy's errors from the usual path)."""
        try:
            items2 = _expand(key, y.ndim)
        except IndexError:
            return None
        if any(k is None or isinstance(k, (bool, np.bool_)) for k in items2):
            return None
        picks: list[Any] = []  # per dimension of y: an int, or (start, step, count)
        everything = True
        for k, n in zip(items2, y.shape, strict=True):
            if isinstance(k, slice):
                start, stop, step = k.indices(n)
                count = len(range(start, stop, step))
                picks.append((start, step, count))
                everything = everything and count == n and (step == 1 or n <= 1)
                continue
            try:
                i = operator.index(k)
            except TypeError:
                return None
            if not -n <= i < n:
                return None
            picks.append(i % n)
            everything = False
        if everything:
            return None
        # When index arrays remain, an integer picked from a basic dimension of y
        # must not become an integer of the source key: numpy counts integers
        # among index arrays as index arrays, which could move the broadcast
        # dimensions. Such picks read a length-1 slice (a new axis stays) and
        # are dropped from the result afterwards.
        scalar = all(
            isinstance(pick, int)
            for (kind, _), pick in zip(self.dims, picks, strict=True)
            if kind == "b"
        )
        items: list[Any] = list(self.items)  # and ("i", position), ("drop",) below
        b_key: list[Any] = [slice(None)] * len(self.shape)
        dropped: list[bool] = []  # per dimension of the source's result, in order
        for (kind, p), pick in zip(self.dims, picks, strict=True):
            if kind == "b":
                b_key[p] = pick if isinstance(pick, int) else _range_slice(*pick)
                if not isinstance(pick, int):
                    dropped.append(False)
                continue
            if not scalar:
                dropped.append(isinstance(pick, int))
            if items[p] is None:  # a new axis of length 1
                if isinstance(pick, int):
                    if scalar:
                        items[p] = ("drop",)
                elif pick[2] != 1:
                    return None  # an empty selection of a new axis
            else:
                _, start, step, _ = items[p]
                if isinstance(pick, int):
                    items[p] = (
                        ("i", start + step * pick) if scalar else ("s", start + step * pick, 1, 1)
                    )
                else:
                    s, t, c = pick
                    items[p] = ("s", start + step * s, step * t, c)
        b_key_t = tuple(b_key)
        new_arrays = [np.broadcast_to(a, self.shape)[b_key_t] for a in self.arrays]
        out: list[Any] = []
        for item in items:
            if item is None:
                out.append(None)
            elif item[0] == "s":
                out.append(_range_slice(*item[1:]))
            elif item[0] == "i":
                out.append(item[1])
            elif item[0] == "a":
                values = new_arrays[item[1]]
                out.append(int(values) if scalar else values)
        result = self.source[tuple(out)]
        if any(dropped):
            drop = tuple(0 if d else slice(None) for d in dropped)
            result = apply("getitem", {"key": _encode_key(drop)}, [result])
        return result


def _range_slice(start: int, step: int, count: int) -> slice:
    """The slice selecting ``range(start, start + step * count, step)`` of any axis
    long enough (the positions are non-negative and in bounds)."""
    if count == 0:
        return slice(0, 0, 1)
    stop = start + step * count
    return slice(start, stop if stop >= 0 else None, step)


# ---------------------------------------------------------------------- __setitem__


def _scalar_or_array(value: Any, x: Array) -> Any:
    if isinstance(value, Array) or is_scalar(value):
        return value
    raise TypeError(
        f"__setitem__: value must be a cubego Array or a Python scalar, got {type(value).__name__}"
    )


def _where(mask: Array, value: Any, x: Array) -> Array:

    out = select(mask, value, x)
    return out if out.dtype == x.dtype else out.astype(x.dtype)


def _setitem_mask(x: Array, items: list[Any], value: Any) -> Array:
    mask = items[0]
    if (
        any(k is not Ellipsis for k in items[1:])
        or mask.ndim > x.ndim
        or any(m != s for m, s in zip(mask.shape, x.shape, strict=False))
    ):
        raise IndexError(
            f"__setitem__: a boolean mask must be the whole key and match the leading dimensions "
            f"of the array, got mask shape {mask.shape} for array shape {x.shape}"
        )
    rest = x.shape[mask.ndim :]
    if isinstance(value, Array) and value.ndim > 0:
        try:
            fits = broadcast_shapes(value.shape, rest) == rest
        except ValueError:
            fits = False
        if not fits:
            raise NotImplementedError(
                "__setitem__ with a boolean mask takes a scalar, a 0-d array or an array "
                f"broadcasting to the unmasked dimensions {rest}; placing value shape "
                f"{value.shape} depends on the mask's data"
            )
    expanded = mask[(...,) + (None,) * len(rest)] if rest else mask
    return _where(expanded, value, x)


def setitem(x: Array, key: Any, value: Any) -> Array:
    """The array equal to *x* with ``x[key] = value`` applied, as a lazy expression."""
    value = _scalar_or_array(value, x)
    arrays = [k for k in (key if isinstance(key, tuple) else (key,)) if isinstance(k, Array)]
    if arrays:
        if len(arrays) == 1 and arrays[0].dtype.kind == "b":
            items = list(key) if isinstance(key, tuple) else [key]
            if items[0] is arrays[0]:
                return _setitem_mask(x, items, value)
        raise NotImplementedError(
            "__setitem__ supports basic indices (integers, slices, ...) and a single boolean "
            "mask; integer-array keys are not supported"
        )
    selected = x[key]  # checks the key and gives the selection's shape
    if selected.size == 0:
        return x
    items = _expand(key, x.ndim)
    if isinstance(value, Array):
        try:
            value = broadcast_view(value, selected.shape)
        except ValueError:
            raise ValueError(
                f"__setitem__: could not broadcast value of shape {value.shape} to the "
                f"selection's shape {selected.shape}"
            ) from None
        # Drop the selection's newaxis dimensions: the value now has x's indexed order.
        drop = [0 if k is None else slice(None) for k in items if k is None or isinstance(k, slice)]
        value = value[tuple(drop)] if None in items else value
        if value.dtype != x.dtype:
            value = value.astype(x.dtype)
    items = [k for k in items if k is not None]
    if isinstance(value, Array):
        # Give the value x's dimensions: length one where an integer indexes.
        ints = tuple(d for d, k in enumerate(items) if not isinstance(k, slice))
        if ints:
            value = expand_dims(value, axis=ints)
    masks: list[np.ndarray | None] = []
    for d, k in enumerate(items):
        n = x.shape[d]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            positions = range(start, stop, step)
            if step == 1 and start == 0 and len(positions) == n:
                masks.append(None)
                continue
        else:
            i = operator.index(k)
            positions = range(i % n, i % n + 1)
            step = 1
        mask = np.zeros(n, dtype=bool)
        mask[list(positions)] = True
        masks.append(mask)
        if not isinstance(value, Array):
            continue
        count = len(positions)
        if step < 0:
            value = flip(value, axis=d)
            positions = positions[::-1]
            step = -step
        first = positions[0]
        if step == 1:
            fill = False if x.dtype.kind == "b" else 0
            widths = [[0, 0] for _ in range(x.ndim)]
            widths[d] = [first, n - first - count]
            value = apply(
                "pad_constant",
                {"pad_width": widths, "constant_value": libcubego.encode_scalar(fill)},
                [value],
            )
        else:
            source = [
                builtins.min(builtins.max((j - first) // step, 0), count - 1) for j in range(n)
            ]
            value = _take_list(value, source, d)
    condition: Array | None = None
    for d, mask in enumerate(masks):
        if mask is None:
            continue
        along = asarray(mask, chunks=(x.chunks[d],), spec=x.spec)
        along = along[(None,) * d + (slice(None),) + (None,) * (x.ndim - d - 1)]
        condition = along if condition is None else elemwise("logical_and", condition, along)
    if condition is None:  # the key selects every element
        if isinstance(value, Array):
            return value.rechunk(x.chunks) if value.chunks != x.chunks else value
        return full(x.shape, value, dtype=x.dtype, chunks=x.chunks, spec=x.spec)
    return _where(condition, value, x)


install_indexing(getitem_arrays, setitem)
