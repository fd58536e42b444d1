"""``datetime64`` and ``timedelta64`` arrays: int64 in the engine, numpy's dtype in Python.

The engine computes with the Array API's dtypes only. A datetime or timedelta
array is an int64 array in the engine, holding what numpy holds (the count of
its unit since 1970-01-01, NaT being the smallest int64), whose Python
``Array`` carries the numpy dtype: ``x.dtype`` is e.g. ``datetime64[ns]``,
computing returns numpy datetimes, chunk functions see datetime blocks and
return them.

What works, with numpy's results (including its NaT rules):

* layout: indexing, ``rechunk``, ``permute_dims``, ``reshape``,
  ``broadcast_to``, ``concat``, ``stack``, ``squeeze``, ``take``, ``where``,
  ``pad`` with datetime (or NaT) values;
* ``min``/``max``/``argmin``/``argmax`` (NaT wins), ``nanmin``/``nanmax``
  (NaT skipped) and ``nanargmin``/``nanargmax`` (NaT wins: numpy skips NaN
  only);
* elementwise: comparisons, ``datetime - datetime`` (a timedelta),
  ``datetime ± timedelta``, ``timedelta ± timedelta``, ``timedelta ×
  integer``, ``timedelta / timedelta`` (float64), ``negative``/``abs`` of
  timedeltas, ``maximum``/``minimum``, ``isnan``/``isfinite``/``isinf``;
  operands in different units meet in the finer unit, as in numpy;
* ``astype`` between units of one kind, and to and from numbers.

Units are ``W``, ``D``, ``h``, ``m``, ``s``, ``ms``, ``us`` and ``ns`` (not
years or months, whose length varies). Anything else on a datetime array
raises ``TypeError`` naming the operation: never an int64 answer in
disguise.

The functions here take the core's raw op entry point (*engine*: the
library op on the arrays' int64 storage) as an argument, so this module
stays below :mod:`cubego.core.array`, which calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cubego.binding import libcubego
from cubego.core import dtypes as _dtypes

NAT = int(np.iinfo(np.int64).min)  # numpy's NaT
_MAX = int(np.iinfo(np.int64).max)

Engine = Callable[..., Any]  # engine(name, args, inputs) -> Array (int64 storage, untagged)


def _is_array(x: Any) -> bool:
    return hasattr(x, "_handle")


def is_datetime_operand(x: Any) -> bool:
    """A datetime/timedelta array or numpy scalar."""
    if _is_array(x):
        return x._logical is not None
    return isinstance(x, (np.datetime64, np.timedelta64))


def tag(x: Any, dtype: np.dtype) -> Any:
    """*x* (a fresh Array of int64 storage) marked as holding *dtype*."""
    x._logical = dtype
    return x


def _unit(dtype: np.dtype) -> str:
    return np.datetime_data(dtype)[0]


def _finer(a: str, b: str) -> str:
    return a if np.timedelta64(1, a) < np.timedelta64(1, b) else b


def _factor(coarse: str, fine: str) -> int:
    return int(np.timedelta64(1, coarse) // np.timedelta64(1, fine))


# ---------------------------------------------------------------------- engine helpers


def _encode(operands: tuple[Any, ...]) -> tuple[list[Any], list[dict]]:
    inputs: list[Any] = []
    encoded: list[dict] = []
    for x in operands:
        if _is_array(x):
            index = next((i for i, seen in enumerate(inputs) if seen is x), len(inputs))
            if index == len(inputs):
                inputs.append(x)
            encoded.append({"input": index})
        else:
            encoded.append(libcubego.encode_scalar(x))
    return inputs, encoded


def _elem(engine: Engine, func: str, *operands: Any) -> Any:
    inputs, encoded = _encode(operands)
    return engine("elemwise", {"func": func, "operands": encoded}, inputs)


def _where(engine: Engine, condition: Any, x1: Any, x2: Any) -> Any:
    inputs, encoded = _encode((condition, x1, x2))
    return engine("where", {"operands": encoded[1:]}, inputs)


def _astype(engine: Engine, x: Any, dtype: str) -> Any:
    return engine("astype", {"dtype": dtype}, [x])


def _is_nat(engine: Engine, x: Any) -> Any:
    return _elem(engine, "equal", x, NAT)


def _rescaled(engine: Engine, x: Any, src: str, dst: str) -> Any:
    """The int64 storage of *x* (unit *src*) in unit *dst*, NaT kept."""
    if src == dst:
        return x
    if _finer(src, dst) == dst:
        scaled = _elem(engine, "multiply", x, _factor(src, dst))
    else:
        scaled = _elem(engine, "floor_divide", x, _factor(dst, src))
    return _where(engine, _is_nat(engine, x), NAT, scaled)


def _scalar_int(value: Any, unit: str) -> int:
    """A datetime/timedelta scalar as int64 in *unit* (NaT is :data:`NAT`)."""
    if np.isnat(value):
        return NAT
    kind = "M8" if isinstance(value, np.datetime64) else "m8"
    return int(np.array(value).astype(f"{kind}[{unit}]").view(np.int64))


def storage_scalar(value: Any, dtype: np.dtype) -> int:
    """A datetime/timedelta scalar (or NaN for NaT) as int64 storage in *dtype*'s unit."""
    if isinstance(value, float) and np.isnan(value):
        return NAT
    kind = np.dtype(dtype).kind
    if not isinstance(value, np.datetime64 if kind == "M" else np.timedelta64):
        raise TypeError(f"a {dtype} array cannot hold {value!r}")
    return _scalar_int(value, _unit(dtype))


# ---------------------------------------------------------------------- elementwise

_UFUNCS: dict[str, np.ufunc] = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "negative": np.negative,
    "positive": np.positive,
    "abs": np.abs,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "isnan": np.isnan,
    "isfinite": np.isfinite,
    "isinf": np.isinf,
}
_COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")


def _sample(x: Any) -> Any:
    """A zero-size stand-in with *x*'s dtype, for numpy to tell the result's dtype."""
    if _is_array(x):
        return np.empty(0, dtype=x.dtype)
    if isinstance(x, (np.datetime64, np.timedelta64, np.generic)):
        return np.empty(0, dtype=np.asarray(x).dtype)
    return x  # Python scalars stay weakly typed


def _result_dtype(ufunc: Any, operands: tuple[Any, ...], what: str) -> np.dtype:
    try:
        with np.errstate(all="ignore"):
            return np.asarray(ufunc(*[_sample(x) for x in operands])).dtype
    except TypeError as e:
        raise TypeError(f"{what}: {e}") from None


def _common_unit(operands: tuple[Any, ...]) -> str | None:
    unit = None
    for x in operands:
        if not is_datetime_operand(x):
            continue
        dtype = x.dtype if _is_array(x) else np.asarray(x).dtype
        u = _unit(dtype)
        if u == "generic":  # a unitless NaT
            continue
        _dtypes.datetime_dtype(dtype)  # refuses years, months and multiples
        unit = u if unit is None else _finer(unit, u)
    return unit


def elemwise(func: str, operands: tuple[Any, ...], engine: Engine) -> Any:
    """The elementwise function *func* with datetime/timedelta operands."""
    ufunc = _UFUNCS.get(func)
    if ufunc is None:
        kinds = sorted({str(x.dtype) for x in operands if _is_array(x) and x._logical})
        raise TypeError(f"{func} is not supported for {', '.join(kinds) or 'datetime'} operands")
    result = _result_dtype(ufunc, operands, func)
    unit = _unit(result) if result.kind in "mM" else _common_unit(operands)
    unit = unit or "ns"
    values: list[Any] = []
    nat: list[Any] = []  # NaT masks of array operands
    nat_scalar = False
    for x in operands:
        if _is_array(x) and x._logical is not None:
            values.append(_rescaled(engine, x, _unit(x._logical), unit))
            nat.append(_is_nat(engine, x))
        elif isinstance(x, (np.datetime64, np.timedelta64)):
            nat_scalar = nat_scalar or bool(np.isnat(x))
            values.append(_scalar_int(x, unit))
        elif _is_array(x):
            values.append(x)
        else:
            values.append(x.item() if isinstance(x, np.generic) else x)
    any_nat = nat[0] if nat else None
    for mask in nat[1:]:
        any_nat = _elem(engine, "logical_or", any_nat, mask)

    if func in ("isnan", "isfinite", "isinf"):
        (x,) = values
        if func == "isnan":
            return _is_nat(engine, x)
        if func == "isfinite":
            return _elem(engine, "not_equal", x, NAT)
        return _elem(engine, "not_equal", x, x)  # never infinite
    if func in _COMPARISONS:
        out = _elem(engine, func, *values)
        if func == "not_equal":
            if nat_scalar:
                return _elem(engine, "logical_or", out, True)
            return out if any_nat is None else _elem(engine, "logical_or", out, any_nat)
        if nat_scalar:
            return _elem(engine, "logical_and", out, False)
        if any_nat is None:
            return out
        return _elem(engine, "logical_and", out, _elem(engine, "logical_not", any_nat))
    if func == "divide":
        if result.kind != "f":
            raise TypeError(
                f"divide: {result} results (a timedelta divided by a number) are not supported; "
                "divide by a timedelta for a float ratio"
            )
        floats = [_astype(engine, v, "float64") if _is_array(v) else float(v) for v in values]
        out = _elem(engine, "divide", *floats)
        if nat_scalar:
            return _elem(engine, "multiply", out, float("nan"))
        return out if any_nat is None else _where(engine, any_nat, float("nan"), out)
    if func == "multiply" and any(
        (_is_array(v) and v.dtype.kind == "f") or isinstance(v, float) for v in values
    ):
        values = [
            _astype(engine, v, "float64") if _is_array(v) and v.dtype.kind != "f" else v
            for v in values
        ]
        out = _astype(engine, _elem(engine, "multiply", *values), "int64")
    else:
        out = _elem(engine, func, *values)
    if out.dtype != np.int64:
        out = _astype(engine, out, "int64")
    if nat_scalar:
        out = _where(engine, _elem(engine, "equal", out, out), NAT, out)
    elif any_nat is not None:
        out = _where(engine, any_nat, NAT, out)
    return tag(out, result)


# ---------------------------------------------------------------------- where


def select(condition: Any, x1: Any, x2: Any, engine: Engine) -> Any:
    """``where(condition, x1, x2)`` with datetime/timedelta values."""
    try:
        result = np.where(np.empty(0, dtype=bool), _sample(x1), _sample(x2)).dtype
    except TypeError as e:
        raise TypeError(f"where: {e}") from None
    if result.kind not in "mM":
        raise TypeError(f"where: cannot combine {_sample(x1)!r} and {_sample(x2)!r} values")
    _dtypes.datetime_dtype(result)
    unit = _unit(result)
    values = []
    for x in (x1, x2):
        if _is_array(x):
            if x._logical is None:
                raise TypeError(f"where: cannot combine {result} values with {x.dtype} values")
            values.append(_rescaled(engine, x, _unit(x._logical), unit))
        elif isinstance(x, (np.datetime64, np.timedelta64)):
            values.append(_scalar_int(x, unit))
        else:
            raise TypeError(f"where: cannot combine {result} values with {x!r}")
    return tag(_where(engine, condition, *values), result)


# ---------------------------------------------------------------------- astype


def astype(x: Any, dtype: Any, engine: Engine) -> Any:
    """*x* cast to *dtype*, where *x* or *dtype* is a datetime/timedelta."""
    target = _dtypes.datetime_dtype(dtype)
    source = x._logical
    if target is not None:
        if source is not None:
            if source.kind != target.kind:
                raise TypeError(f"astype: cannot cast {source} to {target}")
            if source == target:
                return tag(engine("permute_dims", {"axes": list(range(x.ndim))}, [x]), target)
            return tag(_rescaled(engine, x, _unit(source), _unit(target)), target)
        if x.dtype.kind == "f":
            ints = _astype(engine, x, "int64")
            return tag(_where(engine, _elem(engine, "isnan", x), NAT, ints), target)
        if x.dtype.kind in "biu":
            return tag(_astype(engine, x, "int64"), target)
        raise TypeError(f"astype: cannot cast {x.dtype} to {target}")
    dtype = _dtypes.normalize(dtype)
    if dtype.kind not in "iuf":
        raise TypeError(f"astype: cannot cast {source} to {dtype}")
    return _astype(engine, x, dtype.name)


# ---------------------------------------------------------------------- other ops

#: Ops that only move, repeat or select elements: the result holds the input's dtype.
LAYOUT = frozenset(
    {
        "getitem",
        "rechunk",
        "permute_dims",
        "broadcast_to",
        "reshape",
        "concat",
        "stack",
        "squeeze",
        "take",
        "pad_constant",  # its value arrives as int64 storage (extras/pad.py)
    }
)


def _unified(inputs: list[Any], name: str, engine: Engine) -> tuple[list[Any], np.dtype]:
    """Inputs of concat/stack in their finest common unit."""
    dtypes = [x._logical for x in inputs]
    if any(d is None for d in dtypes) or len({d.kind for d in dtypes}) != 1:
        raise TypeError(
            f"{name}: cannot combine arrays of dtypes {', '.join(str(x.dtype) for x in inputs)}"
        )
    unit = _unit(dtypes[0])
    for d in dtypes[1:]:
        unit = _finer(unit, _unit(d))
    out = np.dtype(f"{dtypes[0].kind}8[{unit}]")
    return [_rescaled(engine, x, _unit(x._logical), unit) for x in inputs], out


def apply(name: str, args: dict, inputs: list[Any], engine: Engine) -> Any:
    """Library op *name* on inputs of which some hold datetimes/timedeltas."""
    if name in LAYOUT:
        if len(inputs) > 1:
            converted, dtype = _unified(inputs, name, engine)
            return tag(engine(name, args, converted), dtype)
        return tag(engine(name, args, inputs), inputs[0]._logical)
    (x,) = inputs if len(inputs) == 1 else (None,)
    func = args.get("func") if isinstance(args, dict) else None
    if x is not None and name == "reduce" and func in ("max", "min", "nanmax", "nanmin"):
        if args.get("dtype") is not None:
            raise TypeError(f"{func}: dtype= is not supported for {x.dtype} arrays")
        nat_wins = func in ("max", "min")
        engine_func = func.removeprefix("nan")
        # NaT is the smallest int64: it wins a min and loses a max by itself;
        # as the largest int64 it wins a max and loses a min.
        lifted = (engine_func == "max") == nat_wins
        values = _where(engine, _is_nat(engine, x), _MAX, x) if lifted else x
        out = engine(name, dict(args, func=engine_func), [values])
        if lifted:
            out = _where(engine, _elem(engine, "equal", out, _MAX), NAT, out)
        return tag(out, x._logical)
    if x is not None and name == "argreduce" and func in ("argmax", "argmin"):
        # NaT wins both, as in numpy (whose nanargmax/nanargmin do the same for datetimes)
        values = _where(engine, _is_nat(engine, x), _MAX, x) if func == "argmax" else x
        return engine(name, args, [values])
    what = f"{name}({func})" if func else name
    kinds = ", ".join(sorted({str(x.dtype) for x in inputs if x._logical is not None}))
    raise TypeError(f"{what} is not supported for {kinds} arrays in cubego")


class Viewing:
    """A chunk function's task function seeing datetime blocks as numpy datetimes.

    The engine hands int64 buffers; this views each input and the output
    block as their datetime dtypes (no copy) around the task function.
    """

    def __init__(self, fn: Any, inputs: list[np.dtype | None], output: np.dtype | None):
        self.fn = fn
        self.inputs = inputs
        self.output = output

    def __call__(self, inputs: list[np.ndarray], out: np.ndarray, task: Any) -> None:
        views = [b if d is None else b.view(d) for b, d in zip(inputs, self.inputs, strict=True)]
        self.fn(views, out if self.output is None else out.view(self.output), task)
