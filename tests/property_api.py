"""A property test of the public API, run in a child process by
tests/test_property.py (so that a crash fails the test instead of killing
pytest, and a hang is bounded by the parent's timeout).

Random shapes (some hostile: zero, negative, huge), chunks (some zero,
negative or larger than the array), dtypes, operations and options. Each case
must give numpy's answer, or raise one of the documented exception types —
never a crash, a hang, an undocumented exception or a wrong answer.

Prints one JSON line: the number of cases, of correct results, of typed
errors by type, and the failures (empty when the property holds).

    python tests/property_api.py [--examples N] [--seed S]
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import sys
import tempfile
import traceback
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cubego

# What a user may get instead of a result (README "Errors", docs/reliability.md).
TYPED = (ValueError, TypeError, IndexError, NotImplementedError, OSError)

DTYPES = ["bool", "int8", "int32", "int64", "uint8", "float32", "float64", "complex128"]
HOSTILE_SIZES = [-1, 2**31, 2**40, 2**62, 2**63 - 1]
if "--tame" in sys.argv:  # without the sizes of issue #17 finding 1, to look at the rest
    HOSTILE_SIZES = [-1]

sizes = st.one_of(st.integers(0, 9), st.sampled_from(HOSTILE_SIZES)).filter(lambda n: True)
shapes = st.lists(st.integers(0, 9), min_size=0, max_size=3).map(tuple)
hostile_shapes = st.lists(sizes, min_size=1, max_size=2).map(tuple)


def chunks_for(shape):
    one = st.one_of(st.integers(1, 10), st.sampled_from([0, -1, -2, 2**40]))
    return st.one_of(
        st.just("auto"),
        st.integers(-2, 10),
        st.lists(one, min_size=len(shape), max_size=len(shape)).map(tuple),
    )


counts: collections.Counter = collections.Counter()
failures: list[dict] = []


def check(case: dict, run_cubego, run_numpy) -> None:
    """Run one case: record a correct result, a typed error, or a failure."""
    counts["cases"] += 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = run_numpy()
        want_error = None
    except Exception as e:  # noqa: BLE001 - numpy's refusal
        want, want_error = None, e
    try:
        got = np.asarray(run_cubego())
    except TYPED as e:
        counts[f"typed {type(e).__name__}"] += 1
        return
    except Exception as e:  # noqa: BLE001 - the property's failure
        failures.append(dict(case, error=f"{type(e).__name__}: {e}"[:500],
                             traceback=traceback.format_exc()[-1500:]))
        return
    if want_error is not None:
        failures.append(dict(case, error=f"a result where numpy raised {want_error!r}"[:500]))
        return
    want = np.asarray(want)
    same = got.shape == want.shape and (
        np.array_equal(got, want, equal_nan=got.dtype.kind in "fc")
        if got.dtype.kind not in "fc"
        else np.allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
    )
    if not same:
        failures.append(dict(case, error=f"wrong answer: {got!r} vs numpy {want!r}"[:500]))
        return
    counts["correct"] += 1


def make(shape, dtype, chunks, spec):
    rng = np.random.default_rng(0)
    x = (rng.random(shape) * 10 - 3).astype(dtype) if all(n >= 0 for n in shape) else None
    return x, (lambda: cubego.asarray(x, chunks=chunks, spec=spec))


UNARY = ["negative", "abs", "sqrt", "exp", "square", "logical_not", "isnan"]
REDUCE = ["sum", "prod", "max", "min", "mean", "any", "all"]


@st.composite
def cases(draw):
    kind = draw(st.sampled_from(["unary", "binary", "reduce", "rechunk", "index", "reshape",
                                 "transpose", "concat", "matmul", "ones", "arange"]))
    shape = draw(shapes)
    return kind, shape, draw(st.sampled_from(DTYPES)), draw(chunks_for(shape)), draw(
        st.sampled_from(["100B", "2kB", "1MB", "500MB", "500MB", "500MB"])), draw(
        st.sampled_from(["threads", "single-threaded"])), draw(st.data())


def run_case(work_dir, case):
    kind, shape, dtype, chunks, mem, executor, data = case
    spec = cubego.Spec(work_dir=work_dir, allowed_mem=mem, executor_name=executor)
    x, cx = make(shape, dtype, chunks, spec)
    desc = dict(kind=kind, shape=shape, dtype=dtype, chunks=repr(chunks), allowed_mem=mem,
                executor=executor)
    if kind == "unary":
        f = data.draw(st.sampled_from(UNARY))
        desc["func"] = f
        check(desc, lambda: getattr(cubego, f)(cx()).compute(), lambda: _np_unary(f, x))
    elif kind == "binary":
        f = data.draw(st.sampled_from(["add", "multiply", "subtract", "maximum", "equal"]))
        desc["func"] = f
        check(desc, lambda: getattr(cubego, f)(cx(), cx()).compute(),
              lambda: _np_binary(f, x, x))
    elif kind == "reduce":
        f = data.draw(st.sampled_from(REDUCE))
        axis = data.draw(st.one_of(st.none(), st.integers(-4, 3)))
        desc.update(func=f, axis=axis)
        check(desc, lambda: getattr(cubego, f)(cx(), axis=axis).compute(),
              lambda: _np_reduce(f, x, axis))
    elif kind == "rechunk":
        to = data.draw(chunks_for(shape))
        desc["to"] = repr(to)
        check(desc, lambda: cx().rechunk(to).compute(), lambda: x.copy())
    elif kind == "index":
        key = tuple(data.draw(st.one_of(
            st.integers(-12, 12),
            st.builds(slice, st.one_of(st.none(), st.integers(-12, 12)),
                      st.one_of(st.none(), st.integers(-12, 12)),
                      st.one_of(st.none(), st.integers(1, 4))),
        )) for _ in range(data.draw(st.integers(0, len(shape)))))
        desc["key"] = repr(key)
        check(desc, lambda: cx()[key].compute(), lambda: x[key])
    elif kind == "reshape":
        to = tuple(data.draw(st.lists(st.integers(-1, 12), min_size=0, max_size=3)))
        desc["to"] = to
        check(desc, lambda: cubego.reshape(cx(), to).compute(), lambda: np.reshape(x, to))
    elif kind == "transpose":
        axes = tuple(data.draw(st.permutations(range(len(shape)))))
        desc["axes"] = axes
        check(desc, lambda: cubego.permute_dims(cx(), axes).compute(),
              lambda: np.transpose(x, axes))
    elif kind == "concat":
        axis = data.draw(st.integers(-3, 2))
        desc["axis"] = axis
        check(desc, lambda: cubego.concat([cx(), cx()], axis=axis).compute(),
              lambda: np.concatenate([x, x], axis=axis))
    elif kind == "matmul":
        check(desc, lambda: cubego.matmul(cx(), cubego.matrix_transpose(cx())).compute(),
              lambda: _np_matmul(x))
    elif kind == "ones":
        hostile = data.draw(hostile_shapes)
        desc["shape"] = hostile
        if _too_big(hostile, dtype):
            # Too large to compute whole here (numpy's reference alone would
            # take gigabytes): the array must be described, or refused with a
            # typed error, and its first elements computed.
            corner = tuple(slice(0, 3) for _ in hostile)
            desc["computed"] = "[:3, ...]"
            check(desc, lambda: cubego.ones(hostile, chunks=chunks, dtype=dtype, spec=spec)[corner]
                  .compute(), lambda: _np_ones_corner(hostile, dtype))
        else:
            check(desc, lambda: cubego.ones(hostile, chunks=chunks, dtype=dtype, spec=spec)
                  .compute(), lambda: np.ones(hostile, dtype=dtype))
    elif kind == "arange":
        n = data.draw(st.one_of(st.integers(-3, 30), st.sampled_from(HOSTILE_SIZES)))
        c = data.draw(st.one_of(st.integers(-1, 10), st.just("auto")))
        desc.update(n=n, chunks=repr(c))
        if _too_big((n,), "int64"):
            desc["computed"] = "[-3:]"
            check(desc, lambda: cubego.arange(n, chunks=c, spec=spec)[-3:].compute(),
                  lambda: _np_arange_tail(n))
        else:
            check(desc, lambda: cubego.arange(n, chunks=c, spec=spec).compute(),
                  lambda: np.arange(n))


#: Results larger than this are checked on a part (see "ones" and "arange").
BIG = 2**28


def _too_big(shape, dtype):
    nbytes = np.prod(shape, dtype=object) * np.dtype(dtype).itemsize
    return all(n >= 0 for n in shape) and nbytes > BIG


def _describable(shape, dtype):
    """numpy's refusal of a shape whose size in bytes overflows its index type."""
    if np.prod(shape, dtype=object) * np.dtype(dtype).itemsize >= 2**63:
        raise ValueError(f"shape {shape} of {dtype} is too big")


def _np_ones_corner(shape, dtype):
    _describable(shape, dtype)
    return np.ones(tuple(min(n, 3) for n in shape), dtype=dtype)


def _np_arange_tail(n):
    _describable((n,), "int64")
    return np.arange(max(n - 3, 0), n)


def _np_unary(f, x):
    if f in ("sqrt", "exp") and x.dtype.kind in "biu":
        # Implementation-defined in the Array API; cubego promotes as numpy would,
        # to a floating type at least as wide as float32.
        return getattr(np, f)(x.astype("float64"))
    if f == "logical_not" and x.dtype != bool:
        raise TypeError("logical_not is for booleans")
    if f == "negative" and x.dtype == bool:
        raise TypeError("negative of booleans")
    if f == "abs" and x.dtype == bool:
        raise TypeError("abs of booleans")
    if f == "square" and x.dtype == bool:
        raise TypeError("square of booleans")
    return getattr(np, f)(x)


def _np_binary(f, x, y):
    if x.dtype == bool and f in ("add", "multiply", "subtract", "maximum"):
        raise TypeError("arithmetic on booleans")
    return getattr(np, f)(x, y)


def _np_reduce(f, x, axis):
    if f == "mean" and x.dtype.kind in "biu":
        # Accepted as numpy does (the Array API leaves it unspecified).
        return np.mean(x.astype("float64"), axis=axis)
    if f in ("sum", "prod") and x.dtype.kind in "biu":
        # The Array API's default: the widest integer of the same signedness.
        dt = "uint64" if x.dtype.kind == "u" else "int64"
        return getattr(np, f)(x, axis=axis, dtype=dt)
    try:
        return getattr(np, f)(x, axis=axis)
    except ValueError:
        # numpy refuses max/min over a zero-length axis even when the result is
        # empty (no element to compute); an empty result is right there too.
        empty = np.sum(x, axis=axis)
        if empty.size == 0:
            return empty.astype(x.dtype)
        raise


def _np_matmul(x):
    if x.ndim < 1:
        raise TypeError("matmul of a 0-d array")
    return np.matmul(x, np.swapaxes(x, -1, -2)) if x.ndim >= 2 else np.matmul(x, x)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=300)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--tame", action="store_true", help="no huge sizes")
    args = ap.parse_args()
    work_dir = tempfile.mkdtemp(prefix="cubego-property-")

    @settings(max_examples=args.examples, deadline=None, database=None,
              derandomize=args.seed is None,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=True)
    @given(cases())
    def prop(case):
        run_case(work_dir, case)

    if args.seed is not None:
        prop = __import__("hypothesis").seed(args.seed)(prop)
    try:
        prop()
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    counts_out = dict(counts)
    print(json.dumps({"counts": counts_out, "failures": failures[:20],
                      "n_failures": len(failures)}, default=str))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
