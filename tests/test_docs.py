"""The documentation's Python code blocks run, so that the docs hold.

Every ```` ```python ```` block of README.md and docs/*.md runs under
pytest-markdown-docs (the ``test`` extra): each block alone (a block marked
``continuation`` shares the names of the blocks before it), in a fresh
temporary working directory (``docs_blocks_plugin.py``). One test per
Markdown file starts ``pytest --markdown-docs`` on that file in a child
process, because the plugin collects only the paths pytest is given and
``make test`` gives ``tests``; by hand, the same run is

    PYTHONPATH=tests pytest --markdown-docs -p docs_blocks_plugin README.md docs

Blocks that cannot run here (they need a cloud account or a server) are
marked ```` ```python notest ```` and the text next to them says so, in a
sentence containing "not run in the tests"; ``test_notest_blocks_say_why``
checks that. Shell (``sh``), ``yaml``, ``c``, ``json``, ``go`` and untagged
blocks are not Python and are not run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTHON = ("python", "py", "python3")  # the languages pytest-markdown-docs runs


def _fences(path: Path) -> list[tuple[int, list[str], str]]:
    """(line, info words, source) of each fenced code block, as the plugin parses them."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(path.read_text("utf-8"))
    return [(t.map[0] + 1, t.info.split(), t.content) for t in tokens if t.type == "fence"]


def _python_blocks(path: Path) -> tuple[int, int]:
    """(blocks that run, blocks marked notest) among the Python blocks of *path*."""
    run = skipped = 0
    for _, info, _ in _fences(path):
        if info and info[0] in PYTHON:
            if "notest" in info[1:]:
                skipped += 1
            else:
                run += 1
    return run, skipped


def _docs_with_blocks() -> list[Path]:
    pytest.importorskip("markdown_it", reason="pytest-markdown-docs (the test extra) is missing")
    return [p for p in DOCS if _python_blocks(p)[0]]


@pytest.mark.parametrize("doc", _docs_with_blocks(), ids=lambda p: str(p.relative_to(ROOT)))
def test_code_blocks_run(doc, tmp_path):
    try:
        import pytest_markdown_docs  # noqa: F401
    except ImportError:
        pytest.fail("pytest-markdown-docs is not installed: pip install -e '.[test]'")
    expected, _ = _python_blocks(doc)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), env.get("PYTHONPATH")) if p)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "--markdown-docs",
        "-p",
        "docs_blocks_plugin",
        "-p",
        "no:cacheprovider",
        "-q",
        "--rootdir",
        str(ROOT),
        "--basetemp",
        str(tmp_path / "blocks"),
        str(doc.relative_to(ROOT)),
    ]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"code blocks of {doc.name} failed:\n{out}"
    m = re.search(r"(\d+) passed", out)
    assert m and int(m.group(1)) == expected, (
        f"expected {expected} code blocks of {doc.name} to pass:\n{out}"
    )


def test_notest_blocks_say_why():
    """A block that is not run says so, and why, in the few lines around it."""
    _docs_with_blocks()
    missing = []
    for doc in DOCS:
        lines = doc.read_text("utf-8").splitlines()
        for line, info, content in _fences(doc):
            if info and info[0] in PYTHON and "notest" in info[1:]:
                end = line + content.count("\n") + 1
                near = " ".join(" ".join(lines[max(0, line - 8) : end + 6]).split())
                if "not run in the tests" not in near:
                    missing.append(f"{doc.relative_to(ROOT)}:{line}")
    assert not missing, f"notest blocks without a 'not run in the tests: why' note: {missing}"
