"""What the live widgets share: ipywidgets, showing a widget, formatting."""

from __future__ import annotations

import html
from types import ModuleType
from typing import Any

from cubego.diagnostics._optional import require


def ipywidgets(what: str) -> ModuleType:
    """The ipywidgets module, or ImportError saying how to install it for *what*."""
    return require("ipywidgets", f"widgets.{what}")


def show(widget: Any) -> None:
    """Display *widget* in the current notebook cell; do nothing outside IPython."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - ipywidgets depends on IPython
        return
    if get_ipython() is not None:
        display(widget)


def megabytes(n: int | None) -> str:
    return "–" if n is None else f"{n / 1e6:.1f} MB"


def table(header: list[str], rows: list[list[Any]]) -> str:
    """An HTML table of *rows* (cells are escaped)."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
