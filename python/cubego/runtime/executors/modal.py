"""The Modal executor: batches of tasks run as calls of a Modal function.

``open`` builds a Modal ``App`` (named ``cubego``) with one function, the
module-level :func:`_run_call`, in a container image with cubego installed,
the memory the plan needs, the cloud and region asked for, a timeout and **no
Modal retries** (the Go engine retries), then runs the app (``app.run()``).
Each call the engine hands to the session is one ``function.remote(fn, args)``
on a thread of the session's pool, so at most ``max_workers`` run at once.

Nothing is built when this module is imported, unlike Cubed's, which defines
its app at import from the configuration: the options are those of the
executor, and Modal finds :func:`_run_call` in the container by importing this
module (functions that are not decorated at import are supported by Modal).

:meth:`ModalExecutor.open_local` builds the same app and function but runs each
call's body in this process with ``function.local`` after a cloudpickle round
trip of its arguments and result (what crosses the wire): the hook the tests
use, and a way to debug a plan without an account.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import importlib
import importlib.metadata
import re
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import cloudpickle

from cubego.runtime.remote import (
    PASSED_OVER,
    RemoteExecutor,
    Session,
    check_worker_memory,
)

__all__ = ["ModalExecutor", "ModalSession"]

_MODAL_OPTIONS = frozenset(
    {
        "cloud",
        "region",
        "memory",
        "timeout",
        "secret",
        "secrets",
        "requirements_file",
        "image",
        "enable_output",
    }
)

#: Cubed's default secret per cloud (its docs tell users to create them).
_DEFAULT_SECRETS = {"aws": "my-aws-secret", "gcp": "my-googlecloud-secret"}

_DEFAULT_MEMORY = "2GB"  # Cubed's
_DEFAULT_TIMEOUT = 180  # seconds, Cubed's
_DEFAULT_MAX_WORKERS = 100
_MIB = 1 << 20

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*$")


def _memory_bytes(value: Any) -> int:
    """Bytes from an int or a size string (``"2GB"``, ``"4GiB"``) of the ``memory`` option."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, str):
        m = _SIZE.match(value)
        if m and m.group(2).lower() in _UNITS:
            n = float(m.group(1)) * _UNITS[m.group(2).lower()]
            if n > 0:
                return int(n)
    raise ValueError(
        f"modal: memory must be a positive number of bytes or a size such as '2GB' or "
        f"'4GiB', got {value!r}"
    )


def _import_modal() -> Any:
    try:
        return importlib.import_module("modal")
    except ImportError as e:
        raise ModuleNotFoundError(
            f"the modal executor needs the modal package: pip install 'cubego[modal]' ({e})",
            name="modal",
        ) from e


def _run_call(call_fn: Callable[..., Any], call_args: tuple) -> Any:
    """What a Modal container runs: ``call_fn(*call_args)``."""
    return call_fn(*call_args)


def cubego_requirement() -> str:
    """The pip requirement of the cubego this process runs, for the default image."""
    try:
        return f"cubego=={importlib.metadata.version('cubego')}"
    except importlib.metadata.PackageNotFoundError:
        return "cubego"


class ModalExecutor(RemoteExecutor):
    """Run tasks as calls of a Modal function.

    Options, as Cubed's ``ModalExecutor``:

    ``region`` (required)
        Where containers run, e.g. ``"us-east-1"`` (next to the ``work_dir`` bucket).
    ``cloud``
        ``"aws"`` (default) or ``"gcp"``.
    ``memory``
        Memory of a container, bytes or a size string (default ``"2GB"``); at
        least ``allowed_mem``. Modal gets it rounded up to whole MiB.
    ``timeout``
        Seconds a call may run (default 180).
    ``secret`` / ``secrets``
        A Modal secret name, or a list of names or ``modal.Secret`` objects,
        holding the storage credentials as environment variables (default:
        Cubed's ``"my-aws-secret"`` on AWS, ``"my-googlecloud-secret"`` on
        GCP; ``secrets=[]`` for none).
    ``requirements_file`` / ``image``
        The container image: pip requirements (they must include cubego) or a
        ``modal.Image`` of your own; default: Debian slim with this Python
        version and ``pip install cubego==<this version>``.
    ``enable_output``
        Show Modal's output (image builds, container logs) while the app runs.
    ``max_workers``
        Calls in flight at once (default 100).

    ``retries`` is the engine's option: Modal's own retries are always 0.
    """

    name = "modal"

    def __init__(self, **options: Any):
        super().__init__(**options)
        unknown = sorted(set(options) - _MODAL_OPTIONS - PASSED_OVER)
        if unknown:
            raise TypeError(
                f"modal: unknown option(s) {', '.join(unknown)}; known: "
                f"{', '.join(sorted(_MODAL_OPTIONS))} and the engine's"
            )
        if not isinstance(options.get("region"), str) or not options["region"]:
            raise ValueError("modal: the region option is required, e.g. region='us-east-1'")
        if options.get("cloud", "aws") not in _DEFAULT_SECRETS:
            raise ValueError(f"modal: cloud must be 'aws' or 'gcp', got {options['cloud']!r}")
        _memory_bytes(options.get("memory", _DEFAULT_MEMORY))
        timeout = options.get("timeout", _DEFAULT_TIMEOUT)
        if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout <= 0:
            raise ValueError(f"modal: timeout must be a positive int of seconds, got {timeout!r}")
        if "secret" in options and "secrets" in options:
            raise ValueError("modal: give secret (one name) or secrets (a list), not both")
        secret = options.get("secret")
        if secret is not None and not isinstance(secret, str):
            raise TypeError(f"modal: secret must be a secret's name, got {secret!r}")
        secrets = options.get("secrets", [])
        if isinstance(secrets, str) or not isinstance(secrets, Sequence):
            raise TypeError(f"modal: secrets must be a list of secrets or names, got {secrets!r}")
        if "requirements_file" in options and "image" in options:
            raise ValueError("modal: give requirements_file or image, not both")
        workers = options.get("max_workers", _DEFAULT_MAX_WORKERS)
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ValueError(f"modal: max_workers must be a positive int, got {workers!r}")
        _import_modal()

    @property
    def memory(self) -> int:
        """A container's memory in bytes, whole MiB as Modal allocates it."""
        requested = _memory_bytes(self.options.get("memory", _DEFAULT_MEMORY))
        return -(-requested // _MIB) * _MIB

    def image(self) -> Any:
        """The container image: the user's, from the requirements file, or with cubego."""
        modal = _import_modal()
        if self.options.get("image") is not None:
            return self.options["image"]
        python = f"{sys.version_info.major}.{sys.version_info.minor}"  # cloudpickle needs it
        base = modal.Image.debian_slim(python_version=python)
        if self.options.get("requirements_file"):
            return base.pip_install_from_requirements(self.options["requirements_file"])
        return base.pip_install(cubego_requirement())

    def secrets(self) -> list[Any]:
        """The Modal secrets the containers get, as ``modal.Secret`` objects."""
        modal = _import_modal()
        if "secrets" in self.options:
            names = list(self.options["secrets"])
        elif self.options.get("secret") is not None:
            names = [self.options["secret"]]
        else:
            names = [_DEFAULT_SECRETS[self.options.get("cloud", "aws")]]
        return [modal.Secret.from_name(s) if isinstance(s, str) else s for s in names]

    def build(self, allowed_mem: int) -> tuple[Any, Any]:
        """The memory check, then the Modal ``App`` and its function; nothing runs yet."""
        check_worker_memory(
            "modal",
            self.memory,
            allowed_mem,
            f"memory={self.options.get('memory', _DEFAULT_MEMORY)!r}",
        )
        modal = _import_modal()
        app = modal.App("cubego", include_source=False)  # the image's cubego, not this tree
        function = app.function(
            image=self.image(),
            secrets=self.secrets(),
            cpu=1.0,
            memory=self.memory // _MIB,
            retries=0,
            timeout=self.options.get("timeout", _DEFAULT_TIMEOUT),
            cloud=self.options.get("cloud", "aws"),
            region=self.options["region"],
        )(_run_call)
        return app, function

    def open(self, allowed_mem: int) -> ModalSession:
        """Build the app and run it (``app.run()``): needs a Modal account and token."""
        app, function = self.build(allowed_mem)
        return ModalSession(
            function,
            app=app,
            max_workers=self.options.get("max_workers", _DEFAULT_MAX_WORKERS),
            enable_output=bool(self.options.get("enable_output", False)),
        )

    def open_local(self, allowed_mem: int) -> ModalSession:
        """As :meth:`open`, but each call's body runs here (``function.local``) after a
        cloudpickle round trip of its arguments, and its result's: no account needed."""
        _, function = self.build(allowed_mem)
        return ModalSession(
            function,
            max_workers=self.options.get("max_workers", _DEFAULT_MAX_WORKERS),
            local=True,
        )


class ModalSession(Session):
    """A :class:`Session` on a Modal function: each call is ``function.remote``
    (``function.local`` when *local*) on one of *max_workers* threads.

    When *app* is given the session runs it (``app.run()``, inside
    ``modal.enable_output()`` if *enable_output*) until ``close()``.
    """

    def __init__(
        self,
        function: Any,
        *,
        max_workers: int,
        app: Any = None,
        enable_output: bool = False,
        local: bool = False,
    ):
        self.function = function
        self.max_workers = max_workers
        self._local = local
        self._lock = threading.Lock()
        self._closed = False
        self._running = contextlib.ExitStack()
        if app is not None:
            modal = _import_modal()
            with contextlib.ExitStack() as starting:
                if enable_output:
                    starting.enter_context(modal.enable_output())
                starting.enter_context(app.run())
                self._running = starting.pop_all()
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers, thread_name_prefix="cubego-modal"
        )

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> concurrent.futures.Future:
        with self._lock:
            if self._closed:
                raise RuntimeError("modal: submit on a closed session")
            return self._pool.submit(self._call, fn, args)

    def _call(self, fn: Callable[..., Any], args: tuple) -> Any:
        modal = _import_modal()
        try:
            if self._local:
                fn, args = cloudpickle.loads(cloudpickle.dumps((fn, args)))
                return cloudpickle.loads(cloudpickle.dumps(self.function.local(fn, args)))
            return self.function.remote(fn, args)
        except modal.exception.Error as e:
            raise RuntimeError(f"modal: the call failed in Modal: {type(e).__name__}: {e}") from e

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)
        try:
            self._running.close()  # stops the app: calls still running fail
        finally:
            self._pool.shutdown(wait=True)
