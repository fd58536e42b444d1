"""``Spec``: where intermediates live, how much memory each task may use, how to run."""

from __future__ import annotations

import copy
import os
import re
import warnings
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np

__all__ = ["Spec", "common", "parse_size"]

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
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


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
        with a unit (``"2GB"``, ``"100MB"``, ``"1GiB"``, ``"1.5GB"``). Default ``2GB``.
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
    zarr_compressor : {None, "zstd", "blosc", "gzip", "auto"}, optional
        Compression of intermediates: ``None`` (default: uncompressed, the
        fastest on local disk, where each intermediate chunk is written once
        and read once), ``"zstd"`` (``"auto"``, zarr-python's default for Zarr
        v3; worth it on object stores, where bytes cost time and money),
        ``"blosc"`` (lz4 with byte shuffle) or ``"gzip"``.
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
        zarr_compressor: str | None = None,
        *,
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
            DEFAULT_ALLOWED_MEM if allowed_mem is None else parse_size(allowed_mem, "allowed_mem")
        )
        self._reserved_mem = 0 if reserved_mem is None else parse_size(reserved_mem, "reserved_mem")
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
        if zarr_compressor == "auto":
            zarr_compressor = "zstd"
        if zarr_compressor not in (None, "zstd", "blosc", "gzip"):
            raise ValueError(
                f"Spec: unsupported zarr_compressor {zarr_compressor!r};"
                " use None, 'zstd', 'blosc', 'gzip' or 'auto'"
            )
        self._zarr_compressor = zarr_compressor
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
    def zarr_compressor(self) -> str | None:
        return self._zarr_compressor

    def _key(self) -> tuple:
        return (
            self._work_dir,
            self._allowed_mem,
            self._reserved_mem,
            self._executor_name,
            self._zarr_compressor,
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
            "work_dir": self._work_dir,
            "allowed_mem": self._allowed_mem,
            "reserved_mem": self._reserved_mem,
            "zarr_compressor": self._zarr_compressor,
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


def common(specs: Any) -> Spec:
    """The spec of an op's result: the first explicit one among *specs* (else the first)."""
    specs = list(specs)
    return next((s for s in specs if not getattr(s, "_implicit", False)), specs[0])
