"""``TqdmProgressBar`` at Cubed's module path (``cubed.diagnostics.tqdm``)."""

from cubego.diagnostics.progress import TqdmProgressBar

__all__ = ["TqdmProgressBar"]
