"""``MemrayCallback``: memray's view of each operation's first task, at Cubed's module path.

With this callback among a computation's callbacks, the first task (block
``(0, ..., 0)``) of every operation runs alone under ``memray.Tracker`` and
writes ``history/<compute_id>/memray/<op>.bin`` (Cubed's layout), native
frames included. In-process executors (``threads``, ``single-threaded``) then
run the computation one batch at a time in the calling thread so that the
traced task has the process to itself; the ``processes`` executor traces in its
workers. After the computation the callback reads the traces: the allocations
of at least ``mem_threshold`` bytes (and their frees) and memray's statistics,
per operation.

What memray sees of a cubego task (docs/execution.md, "Tracing tasks with
memray"): every allocation through the C heap — chunk buffers, which come from
C ``malloc``, numpy arrays made by Python chunk functions, Python objects —
but not the Go runtime's heap (Zarr codecs' scratch space, Go slices), which
Go maps with its own system calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from cubego.diagnostics._optional import require
from cubego.runtime.types import Callback, ComputeEndEvent

__all__ = ["Allocation", "AllocationType", "MemrayCallback"]


class AllocationType(Enum):
    """How memory was taken or given back: memray's ``AllocatorType`` names."""

    MALLOC = "MALLOC"
    FREE = "FREE"
    CALLOC = "CALLOC"
    REALLOC = "REALLOC"
    POSIX_MEMALIGN = "POSIX_MEMALIGN"
    ALIGNED_ALLOC = "ALIGNED_ALLOC"
    MEMALIGN = "MEMALIGN"
    VALLOC = "VALLOC"
    PVALLOC = "PVALLOC"
    MMAP = "MMAP"
    MUNMAP = "MUNMAP"
    PYMALLOC_MALLOC = "PYMALLOC_MALLOC"
    PYMALLOC_CALLOC = "PYMALLOC_CALLOC"
    PYMALLOC_REALLOC = "PYMALLOC_REALLOC"
    PYMALLOC_FREE = "PYMALLOC_FREE"


@dataclass
class Allocation:
    """One large allocation (or its release) in a trace; ``object_id`` pairs the two."""

    object_id: str
    allocation_type: AllocationType
    memory: int
    address: int | None = None
    call: str | None = None
    """Where it was made: ``function;file;line`` of the innermost frame."""

    def __repr__(self) -> str:
        parts = (self.memory or "", self.address or "", self.call or "")
        return f"{self.object_id} {self.allocation_type.name} " + " ".join(map(str, parts))


class MemrayCallback(Callback):
    """Trace each operation's first task with memray; summarise the traces at the end.

    Parameters
    ----------
    mem_threshold : int, default 50_000_000
        Allocations of at least this many bytes are listed (with their frees)
        in :attr:`allocations` and printed.
    directory : str or Path, default "history"
        Where the traces go: ``<directory>/<compute_id>/memray/<op>.bin``.

    Attributes
    ----------
    allocations : dict of str to list of Allocation
        Per operation name, its trace's allocations over the threshold.
    stats : dict of str to memray Stats
        Per operation name, memray's statistics of its trace
        (``peak_memory_allocated``, ``total_memory_allocated``,
        ``total_num_allocations``, ``allocation_count_by_size``, ...).

    Raises
    ------
    ImportError
        If memray is not installed (``pip install memray``).
    ValueError
        If *mem_threshold* is not a non-negative integer.
    """

    def __init__(self, mem_threshold: int = 50_000_000, directory: str | Path = "history"):
        self._memray = require("memray", type(self).__name__)
        if isinstance(mem_threshold, bool) or not isinstance(mem_threshold, int):
            raise TypeError(f"mem_threshold must be an int, got {mem_threshold!r}")
        if mem_threshold < 0:
            raise ValueError(f"mem_threshold must be non-negative, got {mem_threshold}")
        self.mem_threshold = mem_threshold
        self.memray_directory = Path(directory)
        self.allocations: dict[str, list[Allocation]] = {}
        self.stats: dict[str, Any] = {}

    def on_compute_end(self, event: ComputeEndEvent) -> None:
        from memray._memray import compute_statistics

        traces = self.memray_directory / event.compute_id / "memray"
        self.allocations, self.stats = {}, {}
        for op in event.plan.ops:
            path = traces / f"{op.name}.bin"
            if not path.is_file():  # an operation with no block (0, ..., 0), or none run
                continue
            allocations = list(allocations_over_threshold(path, self.mem_threshold))
            stats = compute_statistics(str(path))
            print(path)
            for allocation in allocations:
                print(allocation)
            print(f"Peak memory allocated: {stats.peak_memory_allocated}")
            print()
            self.allocations[op.name] = allocations
            self.stats[op.name] = stats


def allocations_over_threshold(path: str | Path, mem_threshold: int) -> Any:
    """Yield the allocations of at least *mem_threshold* bytes in the trace *path*,
    each followed (when it happens in the trace) by its release."""
    import memray

    frees = {"FREE", "MUNMAP", "PYMALLOC_FREE"}
    live: dict[int, Allocation] = {}
    count = 0
    with memray.FileReader(str(path)) as reader:
        for record in reader.get_allocation_records():
            kind = AllocationType[memray.AllocatorType(record.allocator).name]
            if kind.name in frees:
                allocation = live.pop(record.address, None)
                if allocation is not None:
                    yield Allocation(
                        allocation.object_id,
                        kind,
                        allocation.memory,
                        address=record.address,
                    )
            elif record.size >= mem_threshold:
                allocation = Allocation(
                    f"object-{count:03}",
                    kind,
                    record.size,
                    address=record.address,
                    call=_innermost(record),
                )
                count += 1
                live[record.address] = allocation
                yield allocation


def _innermost(record: Any) -> str | None:
    """``function;file;line`` of the innermost frame memray recorded, Python or native."""
    for frames in (record.hybrid_stack_trace, record.stack_trace):
        try:
            stack = frames(max_stacks=1)
        except Exception:  # noqa: BLE001, S112 - no native frames in a trace without them
            continue
        if stack:
            func, file, line = stack[0]
            return f"{func};{file};{line}"
    return None
