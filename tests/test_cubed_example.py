"""The Cubed program of the foundation issue runs unchanged with ``import cubego as cubed``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import cubego

PYTHON_DIR = str(Path(cubego.__file__).resolve().parent.parent)

PROGRAM = """\
import cubego as cubed
import cubego.random
spec = cubed.Spec(work_dir="tmp", max_mem=100_000)
a = cubed.random.random((4, 4), chunks=(2, 2), spec=spec)
b = cubed.random.random((4, 4), chunks=(2, 2), spec=spec)
c = cubed.matmul(a, b)
c.compute()
"""

CHECK = """
import numpy as np
result = c.compute()
expected = a.compute() @ b.compute()
print(result)
assert result.shape == (4, 4) and result.dtype == np.float64, (result.shape, result.dtype)
np.testing.assert_allclose(result, expected, rtol=1e-12)
print("matches numpy")
"""


def test_cubed_program(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PYTHON_DIR, env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [
            sys.executable,
            "-W",
            "ignore::DeprecationWarning",
            "-c",
            PROGRAM + textwrap.dedent(CHECK),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "matches numpy" in proc.stdout
    lines = proc.stdout.splitlines()
    assert len([line for line in lines if line.startswith(("[[", " ["))]) == 4
