"""``__array_namespace_info__``: what the namespace supports (Array API inspection)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cubego.array_api.data_type_functions import KINDS
from cubego.core import dtypes as _dtypes

__all__ = ["__array_namespace_info__"]

DEVICE = "cpu"

_ALL_DTYPES = {dt.name: dt for dt in KINDS["bool"] + KINDS["numeric"]}


def _check_device(device: Any) -> None:
    if device not in (None, DEVICE):
        raise ValueError(f"unsupported device {device!r}; cubego arrays live on {DEVICE!r}")


class __array_namespace_info__:  # noqa: N801 - the Array API name
    """Inspection of the cubego namespace: capabilities, devices and data types."""

    __module__ = "cubego"

    def capabilities(self) -> dict[str, Any]:
        """Boolean-mask indexing and data-dependent output shapes are not supported.

        Both need the data to know an output's shape, which a lazy plan cannot.
        """
        return {
            "boolean indexing": False,
            "data-dependent shapes": False,
            "max dimensions": None,
        }

    def default_device(self) -> str:
        return DEVICE

    def devices(self) -> tuple[str, ...]:
        return (DEVICE,)

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype]:
        _check_device(device)
        return {
            "real floating": _dtypes.float64,
            "complex floating": _dtypes.complex128,
            "integral": _dtypes.int64,
            "indexing": _dtypes.int64,
        }

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, np.dtype]:
        """The supported dtypes, by name, optionally only those of *kind* (a kind or tuple)."""
        _check_device(device)
        if kind is None:
            return dict(_ALL_DTYPES)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        out: dict[str, np.dtype] = {}
        for k in kinds:
            if k not in KINDS:
                raise ValueError(
                    f"dtypes: unknown kind {k!r}; expected one of {', '.join(map(repr, KINDS))}"
                )
            out.update((dt.name, dt) for dt in KINDS[k])
        return {name: dt for name, dt in _ALL_DTYPES.items() if name in out}
