"""``HistoryCallback``: CSV files of a computation's plan, tasks and memory."""

from __future__ import annotations

import csv
from dataclasses import asdict
from pathlib import Path

from cubego.runtime.types import Callback, ComputeEndEvent, ComputeStartEvent, TaskEndEvent

__all__ = ["HistoryCallback"]

PLAN_COLUMNS = [
    "name",
    "func",
    "kind",
    "num_tasks",
    "stage",
    "projected_mem",
    "reserved_mem",
    "allowed_mem",
    "inputs",
    "outputs",
    "nbytes_read",
    "nbytes_written",
    "exceeds_memory",
]
EVENT_COLUMNS = [
    "name",
    "func",
    "num_tasks",
    "block",
    "task_create_tstamp",
    "function_start_tstamp",
    "function_end_tstamp",
    "task_result_tstamp",
    "peak_measured_mem_start",
    "peak_measured_mem_end",
    "projected_mem",
    "peak_allocated",
    "attempts",
    "backup",
    "dropped",
]
STATS_COLUMNS = [
    "name",
    "func",
    "num_tasks",
    "projected_mem",
    "reserved_mem",
    "peak_measured_mem_start_max",
    "peak_measured_mem_end_max",
    "peak_measured_mem_delta_max",
    "peak_allocated_max",
    "projected_mem_utilization",
    "allocated_mem_utilization",
]


def _max(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


class HistoryCallback(Callback):
    """Record a computation in ``<directory>/<compute_id>/`` as three CSV files.

    * ``plan.csv``: one row per operation: function, tasks, stage, projected memory,
      the spec's reserved and allowed memory, inputs and outputs, bytes moved.
    * ``events.csv``: one row per task end event: timestamps (seconds since the
      epoch), the process's peak measured memory before and after the task, the
      task's projected memory and its peak allocation from the engine.
    * ``stats.csv``: one row per operation with the maxima of the measured memory and

      - ``projected_mem_utilization`` = (``peak_measured_mem_end_max`` - reserved_mem)
        / (projected_mem - reserved_mem), Cubed's figure: the process's measured
        peak, which with several workers includes the tasks running beside it;
      - ``allocated_mem_utilization`` = ``peak_allocated_max`` / (projected_mem -
        reserved_mem): the largest single task's chunk buffers against its
        projection, which the memory model keeps at or below 1.

    The paths are in ``plan_df_path``, ``events_df_path`` and ``stats_df_path`` after
    the computation. Nothing is written for a computation that fails.
    """

    def __init__(self, directory: str | Path = "history"):
        self.directory = Path(directory)
        self.plan: list[dict] = []
        self.events: list[dict] = []

    def on_compute_start(self, event: ComputeStartEvent) -> None:
        plan = event.plan
        self.plan = [
            {
                "name": op.name,
                "func": op.func,
                "kind": op.kind,
                "num_tasks": op.num_tasks,
                "stage": op.stage,
                "projected_mem": op.projected_mem,
                "reserved_mem": plan.reserved_mem,
                "allowed_mem": plan.allowed_mem,
                "inputs": " ".join(op.inputs),
                "outputs": " ".join(op.outputs),
                "nbytes_read": op.nbytes_read,
                "nbytes_written": op.nbytes_written,
                "exceeds_memory": op.exceeds_memory,
            }
            for op in plan.ops
        ]
        self.events = []

    def on_task_end(self, event: TaskEndEvent) -> None:
        row = asdict(event)
        if row["block"] is not None:
            row["block"] = " ".join(str(b) for b in row["block"])
        self.events.append({k: row[k] for k in EVENT_COLUMNS})

    def stats(self) -> list[dict]:
        """Per-operation memory statistics (the rows of ``stats.csv``)."""
        rows = []
        for op in self.plan:
            evs = [e for e in self.events if e["name"] == op["name"]]
            start = _max([e["peak_measured_mem_start"] for e in evs])
            end = _max([e["peak_measured_mem_end"] for e in evs])
            delta = _max(
                [
                    e["peak_measured_mem_end"] - e["peak_measured_mem_start"]
                    for e in evs
                    if e["peak_measured_mem_end"] is not None
                    and e["peak_measured_mem_start"] is not None
                ]
            )
            allocated = _max([e["peak_allocated"] for e in evs])
            data_mem = op["projected_mem"] - op["reserved_mem"]
            rows.append(
                {
                    "name": op["name"],
                    "func": op["func"],
                    "num_tasks": op["num_tasks"],
                    "projected_mem": op["projected_mem"],
                    "reserved_mem": op["reserved_mem"],
                    "peak_measured_mem_start_max": start,
                    "peak_measured_mem_end_max": end,
                    "peak_measured_mem_delta_max": delta,
                    "peak_allocated_max": allocated,
                    "projected_mem_utilization": (
                        (end - op["reserved_mem"]) / data_mem
                        if end is not None and data_mem > 0
                        else None
                    ),
                    "allocated_mem_utilization": (
                        allocated / data_mem if allocated is not None and data_mem > 0 else None
                    ),
                }
            )
        return rows

    def on_compute_end(self, event: ComputeEndEvent) -> None:
        history = self.directory / event.compute_id
        history.mkdir(parents=True, exist_ok=True)
        self.plan_df_path = history / "plan.csv"
        self.events_df_path = history / "events.csv"
        self.stats_df_path = history / "stats.csv"
        _write(self.plan_df_path, PLAN_COLUMNS, self.plan)
        _write(self.events_df_path, EVENT_COLUMNS, self.events)
        _write(self.stats_df_path, STATS_COLUMNS, self.stats())


def _write(path: Path, columns: list[str], rows: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
