"""The benchmark workloads W1–W8: inputs, sizes, cases and how to check results.

This module is the catalogue the driver (``run.py``) plans from. Each engine
implements the same cases in ``engines/<engine>_runner.py``; the job spec a
runner receives carries everything here that it needs (input paths, shapes,
chunks, parameters), so runners never import this module.

Sizes
-----
``T`` (tiny): seconds for everything, for the smoke test only.
``Q`` (quick): cut down so that the whole suite runs in a few minutes.
``M`` (medium): 2–15 GB of input, fits in the page cache (perf.md §6.2).
``L`` (large): 4–8× the engine budget (``allowed_mem`` × 2 workers = 4 GB).

Data variants
-------------
A variant is ``<codec>-<data>``: codec ``none`` (bytes only), ``zstd``
(zarr-python's default for Zarr v3: level 0, no checksum) or ``blosc``
(lz4, byte shuffle) or ``shard`` (zstd inside ``sharding_indexed``, shards
of 2 × 2 × … chunks: engines read chunk by chunk through the shard index
and write whole shards); data ``uniform`` (U[0, 1) floats or uniform integers:
incompressible) or ``compressible`` (the same with every other element along the
last axis set to zero, as in coiled/benchmarks). Inputs and outputs of a
comparison use the variant's codec in every engine; intermediates are
uncompressed in every engine that has them.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

GB = 10**9
MiB = 2**20

F8 = "float64"
F4 = "float32"
U2 = "uint16"

ITEMSIZE = {F8: 8, F4: 4, U2: 2}


@dataclass(frozen=True)
class ArraySpec:
    """An input array written once by zarr-python and read by every engine."""

    name: str
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: str
    seed: int

    @property
    def nbytes(self) -> int:
        n = ITEMSIZE[self.dtype]
        for s in self.shape:
            n *= s
        return n

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "shape": list(self.shape),
            "chunks": list(self.chunks),
            "dtype": self.dtype,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class OutputSpec:
    """A Zarr array a case writes (same codec as its inputs)."""

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: str

    @property
    def nbytes(self) -> int:
        n = ITEMSIZE[self.dtype]
        for s in self.shape:
            n *= s
        return n


@dataclass(frozen=True)
class Kernel:
    """A case's arithmetic in numpy on an in-memory sample: the roofline's CPU term.

    ``fn(params, **arrays)`` computes on *sample* (``(name, shape, dtype)`` each,
    usually one chunk of every input); *scale* is the case's work over the
    sample's (elements, or flops for matmul), so the case's numpy CPU time is
    the sample's times *scale*. The driver times it in a child process with
    single-threaded BLAS (``python workloads.py cpu-probe ...``).
    """

    sample: tuple[tuple[str, tuple[int, ...], str], ...]
    fn: Callable
    scale: float


@dataclass(frozen=True)
class Case:
    """One timed computation of a workload, run by every engine."""

    workload: str
    case: str
    title: str
    expression: str
    inputs: tuple[ArraySpec, ...]
    output: OutputSpec | None = None
    params: dict = field(default_factory=dict)
    allowed_mem: int = 2 * GB
    # Memory numpy needs (bytes); numpy runs only where this fits.
    numpy_mem: int = 0
    # Relative and absolute tolerance for comparing results between engines.
    rtol: float = 1e-9
    atol: float = 0.0
    # Cases whose timing does not depend on the codec or data run for one variant only.
    variant_sensitive: bool = True
    # Variants this case adds to the requested ones (W8: blosc).
    extra_variants: tuple[str, ...] = ()
    # What cubego cannot do yet, so the runner records "not supported" without trying.
    notes: tuple[str, ...] = ()
    # The arithmetic in numpy, for the roofline's CPU term (None: no arithmetic, e.g. a copy).
    kernel: Kernel | None = None
    # Reads of every input the computation's data dependencies force when the
    # inputs do not fit in the engines' memory: W3.anom needs the whole mean
    # before the first difference, so it reads its input twice (the roofline
    # counts the second read at the page cache's speed for the part the cache
    # can hold).
    passes: int = 1

    @property
    def key(self) -> str:
        return f"{self.workload}.{self.case}"

    @property
    def read_bytes(self) -> int:
        return sum(a.nbytes for a in self.inputs)

    @property
    def write_bytes(self) -> int:
        return self.output.nbytes if self.output else 0


SIZES = ("T", "Q", "M", "L")
WORKLOADS = ("W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8")
DEFAULT_VARIANTS = ("none-uniform", "zstd-compressible")


def _pick(size: str, t, q, m, l):  # noqa: E741 - the size names are T, Q, M, L
    return {"T": t, "Q": q, "M": m, "L": l}[size]


def _elems(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _chunk_kernel(fn, *arrays: ArraySpec) -> Kernel:
    """*fn* on one chunk of each input, scaled by the number of chunks (elements)."""
    a = arrays[0]
    sample = tuple((x.name.split("_", 1)[1], x.chunks, x.dtype) for x in arrays)
    return Kernel(sample, fn, _elems(a.shape) / _elems(a.chunks))


def w1(size: str) -> list[Case]:
    n, c = _pick(size, (512, 256), (4096, 1024), (16384, 4096), (32768, 4096))
    a = ArraySpec("w1_a", (n, n), (c, c), F8, 11)
    b = ArraySpec("w1_b", (n, n), (c, c), F8, 12)
    return [
        Case(
            "W1",
            "add",
            "elementwise a + b, stored",
            "to_zarr(a + b)",
            (a, b),
            OutputSpec((n, n), (c, c), F8),
            numpy_mem=3 * a.nbytes,
            kernel=_chunk_kernel(lambda p, a, b: a + b, a, b),
        ),
        Case(
            "W1",
            "chain",
            "fused chain to float32, stored",
            "to_zarr(astype(-(a + b) * 0.5 + a * b, float32))",
            (a, b),
            OutputSpec((n, n), (c, c), F4),
            numpy_mem=5 * a.nbytes,
            rtol=1e-6,
            kernel=_chunk_kernel(lambda p, a, b: (-(a + b) * 0.5 + a * b).astype("float32"), a, b),
        ),
    ]


def w2(size: str) -> list[Case]:
    t = _pick(size, 20, 40, 500, 1000)
    shape, chunks = (t, 1, 987, 1920), (10, 1, 987, 1920)
    if size == "T":
        shape, chunks = (t, 1, 98, 192), (5, 1, 98, 192)
    u = ArraySpec("w2_u", shape, chunks, F8, 21)
    v = ArraySpec("w2_v", shape, chunks, F8, 22)
    return [
        Case(
            "W2",
            "qm",
            "quadratic means",
            "compute(mean(u*u, axis=0), mean(v*v, axis=0), mean(u*v, axis=0))",
            (u, v),
            numpy_mem=3 * u.nbytes,
            kernel=_chunk_kernel(
                lambda p, u, v: ((u * u).mean(0), (v * v).mean(0), (u * v).mean(0)), u, v
            ),
        )
    ]


def w3(size: str) -> list[Case]:
    t = _pick(size, 20, 40, 500, 2000)
    x = ArraySpec("w3_x", (t, 987, 1920), (10, 987, 1920), F8, 31)
    if size == "T":
        x = ArraySpec("w3_x", (t, 98, 192), (5, 98, 192), F8, 31)
    return [
        Case(
            "W3",
            "mean",
            "mean over axis 0",
            "mean(x, axis=0)",
            (x,),
            numpy_mem=x.nbytes,
            kernel=_chunk_kernel(lambda p, x: x.mean(0), x),
        ),
        Case(
            "W3",
            "anom",
            "anomaly sum",
            "sum(x - mean(x, axis=0))",
            (x,),
            numpy_mem=x.nbytes * 6 // 5,
            # The true value is ~0: compare against the scale of the data.
            rtol=0.0,
            atol=1e-9 * x.nbytes / 8,
            # Two passes over every element: the mean, then the sum of differences.
            kernel=_chunk_kernel(lambda p, x: (x - x.mean(0)).sum(), x),
            passes=2,
        ),
    ]


def w4(size: str) -> list[Case]:
    n = _pick(size, 512, 4096, 32768, 46341)
    c = _pick(size, 64, 512, (128 * MiB) // (8 * n), (128 * MiB) // (8 * n))
    x = ArraySpec("w4_x", (n, n), (n, c), F8, 41)
    return [
        Case(
            "W4",
            "swap",
            "rechunk swap-axes, then sum",
            f"sum(rechunk(x, ({c}, {n})))",
            (x,),
            params={"target_chunks": [c, n]},
            numpy_mem=2 * x.nbytes,
            rtol=1e-9,
            # The rechunk is data movement (I/O); the arithmetic is the sum.
            kernel=_chunk_kernel(lambda p, x: x.sum(), x),
        )
    ]


def w5(size: str) -> list[Case]:
    n, c = _pick(size, (256, 128), (2048, 512), (8192, 2048), (12288, 2048))
    a = ArraySpec("w5_a", (n, n), (c, c), F8, 51)
    return [
        Case(
            "W5",
            "matmul",
            "matmul, then sum",
            "sum(a @ a.T)  (or sum(a @ a) while cubego has no transpose)",
            (a,),
            allowed_mem=1 * GB,
            numpy_mem=3 * a.nbytes,
            rtol=1e-7,
            variant_sensitive=False,
            # One (c, c) block product; the whole product is (n / c)^3 of them (flops).
            kernel=Kernel(
                (("a", (c, c), F8),),
                lambda p, a: (a @ (a.T if p.get("transpose") else a)).sum(),
                (n / c) ** 3,
            ),
        )
    ]


def w6(size: str) -> list[Case]:
    n, c = _pick(size, (512, 256), (4096, 1024), (16384, 4096), (32768, 4096))
    a = ArraySpec("w6_a", (n, n), (c, c), F8, 61)
    b = ArraySpec("w6_b", (n, n), (c, c), F8, 62)
    return [
        Case(
            "W6",
            "diff",
            "misaligned a[1:, 1:] - b[:-1, :-1], stored",
            "to_zarr(a[1:, 1:] - b[:-1, :-1])  (output chunks regular, as the inputs')",
            (a, b),
            OutputSpec((n - 1, n - 1), (c, c), F8),
            numpy_mem=4 * a.nbytes,
            kernel=Kernel(
                (("a", (c, c), F8), ("b", (c, c), F8)),
                lambda p, a, b: a[1:, 1:] - b[:-1, :-1],
                ((n - 1) / (c - 1)) ** 2,
            ),
        )
    ]


def w7(size: str) -> list[Case]:
    n = _pick(size, 2000, 10000, 20000, 40000)
    return [
        Case(
            "W7",
            "small",
            "many small chunks (2 MB)",
            f"sum(ones(({n}, {n}), chunks=500) + 1)",
            (),
            params={"n": n, "chunk": 500},
            numpy_mem=2 * n * n * 8,
            variant_sensitive=False,
            notes=("map_overlap sample: map_overlap is not in cubego yet",),
            kernel=Kernel((), lambda p: (np_ones((500, 500)) + 1).sum(), (n / 500) ** 2),
        )
    ]


def w8(size: str) -> list[Case]:
    shape = _pick(size, (64, 64, 64), (256, 512, 512), (1024, 2048, 2048), (2048, 2048, 2048))
    c = _pick(size, 32, 128, 256, 256)
    x = ArraySpec("w8_x", shape, (c, c, c), U2, 81)
    # W8 is about codecs: zstd (zarr-python's default), blosc (lz4 with shuffle)
    # and sharding (zstd inside shards). The smoke sizes keep only blosc and
    # sharding, so that --quick stays under five minutes.
    extra = (
        ("blosc-compressible", "shard-compressible")
        if size in ("T", "Q")
        else ("zstd-compressible", "blosc-compressible", "shard-compressible")
    )
    return [
        Case(
            "W8",
            "read",
            "Zarr read-all (sum of every element)",
            "sum(x)  (uint16 -> uint64)",
            (x,),
            numpy_mem=x.nbytes,
            rtol=0.0,
            extra_variants=extra,
            kernel=_chunk_kernel(lambda p, x: x.sum(dtype="uint64"), x),
        ),
        Case(
            "W8",
            "copy",
            "Zarr copy (read and write every chunk)",
            "to_zarr(x)",
            (x,),
            OutputSpec(shape, (c, c, c), U2),
            numpy_mem=x.nbytes,
            rtol=0.0,
            extra_variants=extra,
        ),
    ]


def np_ones(shape):
    import numpy as np

    return np.ones(shape)


_BUILDERS = {"W1": w1, "W2": w2, "W3": w3, "W4": w4, "W5": w5, "W6": w6, "W7": w7, "W8": w8}


def cases(workload: str, size: str) -> list[Case]:
    """The cases of *workload* at *size*."""
    if workload not in _BUILDERS:
        raise ValueError(f"unknown workload {workload!r}; choose from {', '.join(WORKLOADS)}")
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose from {', '.join(SIZES)}")
    return _BUILDERS[workload](size)


def variants_for(case: Case, requested: tuple[str, ...]) -> list[str]:
    """The data variants *case* runs for, given the requested ones."""
    if not case.inputs:
        return ["virtual"]
    if not case.variant_sensitive:
        return [requested[0]]
    out = list(requested)
    for v in case.extra_variants:
        if v not in out:
            out.append(v)
    return out


def parse_variant(variant: str) -> tuple[str, str]:
    codec, _, data = variant.partition("-")
    if codec not in ("none", "zstd", "blosc", "shard") or data not in ("uniform", "compressible"):
        raise ValueError(
            f"unknown variant {variant!r}: expected <codec>-<data> with codec none, zstd, "
            "blosc or shard and data uniform or compressible"
        )
    return codec, data


# ---------------------------------------------------------------- the CPU probe


def kernel_seconds(kernel: Kernel, params: dict, min_seconds: float = 0.3) -> float:
    """Single-core CPU seconds of one call of *kernel* on its sample: the best of
    at least three calls, and of as many as fit in *min_seconds*. Call it in a
    process whose BLAS is single-threaded (``measure.THREAD_ENV``)."""
    import numpy as np

    rng = np.random.default_rng(7)
    arrays = {}
    for name, shape, dtype in kernel.sample:
        if dtype == U2:
            arrays[name] = rng.integers(0, 2**16, size=shape, dtype=np.uint16)
        else:
            arrays[name] = rng.random(shape).astype(dtype)
    kernel.fn(params, **arrays)  # warm-up: page faults, BLAS start-up
    best, spent, calls = float("inf"), 0.0, 0
    while calls < 3 or spent < min_seconds:
        t0 = time.process_time()
        kernel.fn(params, **arrays)
        dt = time.process_time() - t0
        best, spent, calls = min(best, dt), spent + dt, calls + 1
    return best


def cpu_probe(size: str, keys: list[str], params: dict) -> dict:
    """{case key: {sample_s, scale, numpy_cpu_s}} for the cases *keys* at *size*."""
    out = {}
    for w in WORKLOADS:
        for c in cases(w, size):
            if c.key not in keys:
                continue
            if c.kernel is None:
                out[c.key] = {"sample_s": 0.0, "scale": 0.0, "numpy_cpu_s": 0.0}
                continue
            s = kernel_seconds(c.kernel, {**c.params, **params})
            out[c.key] = {"sample_s": s, "scale": c.kernel.scale, "numpy_cpu_s": s * c.kernel.scale}
    return out


if __name__ == "__main__":
    # python workloads.py cpu-probe SIZE KEYS PARAMS_JSON  ->  one JSON line
    if len(sys.argv) != 5 or sys.argv[1] != "cpu-probe":
        raise SystemExit(
            "usage: workloads.py cpu-probe SIZE W1.add,W3.mean '{\"transpose\": true}'"
        )
    print(json.dumps(cpu_probe(sys.argv[2], sys.argv[3].split(","), json.loads(sys.argv[4]))))
