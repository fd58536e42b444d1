"""Plans: what computing arrays would run, its statistics, and its picture.

:func:`plan` returns a :class:`FinalizedPlan` (the ``cg_plan`` JSON: operations,
arrays, tasks, projected memory) without running anything; :func:`visualize`
draws it with Graphviz.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cubego.binding import libcubego

__all__ = [
    "FUSION_BOUNDS",
    "FinalizedPlan",
    "PlanArray",
    "PlanOp",
    "fusion_options",
    "handles",
    "plan",
    "plan_info",
    "visualize",
]


def _format_bytes(n: int) -> str:
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n} bytes" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class PlanOp:
    """One operation of a plan: a blockwise op computing one array, one task per block."""

    name: str
    func: str
    kind: str
    num_tasks: int
    projected_mem: int
    stage: int
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    nbytes_read: int
    nbytes_written: int
    exceeds_memory: bool

    @classmethod
    def _from_json(cls, d: dict) -> PlanOp:
        return cls(
            name=d["name"],
            func=d["func"],
            kind=d["kind"],
            num_tasks=int(d["num_tasks"]),
            projected_mem=int(d["projected_mem"]),
            stage=int(d["stage"]),
            inputs=tuple(d["inputs"]),
            outputs=tuple(d["outputs"]),
            nbytes_read=int(d["nbytes_read"]),
            nbytes_written=int(d["nbytes_written"]),
            exceeds_memory=bool(d["exceeds_memory"]),
        )


@dataclass(frozen=True)
class PlanArray:
    """One array of a plan and its role: input, virtual, intermediate or output."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    chunksize: tuple[int, ...]
    numblocks: tuple[int, ...]
    nbytes: int
    role: str
    target: str | None

    @classmethod
    def _from_json(cls, d: dict) -> PlanArray:
        return cls(
            name=d["name"],
            shape=tuple(d["shape"]),
            dtype=d["dtype"],
            chunksize=tuple(d["chunksize"]),
            numblocks=tuple(d["numblocks"]),
            nbytes=int(d["nbytes"]),
            role=d["role"],
            target=d.get("target"),
        )


class FinalizedPlan:
    """A finalised (optimised) plan: what ``compute()`` would run, and its statistics.

    Returned by :func:`cubego.plan` and ``Array.plan()``, and passed to callbacks in
    ``ComputeStartEvent.plan``. Memory figures are bytes.

    Attributes
    ----------
    num_ops, num_tasks : int
        Operations and tasks (one task per output chunk of an operation).
    num_stages : int
        Topological generations that have work: the operations of one stage can run
        at the same time (``compute_arrays_in_parallel=True``).
    max_projected_mem, allowed_mem, reserved_mem : int
        The largest per-task projected memory of any operation, and the spec's limits.
    total_nbytes_read, total_nbytes_written : int
        Bytes of stored arrays that tasks read (counted once per task that reads
        them) and bytes of every array operations write.
    num_arrays, num_intermediate_arrays : int
        Arrays in the plan, and those written under ``work_dir`` that are neither
        requested outputs nor ``to_zarr`` targets.
    ops : list of PlanOp
    arrays : list of PlanArray
    ops_exceeding_memory : list of PlanOp
        Operations projected over ``allowed_mem``, worst first.
    exceeds_memory : bool
    """

    def __init__(self, info: dict):
        self._info = info
        self.num_ops: int = int(info["num_ops"])
        self.num_tasks: int = int(info["num_tasks"])
        self.num_stages: int = int(info["num_stages"])
        self.num_arrays: int = int(info["num_arrays"])
        self.num_intermediate_arrays: int = int(info["num_intermediate_arrays"])
        self.max_projected_mem: int = int(info["max_projected_mem"])
        self.allowed_mem: int = int(info["allowed_mem"])
        self.reserved_mem: int = int(info["reserved_mem"])
        self.total_nbytes_read: int = int(info["total_nbytes_read"])
        self.total_nbytes_written: int = int(info["total_nbytes_written"])
        self.ops: list[PlanOp] = [PlanOp._from_json(o) for o in info["ops"]]
        self.arrays: list[PlanArray] = [PlanArray._from_json(a) for a in info["arrays"]]
        by_name = {o.name: o for o in self.ops}
        self.ops_exceeding_memory: list[PlanOp] = [
            by_name[name] for name in info["ops_exceeding_memory"]
        ]
        self.max_workers: int | None = None
        self.process_budget: int | None = None

    @property
    def num_primitive_ops(self) -> int:
        """Cubed's name for :attr:`num_ops`."""
        return self.num_ops

    @property
    def exceeds_memory(self) -> bool:
        """Whether any operation is projected over ``allowed_mem``."""
        return bool(self.ops_exceeding_memory)

    def array_role(self, name: str) -> str:
        """The role of array *name*: ``input``, ``virtual``, ``intermediate`` or ``output``."""
        for a in self.arrays:
            if a.name == name:
                return a.role
        raise KeyError(name)

    def validate(self) -> None:
        """Raise ``ValueError`` for the worst operation over ``allowed_mem``, as compute would."""
        if not self.ops_exceeding_memory:
            return
        op = self.ops_exceeding_memory[0]
        raise ValueError(
            f"projected memory of {op.name} ({op.func}) is {_format_bytes(op.projected_mem)}, "
            f"which exceeds allowed_mem of {_format_bytes(self.allowed_mem)} (including "
            f"reserved_mem of {_format_bytes(self.reserved_mem)}); use smaller chunks or "
            "increase allowed_mem"
        )

    def __repr__(self) -> str:
        return (
            f"FinalizedPlan(num_ops={self.num_ops}, num_tasks={self.num_tasks}, "
            f"num_stages={self.num_stages}, max_projected_mem={self.max_projected_mem}, "
            f"allowed_mem={self.allowed_mem}, exceeds_memory={self.exceeds_memory})"
        )


def handles(arrays: tuple[Any, ...], what: str) -> list[int]:
    """The library handles of *arrays*, or ``TypeError`` naming what *what* was given.

    The core's plan and compute functions take arrays by their handles, so that
    they sit below :mod:`cubego.core.array` (which calls them from its methods).
    """
    out = []
    for x in arrays:
        handle = getattr(x, "_handle", None)
        if not isinstance(handle, int):
            raise TypeError(f"{what}: expected cubego arrays, got {type(x).__name__}")
        out.append(handle)
    return out


#: Cubed's bounds on what one fused operation reads (docs/execution.md).
FUSION_BOUNDS = ("max_total_source_arrays", "max_total_num_input_blocks")


def fusion_options(options: dict) -> dict:
    """*options* with Cubed's ``optimize_function`` turned into fusion bounds.

    Cubed takes its bounds as ``optimize_function=functools.partial(
    multiple_inputs_optimize_dag, max_total_source_arrays=8)``; cubego fuses with its
    own optimizer and takes the same bounds as options, so such a partial becomes its
    keywords. Any other ``optimize_function`` raises ``NotImplementedError``.
    """
    fn = options.pop("optimize_function", None)
    if fn is None:
        return options
    target = getattr(fn, "func", None)
    keywords = dict(getattr(fn, "keywords", None) or {})
    if getattr(target, "__name__", None) != "multiple_inputs_optimize_dag" or set(keywords) - set(
        FUSION_BOUNDS
    ):
        raise NotImplementedError(
            f"optimize_function={fn!r} is not supported: cubego fuses with its own optimizer; "
            "pass max_total_source_arrays=... and max_total_num_input_blocks=... to compute "
            "instead (or optimize_graph=False)"
        )
    return {**keywords, **options}


def plan_info(*arrays: Any, optimize_graph: bool = True, dot: bool = False, **fusion: Any) -> dict:
    """The ``cg_plan`` JSON of *arrays*: statistics (and DOT) without running anything.

    *fusion* takes the bounds of :data:`FUSION_BOUNDS` or Cubed's ``optimize_function``.
    """
    array_handles = handles(arrays, "plan")
    options: dict[str, Any] = fusion_options(dict(fusion))
    options["optimize_graph"] = bool(optimize_graph)
    if dot:
        options["dot"] = True
    return libcubego.plan_info(array_handles, options)


def plan(*arrays: Any, optimize_graph: bool = True, **fusion: Any) -> FinalizedPlan:
    """The finalised plan that computing *arrays* together would run.

    Nothing runs and nothing is checked against ``allowed_mem``: see
    ``FinalizedPlan.exceeds_memory`` and ``ops_exceeding_memory``.

    Parameters
    ----------
    *arrays : Array
    optimize_graph : bool, default True
        Fuse operations, as ``compute`` does.
    **fusion
        ``max_total_source_arrays`` (default 4) and ``max_total_num_input_blocks``
        (default 10), as for ``compute``.
    """
    return FinalizedPlan(plan_info(*arrays, optimize_graph=optimize_graph, **fusion))


# ---------------------------------------------------------------------- drawing

_IMAGE_FORMATS = ("svg", "png", "pdf", "jpg", "jpeg", "gif")


def visualize(
    *arrays: Any,
    filename: str | os.PathLike = "cubego",
    format: str | None = None,
    optimize_graph: bool = True,
    show_hidden: bool = False,
    engine: str | None = None,
    **fusion: Any,
) -> Any:
    """Write the plan that computing *arrays* would run as a graph.

    Operations are boxes labelled with their function, number of tasks and projected
    memory, filled red when over ``allowed_mem``; arrays are ellipses, dashed when
    virtual (generated where they are read, never stored) and bold when outputs.

    The graph is always written as Graphviz DOT text to ``<filename>.dot``; when the
    ``dot`` program is installed it is also rendered to ``<filename>.<format>``.

    Parameters
    ----------
    *arrays : Array
    filename : str or os.PathLike, default "cubego"
        Path without extension.
    format : str, optional
        ``"svg"`` (default), ``"png"``, ``"pdf"``, or ``"dot"`` for the DOT text only.
    optimize_graph : bool, default True
        Show the fused plan that ``compute`` runs.
    show_hidden : bool, default False
        Accepted for Cubed compatibility; cubego's plans have no hidden operations.
    engine : {None, "graphviz"}
        Only Graphviz is supported.
    **fusion
        The fusion bounds ``max_total_source_arrays`` and ``max_total_num_input_blocks``,
        as for ``compute``.

    Returns
    -------
    IPython.display.SVG or Image, or str
        The rendered image for a notebook when IPython is installed, else the path of
        the file written (the image, or the DOT file without ``dot``).
    """
    if engine not in (None, "graphviz"):
        raise NotImplementedError(f"visualize: engine {engine!r} is not supported; use 'graphviz'")
    fmt = (format or "svg").lower().lstrip(".")
    if fmt != "dot" and fmt not in _IMAGE_FORMATS:
        raise ValueError(f"visualize: unsupported format {format!r}; use svg, png, pdf or dot")
    info = plan_info(*arrays, optimize_graph=optimize_graph, dot=True, **fusion)
    finalized = FinalizedPlan(info)
    if finalized.exceeds_memory:
        names = ", ".join(op.name for op in finalized.ops_exceeding_memory)
        warnings.warn(
            f"the projected memory of {names} exceeds allowed_mem "
            f"({finalized.allowed_mem} bytes); computing this plan will fail",
            UserWarning,
            stacklevel=2,
        )
    base = os.fspath(filename)
    dot_path = Path(base + ".dot")
    dot_path.write_text(info["dot"], encoding="utf-8")
    if fmt == "dot":
        return str(dot_path)
    dot = shutil.which("dot")
    if dot is None:
        if format is not None:
            warnings.warn(
                f"visualize: Graphviz's `dot` program was not found, so only {dot_path} was "
                f"written, not a {fmt} image",
                UserWarning,
                stacklevel=2,
            )
        return str(dot_path)
    image = Path(f"{base}.{fmt}")
    proc = subprocess.run(
        [dot, f"-T{fmt}", "-o", str(image), str(dot_path)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"visualize: dot failed: {proc.stderr.strip()}")
    return _display(image, fmt)


def _display(image: Path, fmt: str) -> Any:
    try:
        from IPython.display import SVG, Image
    except ImportError:
        return str(image)
    return SVG(filename=str(image)) if fmt == "svg" else Image(filename=str(image))
