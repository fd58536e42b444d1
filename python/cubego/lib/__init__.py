"""numpy's ``lib`` namespace, as far as xarray uses it (``lib.stride_tricks``)."""

from cubego.lib import stride_tricks

__all__ = ["stride_tricks"]
