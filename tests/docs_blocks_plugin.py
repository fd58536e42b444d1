"""pytest plugin for the documentation's code blocks (loaded by tests/test_docs.py).

Each Python block of README.md and docs/*.md runs as a test of
pytest-markdown-docs in a fresh temporary directory as its working
directory, so the relative paths of the examples ("tmp", "out.zarr",
"data.zarr") never touch the repository. A block that needs a fixture names
it in its info string (```` ```python fixture:capsys ````); a block that must
not run is marked ```` ```python notest ```` and says why next to it.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _docs_block_in_tmp_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield
