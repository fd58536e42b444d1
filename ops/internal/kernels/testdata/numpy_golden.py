"""Write numpy_golden.json.gz: numpy's results for every elementwise op and
cast of the kernels package over special values of every dtype.

Run from this directory with numpy 2 installed:  python numpy_golden.py
The Go test TestNumpyGolden compares the kernels with this file.
"""

import gzip
import json
import warnings

import numpy as np

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
          "uint64", "float32", "float64", "complex64", "complex128"]


def int_values(dt):
    info = np.iinfo(dt)
    base = [0, 1, 2, 3, 7, 8, 9, 100, info.bits - 1, info.bits, info.bits + 1,
            info.max, info.max - 1]
    if info.min < 0:
        base += [-1, -2, -3, -7, -8, -100, info.min, info.min + 1]
    return sorted({v for v in base if info.min <= v <= info.max})


def float_values(dt):
    fi = np.finfo(dt)
    return [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.25, 0.1, 1e-3, 100.0,
            1e30 if dt == "float32" else 1e300, float(fi.max), float(fi.smallest_subnormal),
            np.inf, -np.inf, np.nan]


def complex_values(dt):
    inf, nan = np.inf, np.nan
    return [0j, complex(-0.0, 0.0), 1 + 0j, -1 + 0j, 1j, -1j, 1 + 1j, -2.5 + 0.5j, 3 - 4j,
            0.5 + 1e-3j, complex(inf, 0), complex(-inf, 0), complex(0, inf), complex(nan, 0),
            complex(0, nan), complex(inf, nan), complex(1, inf), complex(inf, inf)]


def values(dt):
    if dt == "bool":
        return [False, True]
    if dt.startswith(("int", "uint")):
        return int_values(dt)
    if dt.startswith("float"):
        return float_values(dt)
    return complex_values(dt)


PAIR_VALUES = {
    "bool": [False, True],
    "float": [0.0, -0.0, 1.0, -1.0, 2.5, -7.25, 3.0, 0.1, np.inf, -np.inf, np.nan, 1e30],
    "complex": [0j, 1 + 0j, -1 + 0j, 1j, 1 + 1j, -2.5 + 0.5j, 3 - 4j, 2 + 0j,
                complex(np.inf, 0), complex(np.nan, 0), complex(0, np.nan), complex(1, np.inf)],
}


def pair_values(dt):
    if dt == "bool":
        return PAIR_VALUES["bool"]
    if dt.startswith("float"):
        return PAIR_VALUES["float"]
    if dt.startswith("complex"):
        return PAIR_VALUES["complex"]
    info = np.iinfo(dt)
    base = [0, 1, 2, 3, 7, info.bits - 1, info.bits, info.max]
    if info.min < 0:
        base += [-1, -3, -7, info.min]
    else:
        base += [5, 200 if info.bits == 8 else 1000, info.max - 1, 1 << (info.bits - 1)]
    return base


def enc(v, dt):
    """A value as the Go test parses it: decimal strings, complex as pairs."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return "1" if v else "0"
    if dt.kind in "iu":
        return str(int(v))
    if dt.kind == "f":
        return repr(float(v))
    c = complex(v)
    return [repr(c.real), repr(c.imag)]


UNARY = {
    "negative": np.negative, "positive": np.positive, "abs": np.absolute, "sign": np.sign,
    "square": np.square, "sqrt": np.sqrt, "exp": np.exp, "expm1": np.expm1, "log": np.log,
    "log1p": np.log1p, "log2": np.log2, "log10": np.log10, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "round": np.round, "reciprocal": np.reciprocal, "bitwise_invert": np.invert,
    "logical_not": np.logical_not, "conj": np.conjugate, "isnan": np.isnan,
    "isinf": np.isinf, "isfinite": np.isfinite, "signbit": np.signbit, "real": np.real,
    "imag": np.imag,
}

BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "pow": np.power,
    "maximum": np.maximum, "minimum": np.minimum, "atan2": np.arctan2, "hypot": np.hypot,
    "copysign": np.copysign, "nextafter": np.nextafter, "logaddexp": np.logaddexp,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "bitwise_left_shift": np.left_shift,
    "bitwise_right_shift": np.right_shift, "logical_and": np.logical_and,
    "logical_or": np.logical_or, "logical_xor": np.logical_xor, "equal": np.equal,
    "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
}


def run(fn, *arrays):
    """fn elementwise on 1-element arrays, so one failing element (numpy
    raises for integer powers with negative exponents) skips only itself."""
    outs, out_dt = [], None
    for args in zip(*arrays):
        try:
            r = fn(*[np.array([a], dtype=arr.dtype) for a, arr in zip(args, arrays)])
        except (TypeError, ValueError):
            outs.append(None)
            continue
        r = np.asarray(r)
        out_dt = str(r.dtype)
        outs.append(enc(r[0], r.dtype))
    if out_dt is None:
        return {"error": True}
    return {"dtype": out_dt, "out": outs}


def main():
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    golden = {"values": {}, "pairs": {}, "unary": {}, "binary": {}, "cast": {}}
    for dt in DTYPES:
        vals = np.array(values(dt), dtype=dt)
        golden["values"][dt] = [enc(v, dt) for v in vals]
        pv = pair_values(dt)
        xs = np.array([a for a in pv for _ in pv], dtype=dt)
        ys = np.array([b for _ in pv for b in pv], dtype=dt)
        golden["pairs"][dt] = [[enc(a, dt), enc(b, dt)] for a, b in zip(xs, ys)]
        for name, fn in UNARY.items():
            golden["unary"].setdefault(name, {})[dt] = run(fn, vals)
        for name, fn in BINARY.items():
            golden["binary"].setdefault(name, {})[dt] = run(fn, xs, ys)
    half = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, 0.1, 1000.0, -3.75, 65504.0, -65504.0,
            6e-8, np.inf, -np.inf, np.nan]
    golden["values"]["float16"] = [enc(v, "float16") for v in np.array(half, dtype="float16")]
    for src in DTYPES + ["float16"]:
        vals = (np.array(half, dtype="float16") if src == "float16"
                else np.array(values(src), dtype=src))
        for dst in DTYPES + ["float16"]:
            out = vals.astype(dst)
            golden["cast"].setdefault(src, {})[dst] = [enc(v, dst) for v in out]
    with gzip.open("numpy_golden.json.gz", "wt") as f:
        json.dump({"numpy": np.__version__, **golden}, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
