"""Cubed's plan optimizers, at Cubed's module path (``cubed.core.optimization``).

cubego fuses operations in its engine, so these functions are names for the
engine's fusion rather than graph rewriters: passed as ``optimize_function=`` to
``compute``, ``plan``, ``visualize`` or ``to_zarr``, each selects the fusion it
describes, and so does a ``functools.partial`` of one with its keyword
arguments:

* :func:`multiple_inputs_optimize_dag` (the default): an operation absorbs the
  operations producing its inputs while the fused operation reads at most
  ``max_total_source_arrays`` stored arrays and ``max_total_num_input_blocks``
  stored blocks per task (and fits ``allowed_mem``);
* :func:`simple_optimize_dag`: only chains, an operation with a single input
  absorbing the operation that produces it.

Any other callable is called with the unoptimized plan's graph (``FinalizedPlan.dag``,
which needs networkx) and ``array_names=``: one that returns the graph unchanged
(the identity) runs the plan unfused, as ``optimize_graph=False`` does; one that
rewrites the graph raises ``NotImplementedError``, since the engine cannot run a
graph rewritten in Python.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = [
    "DEFAULT_MAX_TOTAL_NUM_INPUT_BLOCKS",
    "DEFAULT_MAX_TOTAL_SOURCE_ARRAYS",
    "fusion_of",
    "multiple_inputs_optimize_dag",
    "simple_optimize_dag",
]

DEFAULT_MAX_TOTAL_SOURCE_ARRAYS = 4
DEFAULT_MAX_TOTAL_NUM_INPUT_BLOCKS = 10

#: The key of a graph's attributes under which these functions record the fusion
#: they ask for (``dag.graph[FUSION_KEY]``).
FUSION_KEY = "cubego_fusion"


def _marked(dag: Any, fusion: dict) -> Any:
    out = dag.copy()
    out.graph[FUSION_KEY] = dict(fusion)
    return out


def _simple_fusion() -> dict:
    return {
        "single_input_fusion": True,
        "max_total_source_arrays": 0,
        "max_total_num_input_blocks": 0,
    }


def _multiple_inputs_fusion(
    max_total_source_arrays: int = DEFAULT_MAX_TOTAL_SOURCE_ARRAYS,
    max_total_num_input_blocks: int = DEFAULT_MAX_TOTAL_NUM_INPUT_BLOCKS,
    always_fuse: Any = None,
    never_fuse: Any = None,
) -> dict:
    if always_fuse or never_fuse:
        raise NotImplementedError(
            "multiple_inputs_optimize_dag: always_fuse and never_fuse name Cubed's operations, "
            "which cubego's engine does not have; use max_total_source_arrays and "
            "max_total_num_input_blocks (or optimize_graph=False)"
        )
    for name, value in (
        ("max_total_source_arrays", max_total_source_arrays),
        ("max_total_num_input_blocks", max_total_num_input_blocks),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    return {
        "max_total_source_arrays": max_total_source_arrays,
        "max_total_num_input_blocks": max_total_num_input_blocks,
    }


def simple_optimize_dag(dag: Any, array_names: Any = None) -> Any:
    """Fuse single-input chains only (Cubed's map-blocks fusion).

    As ``optimize_function=`` it selects that fusion in the engine; called on a
    plan's graph it returns a copy recording it (``dag.graph["cubego_fusion"]``).
    """
    return _marked(dag, _simple_fusion())


def multiple_inputs_optimize_dag(
    dag: Any,
    array_names: Any = None,
    *,
    max_total_source_arrays: int = DEFAULT_MAX_TOTAL_SOURCE_ARRAYS,
    max_total_num_input_blocks: int = DEFAULT_MAX_TOTAL_NUM_INPUT_BLOCKS,
    always_fuse: Any = None,
    never_fuse: Any = None,
) -> Any:
    """Fuse operations with several inputs within Cubed's bounds (the default fusion).

    As ``optimize_function=`` (or a ``functools.partial`` of it with the bounds) it
    selects that fusion in the engine; called on a plan's graph it returns a copy
    recording it. ``always_fuse`` and ``never_fuse`` raise ``NotImplementedError``.
    """
    fusion = _multiple_inputs_fusion(
        max_total_source_arrays, max_total_num_input_blocks, always_fuse, never_fuse
    )
    return _marked(dag, fusion)


def _known_name(fn: Any) -> str | None:
    """The name of one of the optimizers, this module's or Cubed's own (code that imports
    ``cubed.core.optimization`` while cubego is imported as ``cubed``), else None."""
    name = getattr(fn, "__name__", None)
    module = getattr(fn, "__module__", None)
    known = ("simple_optimize_dag", "multiple_inputs_optimize_dag")
    if name in known and module in (__name__, "cubed.core.optimization"):
        return name
    return None


def fusion_of(optimize_function: Any) -> dict | None:
    """The engine's fusion options for one of the optimizers, this module's or Cubed's
    (or a partial of one), or None for any other callable."""
    fn, args, keywords = optimize_function, (), {}
    if isinstance(fn, functools.partial):
        fn, args, keywords = fn.func, fn.args, dict(fn.keywords or {})
    name = _known_name(fn)
    if name == "simple_optimize_dag":
        keywords.pop("array_names", None)
        if args or keywords:
            raise TypeError(
                f"simple_optimize_dag takes no options, got {args or ''}{keywords or ''}"
            )
        return _simple_fusion()
    if name == "multiple_inputs_optimize_dag":
        keywords.pop("array_names", None)
        if args:
            raise TypeError("multiple_inputs_optimize_dag: give its options as keywords")
        try:
            return _multiple_inputs_fusion(**keywords)
        except TypeError as e:
            raise TypeError(f"multiple_inputs_optimize_dag: {e}") from e
    return None
