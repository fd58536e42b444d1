"""``Spec``: where intermediates live, how much memory each task may use, how to run."""

from __future__ import annotations

import copy
import json
import os
import re
import warnings
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np

__all__ = ["Spec", "common", "convert_to_bytes", "parse_size"]

DEFAULT_ALLOWED_MEM = 2_000_000_000  # "2GB"
DEFAULT_RESERVED_MEM = 100_000_000  # "100MB", for arrays created without a spec

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "pb": 10**15,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "pib": 2**50,
}
_SIZE = re.compile(r"^\s*((?:[0-9][0-9_]*)?\.?[0-9][0-9_]*(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_size(value: Any, what: str = "size") -> int:
    """A number of bytes from an int or a string such as ``"2GB"``, ``"1GiB"``, ``"1.5GB"``.

    Units are case-insensitive: ``B``, decimal ``kB MB GB TB PB`` (powers of 1000)
    and binary ``KiB MiB GiB TiB PiB`` (powers of 1024). The result must be a
    non-negative whole number of bytes.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{what}: expected a number of bytes or a size string, got {value!r}")
    if isinstance(value, (int, np.integer)):
        n = int(value)
    elif isinstance(value, (float, np.floating)):
        if not float(value).is_integer():
            raise ValueError(f"{what}: {value!r} is not a whole number of bytes")
        n = int(value)
    elif isinstance(value, str):
        m = _SIZE.match(value)
        if m is None:
            raise ValueError(
                f"{what}: cannot parse {value!r} as a size; expected a number and a unit "
                "such as '2GB', '100MB', '1GiB' or '500kB'"
            )
        number, unit = m.groups()
        factor = _UNITS.get(unit.lower())
        if factor is None:
            raise ValueError(
                f"{what}: unknown unit {unit!r} in {value!r}; use B, kB, MB, GB, TB, PB "
                "(powers of 1000) or KiB, MiB, GiB, TiB, PiB (powers of 1024)"
            )
        try:
            exact = Decimal(number) * factor
        except InvalidOperation as e:  # pragma: no cover - the regex admits only numbers
            raise ValueError(f"{what}: cannot parse {value!r} as a size") from e
        if exact != exact.to_integral_value():
            raise ValueError(f"{what}: {value!r} is not a whole number of bytes")
        n = int(exact)
    else:
        raise ValueError(
            f"{what}: expected an int or a size string such as '2GB', got {type(value).__name__}"
        )
    if n < 0:
        raise ValueError(f"{what}: {value!r} is negative")
    return n


# Cubed's units (case-sensitive), and the binary ones as a cubego extension.
_SPEC_UNITS = {
    "B": 1,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "PB": 10**15,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
    "PiB": 2**50,
}


def _number(text: str) -> Decimal | None:
    """*text* as an exact number if Python's ``float`` would accept it (``"100_000"``,
    ``"1e3"``), else None."""
    try:
        value = float(text)
    except ValueError:
        return None
    if not np.isfinite(value):
        return Decimal(value)
    try:
        return Decimal(text.replace("_", "").strip())
    except InvalidOperation:
        return Decimal(value)


def convert_to_bytes(value: Any, what: str = "size") -> int:
    """A number of bytes for a Spec's ``allowed_mem`` or ``reserved_mem``, by Cubed's rules.

    An int or whole float ≥ 0, or a string: a number (``"100_000"``, ``"1e6"``)
    optionally followed by a unit, spaces ignored: ``B``, ``kB``, ``MB``, ``GB``,
    ``TB``, ``PB`` (powers of 1000, case-sensitive as in Cubed, so ``"1kb"`` is
    refused) or, as a cubego extension, ``KiB``, ``MiB``, ``GiB``, ``TiB``, ``PiB``.
    Anything else raises ``ValueError`` starting "Invalid value", as Cubed's.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, str, np.integer, np.floating)
    ):
        raise ValueError(
            f"Invalid value: {value!r} for {what}. Expected a number of bytes or a string "
            "such as '2GB'"
        )
    if isinstance(value, str):
        text = value.replace(" ", "")
        number, factor = _number(text), 1
        if number is None:
            for unit in sorted(_SPEC_UNITS, key=len, reverse=True):
                if text.endswith(unit):
                    number, factor = _number(text[: -len(unit)]), _SPEC_UNITS[unit]
                    break
        if number is None:
            raise ValueError(
                f"Invalid value: {value!r} for {what}. Expected the string to be a numeric "
                "value ending with an SI prefix: B, kB, MB, GB, TB or PB (powers of 1000; "
                "case-sensitive), or KiB, MiB, GiB, TiB or PiB (powers of 1024)"
            )
        exact = number * factor
    else:
        exact = Decimal(float(value)) if isinstance(value, (float, np.floating)) else None
        if exact is None:
            n = int(value)
            if n < 0:
                raise ValueError(f"Invalid value: {value!r} for {what}. Must be a positive value")
            return n
    if not exact.is_finite() or exact != exact.to_integral_value():
        raise ValueError(
            f"Invalid value: {value!r} for {what}. Can't have a non-integer number of bytes"
        )
    if exact < 0:
        raise ValueError(f"Invalid value: {value!r} for {what}. Must be a positive value")
    return int(exact)


class Spec:
    """Resources and storage for a computation.

    Parameters
    ----------
    work_dir : str or os.PathLike, optional
        Directory (or URL) under which intermediate Zarr arrays are written; each
        process uses a fresh sub-directory, removed when the process exits.
        Default: the system temporary directory.
    allowed_mem : int or str, optional
        Memory one task may use, *including* ``reserved_mem``: bytes, or a string
        with a unit (``"2GB"``, ``"100MB"``, ``"1.5GB"``, ``"100_000"``; units are
        case-sensitive as in Cubed, see :func:`convert_to_bytes`). Default ``2GB``.
        ``compute()`` refuses a plan with an op projected to need more.
    reserved_mem : int or str, default 0
        Memory a worker uses before it holds any chunk (see
        :func:`cubego.measure_reserved_mem`). Arrays created without a ``spec=`` use
        the spec of :mod:`cubego.core.config`: by default ``allowed_mem="2GB"``,
        ``reserved_mem="100MB"``.
    executor : object, optional
        An executor; its ``name`` (or the string itself) selects how tasks run.
    executor_name : str, optional
        ``"threads"`` (the default, an in-process pool) or ``"single-threaded"``.
    executor_options : dict, optional
        Options for the executor: ``max_workers``, ``retries``, ``batch_size``,
        ``use_backups``, ``compute_arrays_in_parallel`` (docs/execution.md).
    storage_options : dict, optional
        Options for opening the object store of ``work_dir`` (fsspec-style:
        ``endpoint_url``, ``region``, ``key``, ``secret``, ``anon``...).
    zarr_compressor : {None, "auto", "zstd", "blosc", "gzip"} or dict, optional
        Compression of intermediates: ``None`` (default: uncompressed, the
        fastest on local disk, where each intermediate chunk is written once
        and read once; Cubed's default is ``"auto"``), ``"auto"`` (as in Cubed:
        Zarr's default compressor for Zarr v3, zstd; worth it on object stores,
        where bytes cost time and money), ``"zstd"``, ``"blosc"`` (lz4 with byte
        shuffle), ``"gzip"``, or a codec configuration as in Cubed and zarr.json:
        ``{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 2,
        "shuffle": "shuffle"}}`` (any of the bytes-to-bytes codecs ``blosc``,
        ``gzip``, ``zstd``, ``crc32c``).
    intermediate_store : str, os.PathLike or zarr store, optional
        Where intermediates are written, taking precedence over ``work_dir`` (as
        in Cubed): a path or URL, or a zarr-python ``LocalStore`` or
        ``FsspecStore`` (whose location is used; cubego's engine writes the
        Zarr arrays itself, in a fresh sub-directory per process).
    max_mem : int or str, optional
        Deprecated alias of ``allowed_mem`` (older Cubed code).
    """

    def __init__(
        self,
        work_dir: str | os.PathLike | None = None,
        allowed_mem: int | str | None = None,
        reserved_mem: int | str | None = 0,
        executor: Any = None,
        executor_name: str | None = None,
        executor_options: dict | None = None,
        storage_options: dict | None = None,
        zarr_compressor: str | dict | None = None,
        *,
        intermediate_store: Any = None,
        max_mem: int | str | None = None,
    ):
        if max_mem is not None:
            if allowed_mem is not None:
                raise ValueError(
                    "Spec: give allowed_mem or max_mem (its deprecated alias), not both"
                )
            warnings.warn(
                "Spec(max_mem=...) is deprecated; use allowed_mem",
                DeprecationWarning,
                stacklevel=2,
            )
            allowed_mem = max_mem
        self._work_dir = None if work_dir is None else os.fspath(work_dir)
        self._allowed_mem = (
            DEFAULT_ALLOWED_MEM
            if allowed_mem is None
            else convert_to_bytes(allowed_mem, "allowed_mem")
        )
        self._reserved_mem = (
            0 if reserved_mem is None else convert_to_bytes(reserved_mem, "reserved_mem")
        )
        if executor_name is not None and not isinstance(executor_name, str):
            raise TypeError(f"Spec: executor_name must be a string, got {executor_name!r}")
        self._executor = executor
        self._executor_name = executor_name
        if executor_options is not None and not isinstance(executor_options, dict):
            raise TypeError(f"Spec: executor_options must be a dict, got {executor_options!r}")
        self._executor_options = dict(executor_options or {})
        if storage_options is not None and not isinstance(storage_options, dict):
            raise TypeError(f"Spec: storage_options must be a dict, got {storage_options!r}")
        self._storage_options = dict(storage_options or {})
        self._zarr_compressor = _compressor(zarr_compressor)
        self._intermediate_store = intermediate_store
        self._intermediate_location = _store_location(intermediate_store)
        self._implicit = False

    @property
    def work_dir(self) -> str | None:
        """Directory or URL for intermediate data (None: the system temp dir)."""
        return self._work_dir

    @property
    def allowed_mem(self) -> int:
        """Memory one task may use, in bytes, including ``reserved_mem``."""
        return self._allowed_mem

    @property
    def reserved_mem(self) -> int:
        """Memory a worker needs before it holds any chunk, in bytes."""
        return self._reserved_mem

    @property
    def max_mem(self) -> int:
        """Deprecated alias of ``allowed_mem``."""
        return self._allowed_mem

    @property
    def executor(self) -> Any:
        return self._executor

    @property
    def executor_name(self) -> str | None:
        return self._executor_name

    @property
    def executor_options(self) -> dict:
        return dict(self._executor_options)

    @property
    def storage_options(self) -> dict:
        return dict(self._storage_options)

    @property
    def zarr_compressor(self) -> str | dict | None:
        """The compressor of intermediates (``"auto"`` is reported as ``"zstd"``)."""
        c = self._zarr_compressor
        return copy.deepcopy(c) if isinstance(c, dict) else c

    @property
    def intermediate_store(self) -> Any:
        """Where intermediates are written, as given (takes precedence over ``work_dir``)."""
        return self._intermediate_store

    def _compressor_json(self) -> str | None:
        c = self._zarr_compressor
        return json.dumps(c, sort_keys=True) if isinstance(c, dict) else c

    def _key(self) -> tuple:
        return (
            self._work_dir,
            self._allowed_mem,
            self._reserved_mem,
            self._executor_name,
            self._compressor_json(),
            self._intermediate_location,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Spec):
            return NotImplemented
        return (
            self._key() == other._key()
            and self._executor == other._executor
            and self._executor_options == other._executor_options
            and self._storage_options == other._storage_options
        )

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        fields = [
            f"work_dir={self._work_dir!r}",
            f"intermediate_store={self._intermediate_store!r}",
            f"allowed_mem={self._allowed_mem}",
            f"reserved_mem={self._reserved_mem}",
            f"executor={self._executor!r}",
            f"executor_name={self._executor_name!r}",
            f"executor_options={self._executor_options!r}",
            f"storage_options={self._storage_options!r}",
            f"zarr_compressor={self._zarr_compressor!r}",
        ]
        return f"cubego.Spec({', '.join(fields)})"

    def _to_json(self) -> dict:
        """The ``"spec"`` argument of docs/capi.md."""
        return {
            "work_dir": self._intermediate_location or self._work_dir,
            "allowed_mem": self._allowed_mem,
            "reserved_mem": self._reserved_mem,
            "zarr_compressor": self._compressor_json(),
            "storage_options": self._storage_options or None,
            "implicit": getattr(self, "_implicit", False),
        }

    def _as_implicit(self) -> Spec:
        """A copy marked as the default of an array created without ``spec=``.

        Such arrays (a scalar or small numpy array that xarray passes to
        ``asarray``) take the explicit spec of the arrays they are combined
        with instead of clashing with it.
        """
        out = copy.copy(self)
        out._implicit = True
        return out


_CODECS = ("blosc", "gzip", "zstd", "crc32c")


def _compressor(value: Any) -> str | dict | None:
    """A Spec's ``zarr_compressor``, checked: a name (``"auto"`` is zstd) or a codec dict."""
    if value == "auto":
        return "zstd"
    if value is None or (isinstance(value, str) and value in ("zstd", "blosc", "gzip")):
        return value
    if isinstance(value, dict):
        name = value.get("name")
        config = value.get("configuration", {})
        if set(value) - {"name", "configuration"} or name not in _CODECS:
            raise ValueError(
                f"Spec: zarr_compressor {value!r} is not a codec configuration: expected "
                f"{{'name': ..., 'configuration': {{...}}}} with a name among {_CODECS}"
            )
        if not isinstance(config, dict):
            raise TypeError(
                f"Spec: the configuration of zarr_compressor must be a dict, got {config!r}"
            )
        try:
            json.dumps(config)
        except TypeError as e:
            raise TypeError(f"Spec: zarr_compressor {value!r} is not JSON: {e}") from e
        return copy.deepcopy(value)
    raise ValueError(
        f"Spec: unsupported zarr_compressor {value!r}; use None, 'auto', 'zstd', 'blosc', "
        "'gzip' or a codec configuration dict"
    )


def _store_location(store: Any) -> str | None:
    """The path or URL where an ``intermediate_store`` keeps its data."""
    if store is None:
        return None
    if isinstance(store, (str, os.PathLike)):
        return os.fspath(store)
    kind = type(store).__name__
    if kind == "LocalStore" and hasattr(store, "root"):
        return os.fspath(store.root)
    if kind == "FsspecStore" and hasattr(store, "fs") and hasattr(store, "path"):
        protocol = store.fs.protocol
        protocol = protocol[0] if isinstance(protocol, (tuple, list)) else protocol
        path = str(store.path)
        return path if protocol in ("file", "local") else f"{protocol}://{path}"
    raise TypeError(
        f"Spec: intermediate_store must be a path, a URL, or a zarr LocalStore or "
        f"FsspecStore, got {kind}: cubego's engine writes intermediates itself, so it "
        "needs a location it can open"
    )


def common(specs: Any) -> Spec:
    """The spec of an op's result: the first explicit one among *specs* (else the first)."""
    specs = list(specs)
    return next((s for s in specs if not getattr(s, "_implicit", False)), specs[0])
