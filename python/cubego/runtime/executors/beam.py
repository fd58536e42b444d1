"""The Apache Beam executor: calls run as Beam pipelines, many calls per pipeline.

>>> from cubego.runtime.executors.beam import BeamExecutor
>>> BeamExecutor(pipeline_options={"direct_num_workers": 2})
BeamExecutor(pipeline_options={'direct_num_workers': 2})

Starting a pipeline costs from half a second (DirectRunner in memory) to
minutes (a Dataflow job), so a :class:`BeamPipelineSession` gathers the calls
submitted within ``BATCH_WINDOW`` seconds of each other, or while its previous
pipeline runs, and runs them as one pipeline,
``Create(calls) | Reshuffle() | Map(run)``. Each call writes its outcome (its
result, or the exception it raised, with its traceback) to a file of its own
under the session's result directory, and its future is resolved from that
file when the pipeline ends: a call that raises fails only its own future, and
never makes the runner retry it.

Each pipeline runs in a process of its own (``python -c``, its own process
group), so the session can always end it: when a DirectRunner worker process
dies, Beam's runner would wait forever for the dead worker; the pipeline
process notices the worker's exit, stops, and the calls of that pipeline that
had not written their outcome fail with a ``RuntimeError`` naming the worker's
exit code. Calls that had finished keep their results.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from typing import Any

try:
    from apache_beam.io.filesystems import FileSystems
    from apache_beam.options.pipeline_options import (
        DirectOptions,
        GoogleCloudOptions,
        PipelineOptions,
        StandardOptions,
        WorkerOptions,
    )
except ModuleNotFoundError as err:  # pragma: no cover - exercised in a test with beam hidden
    raise ModuleNotFoundError(
        "the beam executor needs Apache Beam: pip install 'cubego[beam]'", name=err.name
    ) from err

from cubego.runtime.remote import RemoteExecutor, Session, check_worker_memory, machine_memory

__all__ = ["BeamExecutor", "BeamPipelineSession"]

#: Calls submitted within this many seconds of the first pending one share its pipeline.
BATCH_WINDOW = 0.05

#: Runners whose workers are processes or threads of this machine.
LOCAL_RUNNERS = ("DirectRunner", "BundleBasedDirectRunner", "SwitchingDirectRunner", "PrismRunner")

#: Exit status of a pipeline process whose SDK worker process died.
WORKER_LOST = 70

#: How long a pipeline process may take to stop (e.g. cancel its Dataflow job) before it is killed.
STOP_GRACE = 30.0


class BeamExecutor(RemoteExecutor):
    """Run calls as Apache Beam pipelines (DirectRunner here, Dataflow in the cloud).

    Options:

    runner : str, optional
        The runner's name: ``"DirectRunner"`` (default), ``"DataflowRunner"``, ...
        It overrides ``pipeline_options``' ``runner``.
    pipeline_options : dict or apache_beam.options.pipeline_options.PipelineOptions, optional
        The pipelines' options, e.g. ``{"direct_num_workers": 2,
        "direct_running_mode": "multi_processing"}``, or Dataflow's
        ``project``, ``region``, ``temp_location`` (where calls write their
        outcomes; required by any runner that is not local), ``machine_type``,
        ``max_num_workers``, ``sdk_container_image``.
    max_workers : int, optional
        How many calls to keep in flight; default: the pipelines' parallelism
        (DirectRunner: ``direct_num_workers``, 0 meaning every CPU, and 1 in
        ``in_memory`` mode; other runners: ``max_num_workers`` (else
        ``num_workers``, else 1) times the vCPUs of ``machine_type``).
    """

    name = "beam"

    def __init__(self, **options: Any):
        runner = options.get("runner")
        if runner is not None and not isinstance(runner, str):
            raise TypeError(f"BeamExecutor: runner must be a runner's name, got {runner!r}")
        pipeline_options = options.get("pipeline_options")
        if pipeline_options is not None and not isinstance(
            pipeline_options, dict | PipelineOptions
        ):
            raise TypeError(
                "BeamExecutor: pipeline_options must be a dict or a PipelineOptions, "
                f"got {pipeline_options!r}"
            )
        max_workers = options.get("max_workers")
        if max_workers is not None and (
            isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1
        ):
            raise ValueError(
                f"BeamExecutor: max_workers must be a positive int, got {max_workers!r}"
            )
        super().__init__(**options)

    def pipeline_options(self) -> PipelineOptions:
        """Its pipelines' options (a new object: the given ones are not changed)."""
        given = self.options.get("pipeline_options")
        if isinstance(given, PipelineOptions):
            values = given.get_all_options(drop_default=True, retain_unknown_options=True)
        else:
            values = dict(given or {})
        values["runner"] = self.options.get("runner") or values.get("runner") or "DirectRunner"
        return PipelineOptions(**values)

    def open(self, allowed_mem: int) -> BeamPipelineSession:
        """Check the workers' memory, make the result directory and return a session.

        Raises ``ValueError`` if a local runner's worker has less than
        *allowed_mem* bytes of memory (the machine's RAM divided by the
        runner's parallelism), or if a runner that is not local has no
        ``temp_location`` to write the calls' outcomes to. Nothing starts
        before the first call: each pipeline starts its own workers.
        """
        if isinstance(allowed_mem, bool) or not isinstance(allowed_mem, int) or allowed_mem <= 0:
            raise ValueError(f"allowed_mem must be a positive number of bytes, got {allowed_mem!r}")
        options = self.pipeline_options()
        runner = options.view_as(StandardOptions).runner
        parallelism = _parallelism(options)
        if runner in LOCAL_RUNNERS:
            ram = machine_memory()
            check_worker_memory(
                "beam",
                None if ram is None else ram // parallelism,
                allowed_mem,
                f"total RAM / {parallelism} {runner} workers",
            )
            result_dir = None
        else:
            temp_location = options.view_as(GoogleCloudOptions).temp_location
            if not temp_location:
                raise ValueError(
                    f"beam: the {runner} needs pipeline_options' temp_location (e.g. "
                    "gs://bucket/tmp), where the calls write their outcomes"
                )
            result_dir = FileSystems.join(temp_location, f"cubego-{uuid.uuid4().hex}")
        max_workers = self.options.get("max_workers") or parallelism
        return BeamPipelineSession(options, max_workers, result_dir)


class _Call:
    __slots__ = ("id", "fn", "args", "future")

    def __init__(self, call_id: int, fn: Callable[..., Any], args: tuple):
        self.id = call_id
        self.fn = fn
        self.args = args
        self.future: concurrent.futures.Future = concurrent.futures.Future()


class BeamPipelineSession(Session):
    """Calls gathered into Beam pipelines, one pipeline at a time, each in its own process."""

    def __init__(self, options: PipelineOptions, max_workers: int, result_dir: str | None):
        self.options = options
        self.max_workers = max_workers
        self._local_dir = tempfile.mkdtemp(prefix="cubego-beam-")
        # Removes the directory at close, or at exit for a session never closed.
        self._remove_local_dir = weakref.finalize(self, shutil.rmtree, self._local_dir, True)
        self.result_dir = result_dir or os.path.join(self._local_dir, "results")
        if result_dir is None:
            os.mkdir(self.result_dir)
        self.pipelines = 0
        """How many pipelines the session has started."""
        self._ids = itertools.count()
        self._pending: list[_Call] = []
        self._closed = False
        self._process: subprocess.Popen | None = None
        self._changed = threading.Condition()
        self._dispatcher = threading.Thread(
            target=self._dispatch, name="cubego-beam-pipelines", daemon=True
        )
        self._dispatcher.start()

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> concurrent.futures.Future:
        """Run ``fn(*args)`` in the next pipeline; its future resolves when that pipeline ends."""
        with self._changed:
            if self._closed:
                raise RuntimeError("beam: submit on a closed session")
            call = _Call(next(self._ids), fn, args)
            self._pending.append(call)
            self._changed.notify()
        return call.future

    def _dispatch(self) -> None:
        while True:
            with self._changed:
                while not self._pending and not self._closed:
                    self._changed.wait()
                if self._closed:
                    return
            time.sleep(BATCH_WINDOW)  # let the calls submitted together join this pipeline
            with self._changed:
                calls, self._pending = self._pending, []
            calls = [c for c in calls if c.future.set_running_or_notify_cancel()]
            if calls:
                self._run_pipeline(calls)

    def _run_pipeline(self, calls: list[_Call]) -> None:
        self.pipelines += 1
        job_dir = os.path.join(self._local_dir, f"pipeline-{self.pipelines}")
        os.mkdir(job_dir)
        paths = {c.id: FileSystems.join(self.result_dir, str(c.id)) for c in calls}
        try:
            with open(os.path.join(job_dir, "job.pickle"), "wb") as f:
                pickle.dump(
                    (self.options, self.result_dir, [(c.id, c.fn, c.args) for c in calls]), f
                )
            reason = self._run_process(job_dir)
        except Exception as err:  # the calls could not be pickled, or no process started
            reason = f"{type(err).__name__}: {err}"
        for call in calls:
            outcome = _read_outcome(paths[call.id])
            if outcome is None:
                call.future.set_exception(
                    RuntimeError(f"beam: the call's pipeline failed before it finished: {reason}")
                )
            elif outcome[0]:
                call.future.set_result(outcome[1])
            else:
                _, err, remote_traceback = outcome
                err.__cause__ = RemoteTraceback(remote_traceback)
                call.future.set_exception(err)
        with contextlib.suppress(Exception):
            FileSystems.delete([p for p in paths.values() if FileSystems.exists(p)])
        shutil.rmtree(job_dir, ignore_errors=True)

    def _run_process(self, job_dir: str) -> str:
        """Run the pipeline of *job_dir* in a new process group; why it failed, if it did."""
        code = "from cubego.runtime.executors.beam import _pipeline_main; _pipeline_main()"
        with self._changed:
            if self._closed:
                return "the session was closed"
            # Beam's runner and SDK workers make temporary directories
            # (beam-temp*, beam-pipeline-temp*, tmp*) that they leave behind
            # when a pipeline ends: they go in the job's directory, which is
            # deleted with it.
            tmp = os.path.join(job_dir, "tmp")
            os.mkdir(tmp)
            self._process = subprocess.Popen(
                [sys.executable, "-c", code, job_dir],
                start_new_session=True,
                env={**os.environ, "TMPDIR": tmp},
            )
        try:
            returncode = self._process.wait()
        finally:
            # The SDK worker processes of a pipeline that failed may be left: end them.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)
            with self._changed:
                self._process = None
                closed = self._closed
        if returncode == 0:
            return ""
        try:
            with open(os.path.join(job_dir, "failure")) as f:
                reason = f.read().strip()
        except FileNotFoundError:
            reason = f"the pipeline process exited with status {returncode}"
        return f"the session was closed ({reason})" if closed else reason

    def close(self) -> None:
        """Cancel the calls not in a pipeline yet, stop the running pipeline, delete outcomes."""
        with self._changed:
            self._closed = True
            pending, self._pending = self._pending, []
            process = self._process
            self._changed.notify_all()
        for call in pending:
            call.future.cancel()
        if process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)  # cancels a Dataflow job, ends a local one
            try:
                process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
        self._dispatcher.join()
        self._remove_local_dir()
        if not self.result_dir.startswith(self._local_dir):
            with contextlib.suppress(Exception):
                FileSystems.delete([self.result_dir])


class RemoteTraceback(Exception):
    """The traceback of a call that raised on a worker (the ``__cause__`` of its exception)."""

    def __str__(self) -> str:
        return self.args[0]


def _read_outcome(path: str) -> tuple | None:
    """A call's outcome from its file; None if it wrote none (or an unreadable one)."""
    try:
        with FileSystems.open(path) as f:
            return pickle.loads(f.read())
    except Exception:
        return None


def _parallelism(options: PipelineOptions) -> int:
    """How many calls the pipelines run at once."""
    if (options.view_as(StandardOptions).runner or "DirectRunner") in LOCAL_RUNNERS:
        direct = options.view_as(DirectOptions)
        if direct.direct_running_mode == "in_memory":
            return 1
        return direct.direct_num_workers or os.cpu_count() or 1
    worker = options.view_as(WorkerOptions)
    workers = worker.max_num_workers or worker.num_workers or 1
    return workers * _vcpus(worker.machine_type)


def _vcpus(machine_type: str | None) -> int:
    """vCPUs of a Compute Engine machine type: ``n1-standard-4`` → 4, ``custom-8-30720`` → 8."""
    if not machine_type:
        return 1  # Dataflow's default for batch jobs, n1-standard-1
    parts = machine_type.split("-")
    number = parts[1] if parts[0] == "custom" else parts[-1]
    return int(number) if number.isdigit() else 1


def _outcome_writer(result_dir: str) -> Callable[[tuple], int]:
    """The pipeline's ``Map``: run a call, write its outcome to ``result_dir/<call id>``.

    Defined inside a function so that Beam pickles it by value. The outcome is
    ``(True, result)`` or ``(False, exception, traceback)``: an exception is
    returned, not raised, so it fails only its own call and the runner never
    retries it. The file is written under a temporary name and renamed, so a
    worker that dies while writing leaves no partial outcome.
    """

    def run(call: tuple) -> int:
        import pickle
        import traceback
        import uuid

        from apache_beam.io.filesystems import FileSystems

        call_id, fn, args = call
        try:
            data = pickle.dumps((True, fn(*args)))
        except Exception as err:
            remote_traceback = traceback.format_exc()
            try:
                data = pickle.dumps((False, err, remote_traceback))
                pickle.loads(data)
            except Exception:
                error = RuntimeError(f"{type(err).__name__}: {err}")
                data = pickle.dumps((False, error, remote_traceback))
        path = FileSystems.join(result_dir, str(call_id))
        partial = f"{path}.{uuid.uuid4().hex}.partial"
        with FileSystems.create(partial) as f:
            f.write(data)
        FileSystems.rename([partial], [path])
        return call_id

    return run


def _pipeline_main() -> None:
    """A pipeline process: run the pipeline of the job directory ``sys.argv[1]``.

    Exits 0 when the pipeline finished, ``WORKER_LOST`` when one of its SDK
    worker processes died (Beam's runner would wait for it forever), 1 when it
    failed otherwise; the reason is in ``<job dir>/failure``.
    """
    import apache_beam as beam

    job_dir = sys.argv[1]

    def fail(reason: str, status: int) -> None:
        with open(os.path.join(job_dir, "failure"), "w") as f:
            f.write(reason)
        os._exit(status)

    def on_thread_error(args: threading.ExceptHookArgs) -> None:
        # Beam's local job service raises this in the thread watching a worker process.
        if isinstance(args.exc_value, RuntimeError) and "Worker subprocess exited" in str(
            args.exc_value
        ):
            fail(f"a Beam SDK worker process died: {args.exc_value}", WORKER_LOST)
        threading.__excepthook__(args)

    threading.excepthook = on_thread_error
    with open(os.path.join(job_dir, "job.pickle"), "rb") as f:
        options, result_dir, calls = pickle.load(f)
    pipeline = beam.Pipeline(options=options)
    _ = (
        pipeline
        | "calls" >> beam.Create(calls)
        | "spread" >> beam.Reshuffle()
        | "run" >> beam.Map(_outcome_writer(result_dir))
    )
    result = None

    def on_term(signum: int, frame: Any) -> None:
        if result is not None:
            with contextlib.suppress(Exception):
                result.cancel()  # a Dataflow job
        fail("the pipeline was cancelled", 1)

    signal.signal(signal.SIGTERM, on_term)
    try:
        result = pipeline.run()
        state = result.wait_until_finish()
    except Exception as err:
        fail(f"{type(err).__name__}: {err}", 1)
    if state != "DONE":
        fail(f"the pipeline ended in state {state}", 1)
