"""Plans: what computing arrays would run, its statistics, and its picture.

:func:`plan` returns a :class:`FinalizedPlan` (the ``cg_plan`` JSON: operations,
arrays, tasks, projected memory) without running anything; :func:`visualize`
draws it with Graphviz.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cubego.binding import libcubego
from cubego.core.optimization import FUSION_KEY, fusion_of

__all__ = [
    "FUSION_BOUNDS",
    "FinalizedPlan",
    "PlanArray",
    "PlanOp",
    "fusion_options",
    "handles",
    "install_execute",
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
    """One operation of a plan: a blockwise op computing one array, one task per block.

    It also plays Cubed's ``PrimitiveOperation`` (``projected_mem``, ``allowed_mem``,
    ``reserved_mem``, ``num_tasks``), and unpacks as the ``(name, op)`` pairs of
    Cubed's ``FinalizedPlan.ops_exceeding_memory``: ``name, op = plan.ops_exceeding_memory[0]``.
    """

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
    allowed_mem: int = 0
    reserved_mem: int = 0

    def __iter__(self) -> Iterator[Any]:
        return iter((self.name, self))

    @classmethod
    def _from_json(cls, d: dict, allowed_mem: int = 0, reserved_mem: int = 0) -> PlanOp:
        return cls(
            allowed_mem=allowed_mem,
            reserved_mem=reserved_mem,
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
    optimized : bool
        Whether operations were fused.
    array_names, input_array_names, intermediate_array_names
        Cubed's names: the arrays computed, those the plan starts from (stored
        inputs and virtual arrays), and those written that are not outputs.
    dag : networkx.MultiDiGraph
        The plan as Cubed's graph (see :attr:`dag`).
    total_narrays, total_nbytes, total_nchunks : int
        Cubed's statistics over the stored arrays, also per role
        (``total_input_*``, ``total_intermediate_*``, ``total_output_*``) and for
        what is read and written (``total_narrays_read``, ``total_nchunks_written``...).
    """

    def __init__(
        self,
        info: dict,
        arrays: tuple[Any, ...] = (),
        optimized: bool = True,
        fusion: dict | None = None,
    ):
        self._info = info
        self._arrays = tuple(arrays)
        self._fusion = dict(fusion or {})
        #: Whether the plan was optimized (its operations fused), as in Cubed.
        self.optimized: bool = bool(optimized)
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
        self.ops: list[PlanOp] = [
            PlanOp._from_json(o, self.allowed_mem, self.reserved_mem) for o in info["ops"]
        ]
        self.arrays: list[PlanArray] = [PlanArray._from_json(a) for a in info["arrays"]]
        by_name = {o.name: o for o in self.ops}
        self.ops_exceeding_memory: list[PlanOp] = [
            by_name[name] for name in info["ops_exceeding_memory"]
        ]
        self.max_workers: int | None = None
        self.process_budget: int | None = None
        roles: dict[str, list[PlanArray]] = {}
        for a in self.arrays:
            roles.setdefault(a.role, []).append(a)
        self._roles = roles
        #: Names of the arrays computed (Cubed's ``array_names``).
        self.array_names: tuple[str, ...] = tuple(
            getattr(x, "name", None) for x in self._arrays
        ) or tuple(a.name for a in roles.get("output", []))
        #: Arrays the plan starts from: stored inputs and virtual arrays.
        self.input_array_names: list[str] = [
            a.name for a in self.arrays if a.role in ("input", "virtual")
        ]
        #: Arrays written under ``work_dir`` that are not requested outputs.
        self.intermediate_array_names: list[str] = [a.name for a in roles.get("intermediate", [])]
        self._dag: Any = None

    # ------------------------------------------------------------------ Cubed's statistics

    def _total(self, roles: tuple[str, ...], what: str) -> int:
        arrays = [a for role in roles for a in self._roles.get(role, [])]
        if what == "narrays":
            return len(arrays)
        if what == "nbytes":
            return sum(a.nbytes for a in arrays)
        return sum(math.prod(a.numblocks) for a in arrays)

    @property
    def total_narrays(self) -> int:
        """Stored (materialized) arrays: inputs read, intermediates and outputs written."""
        return self._total(_MATERIALIZED, "narrays")

    @property
    def total_nbytes(self) -> int:
        return self._total(_MATERIALIZED, "nbytes")

    @property
    def total_nchunks(self) -> int:
        return self._total(_MATERIALIZED, "nchunks")

    @property
    def total_input_narrays(self) -> int:
        """Stored arrays the plan reads and does not write (virtual arrays are not stored)."""
        return self._total(("input",), "narrays")

    @property
    def total_input_nbytes(self) -> int:
        return self._total(("input",), "nbytes")

    @property
    def total_input_nchunks(self) -> int:
        return self._total(("input",), "nchunks")

    @property
    def total_intermediate_narrays(self) -> int:
        return self._total(("intermediate",), "narrays")

    @property
    def total_intermediate_nbytes(self) -> int:
        return self._total(("intermediate",), "nbytes")

    @property
    def total_intermediate_nchunks(self) -> int:
        return self._total(("intermediate",), "nchunks")

    @property
    def total_output_narrays(self) -> int:
        return self._total(("output",), "narrays")

    @property
    def total_output_nbytes(self) -> int:
        return self._total(("output",), "nbytes")

    @property
    def total_output_nchunks(self) -> int:
        return self._total(("output",), "nchunks")

    @property
    def total_narrays_read(self) -> int:
        """Stored arrays read: inputs and intermediates (Cubed's count)."""
        return self._total(("input", "intermediate"), "narrays")

    @property
    def total_nchunks_read(self) -> int:
        return self._total(("input", "intermediate"), "nchunks")

    @property
    def total_narrays_written(self) -> int:
        """Arrays written: intermediates and outputs."""
        return self._total(("intermediate", "output"), "narrays")

    @property
    def total_nchunks_written(self) -> int:
        return self._total(("intermediate", "output"), "nchunks")

    # ------------------------------------------------------------------ Cubed's graph

    @property
    def dag(self) -> Any:
        """The plan as a ``networkx.MultiDiGraph``, as Cubed's (needs networkx).

        Operation nodes have ``type="op"``, ``op_name`` (``"blockwise"`` or
        ``"rechunk"``), ``func_name``, ``num_tasks``, ``projected_mem`` and
        ``primitive_op`` (the :class:`PlanOp`); array nodes have ``type="array"`` and
        ``target`` (the :class:`PlanArray`: shape, dtype, chunks, role). Edges run from
        each input array to the operation reading it (one edge per read) and from an
        operation to the array it writes. Unlike Cubed's, the graph has no
        ``create-arrays`` operation: the engine creates each stored array when its
        first chunk is written, with no tasks of its own.
        """
        if self._dag is None:
            try:
                import networkx as nx
            except ImportError as e:  # pragma: no cover - networkx is in the extras
                raise ImportError(
                    "FinalizedPlan.dag needs networkx: pip install 'cubego[diagnostics]'"
                ) from e
            dag = nx.MultiDiGraph()
            for a in self.arrays:
                dag.add_node(a.name, name=a.name, type="array", target=a, hidden=False)
            for op in self.ops:
                dag.add_node(
                    op.name,
                    name=op.name,
                    type="op",
                    op_name=op.kind,
                    func_name=op.func,
                    num_tasks=op.num_tasks,
                    projected_mem=op.projected_mem,
                    primitive_op=op,
                    hidden=False,
                )
                for name in op.inputs:
                    dag.add_edge(name, op.name)
                for name in op.outputs:
                    dag.add_edge(op.name, name)
            self._dag = dag
        return self._dag

    # ------------------------------------------------------------------ running and drawing

    def execute(
        self,
        executor: Any = None,
        callbacks: Any = None,
        resume: bool | None = None,
        spec: Any = None,
        **kwargs: Any,
    ) -> None:
        """Run the plan, as ``compute`` would, without reading the results back.

        Raises ``ValueError`` first when an operation is projected over ``allowed_mem``.
        *spec* is accepted for Cubed's signature; the arrays' spec applies.
        """
        self.validate()
        if not self._arrays:
            raise ValueError("this FinalizedPlan was not made from arrays, so it cannot run")
        if _execute is None:  # pragma: no cover - installed when cubego is imported
            raise RuntimeError("cubego.core.compute is not imported")
        options = {**self._fusion, **kwargs, "callbacks": callbacks}
        if resume is not None:
            options["resume"] = resume
        _execute(self._arrays, executor, self.optimized, options)

    def visualize(
        self,
        filename: str | os.PathLike | None = "cubego",
        format: str | None = None,
        rankdir: str = "TB",
        show_hidden: bool = False,
        engine: str | None = None,
    ) -> Any:
        """Draw the plan (see :func:`visualize`)."""
        if not self._arrays:
            raise ValueError("this FinalizedPlan was not made from arrays, so it cannot be drawn")
        return visualize(
            *self._arrays,
            filename=filename,
            format=format,
            optimize_graph=self.optimized,
            show_hidden=show_hidden,
            engine=engine,
            rankdir=rankdir,
            **self._fusion,
        )

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


# Roles of the arrays that are stored (Cubed's "materialized" arrays).
_MATERIALIZED = ("input", "intermediate", "output")

# Runs a plan's arrays: cubego.core.compute.run, installed when it is imported
# (compute sits above this module, which it imports).
_execute: Callable[..., Any] | None = None


def install_execute(run: Callable[..., Any]) -> None:
    """Install the function ``FinalizedPlan.execute`` runs a computation with."""
    global _execute
    _execute = run


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


def fusion_options(options: dict, arrays: tuple[Any, ...] = ()) -> dict:
    """*options* with Cubed's ``optimize_function`` turned into the engine's fusion options.

    cubego fuses in its engine (see :mod:`cubego.core.optimization`): Cubed's
    ``multiple_inputs_optimize_dag`` and ``simple_optimize_dag`` (or partials of them
    with their keywords) select the matching fusion; another callable is called on
    the unoptimized graph of *arrays*, and the identity turns fusion off (the key
    ``"optimize_graph": False`` in the result); one that rewrites the graph raises
    ``NotImplementedError``. ``compile_function`` raises ``NotImplementedError``.
    """
    compile_function = options.pop("compile_function", None)
    if compile_function is not None:
        raise NotImplementedError(
            "compile_function is not supported: cubego's chunk kernels run in its Go "
            "engine, not as Python functions a compiler could wrap (Python chunk "
            "functions of map_blocks and friends can be compiled before they are passed)"
        )
    fn = options.pop("optimize_function", None)
    if fn is None:
        return options
    if not callable(fn):
        raise TypeError(f"optimize_function must be callable, got {fn!r}")
    fusion = fusion_of(fn)
    if fusion is None:
        fusion = _fusion_by_calling(fn, arrays)
    return {**fusion, **options}


def _fusion_by_calling(fn: Callable, arrays: tuple[Any, ...]) -> dict:
    """The fusion an optimize_function of the user's asks for, found by calling it."""
    refusal = (
        f"optimize_function={fn!r} rewrote the plan's graph, which cubego cannot run: its "
        "engine fuses with its own optimizer. Pass cubego.core.optimization's "
        "multiple_inputs_optimize_dag (with max_total_source_arrays=..., "
        "max_total_num_input_blocks=...) or simple_optimize_dag, or optimize_graph=False"
    )
    if not arrays:
        raise NotImplementedError(refusal)
    unfused = FinalizedPlan(
        plan_info(*arrays, optimize_graph=False), arrays=arrays, optimized=False
    )
    dag = unfused.dag
    before = _graph_key(dag)
    result = fn(dag, array_names=unfused.array_names)
    marked = getattr(result, "graph", {}).get(FUSION_KEY)
    if marked is not None:
        return dict(marked)
    if before is not None and _graph_key(result) == before:
        return {"optimize_graph": False}
    raise NotImplementedError(refusal)


def _graph_key(g: Any) -> tuple | None:
    """A graph's nodes and edges, to tell whether an optimizer changed it."""
    try:
        return (frozenset(g.nodes), tuple(sorted(g.edges)))
    except (AttributeError, TypeError):
        return None


def plan_info(
    *arrays: Any, optimize_graph: bool = True, dot: bool = False, counts: bool = False, **fusion: Any
) -> dict:
    """The ``cg_plan`` JSON of *arrays*: statistics (and DOT) without running anything.

    With *counts*, only ``num_ops``, ``num_tasks`` and ``num_arrays`` (what a repr
    shows, made and parsed in a fraction of the time). *fusion* takes the bounds of
    :data:`FUSION_BOUNDS` or Cubed's ``optimize_function``.
    """
    array_handles = handles(arrays, "plan")
    options: dict[str, Any] = fusion_options(dict(fusion), arrays)
    options["optimize_graph"] = bool(optimize_graph) and options.get("optimize_graph", True)
    if dot:
        options["dot"] = True
    if counts:
        options["counts"] = True
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
        (default 10), as for ``compute``, or Cubed's ``optimize_function`` (see
        :mod:`cubego.core.optimization`); ``compile_function`` raises
        ``NotImplementedError``.
    """
    handles(arrays, "plan")
    resolved = fusion_options(dict(fusion), arrays)
    optimized = bool(optimize_graph) and resolved.pop("optimize_graph", True)
    info = plan_info(*arrays, optimize_graph=optimized, **resolved)
    return FinalizedPlan(info, arrays=arrays, optimized=optimized, fusion=resolved)


# ---------------------------------------------------------------------- drawing

_IMAGE_FORMATS = ("svg", "png", "pdf", "jpg", "jpeg", "gif")


def visualize(
    *arrays: Any,
    filename: str | os.PathLike | None = "cubego",
    format: str | None = None,
    optimize_graph: bool = True,
    show_hidden: bool = False,
    engine: str | None = None,
    rankdir: str = "TB",
    **fusion: Any,
) -> Any:
    """Write the plan that computing *arrays* would run as a graph.

    Operations are boxes labelled with their function, number of tasks and projected
    memory, filled red when over ``allowed_mem``; arrays are ellipses, dashed when
    virtual (generated where they are read, never stored) and bold when outputs.

    With Graphviz (the default engine) the graph is always written as DOT text to
    ``<filename>.dot``; when the ``dot`` program is installed it is also rendered to
    ``<filename>.<format>``. With ``engine="cytoscape"`` (ipycytoscape) the result is
    an interactive widget, also written to ``<filename>.html`` (a page embedding it)
    unless *filename* is None, as Cubed's.

    Parameters
    ----------
    *arrays : Array
    filename : str or os.PathLike, default "cubego"
        Path without extension (None: no file, for ``engine="cytoscape"``).
    format : str, optional
        ``"svg"`` (default), ``"png"``, ``"pdf"``, or ``"dot"`` for the DOT text only;
        ``"html"`` (the only one) for ``engine="cytoscape"``.
    optimize_graph : bool, default True
        Show the fused plan that ``compute`` runs.
    show_hidden : bool, default False
        Accepted for Cubed compatibility; cubego's plans have no hidden operations.
    engine : {None, "graphviz", "cytoscape"}
        Graphviz (default), or an ipycytoscape widget (``cubego.diagnostics.cytoscape``).
    rankdir : {"TB", "LR", "BT", "RL"}, default "TB"
        The direction of the graph (Graphviz's, or the dagre layout's).
    **fusion
        The fusion bounds ``max_total_source_arrays`` and ``max_total_num_input_blocks``,
        as for ``compute``.

    Returns
    -------
    IPython.display.SVG or Image, or str, or ipycytoscape.CytoscapeWidget
        The rendered image for a notebook when IPython is installed, else the path of
        the file written (the image, or the DOT file without ``dot``); the widget for
        ``engine="cytoscape"``.

    Raises
    ------
    ValueError
        For an unknown engine, format or rankdir.
    ImportError
        For ``engine="cytoscape"`` without ipycytoscape.
    """
    if engine not in (None, "graphviz", "cytoscape"):
        raise ValueError(
            f"visualize: unknown engine {engine!r}; use 'graphviz' (default) or 'cytoscape'"
        )
    cytoscape = engine == "cytoscape"
    fmt = (format or ("html" if cytoscape else "svg")).lower().lstrip(".")
    if cytoscape and fmt != "html":
        raise ValueError(f"visualize: engine 'cytoscape' writes html, not {format!r}")
    if not cytoscape and fmt != "dot" and fmt not in _IMAGE_FORMATS:
        raise ValueError(f"visualize: unsupported format {format!r}; use svg, png, pdf or dot")
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"visualize: rankdir must be TB, LR, BT or RL, got {rankdir!r}")
    info = plan_info(*arrays, optimize_graph=optimize_graph, dot=not cytoscape, **fusion)
    finalized = FinalizedPlan(info)
    if finalized.exceeds_memory:
        over = finalized.ops_exceeding_memory
        names = [op.name for op in over]
        warnings.warn(
            f"Plan has {len(over)} operation(s) that exceed allowed memory: {names}. "
            "These are shown in red in the visualization. The projected memory of "
            f"{over[0].name} is {_format_bytes(over[0].projected_mem)}, which exceeds "
            f"allowed_mem of {_format_bytes(finalized.allowed_mem)}; computing this plan "
            "will fail",
            UserWarning,
            stacklevel=2,
        )
    if cytoscape:
        return _cytoscape(finalized, filename, rankdir)
    base = os.fspath(filename)
    dot_path = Path(base + ".dot")
    dot = info["dot"]
    if rankdir != "TB":
        dot = dot.replace("{", f"{{\n  rankdir={rankdir};", 1)
    dot_path.write_text(dot, encoding="utf-8")
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


def _cytoscape(plan: FinalizedPlan, filename: str | os.PathLike | None, rankdir: str) -> Any:
    """The plan's ipycytoscape widget, also written to ``<filename>.html`` unless None."""
    from cubego.diagnostics.cytoscape import plan_widget

    widget = plan_widget(plan, rankdir=rankdir)
    if filename is not None:
        from ipywidgets.embed import embed_minimal_html

        embed_minimal_html(
            os.fspath(filename) + ".html", views=[widget], title="cubego plan", drop_defaults=False
        )
    return widget


def _display(image: Path, fmt: str) -> Any:
    try:
        from IPython.display import SVG, Image
    except ImportError:
        return str(image)
    return SVG(filename=str(image)) if fmt == "svg" else Image(filename=str(image))
