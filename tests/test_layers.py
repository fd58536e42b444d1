"""The Python package's layer contract (pyproject.toml, [tool.importlinter]) holds and bites."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(python_dir: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(python_dir))
    return subprocess.run(
        [str(LINT), "--no-cache", str(ROOT / "pyproject.toml")],
        cwd=python_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_layers_and_no_circles():
    result = _lint(ROOT / "python")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    shutil.copytree(
        ROOT / "python" / "cubego", tmp_path / "cubego", ignore=shutil.ignore_patterns("*.so")
    )
    spec = tmp_path / "cubego" / "core" / "spec.py"
    spec.write_text(
        spec.read_text() + "\nfrom cubego.array_api import creation_functions  # noqa\n"
    )
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert "cubego.core.spec -> cubego.array_api.creation_functions" in result.stdout
